//! Layer summaries in SQL (`context_summaries`, migration `0100`), with a hot in-process LRU in
//! front on the embedded profile.
//!
//! Every statement filters by `tenant_id`. The three depths of a scope are read and written
//! together, in one transaction. On SQLite this process is the only writer of the data dir
//! (the memory service locks it), so the LRU stays coherent by updating it on every write. On
//! a shared database (PostgreSQL) other instances write summaries too, so there is no LRU:
//! every read is one primary-key lookup.

use std::num::NonZeroUsize;
use std::sync::Arc;

use aeterna_memory::storage::Database;
use aeterna_memory::{Scope, with_connection, with_pool};
use lru::LruCache;
use parking_lot::Mutex;

use crate::error::{ContextError, Result};
use crate::model::{Depth, LayerSummary};
use crate::render;
use crate::tokens::Tokenizer;

/// The three summaries of one scope, indexed by [`Depth::index`], and what each costs when
/// rendered into an assembled context.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeSummaries {
    pub depths: [LayerSummary; 3],
    /// Tokens of [`render::summary`] of each depth.
    pub rendered_tokens: [usize; 3],
}

impl ScopeSummaries {
    pub fn new(depths: [LayerSummary; 3], tokenizer: Tokenizer) -> Self {
        let rendered_tokens = depths.each_ref().map(|summary| {
            if summary.content.trim().is_empty() {
                0
            } else {
                tokenizer.count(&render::summary(&summary.content))
            }
        });
        ScopeSummaries {
            depths,
            rendered_tokens,
        }
    }

    pub fn get(&self, depth: Depth) -> &LayerSummary {
        &self.depths[depth.index()]
    }

    /// The source hash they were generated from (the same for every depth).
    pub fn source_hash(&self) -> &str {
        &self.depths[0].source_hash
    }
}

type HotKey = (String, Scope);

/// A row of `context_summaries`: depth, content, token_count, source_hash, source_count,
/// generator, generated_at.
type SummaryRow = (String, String, i64, String, i64, String, i64);

/// The summary table and its hot cache. Absent summaries are cached too, so a scope without
/// summaries costs one query, not one per assembly.
pub struct SummaryStore {
    db: Database,
    tokenizer: Tokenizer,
    /// `None` on a shared database (see the module docs).
    hot: Option<Mutex<LruCache<HotKey, Option<Arc<ScopeSummaries>>>>>,
}

impl SummaryStore {
    pub fn new(db: Database, hot_capacity: usize, tokenizer: Tokenizer) -> Self {
        let capacity = NonZeroUsize::new(hot_capacity).unwrap_or(NonZeroUsize::MIN);
        SummaryStore {
            hot: (!db.shared()).then(|| Mutex::new(LruCache::new(capacity))),
            db,
            tokenizer,
        }
    }

    /// The summaries of `scope` in `tenant_id`, if any were generated.
    pub async fn get(&self, tenant_id: &str, scope: &Scope) -> Result<Option<Arc<ScopeSummaries>>> {
        let Some(hot) = &self.hot else {
            return Ok(self.load(tenant_id, scope).await?.map(Arc::new));
        };
        let key = (tenant_id.to_owned(), scope.clone());
        if let Some(hit) = hot.lock().get(&key) {
            return Ok(hit.clone());
        }
        let loaded = self.load(tenant_id, scope).await?.map(Arc::new);
        hot.lock().put(key, loaded.clone());
        Ok(loaded)
    }

    /// The scopes currently hot, for a refresh after lost change notifications.
    pub fn hot_scopes(&self) -> Vec<(String, Scope)> {
        self.hot.as_ref().map_or_else(Vec::new, |hot| {
            hot.lock().iter().map(|(key, _)| key.clone()).collect()
        })
    }

