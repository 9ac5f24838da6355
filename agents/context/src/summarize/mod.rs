//! Layer summarisation behind the [`Summarizer`] trait.
//!
//! The default, [`ExtractiveSummarizer`], is deterministic and offline. An LLM provider
//! (`aeterna-llm`) implements the same trait; [`SummaryGenerator`] runs it first and falls back
//! to the extractive path when it fails or overshoots a depth's budget, and says why.

mod extractive;

use std::sync::Arc;

use aeterna_memory::{Layer, Timestamp};

pub use extractive::ExtractiveSummarizer;

use crate::model::Depth;
use crate::tokens::Tokenizer;

/// One memory to summarise.
#[derive(Debug, Clone, Copy)]
pub struct SourceDoc<'a> {
    pub text: &'a str,
    pub updated_at: Timestamp,
}

/// What to summarise, and the token budget of each depth (indexed by [`Depth::index`]).
#[derive(Debug, Clone, Copy)]
pub struct SummaryInput<'a> {
    /// Whose memories these are (an LLM provider charges the tenant's token budget).
    pub tenant_id: &'a str,
    pub layer: Layer,
    pub scope_id: &'a str,
    /// Newest first.
    pub docs: &'a [SourceDoc<'a>],
    pub budgets: [usize; 3],
}

/// A summary per depth, indexed by [`Depth::index`].
pub type DepthTexts = [String; 3];

/// What a [`Summarizer`] wrote, and who wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Drafted {
    pub texts: DepthTexts,
    /// Recorded with the summaries, e.g. `llm:local/qwen2.5:7b summarize-v1`.
    pub generator: String,
    /// What was tried before `generator` and why it did not serve (a provider chain's
    /// skipped providers); empty when the first choice wrote them.
    pub skipped: Vec<String>,
}

/// Writes the three summaries of a layer. Implementations should stay within each depth's
/// budget; [`generate`] enforces it regardless.
#[async_trait::async_trait]
pub trait Summarizer: Send + Sync {
    /// Identifies the summarizer in logs, e.g. `extractive-v1`.
    fn id(&self) -> &str;
    async fn summarize(&self, input: &SummaryInput<'_>) -> anyhow::Result<Drafted>;
}

/// Summaries and the id of the summarizer that wrote them.
#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    pub texts: DepthTexts,
    pub token_counts: [usize; 3],
    pub generator: String,
    /// What did not serve before `generator`, and why: the configured summarizer's failure
    /// (these are then the extractive summaries), or the providers it skipped before the one
    /// that wrote them. `None` when the first choice wrote them.
    pub fallback: Option<String>,
}

/// Runs the configured summarizer (an LLM provider, when one is configured) and falls back to
/// the extractive path when it fails or overshoots a depth's budget. Never fails.
pub struct SummaryGenerator {
    primary: Option<Arc<dyn Summarizer>>,
    extractive: ExtractiveSummarizer,
    tokenizer: Tokenizer,
}

impl SummaryGenerator {
    /// The deterministic extractive path only.
    pub fn extractive(tokenizer: Tokenizer) -> Self {
        SummaryGenerator {
            primary: None,
            extractive: ExtractiveSummarizer::new(tokenizer),
            tokenizer,
        }
    }

    /// `primary` first, the extractive path behind it.
    pub fn with_primary(primary: Arc<dyn Summarizer>, tokenizer: Tokenizer) -> Self {
        SummaryGenerator {
            primary: Some(primary),
            ..Self::extractive(tokenizer)
        }
    }

