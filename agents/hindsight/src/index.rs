//! The in-memory candidate index of one tenant's signatures.
//!
//! Exact scoring is cheap but not free, so a query first gathers candidates from four
//! sources, each bounded by `per_source`: the bucket of the same (language, error type); BM25
//! over the signatures' stemmed message terms and type; BM25 over the texts of the fixes
//! recorded for them; and the nearest embeddings (an exact scan of unit vectors). Only their
//! union, a few hundred at most, is scored exactly ([`crate::search`]). The index also keeps
//! the document frequency of every term, which weights the message similarity (IDF).
//!
//! The index is loaded from SQLite with the tenant in the query, and updated after every
//! committed write; it holds one tenant's rows only. Messages never change (they are part of a
//! signature's identity) and fixes are only ever added, so postings only grow.

use std::collections::HashMap;

use aeterna_memory::Scope;
use uuid::Uuid;

use crate::score::{Prepared, fnv1a, hashed};
use crate::signature::{ErrorSignature, Language};
use crate::terms;

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
    /// The stemmed terms of the fixes recorded for it, sorted and de-duplicated.
    pub fix_terms: Vec<u64>,
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
            fix_terms: Vec::new(),
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

/// The hashed terms of a fix's text (description, file summaries).
pub(crate) fn fix_terms(text: &str) -> Vec<u64> {
    hashed(terms::terms(text).iter().map(String::as_str))
}

/// The lexical terms a signature is found by: its message's terms and pairs, and its type.
fn signature_terms(entry: &Entry) -> Vec<u64> {
    let mut all = entry.sets.message.clone();
    all.push(type_term(&entry.signature.error_type));
    all.sort_unstable();
    all.dedup();
    all
}

/// The term an error type is indexed under (`type:e0308`).
pub(crate) fn type_term(error_type: &str) -> u64 {
    fnv1a(format!("type:{}", error_type.to_ascii_lowercase()).as_bytes())
}

/// An inverted index with binary term frequency.
#[derive(Debug, Default)]
pub(crate) struct Postings {
    lists: HashMap<u64, Vec<usize>>,
    /// Terms per document (by position), for BM25's length normalisation.
    lengths: Vec<usize>,
    documents: usize,
    total_length: usize,
}

impl Postings {
    /// Adds terms to a document. The caller passes each (document, term) pair once.
    fn add(&mut self, position: usize, terms: &[u64]) {
        if terms.is_empty() {
            return;
        }
        for term in terms {
            self.lists.entry(*term).or_default().push(position);
        }
        if self.lengths.len() <= position {
            self.lengths.resize(position + 1, 0);
        }
        if self.lengths[position] == 0 {
            self.documents += 1;
        }
        self.lengths[position] += terms.len();
        self.total_length += terms.len();
    }

    pub fn df(&self, term: u64) -> usize {
        self.lists.get(&term).map_or(0, Vec::len)
    }

    /// The `limit` best documents by BM25 (k1 = 1.2, b = 0.75, binary tf) among those
    /// `allowed`. Terms in more than a fifth of the `n` documents (and over 50) are skipped:
    /// they say little and would make every query touch every document.
    pub fn best(
        &self,
        query: &[u64],
        n: usize,
        limit: usize,
        allowed: &dyn Fn(usize) -> bool,
    ) -> Vec<(usize, f32)> {
        const COMMON_SHARE: f32 = 0.2;
        let average = (self.total_length as f32 / self.documents.max(1) as f32).max(1.0);
        let mut scores = vec![0.0f32; self.lengths.len()];
        let mut touched = Vec::new();
        for term in query {
            let Some(list) = self.lists.get(term) else {
                continue;
            };
            let df = list.len() as f32;
            if df > (n as f32 * COMMON_SHARE).max(50.0) {
                continue;
            }
            let idf = (1.0 + (n as f32 - df + 0.5) / (df + 0.5)).ln();
            for &position in list {
                let norm = 1.2 * (0.25 + 0.75 * self.lengths[position] as f32 / average);
                if scores[position] == 0.0 {
                    touched.push(position);
                }
                scores[position] += idf * 2.2 / (1.0 + norm);
            }
        }
        let hits = touched
            .into_iter()
            .filter(|p| allowed(*p))
            .map(|p| (p, scores[p]));
        top(hits, limit)
    }
}

