//! Hindsight settings. Every number is configurable; the defaults are the design's.

use std::collections::BTreeSet;

use aeterna_memory::Layer;
use serde::{Deserialize, Serialize};

use crate::score::ScoreWeights;

/// Settings of the Hindsight service (`[hindsight]` in the server configuration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HindsightConfig {
    /// A stored error is presented as `matched` (its fix safe to apply) when it scores at
    /// least this. Calibrated on held-out data to keep wrong `matched` answers under 5% for
    /// raw output, bare messages and descriptions alike (see `CALIBRATION.md`).
    pub match_threshold: f32,
    /// Candidates scoring below this are not listed as `related` either: nothing like them
    /// is stored.
    pub related_floor: f32,
    /// A captured error merges into an existing signature of the same scope scoring at least
    /// this (0.92): a near duplicate.
    pub duplicate_threshold: f32,
    /// A new fix whose text is this similar (Dice of stemmed words, 0.85) to a fix recorded
    /// for an error of the same language in the same scope joins that fix's lineage instead
    /// of starting a new one.
    pub duplicate_fix_threshold: f32,
    pub weights: ScoreWeights,
    /// How many candidates each generator (type bucket, lexical, vector) contributes before
    /// exact scoring (100).
    pub candidates_per_source: usize,
    /// The layer captures and resolutions go to when the caller does not say (project).
    pub default_layer: Layer,
    /// Largest accepted error text, in bytes (256 KiB).
    pub max_error_bytes: usize,
    /// Most signatures recorded from one error text (20).
    pub max_signatures_per_text: usize,
    /// Largest resolution description plus changes, in bytes (32 KiB).
    pub max_resolution_bytes: usize,
    /// Most matches returned by one query (10).
    pub max_matches: usize,
    /// Render each resolution as a Markdown memory of kind `hindsight` (true).
    pub notes: bool,
    pub promotion: PromotionConfig,
}

impl Default for HindsightConfig {
    fn default() -> Self {
        HindsightConfig {
            match_threshold: 0.75,
            related_floor: 0.2,
            duplicate_threshold: 0.92,
            duplicate_fix_threshold: 0.85,
            weights: ScoreWeights::default(),
            candidates_per_source: 100,
            default_layer: Layer::Project,
            max_error_bytes: 256 * 1024,
            max_signatures_per_text: 20,
            max_resolution_bytes: 32 * 1024,
            max_matches: 10,
            notes: true,
            promotion: PromotionConfig::default(),
        }
    }
}

/// When a resolution moves to the next broader layer (project → team → org → company).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PromotionConfig {
    /// Promote at all (true).
    pub enabled: bool,
    /// Lowest success rate that qualifies (0.8).
    pub min_success_rate: f64,
    /// Fewest applications at the current layer that qualify (3).
    pub min_applications: u64,
    /// Target layers whose promotions wait for `hindsight_approve` (company).
    pub require_approval: BTreeSet<Layer>,
}

impl Default for PromotionConfig {
    fn default() -> Self {
        PromotionConfig {
            enabled: true,
            min_success_rate: 0.8,
            min_applications: 3,
            require_approval: BTreeSet::from([Layer::Company]),
        }
    }
}

impl HindsightConfig {
    /// Checks the values that would make the service misbehave; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        for (name, value) in [
            ("match_threshold", self.match_threshold),
            ("related_floor", self.related_floor),
            ("duplicate_threshold", self.duplicate_threshold),
            ("duplicate_fix_threshold", self.duplicate_fix_threshold),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(format!(
                    "hindsight.{name} is {value}; it must be within 0..1"
                ));
            }
        }
        if !(0.0..=1.0).contains(&self.promotion.min_success_rate) {
            return Err("hindsight.promotion.min_success_rate must be within 0..1".into());
        }
        if self.promotion.min_applications == 0 {
            return Err("hindsight.promotion.min_applications must be at least 1".into());
        }
        let w = &self.weights;
        if [
            w.error_type,
            w.message,
            w.embedding,
            w.context,
            w.language,
            w.resolution,
        ]
        .iter()
        .any(|w| !(w.is_finite() && *w >= 0.0))
            || w.message <= 0.0
        {
            return Err("hindsight.weights must be non-negative, with message > 0".into());
        }
        if self.candidates_per_source == 0 || self.max_matches == 0 {
            return Err(
                "hindsight.candidates_per_source and max_matches must be at least 1".into(),
            );
        }
        Ok(())
    }
}
