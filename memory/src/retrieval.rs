//! Hybrid retrieval: how lexical and vector candidates become ranked, scored hits.
//!
//! **Order** is reciprocal rank fusion: a candidate's fused rank value is
//! `Σ 1 / (k + rank)` over the retrievers that returned it (`k` = 60, ranks from 1).
//!
//! **Score** (0..1, comparable across queries) blends two calibrated kinds of evidence:
//! * `v`, vector relevance: cosine similarity mapped through the embedder's
//!   [`Calibration`] — 0 for "as similar as unrelated texts", 1 for "a close paraphrase";
//! * `l`, lexical coverage: BM25 divided by the BM25 that a record of average length containing
//!   each query term once would get (so covering every query term scores about 1, covering
//!   only the rare half of them about 0.5, and a record without any 0);
//!
//! combined as a noisy-or, `score = 1 − (1 − v)·(1 − w·l)` with `w` = 0.6: either kind of
//! evidence alone can make a hit relevant, both together make it more so, and neither alone
//! exceeds its own strength. Every candidate gets an exact cosine, including those only the
//! lexical retriever found.

use foldhash::{HashMap, HashMapExt};

use uuid::Uuid;

use crate::config::RetrievalConfig;
use crate::embed::Calibration;
use crate::storage::LexicalHit;
use crate::text::{is_stopword, words};
use crate::vector::VectorHit;

/// The lexical query terms of `query`: lowercase words without stopwords, de-duplicated.
pub(crate) fn query_terms(query: &str, max_terms: usize) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in words(query, false) {
        if !is_stopword(&word) && !terms.contains(&word) {
            terms.push(word);
            if terms.len() == max_terms {
                break;
            }
        }
    }
    terms
}

/// Whether `query` has anything to search for (punctuation-only queries do not).
pub(crate) fn is_searchable(query: &str) -> bool {
    query.chars().any(char::is_alphanumeric)
}

/// A fused candidate, before it is scored.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    pub id: Uuid,
    pub fused: f32,
    pub cosine: Option<f32>,
    pub lexical: f32,
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
    };
    for (rank, hit) in vector.iter().enumerate() {
        let candidate = candidates.entry(hit.id).or_insert_with(|| blank(hit.id));
        candidate.fused += rrf(rank);
        candidate.cosine = Some(hit.similarity);
    }
    for (rank, hit) in lexical.iter().enumerate() {
        let candidate = candidates.entry(hit.id).or_insert_with(|| blank(hit.id));
        candidate.fused += rrf(rank);
        candidate.lexical = hit.relevance;
    }
    candidates.into_values().collect()
}

/// Orders scored candidates: by fused rank value, then (for the frequent exact ties, such as
/// first in one list and second in the other) by score, then by id.
pub(crate) fn order(scored: &mut [(Candidate, f32)]) {
    scored.sort_by(|(a, a_score), (b, b_score)| {
        b.fused
            .total_cmp(&a.fused)
            .then_with(|| b_score.total_cmp(a_score))
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// The 0..1 relevance of a candidate; see the module documentation.
pub(crate) fn score(
    calibration: &Calibration,
    cosine: f32,
    lexical: f32,
    config: &RetrievalConfig,
) -> f32 {
    let vector = calibration.relevance(cosine);
    let lexical = (config.lexical_weight * lexical).clamp(0.0, 1.0);
    (1.0 - (1.0 - vector) * (1.0 - lexical)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_terms_drop_stopwords_punctuation_and_repeats() {
        assert_eq!(
            query_terms(
                "How do I configure the pool? Pool \"size\" -- OR NEAR(x)",
                32
            ),
            ["configure", "pool", "size", "near", "x"]
        );
        assert!(query_terms("*** ((( \" ^ :", 32).is_empty());
        assert_eq!(query_terms("a b c d e f", 2), ["b", "c"]);
        assert!(!is_searchable("!!! ... ???"));
        assert!(is_searchable("état"));
    }

    #[test]
    fn fusion_rewards_agreement_and_breaks_ties_by_score() {
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
        let fused = fuse(&vector, &lexical, &RetrievalConfig::default());
        let mut scored: Vec<(Candidate, f32)> = fused.into_iter().map(|c| (c, 0.5)).collect();
        order(&mut scored);
        let ids: Vec<u128> = scored.iter().map(|(c, _)| c.id.as_u128()).collect();
        assert_eq!(ids, [2, 1, 3]);
        assert_eq!(scored[0].0.cosine, Some(0.8));
        assert_eq!(scored[0].0.lexical, 0.7);
        assert_eq!(scored[2].0.cosine, None);

        // 1 is first for vectors and second for text, 2 the reverse: an exact tie.
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
        let mut scored: Vec<(Candidate, f32)> =
            fuse(&vector, &lexical, &RetrievalConfig::default())
                .into_iter()
                .map(|c| {
                    let score = if c.id == id(2) { 0.9 } else { 0.4 };
                    (c, score)
                })
                .collect();
        order(&mut scored);
        assert_eq!(scored[0].0.fused, scored[1].0.fused);
        assert_eq!(scored[0].0.id, id(2));
    }

    #[test]
    fn scores_are_calibrated_and_bounded() {
        let calibration = Calibration {
            unrelated: 0.1,
            related: 0.5,
        };
        let config = RetrievalConfig::default();
        assert_eq!(score(&calibration, 0.05, 0.0, &config), 0.0);
        assert_eq!(score(&calibration, 0.9, 0.0, &config), 1.0);
        assert!((score(&calibration, 0.1, 1.0, &config) - 0.6).abs() < 1e-6);
        let both = score(&calibration, 0.3, 0.5, &config);
        assert!(
            both > score(&calibration, 0.3, 0.0, &config)
                && both > score(&calibration, 0.1, 0.5, &config)
        );
        assert!(both <= 1.0);
    }
}
