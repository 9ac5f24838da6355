//! The in-memory candidate index of one tenant's signatures.
//!
//! Exact scoring is cheap but not free, so a query first gathers candidates from three
//! sources, each bounded by `per_source`: the bucket of the same (language, error type), the
//! best lexical matches (BM25 over message shingles through an inverted index) and the nearest
//! embeddings (an exact scan of unit vectors). Only their union, a few hundred at most, is
//! scored exactly. The index is loaded from SQLite with the tenant in the query, and updated
//! after every committed write; it holds one tenant's rows only.

use std::collections::{HashMap, HashSet};

use aeterna_memory::Scope;
use uuid::Uuid;

use crate::score::{Prepared, ScoreBreakdown, ScoreWeights, score_prepared};
use crate::signature::{ErrorSignature, Language};

/// One stored signature, ready for scoring.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub id: Uuid,
    pub scope: Scope,
    pub fingerprint: String,
    pub occurrence_count: u64,
    /// With a unit-length embedding, or none when it was made by another embedder.
    pub signature: ErrorSignature,
    pub sets: Prepared,
}

impl Entry {
    pub fn new(
        id: Uuid,
        scope: Scope,
        fingerprint: String,
        occurrence_count: u64,
        mut signature: ErrorSignature,
    ) -> Entry {
        if let Some(vector) = signature.embedding.as_mut() {
            unit(vector);
        }
        let sets = Prepared::new(&signature);
        Entry {
            id,
            scope,
            fingerprint,
            occurrence_count,
            signature,
            sets,
        }
    }
}

