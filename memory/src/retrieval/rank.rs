//! The final score and order: the signals weighed by a logistic model, neighbours, and
//! near-duplicates collapsed onto the original.
//!
//! **Score.** `score = σ(bias + Σ weightᵢ · signalᵢ)`: an estimate of the probability that the
//! memory answers the query. The weights ([`SignalWeights`]) are fitted by logistic regression
//! on the fixture sets (`bench/recall/fit.py` says how), so the score means the same for every
//! query: `min_score: 0.5` keeps what is more likely relevant than not, whatever the query's
//! length or vocabulary. Operators may override them in `[memory.retrieval.weights]`.
//!
//! **Neighbours.** In a conversation the answer is often the reply after a matching question
//! ("What did the vet say?" / "Just an infection"). After a first pass, each conversational
//! turn's `neighbour` signal is the first-pass score of the best adjacent turn of its scope,
//! and the adjacent turns of the best candidate turns join the candidates; the second pass
//! scores everything with it.
//!
//! **Near-duplicates.** A memory saved many times in slightly different words would fill the
//! results with copies. Hits whose texts are near-duplicates of a better-ranked hit (static
//! embedding cosine ≥ `duplicate_similarity` and the same details: numbers, names,
//! identifiers) are folded into one result, which shows the *original* — the oldest of them —
//! and lists the others' ids. Texts that differ in a detail ("pool size 20" / "pool size 50")
//! are never folded: one of them may correct the other.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::query::entities;
use super::signals::Signals;
use crate::embed::StaticModel;
use crate::model::{Layer, MemoryRecord};
use crate::text::words;

/// The weights of the final score; see the module documentation. Every field defaults to the
/// fitted value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SignalWeights {
    pub bias: f32,
    pub semantic: f32,
    pub lexical: f32,
    pub fused: f32,
    pub coverage: f32,
    pub proximity: f32,
    pub interaction: f32,
    pub entity: f32,
    pub speaker: f32,
    pub time: f32,
    pub brevity: f32,
    pub neighbour: f32,
}

impl Default for SignalWeights {
    fn default() -> Self {
        super::weights::FITTED
    }
}

impl SignalWeights {
    fn values(&self) -> [f32; 11] {
        [
            self.semantic,
            self.lexical,
            self.fused,
            self.coverage,
            self.proximity,
            self.interaction,
            self.entity,
            self.speaker,
            self.time,
            self.brevity,
            self.neighbour,
        ]
    }

    /// The logit of `signals`: `bias + Σ weight · signal`.
    pub fn logit(&self, signals: &Signals) -> f32 {
        self.bias
            + self
                .values()
                .iter()
                .zip(signals.values())
                .map(|(w, s)| w * s)
                .sum::<f32>()
    }

    /// The 0..1 score of `signals`.
    pub fn score(&self, signals: &Signals) -> f32 {
        sigmoid(self.logit(signals))
    }

    /// What each signal added to the logit, by name.
    pub fn contributions(&self, signals: &Signals) -> Vec<(&'static str, f32)> {
        Signals::NAMES
            .iter()
            .zip(self.values().iter().zip(signals.values()))
            .map(|(name, (w, s))| (*name, w * s))
            .collect()
    }
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// A scored candidate with its record.
#[derive(Debug, Clone)]
pub struct Scored {
    pub record: MemoryRecord,
    pub signals: Signals,
    pub score: f32,
    /// Ranks in the first stage's lists (1-based), when it was in them.
    pub lexical_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    /// Near-duplicates folded into this one.
    pub duplicates: Vec<Uuid>,
}

/// Best first: score, then the older record (the original), then id.
pub fn order(scored: &mut [Scored]) {
    scored.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.record.created_at.cmp(&b.record.created_at))
            .then(a.record.id.cmp(&b.record.id))
    });
}

/// What makes two memories near-duplicates, prepared once per hit.
struct Fingerprint {
    /// Copies live in one scope: the same words in another layer or scope are another memory
    /// (a team's rule and a user's copy of it are both wanted).
    scope: (Layer, String),
    vector: Vec<f32>,
    details: Vec<String>,
}

impl Fingerprint {
    /// `None` for a memory without text, which is nobody's duplicate.
    fn of(model: &StaticModel, record: &MemoryRecord) -> Option<Self> {
        let text = record
            .content
            .as_deref()
            .filter(|text| !text.trim().is_empty())?;
        let mut details = entities(text);
        details.extend(
            words(text, false)
                .into_iter()
                .filter(|w| w.chars().any(|c| c.is_ascii_digit())),
        );
        details.sort();
        details.dedup();
        Some(Fingerprint {
            scope: (record.layer, record.scope_id.clone()),
            vector: model.embed(text),
            details,
        })
    }

    fn duplicates(&self, other: &Fingerprint, similarity: f32) -> bool {
        if self.scope != other.scope {
            return false;
        }
        let cosine: f32 = self
            .vector
            .iter()
            .zip(&other.vector)
            .map(|(a, b)| a * b)
            .sum();
        cosine >= similarity && self.details == other.details
    }
}

/// Folds near-duplicates of better hits into them (see the module documentation), keeping the
/// order, and returns at most `limit` hits. A folded group shows its oldest record, also when
/// that one ranked below the limit; its score and signals stay those of its best member.
pub fn collapse_duplicates(
    ranked: Vec<Scored>,
    model: &StaticModel,
    similarity: f32,
    limit: usize,
) -> Vec<Scored> {
    let mut kept: Vec<(Scored, Option<Fingerprint>)> = Vec::with_capacity(limit);
    for hit in ranked {
        let print = Fingerprint::of(model, &hit.record);
        let full = kept.len() == limit;
        let group = print.as_ref().and_then(|print| {
            kept.iter_mut().find(|(_, other)| {
                other
                    .as_ref()
                    .is_some_and(|other| other.duplicates(print, similarity))
            })
        });
        // Past the limit, the rest is only read for originals of kept copies.
        if group.is_none() && full {
            continue;
        }
        match group {
            Some((group, _)) => {
                if hit.record.created_at < group.record.created_at {
                    // The original takes the group's place; the copy is listed.
                    let copy = std::mem::replace(&mut group.record, hit.record);
                    group.duplicates.push(copy.id);
                } else {
                    group.duplicates.push(hit.record.id);
                }
                group.duplicates.extend(hit.duplicates);
            }
            None => kept.push((hit, print)),
        }
    }
    kept.into_iter().map(|(hit, _)| hit).collect()
}

#[cfg(test)]
mod tests;
