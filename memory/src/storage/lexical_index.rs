//! [`LexicalIndex`]: an in-memory BM25 index of record content, the lexical side of hybrid
//! retrieval for a record store that keeps one (the SQLite store does).
//!
//! Why in memory: SQLite's FTS5 spent about a microsecond per matching row ranking a query
//! (decoding the postings of every query term and of the caller's scope key, calling `bm25()`
//! per row) and every statement hopped to the connection's worker thread: most of a search's
//! CPU. Here a posting costs a few nanoseconds, and FTS5's upkeep disappears from every write.
//!
//! * **Derived, like the vector index.** The store that owns it loads it from its rows when it
//!   opens and applies each write after the write committed; nothing persists it, so it can
//!   never disagree with the database after a restart.
//! * **Per tenant.** Each tenant has its own postings and statistics (document count, average
//!   length, document frequencies): a tenant's scores never depend on another tenant's data,
//!   and a search touches only the caller's tenant.
//! * **Bounded.** Query terms are used rarest first while their document frequencies add up
//!   to at most `max_postings`; common words weigh little in BM25 and are still matched by the
//!   vector search. The vocabulary holds only terms of live records.
//! * **Normalised.** A record of average length containing each searched term once scores
//!   `Σ idf(term)`; relevance is BM25 divided by that, clamped to 0..1 (a query term that no
//!   record contains still counts in the divisor, so covering half the query scores about 0.5).
//!
//! Terms are the lowercase alphanumeric words of [`crate::text::words`] with diacritics removed
//! (`café` matches `cafe`), for content and queries alike.

use foldhash::{HashMap, HashMapExt};
use std::cell::RefCell;
use std::sync::Arc;

use parking_lot::RwLock;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;
use uuid::Uuid;

use crate::intern::Interner;
use crate::model::{MemoryFilter, MemoryRecord, Scope};
use crate::storage::{LexicalHit, bm25};
use crate::text::words;

/// What the index needs of a record.
#[derive(Debug, Clone, Copy)]
pub struct IndexedText<'a> {
    pub tenant_id: &'a str,
    pub id: Uuid,
    pub scope: &'a Scope,
    pub kind: &'a str,
    pub tags: &'a [String],
    pub content: &'a str,
}

impl<'a> IndexedText<'a> {
    /// The indexed parts of `record` (whose scope the caller computed).
    pub fn of(record: &'a MemoryRecord, scope: &'a Scope) -> Self {
        IndexedText {
            tenant_id: &record.tenant_id,
            id: record.id,
            scope,
            kind: &record.kind,
            tags: &record.tags,
            content: record.content.as_deref().unwrap_or_default(),
        }
    }
}

/// The terms of `text`, in order, repeats included.
pub(crate) fn terms(text: &str) -> Vec<String> {
    words(text, false).into_iter().map(fold).collect()
}

/// `word` without diacritics (`é` → `e`).
fn fold(word: String) -> String {
    if word.is_ascii() {
        return word;
    }
    word.nfd().filter(|c| !is_combining_mark(*c)).collect()
}

/// Every tenant's postings; see the module documentation.
#[derive(Default)]
pub struct LexicalIndex {
    tenants: RwLock<HashMap<String, Arc<RwLock<TenantIndex>>>>,
}

impl LexicalIndex {
    pub fn new() -> Self {
        Self::default()
    }

    fn tenant(&self, tenant_id: &str) -> Option<Arc<RwLock<TenantIndex>>> {
        self.tenants.read().get(tenant_id).cloned()
    }

    /// Indexes `text`, replacing what was indexed under its id before.
    pub fn upsert(&self, text: IndexedText<'_>) {
        let tenant = match self.tenant(text.tenant_id) {
            Some(tenant) => tenant,
            None => self
                .tenants
                .write()
                .entry(text.tenant_id.to_owned())
                .or_default()
                .clone(),
        };
        tenant.write().upsert(&text);
    }

    /// Forgets record `id` of `tenant_id`, if indexed.
    pub fn remove(&self, tenant_id: &str, id: Uuid) {
        if let Some(tenant) = self.tenant(tenant_id) {
            tenant.write().remove(id);
        }
    }

