//! Lexical search with FTS5 and BM25, bounded in cost and normalised to 0..1.
//!
//! * **Restricted in FTS5.** The rows to rank are those matching the content terms AND the
//!   caller's filter keys ([`super::keys`]: tenant, scopes, kinds, tags), found by FTS5 without
//!   ranking; BM25 is then computed by a content-only query restricted to those rows. (Ranking
//!   the filtered query directly costs far more: FTS5's `bm25()` counts the documents of every
//!   phrase in the query, and a scope key's doclist is as long as the scope.) Only the best
//!   `limit` rows are joined to `memories`, which re-checks the tenant.
//! * **Bounded.** BM25 costs about a microsecond per matching row, and a common word matches
//!   most of the corpus while weighing almost nothing (its idf is near 0, or clamped to 1e-6
//!   above half the corpus). Terms are taken rarest first while their document frequencies
//!   add up to at most `max_postings`; the rest are left to the vector retriever.
//! * **Normalised.** A record of average length containing each searched term once scores
//!   `Σ idf(term)`; relevance is BM25 divided by that, clamped to 0..1.
//!
//! Document frequencies come from capped counts (`LIMIT max_postings + 1`), cached: a cached
//! count stays valid while nothing was written, and counts of 100 or more (which a few writes
//! barely move) for up to a minute.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lru::LruCache;
use parking_lot::Mutex;
use sqlx::{QueryBuilder, Row, Sqlite, SqlitePool};

use super::keys::{content_expression, match_expression, term_expression};
use super::rows::parse_id;
use crate::error::{MemoryError, Result};
use crate::model::MemoryFilter;
use crate::storage::LexicalHit;

/// FTS5 clamps idf to this from below.
const IDF_FLOOR: f64 = 1e-6;
const CACHED_TERMS: usize = 10_000;
const STABLE_COUNT: i64 = 100;
const STABLE_FOR: Duration = Duration::from_secs(60);

fn failed(context: &'static str) -> impl FnOnce(sqlx::Error) -> MemoryError {
    move |error| MemoryError::storage(context, error)
}

#[derive(Clone, Copy)]
struct Cached {
    /// Capped at `max_postings + 1`.
    count: i64,
    writes: u64,
    at: Instant,
}

pub(super) struct Lexical {
    max_postings: usize,
    /// Rows in the FTS index (every tenant's, as FTS5's own statistics are).
    documents: AtomicI64,
    /// Bumped by every write, to expire cached counts.
    writes: AtomicU64,
    counts: Mutex<LruCache<String, Cached>>,
}

impl Lexical {
    pub async fn new(pool: &SqlitePool, max_postings: usize) -> Result<Self> {
        let documents: i64 = sqlx::query_scalar("SELECT count(*) FROM memories")
            .fetch_one(pool)
            .await
            .map_err(failed("counting memories"))?;
        Ok(Lexical {
            max_postings: max_postings.max(1),
            documents: AtomicI64::new(documents),
            writes: AtomicU64::new(0),
            counts: Mutex::new(LruCache::new(
                NonZeroUsize::new(CACHED_TERMS).expect("non-zero"),
            )),
        })
    }

    /// Records that `added` rows were inserted and `removed` deleted (or that rows changed).
    pub fn wrote(&self, added: i64, removed: i64) {
        self.documents.fetch_add(added - removed, Ordering::Relaxed);
        self.writes.fetch_add(1, Ordering::Relaxed);
    }