    pub async fn generate(&self, input: &SummaryInput<'_>) -> Generated {
        let mut fallback = None;
        if let Some(primary) = &self.primary {
            match primary.summarize(input).await {
                Ok(drafted) => {
                    let token_counts = drafted
                        .texts
                        .each_ref()
                        .map(|text| self.tokenizer.count(text));
                    let over = Depth::ALL
                        .into_iter()
                        .find(|depth| token_counts[depth.index()] > input.budgets[depth.index()]);
                    let Some(depth) = over else {
                        return Generated {
                            texts: drafted.texts,
                            token_counts,
                            generator: drafted.generator,
                            fallback: (!drafted.skipped.is_empty())
                                .then(|| drafted.skipped.join("; ")),
                        };
                    };
                    let reason = format!(
                        "{} wrote a {depth} summary of {} tokens, over its budget of {}",
                        drafted.generator,
                        token_counts[depth.index()],
                        input.budgets[depth.index()]
                    );
                    tracing::warn!(
                        summarizer = primary.id(),
                        layer = %input.layer,
                        scope = input.scope_id,
                        reason,
                        "summary over its depth budget; using the extractive summary"
                    );
                    fallback = Some(reason);
                }
                Err(error) => {
                    let reason = format!("{error:#}");
                    tracing::warn!(
                        summarizer = primary.id(),
                        layer = %input.layer,
                        scope = input.scope_id,
                        error = reason,
                        "summarizer failed; using the extractive summary"
                    );
                    fallback = Some(reason);
                }
            }
        }
        let mut texts = self.extractive.summarize_now(input);
        // The extractive path selects within budget; this guards the invariant regardless.
        for depth in Depth::ALL {
            let budget = input.budgets[depth.index()];
            let text = &mut texts[depth.index()];
            if self.tokenizer.count(text) > budget {
                *text = self.tokenizer.truncate(text, budget);
            }
        }
        let token_counts = texts.each_ref().map(|text| self.tokenizer.count(text));
        Generated {
            texts,
            token_counts,
            generator: self.extractive.id().to_owned(),
            fallback,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stands in for an LLM provider: answers with fixed texts, or fails.
    struct Scripted(Option<DepthTexts>);

    #[async_trait::async_trait]
    impl Summarizer for Scripted {
        fn id(&self) -> &str {
            "scripted"
        }

        async fn summarize(&self, _input: &SummaryInput<'_>) -> anyhow::Result<Drafted> {
            let texts = self
                .0
                .clone()
                .ok_or_else(|| anyhow::anyhow!("provider unavailable"))?;
            Ok(Drafted {
                texts,
                generator: "scripted-v1".into(),
                skipped: Vec::new(),
            })
        }
    }

    async fn run(primary: Option<DepthTexts>) -> Generated {
        let tokenizer = Tokenizer::get().expect("bpe");
        let docs = [SourceDoc {
            text: "Deploys happen on Tuesdays. Rollbacks need approval.",
            updated_at: 0,
        }];
        let input = SummaryInput {
            tenant_id: "acme",
            layer: Layer::Team,
            scope_id: "core",
            docs: &docs,
            budgets: [10, 20, 40],
        };
        SummaryGenerator::with_primary(Arc::new(Scripted(primary)), tokenizer)
            .generate(&input)
            .await
    }

    #[tokio::test]
    async fn a_working_primary_is_used() {
        let texts = ["a".to_owned(), "b c".to_owned(), "d e f".to_owned()];
        let generated = run(Some(texts.clone())).await;
        assert_eq!(generated.generator, "scripted-v1");
        assert_eq!(generated.texts, texts);
        assert_eq!(generated.fallback, None);
    }

    #[tokio::test]
    async fn a_failing_primary_falls_back_to_the_extractive_path() {
        let generated = run(None).await;
        assert_eq!(generated.generator, ExtractiveSummarizer::ID);
        assert!(generated.texts[2].contains("Deploys"));
        assert_eq!(generated.fallback.as_deref(), Some("provider unavailable"));
    }

    #[tokio::test]
    async fn a_primary_over_budget_falls_back_to_the_extractive_path() {
        let long = "word ".repeat(100);
        let generated = run(Some([String::new(), long, String::new()])).await;
        assert_eq!(generated.generator, ExtractiveSummarizer::ID);
        let reason = generated.fallback.as_deref().unwrap_or_default();
        assert!(
            reason.starts_with(
                "scripted-v1 wrote a paragraph summary of 101 tokens, over its budget of 20"
            ),
            "{reason}"
        );
        assert!(
            generated
                .token_counts
                .iter()
                .zip([10, 20, 40])
                .all(|(count, budget)| *count <= budget)
        );
    }
}