    /// Records indexed, across tenants.
    pub fn len(&self) -> usize {
        self.tenants
            .read()
            .values()
            .map(|tenant| tenant.read().slot_of.len())
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The best `limit` records of `tenant_id` that `filter` admits and that contain any of
    /// `query_terms`, best first (ties by id).
    pub fn search(
        &self,
        tenant_id: &str,
        query_terms: &[String],
        filter: &MemoryFilter,
        limit: usize,
        max_postings: usize,
    ) -> Vec<LexicalHit> {
        if query_terms.is_empty() || limit == 0 {
            return Vec::new();
        }
        match self.tenant(tenant_id) {
            Some(tenant) => tenant
                .read()
                .search(query_terms, filter, limit, max_postings),
            None => Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Posting {
    slot: u32,
    frequency: u32,
}

#[derive(Debug)]
struct Doc {
    id: Uuid,
    scope: u32,
    kind: u32,
    tags: Box<[u32]>,
    /// The distinct terms, for removal.
    terms: Box<[u32]>,
    /// Terms in the content, repeats included.
    length: u32,
}

/// One tenant's postings. Records live in slots (reused after removal); terms get ids (also
/// reused once no record contains them).
#[derive(Debug, Default)]
struct TenantIndex {
    docs: Vec<Option<Doc>>,
    free_slots: Vec<u32>,
    slot_of: HashMap<Uuid, u32>,
    vocabulary: HashMap<Box<str>, u32>,
    term_names: Vec<Box<str>>,
    postings: Vec<Vec<Posting>>,
    free_terms: Vec<u32>,
    scopes: Interner<Scope>,
    kinds: Interner<String>,
    tags: Interner<String>,
    total_length: u64,
}

/// Per-row conditions of a search, as interned ids.
struct RowFilter {
    /// Any of these scopes; every scope when `None`.
    scopes: Option<Vec<u32>>,
    kinds: Option<Vec<u32>>,
    /// All of these tags.
    tags: Vec<u32>,
}

impl RowFilter {
    fn admits(&self, doc: &Doc) -> bool {
        self.scopes
            .as_ref()
            .is_none_or(|scopes| scopes.contains(&doc.scope))
            && self
                .kinds
                .as_ref()
                .is_none_or(|kinds| kinds.contains(&doc.kind))
            && self.tags.iter().all(|tag| doc.tags.contains(tag))
    }
}

thread_local! {
    /// BM25 accumulators by slot, reused across searches (zeroed after each).
    static SCORES: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

impl TenantIndex {
    fn upsert(&mut self, text: &IndexedText<'_>) {
        self.remove(text.id);
        let mut frequencies: HashMap<String, u32> = HashMap::new();
        let mut length = 0u32;
        for term in terms(text.content) {
            *frequencies.entry(term).or_default() += 1;
            length += 1;
        }
        let slot = match self.free_slots.pop() {
            Some(slot) => slot,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        let mut doc_terms = Vec::with_capacity(frequencies.len());
        for (term, frequency) in frequencies {
            let term = self.term_id(term);
            self.postings[term as usize].push(Posting { slot, frequency });
            doc_terms.push(term);
        }
        let doc = Doc {
            id: text.id,
            scope: self.scopes.intern(text.scope),
            kind: self.kinds.intern(&text.kind.to_owned()),
            tags: text.tags.iter().map(|tag| self.tags.intern(tag)).collect(),
            terms: doc_terms.into(),
            length,
        };
        self.docs[slot as usize] = Some(doc);
        self.slot_of.insert(text.id, slot);
        self.total_length += u64::from(length);
    }

    fn term_id(&mut self, term: String) -> u32 {
        if let Some(&id) = self.vocabulary.get(term.as_str()) {
            return id;
        }
        let name: Box<str> = term.into();
        let id = match self.free_terms.pop() {
            Some(id) => {
                self.term_names[id as usize] = name.clone();
                id
            }
            None => {
                self.term_names.push(name.clone());
                self.postings.push(Vec::new());
                (self.postings.len() - 1) as u32
            }
        };
        self.vocabulary.insert(name, id);
        id
    }

    fn remove(&mut self, id: Uuid) {
        let Some(slot) = self.slot_of.remove(&id) else {
            return;
        };
        let Some(doc) = self.docs[slot as usize].take() else {
            return;
        };
        for &term in doc.terms.iter() {
            let postings = &mut self.postings[term as usize];
            postings.retain(|posting| posting.slot != slot);
            if postings.is_empty() {
                // Give the memory back: a term nobody uses is forgotten.
                *postings = Vec::new();
                let name = std::mem::take(&mut self.term_names[term as usize]);
                self.vocabulary.remove(&name);
                self.free_terms.push(term);
            }
        }
        self.total_length -= u64::from(doc.length);
        self.free_slots.push(slot);
    }

    /// `None` when no record can match (an unknown scope, kind or tag was required).
    fn row_filter(&self, filter: &MemoryFilter) -> Option<RowFilter> {
        let known = |ids: Vec<u32>| (!ids.is_empty()).then_some(ids);
        let scopes = if filter.scopes.is_empty() {
            None
        } else {
            Some(known(
                filter
                    .scopes
                    .iter()
                    .filter_map(|scope| self.scopes.get(scope))
                    .collect(),
            )?)
        };
        let kinds = if filter.kinds.is_empty() {
            None
        } else {
            Some(known(
                filter
                    .kinds
                    .iter()
                    .filter_map(|kind| self.kinds.get(kind.as_str()))
                    .collect(),
            )?)
        };
        let tags = filter
            .tags
            .iter()
            .map(|tag| self.tags.get(tag.as_str()))
            .collect::<Option<Vec<u32>>>()?;
        Some(RowFilter {
            scopes,
            kinds,
            tags,
        })
    }

    fn search(
        &self,
        query_terms: &[String],
        filter: &MemoryFilter,
        limit: usize,
        max_postings: usize,
    ) -> Vec<LexicalHit> {
        let records = self.slot_of.len();
        if records == 0 {
            return Vec::new();
        }
        let Some(rows) = self.row_filter(filter) else {
            return Vec::new();
        };
        // Distinct terms with their postings (empty for unknown terms), rarest first.
        let mut distinct: Vec<String> = Vec::with_capacity(query_terms.len());
        for term in query_terms {
            let term = fold(term.clone());
            if !distinct.contains(&term) {
                distinct.push(term);
            }
        }
        let mut by_rarity: Vec<&[Posting]> = distinct
            .iter()
            .map(|term| match self.vocabulary.get(term.as_str()) {
                Some(&id) => self.postings[id as usize].as_slice(),
                None => &[],
            })
            .collect();
        by_rarity.sort_by_key(|postings| postings.len());
        let mut chosen: Vec<&[Posting]> = Vec::new();
        let mut budget = 0usize;
        for postings in by_rarity {
            if budget + postings.len() > max_postings.max(1) {
                break;
            }
            budget += postings.len();
            chosen.push(postings);
        }
        if chosen.iter().all(|postings| postings.is_empty()) {
            return Vec::new();
        }

        let documents = records as f64;
        let average_length = (self.total_length as f64 / documents).max(1.0);
        let idf = |postings: &[Posting]| bm25::idf(documents, postings.len() as f64);
        let ideal: f64 = chosen.iter().map(|&postings| idf(postings)).sum();

        SCORES.with(|scores| {
            let mut scores = scores.borrow_mut();
            if scores.len() < self.docs.len() {
                scores.resize(self.docs.len(), 0.0);
            }
            let mut touched: Vec<u32> = Vec::with_capacity(budget);
            for &postings in &chosen {
                let idf = idf(postings);
                for posting in postings.iter() {
                    let Some(doc) = &self.docs[posting.slot as usize] else {
                        continue;
                    };
                    if !rows.admits(doc) {
                        continue;
                    }
                    let frequency = f64::from(posting.frequency);
                    let length = f64::from(doc.length) / average_length;
                    let weight = idf * bm25::saturation(frequency, length);
                    let score = &mut scores[posting.slot as usize];
                    if *score == 0.0 {
                        touched.push(posting.slot);
                    }
                    *score += weight;
                }
            }
            let mut ranked: Vec<(f64, Uuid)> = touched
                .iter()
                .map(|&slot| {
                    let score = std::mem::take(&mut scores[slot as usize]);
                    let id = self.docs[slot as usize]
                        .as_ref()
                        .map_or(Uuid::nil(), |d| d.id);
                    (score, id)
                })
                .collect();
            let best_first =
                |a: &(f64, Uuid), b: &(f64, Uuid)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
            if ranked.len() > limit {
                ranked.select_nth_unstable_by(limit - 1, best_first);
                ranked.truncate(limit);
            }
            ranked.sort_unstable_by(best_first);
            ranked
                .into_iter()
                .map(|(score, id)| LexicalHit {
                    id,
                    relevance: (score / ideal).clamp(0.0, 1.0) as f32,
                })
                .collect()
        })
    }
}

#[cfg(test)]
mod tests;
