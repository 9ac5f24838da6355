//! Configuration of the Context Architect. Every number of the design is here, with the design's
//! default; the server embeds [`ContextConfig`] as its `[context]` section.

use std::collections::BTreeMap;

use aeterna_memory::Layer;
use serde::{Deserialize, Serialize};

use crate::model::Depth;

/// Smallest and largest `token_budget` a caller may ask for.
pub const MIN_TOKEN_BUDGET: usize = 100;
pub const MAX_TOKEN_BUDGET: usize = 32_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    /// `token_budget` when the caller gives none (4000).
    pub default_token_budget: usize,
    /// `min_relevance` when the caller gives none (0.1): memories scoring below are dropped.
    /// Search scores are calibrated probabilities of relevance; off-topic memories score
    /// under 0.1 and a memory that answers the query mostly well above it.
    pub min_relevance: f32,
    /// Items at or above this relevance (0.75) may end assembly early: once they alone fill
    /// the budget, nothing less relevant is considered.
    pub high_relevance: f32,
    /// How much recency counts next to relevance, 0..1 (0.15): an item's priority is its
    /// relevance scaled between `1 - recency_weight` (old) and 1 (new).
    pub recency_weight: f32,
    /// Age at which the recency bonus halves, in hours (168 = a week).
    pub recency_half_life_hours: f64,
    /// A candidate whose word shingles are at least this fraction (0.8) contained in what is
    /// already selected adds nothing and is dropped as a near-duplicate.
    pub dedup_containment: f32,
    /// Share of the budget (0.25) kept for layer summaries when the relevant items of some
    /// layer do not all fit.
    pub summary_share: f32,
    /// Share of the budget (0.2) reserved for reviewed knowledge — the items of the knowledge
    /// repositories (memories of kind `knowledge`) relevant to the query, fetched by a search
    /// of their own — so that a flood of session memories cannot crowd out the team's
    /// decisions and policies. What they do not use goes to everything else; 0 turns it off
    /// (the server does when no repository is configured).
    pub knowledge_share: f32,
    /// Memories fetched per layer and query; `None` derives it from the budget.
    pub per_layer_limit: Option<usize>,
    pub cache: CacheConfig,
    pub summaries: SummaryConfig,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            default_token_budget: 4000,
            min_relevance: 0.1,
            high_relevance: 0.75,
            recency_weight: 0.15,
            recency_half_life_hours: 168.0,
            dedup_containment: 0.8,
            summary_share: 0.25,
            knowledge_share: 0.2,
            per_layer_limit: None,
            cache: CacheConfig::default(),
            summaries: SummaryConfig::default(),
        }
    }
}

impl ContextConfig {
    /// Checks what serde cannot; the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        let unit = |key: &str, value: f32| {
            if (0.0..=1.0).contains(&value) {
                Ok(())
            } else {
                Err(format!("context.{key} = {value} must be between 0 and 1"))
            }
        };
        unit("min_relevance", self.min_relevance)?;
        unit("high_relevance", self.high_relevance)?;
        unit("recency_weight", self.recency_weight)?;
        unit("dedup_containment", self.dedup_containment)?;
        unit("summary_share", self.summary_share)?;
        unit("knowledge_share", self.knowledge_share)?;
        if !(MIN_TOKEN_BUDGET..=MAX_TOKEN_BUDGET).contains(&self.default_token_budget) {
            return Err(format!(
                "context.default_token_budget = {} must be between {MIN_TOKEN_BUDGET} and \
                 {MAX_TOKEN_BUDGET}",
                self.default_token_budget
            ));
        }
        if self.recency_half_life_hours.is_nan() || self.recency_half_life_hours <= 0.0 {
            return Err("context.recency_half_life_hours must be positive".into());
        }
        if self.per_layer_limit == Some(0) {
            return Err("context.per_layer_limit must be at least 1 (or left out)".into());
        }
        if self.cache.capacity == 0 {
            return Err("context.cache.capacity must be at least 1".into());
        }
        self.summaries.validate()
    }
}

/// The assembled-context cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheConfig {
    /// Seconds an assembled context stays valid when nothing it read changes (300).
    pub ttl_secs: u64,
    /// Most cached results (1024).
    pub capacity: usize,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            ttl_secs: 300,
            capacity: 1024,
        }
    }
}

