//! The answer to a start or a step: what the agent does next, with what it needs to act —
//! Hindsight's matches for the failure, relevant notes and the context assembled for the task
//! under the configured budget.

use aeterna_context::AssembleRequest;
use aeterna_memory::{Identity, SearchRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::analysis::clip;
use crate::model::{Driver, HindsightHit, LoopRecord, Phase};
use crate::service::MetaService;

/// What the agent does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NextAction {
    /// Run the build (or the tests, when there is nothing to build) and report it.
    Build,
    /// Run the tests and report them.
    Test,
    /// Nothing: the server runs the phases (command-driven); follow with `meta_loop_status`.
    Wait,
    /// Nothing: the loop has ended (see its `state`).
    Done,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NextStep {
    pub action: NextAction,
    /// What to do, in a sentence.
    pub instruction: String,
}

/// A note that may help.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NoteHint {
    pub id: Uuid,
    /// The note's first line.
    pub title: String,
    /// Relevance 0..1.
    pub score: f32,
}

/// The context assembled for the task (`context_assemble` under the configured budget).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContextBrief {
    pub content: String,
    pub total_tokens: usize,
    pub token_budget: usize,
}

/// The answer to `meta_loop_start` and `meta_loop_step`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepAnswer {
    #[serde(rename = "loop")]
    pub record: LoopRecord,
    pub next: NextStep,
    /// Hindsight's answer for the failure just reported (IMPROVE), best first.
    pub hindsight: Vec<HindsightHit>,
    /// Notes relevant to the task and the failure.
    pub notes: Vec<NoteHint>,
    /// Left out when nothing relevant is stored or assembly failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextBrief>,
}

impl MetaService {
    /// The answer to a start or a step: the next action, the failure's Hindsight matches,
    /// relevant notes and the assembled context.
    pub(crate) async fn answer(
        &self,
        who: &Identity,
        record: LoopRecord,
        hits: Vec<HindsightHit>,
    ) -> StepAnswer {
        let next = next_step(&record);
        let query = match record
            .iterations
            .last()
            .and_then(|i| i.error_line.as_deref())
        {
            Some(line) if !record.state.is_final() => {
                format!("{}\n{}", clip(&record.task, 500), clip(line, 300))
            }
            _ => clip(&record.task, 800),
        };
        let (notes, context) = if record.state.is_final() {
            (Vec::new(), None)
        } else {
            tokio::join!(self.relevant_notes(who, &query), self.assemble(who, &query))
        };
        StepAnswer {
            record,
            next,
            hindsight: hits,
            notes,
            context,
        }
    }

    async fn relevant_notes(&self, who: &Identity, query: &str) -> Vec<NoteHint> {
        let request = SearchRequest {
            query: query.to_owned(),
            layers: None,
            tags: Vec::new(),
            kinds: vec![aeterna_memory::kind::NOTE.to_owned()],
            limit: self.config.max_notes,
            min_score: 0.1,
            explain: false,
            as_of: None,
        };
        match self.memory.search(who, request).await {
            Ok(hits) => hits
                .into_iter()
                .map(|hit| NoteHint {
                    id: hit.record.id,
                    title: note_title(hit.record.content.as_deref().unwrap_or_default()),
                    score: hit.score,
                })
                .collect(),
            Err(error) => {
                tracing::debug!(%error, "no notes for a meta-loop step");
                Vec::new()
            }
        }
    }

    async fn assemble(&self, who: &Identity, query: &str) -> Option<ContextBrief> {
        let request = AssembleRequest {
            query: query.to_owned(),
            token_budget: Some(self.config.context_token_budget),
            layers: None,
            min_relevance: None,
        };
        match self.context.assemble(who, request).await {
            Ok(context) if !context.content.is_empty() => Some(ContextBrief {
                content: context.content.clone(),
                total_tokens: context.total_tokens,
                token_budget: context.token_budget,
            }),
            Ok(_) => None,
            Err(error) => {
                tracing::debug!(%error, "no context for a meta-loop step");
                None
            }
        }
    }
}

fn next_step(record: &LoopRecord) -> NextStep {
    if record.state.is_final() {
        return NextStep {
            action: NextAction::Done,
            instruction: format!(
                "the loop has ended: {} ({})",
                record.state.as_str(),
                record.reason.as_deref().unwrap_or("")
            ),
        };
    }
    let improve = record
        .last_improve
        .as_ref()
        .filter(|i| i.iteration + 1 == record.iteration)
        .map(|i| format!("{}: {}. ", i.action.as_str(), i.reason))
        .unwrap_or_default();
    match (record.driver, record.phase) {
        (Driver::Command, phase) => NextStep {
            action: NextAction::Wait,
            instruction: format!(
                "{improve}the server runs {} of iteration {}; follow it with meta_loop_status",
                phase.map(Phase::as_str).unwrap_or("the loop"),
                record.iteration
            ),
        },
        (Driver::Client, Some(Phase::Test)) => NextStep {
            action: NextAction::Test,
            instruction: format!(
                "run the tests and report them with meta_loop_step (phase `test`, iteration {})",
                record.iteration
            ),
        },
        (Driver::Client, _) => NextStep {
            action: NextAction::Build,
            instruction: format!(
                "{improve}run the build and report it with meta_loop_step (phase `build`, \
                 iteration {} of {}); with nothing to build, report the tests (phase `test`)",
                record.iteration, record.limits.max_iterations
            ),
        },
    }
}

fn note_title(content: &str) -> String {
    let title = content
        .lines()
        .map(str::trim)
        .find_map(|line| {
            line.strip_prefix("title:")
                .or_else(|| line.strip_prefix("# "))
        })
        .unwrap_or_else(|| content.lines().next().unwrap_or_default());
    clip(title.trim().trim_matches('"'), 150)
}
