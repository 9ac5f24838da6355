//! A query against one tenant's index: candidates from every source, the exact score of each,
//! and the order in which they are presented.
//!
//! The order fuses the rankings of four kinds of evidence by weighted reciprocal rank (RRF):
//! the exact score, BM25 over the signatures, BM25 over the fixes' texts and the embedding
//! similarity. A candidate that several independent rankings put near the top comes first
//! even when no single one is decisive, which is what recall of paraphrased errors needs; the
//! exact score still dominates (it has the largest weight) and alone decides what is
//! presented as `matched` (see [`crate::score`]).

use std::collections::HashMap;

use aeterna_memory::Scope;
use aeterna_memory::embed::Calibration;

use crate::index::{TenantIndex, dot, type_term, unit};
use crate::model::{QueryForm, Ranks};
use crate::score::{self, EntryEvidence, Prepared, QueryEvidence, ScoreBreakdown, ScoreWeights};
use crate::signature::ErrorSignature;

/// How a search runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SearchSettings<'a> {
    pub weights: &'a ScoreWeights,
    /// Candidates each source contributes before exact scoring.
    pub per_source: usize,
    /// How the embedder's cosines map to relevance.
    pub calibration: Calibration,
}

/// RRF's rank offset: with a few dozen plausible candidates, 10 keeps the head of each list
/// distinct from its tail.
const FUSION_K: f32 = 10.0;
/// The weight of each ranking in the fusion: score, signature BM25, fix BM25, embedding.
const FUSION_WEIGHTS: [f32; 4] = [5.0, 1.0, 1.0, 1.0];

/// A scored candidate.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub position: usize,
    pub breakdown: ScoreBreakdown,
    /// The score candidates are ranked by: the total before the cap on unplaced errors.
    pub ranking: f32,
    pub ranks: Ranks,
    /// The fused reciprocal-rank score that orders the candidates.
    pub fused: f32,
}