    async fn load(&self, tenant_id: &str, scope: &Scope) -> Result<Option<ScopeSummaries>> {
        let failed = |error: sqlx::Error| {
            ContextError::storage(
                format!("reading the summaries of {scope} ({tenant_id})"),
                error,
            )
        };
        let rows: Vec<SummaryRow> = with_pool!(&self.db, |pool| {
            sqlx::query_as(
                "SELECT depth, content, token_count, source_hash, source_count, generator, \
                 generated_at FROM context_summaries \
                 WHERE tenant_id = $1 AND layer = $2 AND scope_id = $3",
            )
            .bind(tenant_id)
            .bind(scope.layer.as_str())
            .bind(&scope.scope_id)
            .fetch_all(pool)
            .await
        })
        .map_err(failed)?;

        let mut depths: [Option<LayerSummary>; 3] = [None, None, None];
        for (depth, content, token_count, source_hash, source_count, generator, generated_at) in
            rows
        {
            let depth: Depth = depth
                .parse()
                .map_err(|error: String| corrupt(scope, error))?;
            depths[depth.index()] = Some(LayerSummary {
                tenant_id: tenant_id.to_owned(),
                layer: scope.layer,
                scope_id: scope.scope_id.clone(),
                depth,
                content,
                token_count: usize::try_from(token_count).map_err(|e| corrupt(scope, e))?,
                source_hash,
                source_count: usize::try_from(source_count).map_err(|e| corrupt(scope, e))?,
                generator,
                generated_at,
            });
        }
        // Depths are written together; a partial set is treated as missing and regenerated.
        match depths {
            [Some(sentence), Some(paragraph), Some(detailed)] => Ok(Some(ScopeSummaries::new(
                [sentence, paragraph, detailed],
                self.tokenizer,
            ))),
            _ => Ok(None),
        }
    }

    /// Deletes the summaries of `scope`: what they were made from was forgotten, so they are
    /// too (the next assembly asks for new ones from what remains).
    pub async fn forget(&self, tenant_id: &str, scope: &Scope) -> Result<()> {
        with_pool!(&self.db, |pool| sqlx::query(
            "DELETE FROM context_summaries WHERE tenant_id = $1 AND layer = $2 AND scope_id = $3"
        )
        .bind(tenant_id)
        .bind(scope.layer.as_str())
        .bind(&scope.scope_id)
        .execute(pool)
        .await
        .map(drop))
        .map_err(|error| {
            ContextError::storage(
                format!("forgetting the summaries of {scope} ({tenant_id})"),
                error,
            )
        })?;
        if let Some(hot) = &self.hot {
            hot.lock().pop(&(tenant_id.to_owned(), scope.clone()));
        }
        Ok(())
    }

    /// Replaces the summaries of their scope (all three depths, one transaction).
    pub async fn put(&self, summaries: ScopeSummaries) -> Result<Arc<ScopeSummaries>> {
        let first = &summaries.depths[0];
        let (tenant_id, scope) = (
            first.tenant_id.clone(),
            Scope::new(first.layer, &first.scope_id),
        );
        let failed = |error: sqlx::Error| {
            ContextError::storage(
                format!("writing the summaries of {scope} ({tenant_id})"),
                error,
            )
        };
        let mut tx = self.db.begin_write().await.map_err(failed)?;
        for summary in &summaries.depths {
            debug_assert_eq!(
                (&summary.tenant_id, summary.layer),
                (&tenant_id, scope.layer)
            );
            with_connection!(&mut tx, |conn| {
                sqlx::query(
                    "INSERT INTO context_summaries (tenant_id, layer, scope_id, depth, content, \
                     token_count, source_hash, source_count, generator, generated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
                     ON CONFLICT (tenant_id, layer, scope_id, depth) DO UPDATE SET \
                     content = excluded.content, token_count = excluded.token_count, \
                     source_hash = excluded.source_hash, source_count = excluded.source_count, \
                     generator = excluded.generator, generated_at = excluded.generated_at",
                )
                .bind(&tenant_id)
                .bind(scope.layer.as_str())
                .bind(&scope.scope_id)
                .bind(summary.depth.as_str())
                .bind(&summary.content)
                .bind(i64::try_from(summary.token_count).unwrap_or(i64::MAX))
                .bind(&summary.source_hash)
                .bind(i64::try_from(summary.source_count).unwrap_or(i64::MAX))
                .bind(&summary.generator)
                .bind(summary.generated_at)
                .execute(conn)
                .await
                .map(drop)
            })
            .map_err(failed)?;
        }
        tx.commit().await.map_err(failed)?;
        let summaries = Arc::new(summaries);
        if let Some(hot) = &self.hot {
            hot.lock().put((tenant_id, scope), Some(summaries.clone()));
        }
        Ok(summaries)
    }
}

fn corrupt(scope: &Scope, error: impl std::fmt::Display) -> ContextError {
    ContextError::storage(
        format!("reading the summaries of {scope}"),
        anyhow::anyhow!("corrupt row: {error}"),
    )
}
