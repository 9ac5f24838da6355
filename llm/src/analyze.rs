//! The `analyze` role: the Meta-Agent's IMPROVE decision (retry, refine or escalate) for a
//! failed iteration, through [`LlmRoles::analyze`](crate::LlmRoles::analyze).
//!
//! The deterministic built-in that ends this chain lives with its caller: when
//! [`LlmRoles::analyze`](crate::LlmRoles::analyze) returns [`Exhausted`](crate::Exhausted)
//! (no provider configured, or every one skipped, with the reasons), the Meta-Agent decides
//! with its own rules.

use serde::{Deserialize, Serialize};

use crate::prompts::AnalyzeAnswer;
pub use crate::prompts::AnalyzeSources as AnalyzeInput;

/// What to do after a failed iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The failure looks transient or flaky: run again unchanged.
    Retry,
    /// Change the approach (see `next_steps`).
    Refine,
    /// A person is needed.
    Escalate,
}

/// A model's IMPROVE decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub decision: Decision,
    /// Why, in a sentence or two.
    pub rationale: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_cause: Option<String>,
    /// Concrete steps, for `refine` especially.
    pub next_steps: Vec<String>,
    /// 0..1, when the model gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f32>,
}

/// Lists in an analysis, at most; characters per item.
const MAX_STEPS: usize = 10;
const MAX_TEXT: usize = 500;

impl Analysis {
    pub(crate) fn from_answer(answer: AnalyzeAnswer) -> Self {
        let decision = match answer.decision.as_str() {
            "retry" => Decision::Retry,
            "refine" => Decision::Refine,
            _ => Decision::Escalate,
        };
        let clip = |text: &str| text.chars().take(MAX_TEXT).collect::<String>();
        Analysis {
            decision,
            rationale: clip(&answer.rationale),
            root_cause: Some(clip(&answer.root_cause)).filter(|cause| !cause.is_empty()),
            next_steps: answer
                .next_steps
                .iter()
                .take(MAX_STEPS)
                .map(|step| clip(step))
                .collect(),
            confidence: answer.confidence,
        }
    }
}