/// The candidates for `query` among the entries whose scope passes `visible`, in presentation
/// order (fused rank, then score).
pub(crate) fn search(
    index: &TenantIndex,
    query: &ErrorSignature,
    form: QueryForm,
    settings: &SearchSettings<'_>,
    visible: impl Fn(&Scope) -> bool,
) -> Vec<Candidate> {
    let mut query = query.clone();
    if let Some(vector) = query.embedding.as_mut() {
        unit(vector);
    }
    let sets = Prepared::new(&query);
    let allowed = index.allowed_scopes(visible);
    let is_allowed = |p: usize| index.is_allowed(p, &allowed);
    let n = index.len();
    let per_source = settings.per_source;

    let mut lexical_terms = sets.message.clone();
    if sets.coded {
        lexical_terms.push(type_term(&query.error_type));
        lexical_terms.sort_unstable();
    }
    let lexical = index
        .signature_postings
        .best(&lexical_terms, n, per_source, &is_allowed);
    let fixes = if form == QueryForm::ToolOutput {
        Vec::new()
    } else {
        index
            .fix_postings
            .best(&sets.words, n, per_source, &is_allowed)
    };
    let (nearest, median) = query
        .embedding
        .as_deref()
        .map(|v| index.nearest_and_median(v, per_source, &allowed))
        .unwrap_or_default();
    let calibration = adapted(settings.calibration, median);

    let mut candidates: Vec<usize> = Vec::new();
    if sets.coded {
        let bucket = index.bucket(query.language, &query.error_type);
        if bucket.len() <= per_source {
            candidates.extend(bucket.iter().copied().filter(|p| is_allowed(*p)));
        } else {
            // A large bucket: its best lexical matches compete with everyone else's.
            let in_bucket = index
                .signature_postings
                .best(&lexical_terms, n, bucket.len(), &|p| {
                    is_allowed(p) && bucket.contains(&p)
                });
            candidates.extend(in_bucket.iter().take(per_source).map(|h| h.0));
        }
    }
    for list in [&lexical, &fixes, &nearest] {
        candidates.extend(list.iter().map(|h| h.0));
    }
    candidates.sort_unstable();
    candidates.dedup();

    let known_terms: Vec<u64> = if form == QueryForm::Description {
        sets.words
            .iter()
            .copied()
            .filter(|t| index.knows(*t))
            .collect()
    } else {
        Vec::new()
    };
    let query_evidence = QueryEvidence {
        signature: &query,
        sets: &sets,
        form,
        known_terms: &known_terms,
    };
    let weight = |t: u64| index.idf(t);
    let mut scored: Vec<Candidate> = candidates
        .into_iter()
        .map(|position| {
            let entry = index.entry(position);
            let embedding = match (&query.embedding, &entry.signature.embedding) {
                (Some(a), Some(b)) if a.len() == b.len() && !a.is_empty() => {
                    Some(calibration.relevance(dot(a, b)))
                }
                _ => None,
            };
            let (breakdown, ranking) = score::score_ranked(
                &query_evidence,
                &EntryEvidence {
                    signature: &entry.signature,
                    sets: &entry.sets,
                    fix_terms: &entry.fix_terms,
                    embedding,
                },
                &weight,
                settings.weights,
            );
            Candidate {
                position,
                breakdown,
                ranking,
                ranks: Ranks::default(),
                fused: 0.0,
            }
        })
        .collect();

    // Ranks, 1-based, in each list.
    scored.sort_by(|a, b| {
        b.ranking
            .total_cmp(&a.ranking)
            .then(a.position.cmp(&b.position))
    });
    let rank_in = |list: &[(usize, f32)]| -> HashMap<usize, u32> {
        list.iter()
            .enumerate()
            .map(|(i, (p, _))| (*p, i as u32 + 1))
            .collect()
    };
    let (lexical, fixes, nearest) = (rank_in(&lexical), rank_in(&fixes), rank_in(&nearest));
    for (i, candidate) in scored.iter_mut().enumerate() {
        let p = candidate.position;
        candidate.ranks = Ranks {
            score: i as u32 + 1,
            lexical: lexical.get(&p).copied(),
            fixes: fixes.get(&p).copied(),
            embedding: nearest.get(&p).copied(),
        };
        candidate.fused = fuse(&candidate.ranks);
    }
    scored.sort_by(|a, b| {
        b.fused
            .total_cmp(&a.fused)
            .then(b.ranking.total_cmp(&a.ranking))
            .then_with(|| {
                index
                    .entry(b.position)
                    .occurrence_count
                    .cmp(&index.entry(a.position).occurrence_count)
            })
            .then(a.position.cmp(&b.position))
    });
    scored
}

/// The embedder's calibration, raised to this query's own unrelated level: the median cosine
/// of the query to the stored errors, when it is above the embedder's `unrelated`. Error
/// texts share much vocabulary (`error`, `cannot`, `<Q>`), and a model that places all
/// technical text close together (the static embedder: a typical wrong message scores 0.5,
/// its `unrelated` is 0.15) would otherwise call every stored error related. The span from
/// unrelated to related stays the embedder's.
fn adapted(calibration: Calibration, median: Option<f32>) -> Calibration {
    match median {
        Some(median) if median > calibration.unrelated => Calibration {
            unrelated: median,
            related: median + (calibration.related - calibration.unrelated),
        },
        _ => calibration,
    }
}

