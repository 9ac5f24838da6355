//! Distillation: turning a session's events into a note.
//!
//! A [`Distiller`] reads events and writes a [`DistilledNote`], or declines when the events
//! hold nothing worth a note ([`Distillation::Declined`]). The default,
//! [`DeterministicDistiller`], needs no model and gives the same note for the same events. An
//! LLM-backed distiller (`aeterna-llm`) plugs in through [`DistillerChain`], which falls back,
//! provider by provider, to the deterministic path, so distillation never fails for want of a
//! model, and records why each earlier distiller did not serve.

mod analysis;
mod deterministic;
mod render;
pub mod signals;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use deterministic::DeterministicDistiller;

use crate::event::{CapturedEvent, SessionKey};

/// What a distiller works from: one session's events, in capture order, already redacted.
#[derive(Debug, Clone, Copy)]
pub struct DistillInput<'a> {
    pub session: &'a SessionKey,
    pub events: &'a [CapturedEvent],
}

/// A distilled note, in sections. [`DistilledNote::to_markdown`] renders it for people; the
/// fields are what programs read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DistilledNote {
    pub title: String,
    /// One or two sentences from which a reader decides whether the note is relevant.
    #[serde(default)]
    pub description: String,
    /// Search terms: tools, errors, files, concepts.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Where and when: session, project, tools, files, themes.
    pub context: Vec<String>,
    /// What went wrong (failing calls, tests and errors).
    pub problem: Vec<String>,
    /// What fixed it, as ordered steps, ending with the outcome.
    pub solution: Vec<String>,
    /// What to reuse next time: workflow, attempts, files that change together.
    pub patterns: Vec<String>,
    pub tags: Vec<String>,
    /// How complete and specific the note is, from 0 to 1.
    pub quality: f32,
    /// Which distiller wrote it (`deterministic-v1`, or a provider's id).
    pub distiller: String,
    /// Why distillers tried before `distiller` did not serve (empty when the first did).
    #[serde(default)]
    pub fallbacks: Vec<String>,
}

/// An earlier note linked from a new one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelatedNote {
    pub id: Uuid,
    pub title: String,
    pub description: String,
}

impl DistilledNote {
    /// The note's sections as Markdown: title, Context, Problem, Solution, Patterns, Tags.
    pub fn to_markdown(&self) -> String {
        render::markdown(self)
    }

    /// The note as stored: YAML front matter (`id`, `title`, `description`, `keywords`), the
    /// sections, and a "Related notes" section linking `related`.
    pub fn to_document(&self, id: Uuid, related: &[RelatedNote]) -> String {
        render::document(self, id, related)
    }
}

/// What a distiller made of a session.
#[derive(Debug, Clone, PartialEq)]
pub enum Distillation {
    Note(DistilledNote),
    /// Nothing worth a note: the events are marked as distilled without one.
    Declined(Declined),
}

/// A distiller's "nothing worth a note", and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Declined {
    /// Why the events hold nothing worth a note.
    pub reason: String,
    /// Which distiller decided.
    pub distiller: String,
}

/// Turns a session's events into a note. Implementations other than the deterministic one
/// (an LLM provider, say) may fail; [`DistillerChain`] then falls back.
#[async_trait::async_trait]
pub trait Distiller: Send + Sync {
    /// Names the distiller in logs.
    fn id(&self) -> &str;
    async fn distill(&self, input: DistillInput<'_>) -> anyhow::Result<Distillation>;
}

/// Tries each provider in order and falls back to the deterministic distiller, which cannot
/// fail. With no providers it is the deterministic distiller.
#[derive(Default)]
pub struct DistillerChain {
    providers: Vec<Arc<dyn Distiller>>,
    fallback: DeterministicDistiller,
}

impl DistillerChain {
    pub fn new(providers: Vec<Arc<dyn Distiller>>) -> Self {
        DistillerChain {
            providers,
            fallback: DeterministicDistiller,
        }
    }

