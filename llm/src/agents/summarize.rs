//! [`LlmSummarizer`]: the Context Architect's [`Summarizer`] over the `summarize` chain. When
//! no provider serves, it fails with the reasons, and [`aeterna_context::SummaryGenerator`]
//! writes the extractive summaries and records why.

use aeterna_context::summarize::{Drafted, SummaryInput};
use aeterna_context::{ExtractiveSummarizer, Summarizer};

use crate::chain::RoleChain;
use crate::prompts::{self, SUMMARIZE, SummarySource};

pub struct LlmSummarizer {
    chain: RoleChain,
    max_prompt_bytes: usize,
}

impl LlmSummarizer {
    pub fn new(chain: RoleChain, max_prompt_bytes: usize) -> Self {
        LlmSummarizer {
            chain,
            max_prompt_bytes,
        }
    }
}

#[async_trait::async_trait]
impl Summarizer for LlmSummarizer {
    fn id(&self) -> &str {
        "llm-summarize"
    }

    async fn summarize(&self, input: &SummaryInput<'_>) -> anyhow::Result<Drafted> {
        if input.docs.iter().all(|doc| doc.text.trim().is_empty()) {
            // Nothing to ask a model about: the empty summaries of an empty layer.
            return Ok(Drafted {
                texts: Default::default(),
                generator: ExtractiveSummarizer::ID.to_owned(),
                skipped: Vec::new(),
            });
        }
        self.chain.precheck()?;
        let sources: Vec<SummarySource<'_>> = input
            .docs
            .iter()
            .map(|doc| SummarySource {
                text: doc.text,
                updated_at: doc.updated_at,
            })
            .collect();
        let request = prompts::summarize(
            &input.layer.to_string(),
            input.scope_id,
            &sources,
            input.budgets,
            self.max_prompt_bytes,
        );
        let served = self
            .chain
            .run(input.tenant_id, &request, |response| {
                prompts::read_summary(&response.text)
            })
            .await?;
        Ok(Drafted {
            texts: served.value,
            generator: format!("llm:{}/{} {SUMMARIZE}", served.provider, served.model),
            skipped: served.skipped.iter().map(ToString::to_string).collect(),
        })
    }
}