/// Weighted reciprocal-rank fusion of a candidate's ranks.
fn fuse(ranks: &Ranks) -> f32 {
    [
        Some(ranks.score),
        ranks.lexical,
        ranks.fixes,
        ranks.embedding,
    ]
    .iter()
    .zip(FUSION_WEIGHTS)
    .filter_map(|(rank, weight)| rank.map(|r| weight / (FUSION_K + r as f32)))
    .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{Entry, fix_terms};
    use crate::signature::Language;
    use aeterna_memory::Layer;
    use uuid::Uuid;

    fn entry(n: u128, error_type: &str, message: &str, language: Language) -> Entry {
        Entry::new(
            Uuid::from_u128(n),
            Scope::new(Layer::Project, "a"),
            format!("fp{n}"),
            1,
            ErrorSignature {
                error_type: error_type.into(),
                message_pattern: message.into(),
                stack_patterns: vec![],
                context_patterns: vec![],
                language,
                embedding: None,
            },
        )
    }

    fn settings(weights: &ScoreWeights) -> SearchSettings<'_> {
        SearchSettings {
            weights,
            per_source: 10,
            calibration: Calibration::default(),
        }
    }

    fn query(error_type: &str, message: &str, language: Language) -> ErrorSignature {
        entry(99, error_type, message, language).signature
    }

    #[test]
    fn finds_by_type_and_text_and_respects_visibility() {
        let mut index = TenantIndex::default();
        index.upsert(entry(1, "E0308", "mismatched types", Language::Rust));
        index.upsert(entry(
            2,
            "E0425",
            "cannot find value <Q> in this scope",
            Language::Rust,
        ));
        let weights = ScoreWeights::default();
        let q = query("E0308", "mismatched types", Language::Rust);
        let hits = search(
            &index,
            &q,
            QueryForm::ToolOutput,
            &settings(&weights),
            |_| true,
        );
        assert_eq!(
            hits.len(),
            1,
            "an entry sharing no word or type is no candidate"
        );
        assert_eq!(hits[0].breakdown.total, 1.0);
        assert_eq!(hits[0].ranks.score, 1);
        let hidden = search(
            &index,
            &q,
            QueryForm::ToolOutput,
            &settings(&weights),
            |_| false,
        );
        assert!(hidden.is_empty());
    }

    #[test]
    fn a_description_finds_the_error_through_its_fix() {
        let mut index = TenantIndex::default();
        index.upsert(entry(
            1,
            "E0382",
            "borrow of moved value: <Q>",
            Language::Rust,
        ));
        index.upsert(entry(
            2,
            "E0502",
            "cannot borrow <Q> as mutable",
            Language::Rust,
        ));
        index.upsert(entry(3, "KeyError", "<Q>", Language::Python));
        index.add_fix(
            Uuid::from_u128(3),
            &fix_terms("use dict.get with a default"),
        );
        let weights = ScoreWeights::default();
        let q = query(
            "description",
            "looking up a missing key in a dict raises",
            Language::Python,
        );
        let hits = search(
            &index,
            &q,
            QueryForm::Description,
            &settings(&weights),
            |_| true,
        );
        assert_eq!(hits[0].position, 2, "{hits:?}");
        assert_eq!(hits[0].ranks.fixes, Some(1));
    }

    #[test]
    fn language_tells_apart_classes_sharing_a_message() {
        let mut index = TenantIndex::default();
        index.upsert(entry(
            1,
            "undefined-reference",
            "undefined reference to <Q>",
            Language::C,
        ));
        index.upsert(entry(
            2,
            "undefined-reference",
            "undefined reference to <Q>",
            Language::Cpp,
        ));
        let weights = ScoreWeights::default();
        let q = query(
            "undefined-reference",
            "undefined reference to <Q>",
            Language::Cpp,
        );
        let hits = search(
            &index,
            &q,
            QueryForm::ErrorMessage,
            &settings(&weights),
            |_| true,
        );
        assert_eq!(hits[0].position, 1);
        assert!(hits[0].breakdown.total > hits[1].breakdown.total);
    }

    #[test]
    fn the_unrelated_level_rises_to_the_query_s_median_cosine() {
        let embedder = Calibration {
            unrelated: 0.15,
            related: 0.6,
        };
        let adapted = adapted(embedder, Some(0.5));
        assert!((adapted.unrelated - 0.5).abs() < 1e-6);
        assert!((adapted.related - 0.95).abs() < 1e-6);
        assert_eq!(adapted.relevance(0.5), 0.0);
        // A median below the embedder's own level, or none, changes nothing.
        assert_eq!(super::adapted(embedder, Some(0.05)), embedder);
        assert_eq!(super::adapted(embedder, None), embedder);
    }

    #[test]
    fn fusion_rewards_agreement() {
        let best = Ranks {
            score: 2,
            lexical: Some(1),
            fixes: Some(1),
            embedding: Some(1),
        };
        let alone = Ranks {
            score: 1,
            lexical: None,
            fixes: None,
            embedding: None,
        };
        assert!(fuse(&best) > fuse(&alone));
    }
}