#[derive(Debug, Default)]
pub(crate) struct TenantIndex {
    entries: Vec<Entry>,
    by_id: HashMap<Uuid, usize>,
    by_type: HashMap<(Language, String), Vec<usize>>,
    /// BM25 over the signatures' message terms and types.
    pub(crate) signature_postings: Postings,
    /// BM25 over the fixes' texts.
    pub(crate) fix_postings: Postings,
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
    /// fingerprint is part of its identity, so the postings stay valid). A replaced entry
    /// keeps its fix terms.
    pub fn upsert(&mut self, mut entry: Entry) {
        if let Some(&position) = self.by_id.get(&entry.id) {
            self.set_vector(position, entry.signature.embedding.as_deref());
            self.entry_scope[position] = self.intern(&entry.scope);
            let fixes = std::mem::take(&mut self.entries[position].fix_terms);
            entry.fix_terms = fixes;
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
        self.signature_postings
            .add(position, &signature_terms(&entry));
        let fixes = std::mem::take(&mut entry.fix_terms);
        self.entries.push(entry);
        self.add_fix_terms(position, &fixes);
    }

    /// Records the terms of a fix for the entry with this id (no-op for an unknown id).
    pub fn add_fix(&mut self, id: Uuid, terms: &[u64]) {
        if let Some(&position) = self.by_id.get(&id) {
            self.add_fix_terms(position, terms);
        }
    }

    fn add_fix_terms(&mut self, position: usize, terms: &[u64]) {
        let entry = &mut self.entries[position];
        let new: Vec<u64> = terms
            .iter()
            .copied()
            .filter(|t| entry.fix_terms.binary_search(t).is_err())
            .collect();
        if new.is_empty() {
            return;
        }
        entry.fix_terms.extend(&new);
        entry.fix_terms.sort_unstable();
        self.fix_postings.add(position, &new);
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

    /// Which interned scopes pass `visible`, by scope index.
    pub fn allowed_scopes(&self, visible: impl Fn(&Scope) -> bool) -> Vec<bool> {
        self.scopes.iter().map(visible).collect()
    }

    /// Whether the entry at `position` is in an allowed scope.
    pub fn is_allowed(&self, position: usize, allowed: &[bool]) -> bool {
        allowed[self.entry_scope[position]]
    }

    /// The visible entries of a (language, type) bucket.
    pub fn bucket(&self, language: Language, error_type: &str) -> &[usize] {
        self.by_type
            .get(&(language, error_type.to_ascii_lowercase()))
            .map_or(&[], Vec::as_slice)
    }

    /// The inverse document frequency weight of a message term among the stored signatures:
    /// `ln((N + 1) / (df + 0.5))`, at least 0.05. Placeholders weigh the least.
    pub fn idf(&self, term: u64) -> f32 {
        if term == *PLACEHOLDER_TERM {
            return 0.05;
        }
        let n = self.entries.len() as f32;
        let df = self.signature_postings.df(term) as f32;
        ((n + 1.0) / (df + 0.5)).ln().max(0.05)
    }

    /// Whether any stored message or fix contains the term.
    pub fn knows(&self, term: u64) -> bool {
        self.signature_postings.df(term) > 0 || self.fix_postings.df(term) > 0
    }

    /// The `limit` entries whose unit embeddings are nearest to `vector`, with their cosine.
    #[cfg(test)]
    pub fn nearest(&self, vector: &[f32], limit: usize, allowed: &[bool]) -> Vec<(usize, f32)> {
        self.nearest_and_median(vector, limit, allowed).0
    }

    /// [`Self::nearest`], and the median cosine of `vector` to the visible entries: how
    /// similar this query is to errors in general (most stored errors are unrelated to any
    /// one query), once there are enough of them to tell ([`MIN_BASELINE_ENTRIES`]).
    pub fn nearest_and_median(
        &self,
        vector: &[f32],
        limit: usize,
        allowed: &[bool],
    ) -> (Vec<(usize, f32)>, Option<f32>) {
        if vector.len() != self.dims || self.dims == 0 {
            return (Vec::new(), None);
        }
        let mut query = vector.to_vec();
        unit(&mut query);
        let similarities: Vec<(usize, f32)> = self
            .matrix
            .chunks_exact(self.dims)
            .zip(&self.rows)
            .filter(|(_, position)| allowed[self.entry_scope[**position]])
            .map(|(row, position)| (*position, dot(row, &query)))
            .collect();
        let median = (similarities.len() >= MIN_BASELINE_ENTRIES).then(|| {
            let mut cosines: Vec<f32> = similarities.iter().map(|(_, c)| *c).collect();
            let middle = cosines.len() / 2;
            *cosines.select_nth_unstable_by(middle, f32::total_cmp).1
        });
        (top(similarities.into_iter(), limit), median)
    }
}

/// Visible entries with embeddings needed before their median cosine to a query is taken as
/// its unrelated level (see `search`).
pub(crate) const MIN_BASELINE_ENTRIES: usize = 16;

/// The hash of [`terms::PLACEHOLDER`].
static PLACEHOLDER_TERM: std::sync::LazyLock<u64> =
    std::sync::LazyLock::new(|| fnv1a(terms::PLACEHOLDER.as_bytes()));

/// Dot product with eight independent accumulators, which the compiler vectorises.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
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

/// The `limit` highest scores, best first (ties by position, for stable answers).
pub(crate) fn top(scores: impl Iterator<Item = (usize, f32)>, limit: usize) -> Vec<(usize, f32)> {
    let mut all: Vec<(usize, f32)> = scores.collect();
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if all.len() > limit {
        all.select_nth_unstable_by(limit, order);
        all.truncate(limit);
    }
    all.sort_by(order);
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use aeterna_memory::Layer;

    pub(crate) fn entry(n: u128, error_type: &str, message: &str, scope: &str) -> Entry {
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
    fn upsert_replaces_by_id_and_keeps_fixes() {
        let mut index = TenantIndex::default();
        index.upsert(entry(1, "E0308", "mismatched types", "a"));
        index.add_fix(Uuid::from_u128(1), &fix_terms("convert with parse"));
        let mut again = entry(1, "E0308", "mismatched types", "a");
        again.occurrence_count = 5;
        index.upsert(again);
        assert_eq!(index.len(), 1);
        let stored = index.get(Uuid::from_u128(1)).unwrap();
        assert_eq!(stored.occurrence_count, 5);
        assert_eq!(stored.fix_terms.len(), 2, "convert, pars");
        assert_eq!(index.fix_postings.df(fnv1a(b"pars")), 1);
    }

    #[test]
    fn bm25_prefers_rare_shared_terms_and_respects_visibility() {
        let mut index = TenantIndex::default();
        index.upsert(entry(1, "E0382", "borrow of moved value: <Q>", "a"));
        index.upsert(entry(2, "E0502", "cannot borrow <Q> as mutable", "a"));
        index.upsert(entry(3, "E0382", "borrow of moved value: <Q>", "b"));
        let query = hashed(["mov", "valu"].into_iter());
        let n = index.len();
        let hits = index.signature_postings.best(&query, n, 10, &|p| p != 2);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [0]);
        let query = hashed(["borrow"].into_iter());
        let hits = index.signature_postings.best(&query, n, 10, &|_| true);
        assert_eq!(hits.len(), 3);
        assert!(index.idf(fnv1a(b"borrow")) < index.idf(fnv1a(b"mov")));
        assert!(index.knows(fnv1a(b"mov")) && !index.knows(fnv1a(b"zebra")));
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
        let positions = |hits: Vec<(usize, f32)>| hits.into_iter().map(|h| h.0).collect::<Vec<_>>();
        let mut index = TenantIndex::default();
        with_vector(&mut index, 1, vec![1.0, 0.0, 0.0]);
        with_vector(&mut index, 2, vec![0.0, 1.0, 0.0]);
        with_vector(&mut index, 3, vec![0.0, 0.0, 2.0]);
        assert_eq!(positions(index.nearest(&[0.0, 0.1, 0.0], 1, &[true])), [1]);
        // Replacing an entry replaces its row; a vector of other dimensions is left out.
        with_vector(&mut index, 2, vec![0.0, 0.0, -1.0]);
        with_vector(&mut index, 4, vec![1.0, 1.0]);
        assert_eq!(
            positions(index.nearest(&[0.0, 0.0, 1.0], 3, &[true])),
            [2, 0, 1]
        );
        assert_eq!(index.rows.len(), 3);
    }

    #[test]
    fn top_keeps_the_best_in_order() {
        let picked = top([(0, 0.1), (1, 0.9), (2, 0.5), (3, 0.7)].into_iter(), 2);
        assert_eq!(picked, [(1, 0.9), (3, 0.7)]);
    }
}
