//! Distillation: turning a session's events into a note.
//!
//! A [`Distiller`] reads events and writes a [`DistilledNote`]. The default,
//! [`DeterministicDistiller`], needs no model and gives the same note for the same events. An
//! LLM-backed distiller plugs in through [`DistillerChain`], which falls back, provider by
//! provider, to the deterministic path, so distillation never fails for want of a model.

mod analysis;
mod deterministic;
mod render;
mod signals;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

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
}

impl DistilledNote {
    /// The note as Markdown with Context, Problem, Solution, Patterns and Tags sections.
    pub fn to_markdown(&self) -> String {
        render::markdown(self)
    }
}

/// Turns a session's events into a note. Implementations other than the deterministic one
/// (an LLM provider, say) may fail; [`DistillerChain`] then falls back.
#[async_trait::async_trait]
pub trait Distiller: Send + Sync {
    /// Names the distiller in notes' metadata and in logs.
    fn id(&self) -> &str;
    async fn distill(&self, input: DistillInput<'_>) -> anyhow::Result<DistilledNote>;
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

    pub async fn distill(&self, input: DistillInput<'_>) -> DistilledNote {
        for provider in &self.providers {
            match provider.distill(input).await {
                Ok(note) => return note,
                Err(error) => tracing::warn!(
                    distiller = provider.id(),
                    session = %input.session,
                    error = format!("{error:#}"),
                    "distiller failed; falling back to the next one"
                ),
            }
        }
        self.fallback.distill_now(input)
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
    use super::testing::shell;
    use super::*;

    struct Broken;

    #[async_trait::async_trait]
    impl Distiller for Broken {
        fn id(&self) -> &str {
            "broken-llm"
        }
        async fn distill(&self, _: DistillInput<'_>) -> anyhow::Result<DistilledNote> {
            anyhow::bail!("HTTP 503 from the provider")
        }
    }

    struct Fixed;

    #[async_trait::async_trait]
    impl Distiller for Fixed {
        fn id(&self) -> &str {
            "fixed"
        }
        async fn distill(&self, input: DistillInput<'_>) -> anyhow::Result<DistilledNote> {
            let mut note = DeterministicDistiller.distill_now(input);
            note.title = "from the provider".into();
            note.distiller = self.id().into();
            Ok(note)
        }
    }

    #[tokio::test]
    async fn the_chain_falls_back_to_the_deterministic_path() {
        let events = vec![shell("cargo test", "ok", true)];
        let session = events[0].session_key();
        let input = DistillInput {
            session: &session,
            events: &events,
        };

        let note = DistillerChain::new(vec![Arc::new(Broken)])
            .distill(input)
            .await;
        assert_eq!(note.distiller, "deterministic-v1");
        assert_eq!(note, DeterministicDistiller.distill_now(input));

        let note = DistillerChain::new(vec![Arc::new(Broken), Arc::new(Fixed)])
            .distill(input)
            .await;
        assert_eq!(
            (note.distiller.as_str(), note.title.as_str()),
            ("fixed", "from the provider")
        );
    }
}