    pub async fn distill(&self, input: DistillInput<'_>) -> Distillation {
        let mut fallbacks = Vec::new();
        for provider in &self.providers {
            match provider.distill(input).await {
                Ok(Distillation::Note(mut note)) => {
                    // Earlier distillers' failures, then what this one skipped itself.
                    fallbacks.append(&mut note.fallbacks);
                    note.fallbacks = fallbacks;
                    return Distillation::Note(note);
                }
                Ok(declined) => return declined,
                Err(error) => {
                    let error = format!("{error:#}");
                    tracing::warn!(
                        distiller = provider.id(),
                        session = %input.session,
                        error,
                        "distiller failed; falling back to the next one"
                    );
                    fallbacks.push(error);
                }
            }
        }
        match self.fallback.judge(input) {
            Distillation::Note(mut note) => {
                note.fallbacks = fallbacks;
                Distillation::Note(note)
            }
            declined => declined,
        }
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Event builders shared by the distillation tests.

    use aeterna_memory::Identity;

    use crate::event::CapturedEvent;

    pub fn call(
        tool: &str,
        description: &str,
        input: &str,
        output: &str,
        success: bool,
    ) -> CapturedEvent {
        let mut identity = Identity::new("acme");
        identity.session_id = Some("s-1".into());
        identity.project_id = Some("parser".into());
        CapturedEvent {
            id: uuid::Uuid::now_v7(),
            identity,
            tool_name: tool.into(),
            description: description.into(),
            input: input.into(),
            output: output.into(),
            success,
            duration_ms: 120,
            tags: vec![],
            metadata: serde_json::json!({}),
            truncated: vec![],
            captured_at: 1_750_000_000_000,
        }
    }

    pub fn shell(command: &str, output: &str, success: bool) -> CapturedEvent {
        let input = serde_json::json!({ "command": command }).to_string();
        call("bash", "", &input, output, success)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{call, shell};
    use super::*;

    struct Broken;

    #[async_trait::async_trait]
    impl Distiller for Broken {
        fn id(&self) -> &str {
            "broken-llm"
        }
        async fn distill(&self, _: DistillInput<'_>) -> anyhow::Result<Distillation> {
            anyhow::bail!("HTTP 503 from the provider")
        }
    }

    struct Fixed;

    #[async_trait::async_trait]
    impl Distiller for Fixed {
        fn id(&self) -> &str {
            "fixed"
        }
        async fn distill(&self, input: DistillInput<'_>) -> anyhow::Result<Distillation> {
            let mut note = DeterministicDistiller.distill_now(input);
            note.title = "from the provider".into();
            note.distiller = self.id().into();
            Ok(Distillation::Note(note))
        }
    }

    fn note(distillation: Distillation) -> DistilledNote {
        match distillation {
            Distillation::Note(note) => note,
            Distillation::Declined(declined) => panic!("declined: {declined:?}"),
        }
    }

    #[tokio::test]
    async fn the_chain_falls_back_to_the_deterministic_path() {
        let events = vec![
            shell("cargo test", "test a ... FAILED", false),
            shell("cargo test", "ok", true),
        ];
        let session = events[0].session_key();
        let input = DistillInput {
            session: &session,
            events: &events,
        };

        let fell_back = note(
            DistillerChain::new(vec![Arc::new(Broken)])
                .distill(input)
                .await,
        );
        assert_eq!(fell_back.distiller, "deterministic-v1");
        assert_eq!(fell_back.fallbacks, ["HTTP 503 from the provider"]);
        let mut expected = DeterministicDistiller.distill_now(input);
        expected.fallbacks = fell_back.fallbacks.clone();
        assert_eq!(fell_back, expected);

        let served = note(
            DistillerChain::new(vec![Arc::new(Broken), Arc::new(Fixed)])
                .distill(input)
                .await,
        );
        assert_eq!(
            (served.distiller.as_str(), served.title.as_str()),
            ("fixed", "from the provider")
        );
        assert_eq!(served.fallbacks.len(), 1);
    }

    #[tokio::test]
    async fn the_deterministic_path_declines_sessions_that_only_looked_around() {
        let events = vec![
            call(
                "grep",
                "",
                r#"{"pattern":"fn main"}"#,
                "src/main.rs:1",
                true,
            ),
            call(
                "read_file",
                "",
                r#"{"path":"src/main.rs"}"#,
                "fn main() {}",
                true,
            ),
        ];
        let session = events[0].session_key();
        let input = DistillInput {
            session: &session,
            events: &events,
        };
        match DistillerChain::default().distill(input).await {
            Distillation::Declined(declined) => {
                assert_eq!(declined.distiller, "deterministic-v1");
                assert!(declined.reason.contains("2 calls"), "{}", declined.reason);
            }
            Distillation::Note(note) => panic!("a note: {note:?}"),
        }
    }
}