    pub async fn search(
        &self,
        pool: &SqlitePool,
        tenant_id: &str,
        terms: &[String],
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<LexicalHit>> {
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let counts = self.document_counts(pool, terms).await?;
        let mut by_rarity: Vec<(&str, i64)> =
            terms.iter().map(String::as_str).zip(counts).collect();
        by_rarity.sort_by_key(|&(_, count)| count);
        let mut chosen: Vec<(&str, i64)> = Vec::new();
        let mut postings = 0;
        for (term, count) in by_rarity {
            if postings + count > self.max_postings as i64 {
                break;
            }
            postings += count;
            chosen.push((term, count));
        }
        if chosen.iter().all(|&(_, count)| count == 0) {
            return Ok(Vec::new());
        }
        let documents = self.documents.load(Ordering::Relaxed).max(1) as f64;
        let ideal: f64 = chosen
            .iter()
            .map(|&(_, count)| {
                ((documents - count as f64 + 0.5) / (count as f64 + 0.5))
                    .ln()
                    .max(IDF_FLOOR)
            })
            .sum();
        let chosen_terms: Vec<&str> = chosen.iter().map(|&(term, _)| term).collect();

        let mut builder = QueryBuilder::<Sqlite>::new(
            "SELECT m.id, f.score FROM (SELECT rowid, bm25(memories_fts, 1.0, 0.0) AS score \
             FROM memories_fts WHERE memories_fts MATCH ",
        );
        builder.push_bind(content_expression(&chosen_terms));
        // `+rowid` keeps the planner from driving the ranking by one rowid lookup per row.
        builder.push(" AND +rowid IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ");
        builder.push_bind(match_expression(tenant_id, filter, &chosen_terms));
        builder
            .push(") ORDER BY score LIMIT ")
            .push_bind(limit as i64);
        builder.push(") AS f JOIN memories m ON m.seq = f.rowid WHERE +m.tenant_id = ");
        builder.push_bind(tenant_id.to_string());
        builder.push(" ORDER BY f.score");
        let rows = builder
            .build()
            .fetch_all(pool)
            .await
            .map_err(failed("searching text"))?;
        rows.iter()
            .map(|row| {
                let id: String = row.try_get(0).map_err(failed("searching text"))?;
                let bm25: f64 = row.try_get(1).map_err(failed("searching text"))?;
                Ok(LexicalHit {
                    id: parse_id(&id)?,
                    relevance: (-bm25 / ideal).clamp(0.0, 1.0) as f32,
                })
            })
            .collect()
    }

    /// Rows containing each term, counted up to `max_postings + 1`.
    async fn document_counts(&self, pool: &SqlitePool, terms: &[String]) -> Result<Vec<i64>> {
        let writes = self.writes.load(Ordering::Relaxed);
        let mut counts: Vec<Option<i64>> = {
            let mut cache = self.counts.lock();
            terms
                .iter()
                .map(|term| {
                    let cached = cache.get(term)?;
                    let unchanged = cached.writes == writes;
                    let stable = cached.count >= STABLE_COUNT && cached.at.elapsed() < STABLE_FOR;
                    (unchanged || stable).then_some(cached.count)
                })
                .collect()
        };
        let missing: Vec<usize> = (0..terms.len()).filter(|&i| counts[i].is_none()).collect();
        if !missing.is_empty() {
            let cap = self.max_postings as i64 + 1;
            let mut builder = QueryBuilder::<Sqlite>::new("");
            for (n, &i) in missing.iter().enumerate() {
                if n > 0 {
                    builder.push(" UNION ALL ");
                }
                builder.push("SELECT ").push_bind(i as i64);
                builder.push(
                    ", (SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ",
                );
                builder.push_bind(term_expression(&terms[i]));
                builder.push(" LIMIT ").push_bind(cap).push("))");
            }
            let rows = builder
                .build()
                .fetch_all(pool)
                .await
                .map_err(failed("counting term frequencies"))?;
            let mut cache = self.counts.lock();
            for row in rows {
                let i: i64 = row.get(0);
                let count: i64 = row.get(1);
                counts[i as usize] = Some(count);
                cache.put(
                    terms[i as usize].clone(),
                    Cached {
                        count,
                        writes,
                        at: Instant::now(),
                    },
                );
            }
        }
        Ok(counts.into_iter().map(|count| count.unwrap_or(0)).collect())
    }
}
