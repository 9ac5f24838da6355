//! Retrieval: how a query becomes ranked, scored hits.
//!
//! Two stages (orchestrated by `MemoryService::search`, `service/search.rs`):
//!
//! 1. **Candidates.** The lexical retriever (BM25 over the query's terms, see [`query`]) and the
//!    vector index (the query's embedding) each return their best; reciprocal rank fusion
//!    ([`fuse`], `Σ 1 / (k + rank)`, `k` = 60) orders their union and the best
//!    `rerank_depth` go on.
//! 2. **Rescoring.** Each candidate gets every [`signals`] — semantic, lexical, word coverage
//!    with stems, proximity, late interaction over the static embedding table, names, speaker,
//!    time, brevity, neighbours — and [`rank`] weighs them with weights fitted by logistic
//!    regression ([`weights`]) into a 0..1 score comparable across queries; near-duplicates fold
//!    onto their original.
//!
//! [`query`] reads the query (terms, stems, names, time); [`time`] dates queries and memories.

pub mod query;
pub mod rank;
pub mod signals;
pub mod time;
mod weights;

use foldhash::{HashMap, HashMapExt};

use uuid::Uuid;

pub use query::QueryAnalysis;
pub use rank::SignalWeights;
pub use signals::Signals;

use crate::config::RetrievalConfig;
use crate::storage::LexicalHit;
use crate::vector::VectorHit;

/// Whether `query` has anything to search for (punctuation-only queries do not).
pub(crate) fn is_searchable(query: &str) -> bool {
    query.chars().any(char::is_alphanumeric)
}

/// A fused first-stage candidate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    pub id: Uuid,
    pub fused: f32,
    pub cosine: Option<f32>,
    pub lexical: f32,
    /// 1-based ranks in the two lists.
    pub lexical_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
}

impl Candidate {
    /// The fused value as a share of its maximum (first in both lists), 0..1.
    pub fn fused_share(&self, config: &RetrievalConfig) -> f32 {
        (self.fused * (config.rrf_k + 1.0) / 2.0).clamp(0.0, 1.0)
    }
}

/// Reciprocal rank fusion of the two candidate lists, in no particular order (see [`order`]).
pub(crate) fn fuse(
    vector: &[VectorHit],
    lexical: &[LexicalHit],
    config: &RetrievalConfig,
) -> Vec<Candidate> {
    let mut candidates: HashMap<Uuid, Candidate> =
        HashMap::with_capacity(vector.len() + lexical.len());
    let rrf = |rank: usize| 1.0 / (config.rrf_k + rank as f32 + 1.0);
    let blank = |id| Candidate {
        id,
        fused: 0.0,
        cosine: None,
        lexical: 0.0,
        lexical_rank: None,
        semantic_rank: None,
    };
    for (rank, hit) in vector.iter().enumerate() {
        let candidate = candidates.entry(hit.id).or_insert_with(|| blank(hit.id));
        candidate.fused += rrf(rank);
        candidate.cosine = Some(hit.similarity);
        candidate.semantic_rank = Some(rank + 1);
    }
    for (rank, hit) in lexical.iter().enumerate() {
        let candidate = candidates.entry(hit.id).or_insert_with(|| blank(hit.id));
        candidate.fused += rrf(rank);
        candidate.lexical = hit.relevance;
        candidate.lexical_rank = Some(rank + 1);
    }
    candidates.into_values().collect()
}

/// Orders candidates by fused rank value, then (for the frequent exact ties, such as first in
/// one list and second in the other) by lexical relevance and cosine, then by id.
pub(crate) fn order(candidates: &mut [Candidate]) {
    candidates.sort_by(|a, b| {
        b.fused
            .total_cmp(&a.fused)
            .then_with(|| b.lexical.total_cmp(&a.lexical))
            .then_with(|| b.cosine.unwrap_or(0.0).total_cmp(&a.cosine.unwrap_or(0.0)))
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// A project memory of tenant `t` with `content`, written at `created_at`, for the tests of
/// this module's parts.
#[cfg(test)]
pub(crate) fn test_record(
    content: &str,
    metadata: serde_json::Value,
    created_at: i64,
) -> crate::model::MemoryRecord {
    crate::model::MemoryRecord {
        id: uuid::Uuid::now_v7(),
        tenant_id: "t".into(),
        layer: crate::model::Layer::Project,
        scope_id: "p".into(),
        kind: "memory".into(),
        content: Some(content.into()),
        tags: vec![],
        metadata,
        content_hash: String::new(),
        embedder_id: String::new(),
        created_at,
        updated_at: created_at,
        valid_from: created_at,
        valid_to: None,
        version: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctuation_is_not_searchable() {
        assert!(!is_searchable("!!! ... ???"));
        assert!(is_searchable("état"));
    }

    #[test]
    fn fusion_rewards_agreement_and_keeps_ranks() {
        let id = Uuid::from_u128;
        let vector = [
            VectorHit {
                id: id(1),
                similarity: 0.9,
            },
            VectorHit {
                id: id(2),
                similarity: 0.8,
            },
        ];
        let lexical = [
            LexicalHit {
                id: id(2),
                relevance: 0.7,
            },
            LexicalHit {
                id: id(3),
                relevance: 0.9,
            },
        ];
        let config = RetrievalConfig::default();
        let mut fused = fuse(&vector, &lexical, &config);
        order(&mut fused);
        let ids: Vec<u128> = fused.iter().map(|c| c.id.as_u128()).collect();
        assert_eq!(ids, [2, 1, 3]);
        assert_eq!(
            (
                fused[0].cosine,
                fused[0].lexical,
                fused[0].lexical_rank,
                fused[0].semantic_rank
            ),
            (Some(0.8), 0.7, Some(1), Some(2))
        );
        assert_eq!(fused[2].cosine, None);
        assert!(fused[0].fused_share(&config) < 1.0 && fused[0].fused_share(&config) > 0.9);

        // 1 is first for vectors and second for text, 2 the reverse: an exact tie, broken by
        // lexical relevance.
        let lexical = [
            LexicalHit {
                id: id(2),
                relevance: 0.7,
            },
            LexicalHit {
                id: id(1),
                relevance: 0.2,
            },
        ];
        let mut fused = fuse(&vector, &lexical, &config);
        order(&mut fused);
        assert_eq!(fused[0].fused, fused[1].fused);
        assert_eq!(fused[0].id, id(2));
    }
}