/// Scales `vector` to unit length (a zero vector stays zero).
pub(crate) fn unit(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

/// A scored candidate.
#[derive(Debug, Clone)]
pub(crate) struct Scored {
    pub position: usize,
    pub breakdown: ScoreBreakdown,
}

#[derive(Debug, Default)]
pub(crate) struct TenantIndex {
    entries: Vec<Entry>,
    by_id: HashMap<Uuid, usize>,
    by_type: HashMap<(Language, String), Vec<usize>>,
    postings: HashMap<u64, Vec<usize>>,
    /// Distinct scopes, so visibility is checked once per scope rather than once per entry.
    scopes: Vec<Scope>,
    scope_index: HashMap<Scope, usize>,
    entry_scope: Vec<usize>,
    /// The unit embeddings, row after row, for a cache-friendly scan; `rows[i]` is the entry
    /// of row `i`, `row_of[entry]` its row.
    matrix: Vec<f32>,
    dims: usize,
    rows: Vec<usize>,
    row_of: HashMap<usize, usize>,
}

/// Shingles in more than this share of the entries are too common to find candidates with.
const COMMON_SHARE: f32 = 0.2;

impl TenantIndex {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn entry(&self, position: usize) -> &Entry {
        &self.entries[position]
    }

    #[cfg(test)]
    pub fn get(&self, id: Uuid) -> Option<&Entry> {
        self.by_id.get(&id).map(|p| &self.entries[*p])
    }

    /// Adds an entry, or replaces the one with the same id (whose message never changes: the
    /// fingerprint is part of its identity, so the postings stay valid).
    pub fn upsert(&mut self, entry: Entry) {
        if let Some(&position) = self.by_id.get(&entry.id) {
            self.set_vector(position, entry.signature.embedding.as_deref());
            self.entry_scope[position] = self.intern(&entry.scope);
            self.entries[position] = entry;
            return;
        }
        let position = self.entries.len();
        self.set_vector(position, entry.signature.embedding.as_deref());
        let scope = self.intern(&entry.scope);
        self.entry_scope.push(scope);
        self.by_id.insert(entry.id, position);
        self.by_type
            .entry((
                entry.signature.language,
                entry.signature.error_type.to_ascii_lowercase(),
            ))
            .or_default()
            .push(position);
        for shingle in &entry.sets.shingles {
            self.postings.entry(*shingle).or_default().push(position);
        }
        self.entries.push(entry);
    }

    fn intern(&mut self, scope: &Scope) -> usize {
        if let Some(&index) = self.scope_index.get(scope) {
            return index;
        }
        self.scopes.push(scope.clone());
        self.scope_index
            .insert(scope.clone(), self.scopes.len() - 1);
        self.scopes.len() - 1
    }

    /// Puts an entry's unit vector in the matrix (the first vector fixes the dimensions;
    /// others never match a query and are left out).
    fn set_vector(&mut self, position: usize, vector: Option<&[f32]>) {
        let Some(vector) = vector else { return };
        if self.dims == 0 {
            self.dims = vector.len();
        }
        if vector.len() != self.dims || self.dims == 0 {
            return;
        }
        let row = match self.row_of.get(&position) {
            Some(&row) => row,
            None => {
                self.rows.push(position);
                self.matrix.resize(self.rows.len() * self.dims, 0.0);
                self.row_of.insert(position, self.rows.len() - 1);
                self.rows.len() - 1
            }
        };
        self.matrix[row * self.dims..(row + 1) * self.dims].copy_from_slice(vector);
    }

    /// The entries scoring at least `min_score` against `query` among those whose scope
    /// passes `visible`, best first.
    pub fn search(
        &self,
        query: &ErrorSignature,
        weights: &ScoreWeights,
        per_source: usize,
        min_score: f32,
        visible: impl Fn(&Scope) -> bool,
    ) -> Vec<Scored> {
        let mut query = query.clone();
        if let Some(vector) = query.embedding.as_mut() {
            unit(vector);
        }
        let query_sets = Prepared::new(&query);
        let allowed: Vec<bool> = self.scopes.iter().map(&visible).collect();
        let mut candidates: HashSet<usize> = HashSet::new();

        let bucket_key = (query.language, query.error_type.to_ascii_lowercase());
        if let Some(bucket) = self.by_type.get(&bucket_key) {
            let visible_bucket = bucket
                .iter()
                .copied()
                .filter(|p| allowed[self.entry_scope[*p]]);
            if bucket.len() <= per_source {
                candidates.extend(visible_bucket);
            } else {
                // A large bucket: its best lexical matches compete below with everyone else's.
                let lexical = self.lexical(&query_sets, bucket.len(), &allowed);
                let bucket: HashSet<usize> = bucket.iter().copied().collect();
                candidates.extend(
                    lexical
                        .into_iter()
                        .filter(|p| bucket.contains(p))
                        .take(per_source),
                );
            }
        }
        candidates.extend(self.lexical(&query_sets, per_source, &allowed));
        if let Some(vector) = &query.embedding {
            candidates.extend(self.nearest(vector, per_source, &allowed));
        }

        let mut scored: Vec<Scored> = candidates
            .into_iter()
            .map(|position| {
                let entry = &self.entries[position];
                let breakdown =
                    score_prepared(&query, &query_sets, &entry.signature, &entry.sets, weights);
                Scored {
                    position,
                    breakdown,
                }
            })
            .filter(|s| s.breakdown.total >= min_score)
            .collect();
        scored.sort_by(|a, b| {
            b.breakdown
                .total
                .total_cmp(&a.breakdown.total)
                .then_with(|| {
                    self.entries[b.position]
                        .occurrence_count
                        .cmp(&self.entries[a.position].occurrence_count)
                })
        });
        scored
    }

    /// The `limit` best entries by BM25 over the query's shingles (binary term frequency).
    /// Shingles found in more than `COMMON_SHARE` of the entries are skipped: they say little
    /// and would make every query touch every entry.
    fn lexical(&self, query: &Prepared, limit: usize, allowed: &[bool]) -> Vec<usize> {
        let n = self.entries.len() as f32;
        let mut scores = vec![0.0f32; self.entries.len()];
        let mut touched = Vec::new();
        for shingle in &query.shingles {
            let Some(postings) = self.postings.get(shingle) else {
                continue;
            };
            let df = postings.len() as f32;
            if df > (n * COMMON_SHARE).max(50.0) {
                continue;
            }
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &position in postings {
                let length = self.entries[position].sets.shingles.len().max(1) as f32;
                // k1 = 1.2, b = 0.75, average length taken as 12 shingles.
                let norm = 1.2 * (0.25 + 0.75 * length / 12.0);
                if scores[position] == 0.0 {
                    touched.push(position);
                }
                scores[position] += idf * 2.2 / (1.0 + norm);
            }
        }
        let hits = touched
            .into_iter()
            .filter(|p| allowed[self.entry_scope[*p]])
            .map(|p| (p, scores[p]));
        top(hits, limit)
    }

    /// The `limit` entries whose unit embeddings are nearest to `vector`.
    fn nearest(&self, vector: &[f32], limit: usize, allowed: &[bool]) -> Vec<usize> {
        if vector.len() != self.dims || self.dims == 0 {
            return Vec::new();
        }
        let mut query = vector.to_vec();
        unit(&mut query);
        let similarities = self
            .matrix
            .chunks_exact(self.dims)
            .zip(&self.rows)
            .filter(|(_, position)| allowed[self.entry_scope[**position]])
            .map(|(row, position)| (*position, dot(row, &query)));
        top(similarities, limit)
    }
}

/// Dot product with eight independent accumulators, which the compiler vectorises.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for lane in 0..8 {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The positions of the `limit` highest scores, best first.
fn top(scores: impl Iterator<Item = (usize, f32)>, limit: usize) -> Vec<usize> {
    let mut all: Vec<(usize, f32)> = scores.collect();
    if all.len() > limit {
        all.select_nth_unstable_by(limit, |a, b| b.1.total_cmp(&a.1));
        all.truncate(limit);
    }
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    all.into_iter().map(|(p, _)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use aeterna_memory::Layer;

    fn entry(n: u128, error_type: &str, message: &str, scope: &str) -> Entry {
        Entry::new(
            Uuid::from_u128(n),
            Scope::new(Layer::Project, scope),
            format!("fp{n}"),
            1,
            ErrorSignature {
                error_type: error_type.into(),
                message_pattern: message.into(),
                stack_patterns: vec![],
                context_patterns: vec![],
                language: Language::Rust,
                embedding: None,
            },
        )
    }

    #[test]
    fn finds_by_type_and_text_and_respects_visibility() {
        let mut index = TenantIndex::default();
        index.upsert(entry(1, "E0308", "mismatched types", "a"));
        index.upsert(entry(
            2,
            "E0425",
            "cannot find value <Q> in this scope",
            "a",
        ));
        index.upsert(entry(3, "E0308", "mismatched types", "b"));
        let query = entry(9, "E0308", "mismatched types", "a").signature;
        let weights = ScoreWeights::default();
        let hits = index.search(&query, &weights, 10, 0.8, |s| s.scope_id == "a");
        let ids: Vec<Uuid> = hits.iter().map(|h| index.entry(h.position).id).collect();
        assert_eq!(ids, [Uuid::from_u128(1)]);
        // Without embeddings, an entry of another type sharing no word is never a candidate.
        let hits = index.search(&query, &weights, 10, 0.0, |_| true);
        let positions: HashSet<usize> = hits.iter().map(|h| h.position).collect();
        assert_eq!(positions, HashSet::from([0, 2]));
        // One sharing a word is, and ranks below the same type.
        let query = entry(9, "E0308", "cannot find types", "a").signature;
        let hits = index.search(&query, &weights, 10, 0.0, |_| true);
        assert_eq!(hits.len(), 3);
        assert_eq!(hits[2].position, 1, "the other type ranks last");
    }

    #[test]
    fn upsert_replaces_by_id() {
        let mut index = TenantIndex::default();
        index.upsert(entry(1, "E0308", "mismatched types", "a"));
        let mut again = entry(1, "E0308", "mismatched types", "a");
        again.occurrence_count = 5;
        index.upsert(again);
        assert_eq!(index.len(), 1);
        assert_eq!(
            index.get(Uuid::from_u128(1)).map(|e| e.occurrence_count),
            Some(5)
        );
    }

    #[test]
    fn dot_matches_the_naive_sum() {
        let a: Vec<f32> = (0..21).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..21).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-3);
    }

    #[test]
    fn the_vector_scan_finds_the_nearest_and_replaces_rows() {
        fn with_vector(index: &mut TenantIndex, n: u128, v: Vec<f32>) {
            let mut e = entry(n, "E0308", &format!("message {n}"), "a");
            e.signature.embedding = Some(v);
            index.upsert(Entry::new(e.id, e.scope, e.fingerprint, 1, e.signature));
        }
        let mut index = TenantIndex::default();
        with_vector(&mut index, 1, vec![1.0, 0.0, 0.0]);
        with_vector(&mut index, 2, vec![0.0, 1.0, 0.0]);
        with_vector(&mut index, 3, vec![0.0, 0.0, 2.0]);
        assert_eq!(index.nearest(&[0.0, 0.1, 0.0], 1, &[true]), [1]);
        // Replacing an entry replaces its row; a vector of other dimensions is left out.
        with_vector(&mut index, 2, vec![0.0, 0.0, -1.0]);
        with_vector(&mut index, 4, vec![1.0, 1.0]);
        assert_eq!(index.nearest(&[0.0, 0.0, 1.0], 3, &[true]), [2, 0, 1]);
        assert_eq!(index.rows.len(), 3);
    }

    #[test]
    fn top_keeps_the_best_in_order() {
        let picked = top([(0, 0.1), (1, 0.9), (2, 0.5), (3, 0.7)].into_iter(), 2);
        assert_eq!(picked, [1, 3]);
    }
}