/// Layer summaries: token budget per depth and when they are regenerated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SummaryConfig {
    /// Token budget of each depth: sentence 50, paragraph 200, detailed 500.
    pub sentence_tokens: usize,
    pub paragraph_tokens: usize,
    pub detailed_tokens: usize,
    /// The newest memories of a scope that a summary covers (1000).
    pub max_source_items: usize,
    /// Summaries kept in the in-process LRU (4096).
    pub hot_capacity: usize,
    /// When summaries of a layer are regenerated, unless `layers` says otherwise.
    pub triggers: TriggerConfig,
    /// Per-layer overrides of `triggers`, such as `[context.summaries.layers.session]`.
    pub layers: BTreeMap<Layer, TriggerConfig>,
}

impl Default for SummaryConfig {
    fn default() -> Self {
        SummaryConfig {
            sentence_tokens: 50,
            paragraph_tokens: 200,
            detailed_tokens: 500,
            max_source_items: 1000,
            hot_capacity: 4096,
            triggers: TriggerConfig::default(),
            layers: BTreeMap::new(),
        }
    }
}

impl SummaryConfig {
    /// The token budget of `depth`.
    pub fn budget(&self, depth: Depth) -> usize {
        match depth {
            Depth::Sentence => self.sentence_tokens,
            Depth::Paragraph => self.paragraph_tokens,
            Depth::Detailed => self.detailed_tokens,
        }
    }

    /// The triggers in force for `layer`.
    pub fn triggers(&self, layer: Layer) -> &TriggerConfig {
        self.layers.get(&layer).unwrap_or(&self.triggers)
    }

    fn validate(&self) -> Result<(), String> {
        if self.sentence_tokens < 10
            || self.paragraph_tokens < self.sentence_tokens
            || self.detailed_tokens < self.paragraph_tokens
        {
            return Err(
                "context.summaries: need 10 <= sentence_tokens <= paragraph_tokens <= \
                        detailed_tokens"
                    .into(),
            );
        }
        if self.max_source_items == 0 || self.hot_capacity == 0 {
            return Err(
                "context.summaries.max_source_items and hot_capacity must be at least 1".into(),
            );
        }
        Ok(())
    }
}

/// When a layer's summaries are regenerated. A regeneration whose sources are unchanged (same
/// source hash) is skipped, so frequent triggers cost one listing, not a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TriggerConfig {
    /// Regenerate every this many seconds (900); 0 disables the interval.
    pub interval_secs: u64,
    /// Regenerate after this many writes to a scope (10); 0 disables it.
    pub after_changes: u32,
    /// A scope written to without pause is regenerated at most once per this many seconds
    /// (10): writes that reach `after_changes` sooner are summarised together when the gap
    /// ends. Bounds the background work a write-heavy scope costs; 0 disables the gap.
    pub min_gap_secs: u64,
}

impl Default for TriggerConfig {
    fn default() -> Self {
        TriggerConfig {
            interval_secs: 900,
            after_changes: 10,
            min_gap_secs: 10,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_design_numbers_and_valid() {
        let config = ContextConfig::default();
        assert_eq!(config.default_token_budget, 4000);
        assert_eq!(config.min_relevance, 0.1);
        assert_eq!(config.cache.ttl_secs, 300);
        assert_eq!(config.summaries.budget(Depth::Paragraph), 200);
        config.validate().expect("defaults are valid");
    }

    #[test]
    fn per_layer_triggers_override_the_default() {
        let config: SummaryConfig = serde_json::from_value(serde_json::json!({
            "layers": { "session": { "after_changes": 3 } }
        }))
        .expect("valid");
        assert_eq!(config.triggers(Layer::Session).after_changes, 3);
        assert_eq!(config.triggers(Layer::Session).interval_secs, 900);
        assert_eq!(config.triggers(Layer::Project).after_changes, 10);
    }

    #[test]
    fn invalid_values_name_the_key() {
        let config = ContextConfig {
            min_relevance: 1.5,
            ..ContextConfig::default()
        };
        assert!(config.validate().unwrap_err().contains("min_relevance"));
        let error =
            serde_json::from_value::<ContextConfig>(serde_json::json!({"min_relevanse": 1}))
                .unwrap_err()
                .to_string();
        assert!(error.contains("min_relevanse"), "{error}");
    }
}
