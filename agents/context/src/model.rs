//! The Context Architect's domain: summary depths, stored summaries, assembly options and the
//! assembled context. These types serialise to the JSON the MCP tools return.

use std::fmt;
use std::str::FromStr;

use aeterna_memory::{Layer, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How much of a layer a summary keeps.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Depth {
    /// About one sentence (~50 tokens).
    Sentence,
    /// About a paragraph (~200 tokens).
    Paragraph,
    /// A detailed digest (~500 tokens).
    Detailed,
}

impl Depth {
    /// Every depth, shortest first.
    pub const ALL: [Depth; 3] = [Depth::Sentence, Depth::Paragraph, Depth::Detailed];

    pub fn as_str(self) -> &'static str {
        match self {
            Depth::Sentence => "sentence",
            Depth::Paragraph => "paragraph",
            Depth::Detailed => "detailed",
        }
    }

    /// Position in [`Depth::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Depth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Depth {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Depth::ALL
            .into_iter()
            .find(|depth| depth.as_str() == s)
            .ok_or_else(|| format!("unknown depth `{s}`; expected sentence, paragraph or detailed"))
    }
}

/// A stored summary of one (tenant, layer, scope) at one depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LayerSummary {
    /// The tenant whose memories are summarised.
    pub tenant_id: String,
    /// The layer summarised.
    pub layer: Layer,
    /// The scope within the layer (`session_id`, `project_id`, …; `company` for the company
    /// layer).
    pub scope_id: String,
    /// How much the summary keeps.
    pub depth: Depth,
    /// The summary text.
    pub content: String,
    /// Tokens of `content` under the BPE of [`crate::tokens`].
    pub token_count: usize,
    /// Hex SHA-256 over the ids and content hashes of the memories summarised.
    pub source_hash: String,
    /// How many memories were summarised.
    pub source_count: usize,
    /// When it was generated, in milliseconds since the Unix epoch (UTC).
    pub generated_at: Timestamp,
    /// Which summariser wrote it (the `Summarizer`'s id), e.g. `extractive-v1`.
    pub generator: String,
}

/// What a piece of assembled content is: a memory in full (`full`), or a layer summary at a
/// depth (`sentence`, `paragraph` or `detailed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceDepth {
    Full,
    Sentence,
    Paragraph,
    Detailed,
}

impl From<Depth> for SourceDepth {
    fn from(depth: Depth) -> Self {
        match depth {
            Depth::Sentence => SourceDepth::Sentence,
            Depth::Paragraph => SourceDepth::Paragraph,
            Depth::Detailed => SourceDepth::Detailed,
        }
    }
}

/// One piece of an assembled context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Source {
    /// The memory id, or `summary:<layer>:<scope>` for a layer summary.
    pub id: String,
    /// The layer it comes from.
    pub layer: Layer,
    /// The scope within that layer.
    pub scope_id: String,
    /// Relevance to the query, 0..1. A summary carries the relevance of the best memory of
    /// its layer that it stands in for.
    pub score: f32,
    /// A memory in full, or a layer summary at a depth.
    pub depth: SourceDepth,
}

/// The result of `context_assemble`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AssembledContext {
    /// Tokens of `content`, counted with the BPE; never more than `token_budget`.
    pub total_tokens: usize,
    /// The budget the context was assembled within.
    pub token_budget: usize,
    /// Markdown, one section per layer, most relevant layer first.
    pub content: String,
    /// The layers that contributed, in the order of `content`.
    pub layers_included: Vec<Layer>,
    /// What went in, most relevant first. No source appears twice.
    pub sources: Vec<Source>,
    /// True when relevant material was left out for lack of budget.
    pub truncated: bool,
}

impl AssembledContext {
    /// The answer when nothing is relevant.
    pub fn empty(token_budget: usize) -> Self {
        AssembledContext {
            total_tokens: 0,
            token_budget,
            content: String::new(),
            layers_included: Vec::new(),
            sources: Vec::new(),
            truncated: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_round_trip_through_strings_and_json() {
        for depth in Depth::ALL {
            assert_eq!(depth.as_str().parse::<Depth>(), Ok(depth));
            assert_eq!(serde_json::to_value(depth).unwrap(), depth.as_str());
        }
        assert!(
            "medium"
                .parse::<Depth>()
                .unwrap_err()
                .contains("sentence, paragraph")
        );
        assert_eq!(serde_json::to_value(SourceDepth::Full).unwrap(), "full");
    }
}
