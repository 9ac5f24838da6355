//! [`MemoryService`]: the one entry point the agents and transports use.
//!
//! Validation, limits, deduplication, embedding and hybrid retrieval live here; storage
//! backends only store and query, always filtered by tenant in the query itself.
//!
//! Writes are serialised by one in-process lock that covers the database transaction and the
//! vector-index update, so the index applies writes in commit order; concurrent adds share a
//! transaction ([`crate::writes`]). Embedding happens before the lock is taken.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;
use uuid::Uuid;

use crate::embed::{Embedder, check_vectors};
use crate::error::{MemoryError, Result};
use crate::follow::Follower;
use crate::model::{
    AddOutcome, Identity, ListRequest, MemoryChange, MemoryFilter, MemoryRecord, NewMemory, Page,
    now_millis,
};
use crate::storage::Database;
use crate::storage::postgres::{PgDatabase, PgRecordStore};
use crate::storage::sqlite::{SqliteDatabase, SqliteRecordStore};
use crate::storage::{Inserted, ListQuery, NewRecord, RecordStore};
use crate::validate::{self, cursor};
use crate::vector::{
    InMemoryVectorIndex, QdrantVectorStore, VectorEntry, VectorRepairs, VectorStore,
};
use crate::writes::Writes;

pub use crate::config::{EmbedderChange, MemoryConfig, RetentionConfig, RetrievalConfig};

mod as_of;
mod conflicts;
mod forget;
mod search;
mod update;

pub use forget::{Expired, ForgetOutcome, ForgetRequest};

/// Pending change notifications per subscriber before the slowest one starts missing some.
pub const CHANGE_BUFFER: usize = 4096;

/// Store sizes, for `/metrics`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StoreStats {
    pub records: u64,
    pub vectors: u64,
    /// What drift repairs of the vector store fixed since start.
    pub vector_repairs: VectorRepairs,
}

/// Whether one store answers.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoreHealth {
    /// `records`, `vectors` or `agents` (the agents' tables beside PostgreSQL): the key it is
    /// reported under.
    #[serde(skip)]
    pub store: &'static str,
    pub backend: &'static str,
    /// `ok` or `down`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl StoreHealth {
    fn of(store: &'static str, backend: &'static str, answered: Result<()>) -> Self {
        match answered {
            Ok(()) => StoreHealth {
                store,
                backend,
                status: "ok",
                error: None,
            },
            Err(error) => StoreHealth {
                store,
                backend,
                status: "down",
                error: Some(error.to_string()),
            },
        }
    }

    pub fn is_ok(&self) -> bool {
        self.status == "ok"
    }
}

/// The storage backends of a [`MemoryService`].
pub struct Stores {
    pub records: Arc<dyn RecordStore>,
    pub vectors: Arc<dyn VectorStore>,
    /// The SQL database of the deployment, where the agents keep their own tables.
    pub database: Database,
}

/// The layered memory of every tenant.
pub struct MemoryService {
    config: MemoryConfig,
    records: Arc<dyn RecordStore>,
    vectors: Arc<dyn VectorStore>,
    database: Database,
    embedder: Arc<dyn Embedder>,
    changes: broadcast::Sender<MemoryChange>,
    writes: Writes,
    /// Set when other instances write to the same store.
    follower: Option<Follower>,
}

impl MemoryService {
    /// Opens (creating if needed) the embedded profile in `data_dir`: SQLite in WAL mode plus
    /// the persisted in-memory vector index.
    pub async fn open_embedded(
        data_dir: &Path,
        config: MemoryConfig,
        embedder: Arc<dyn Embedder>,
    ) -> Result<Self> {
        let db = SqliteDatabase::open(data_dir, &config.sqlite).await?;
        Self::open_sqlite(db, config, embedder).await
    }

    /// Opens the embedded profile on an already opened database (shared with the agents);
    /// vectors in Qdrant when `config.qdrant.url` is set.
    pub async fn open_sqlite(
        db: SqliteDatabase,
        config: MemoryConfig,
        embedder: Arc<dyn Embedder>,
    ) -> Result<Self> {
        let records = Arc::new(SqliteRecordStore::new(db.clone(), &config.sqlite).await?);
        let vectors = open_vectors(&config, embedder.dimensions()).await?;
        Self::open(
            Stores {
                records,
                vectors,
                database: Database::Sqlite(db),
            },
            config,
            embedder,
        )
        .await
    }

    /// Opens the scale-out profile's memory on PostgreSQL (migrated by
    /// [`PgDatabase::connect`]), with the vectors in Qdrant when `config.qdrant.url` is set,
    /// or else in this instance's own in-memory index following the writes of every instance
    /// ([`crate::follow`]). The agents keep their tables in the same database, so instances
    /// share everything but their caches.
    pub async fn open_postgres(
        db: PgDatabase,
        config: MemoryConfig,
        embedder: Arc<dyn Embedder>,
    ) -> Result<Self> {
        let records = Arc::new(PgRecordStore::new(db.clone(), &config.postgres));
        let vectors = open_vectors(&config, embedder.dimensions()).await?;
        Self::open(
            Stores {
                records,
                vectors,
                database: Database::Postgres(db),
            },
            config,
            embedder,
        )
        .await
    }

    /// Opens the service on any backends: checks (or migrates to) the embedder, then brings
    /// the vector index up to date.
    pub async fn open(
        stores: Stores,
        config: MemoryConfig,
        embedder: Arc<dyn Embedder>,
    ) -> Result<Self> {
        crate::reembed::prepare(stores.records.as_ref(), embedder.as_ref(), &config).await?;
        // The log position is read before the index loads: changes in between are applied
        // twice, which is harmless, rather than not at all.
        let follower = if stores.records.shared() {
            let position = stores.records.change_position().await?;
            Some(Follower::new(position, &config.follow))
        } else {
            None
        };
        stores.vectors.sync_from(stores.records.as_ref()).await?;
        let (changes, _) = broadcast::channel(CHANGE_BUFFER);
        let writes = Writes::new(stores.vectors.as_ref());
        Ok(MemoryService {
            config,
            records: stores.records,
            vectors: stores.vectors,
            database: stores.database,
            embedder,
            changes,
            writes,
            follower,
        })
    }

    /// The deployment's SQL database, for the agents' own tables.
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// Applies the writes other instances made since the last catch-up to this instance's
    /// vector index and announces them to subscribers. Does nothing on a store no other
    /// process writes.
    pub async fn catch_up(&self) -> Result<()> {
        let Some(follower) = &self.follower else {
            return Ok(());
        };
        let changes = follower
            .catch_up(self.records.as_ref(), self.vectors.as_ref(), &self.writes)
            .await?;
        for change in changes {
            let _ = self.changes.send(change);
        }
        Ok(())
    }

    /// On a shared store, catches up on an interval (so caches are invalidated without a
    /// search asking) and prunes the change log; stops when the service is dropped.
    pub fn follow_in_background(self: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        self.follower.as_ref()?;
        let service = Arc::downgrade(self);
        let interval = std::time::Duration::from_millis(self.config.follow.interval_ms.max(10));
        let retention_ms = self.config.follow.retention_secs.saturating_mul(1000) as i64;
        Some(tokio::spawn(async move {
            let mut ticker = tokio::time::interval(interval);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut last_prune = std::time::Instant::now();
            loop {
                ticker.tick().await;
                let Some(service) = service.upgrade() else {
                    return;
                };
                if let Err(error) = service.catch_up().await {
                    tracing::warn!(%error, "following other instances' writes failed; retrying");
                }
                if last_prune.elapsed() >= std::time::Duration::from_secs(600) {
                    last_prune = std::time::Instant::now();
                    let cutoff = now_millis() - retention_ms;
                    match service.records.prune_changes(cutoff).await {
                        Ok(pruned) if pruned > 0 => tracing::info!(pruned, "change log pruned"),
                        Ok(_) => {}
                        Err(error) => tracing::warn!(%error, "pruning the change log failed"),
                    }
                }
            }
        }))
    }

    /// With a persistent vector store, repairs drift on an interval and soon after a write
    /// could not reach it; stops when the service is dropped.
    pub fn repair_in_background(self: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        if !self.vectors.shared() {
            return None;
        }
        let service = Arc::downgrade(self);
        let drift = self.writes.drift();
        let interval = match self.config.qdrant.repair_interval_secs {
            0 => Duration::MAX,
            secs => Duration::from_secs(secs),
        };
        Some(tokio::spawn(async move {
            let mut last = std::time::Instant::now();
            let mut failed = false;
            loop {
                // A failed write wakes the task at once (a burst of them is repaired once);
                // waking every minute regardless notices when the service is gone, and retries
                // a repair that failed.
                let woken = tokio::time::timeout(Duration::from_secs(60), drift.notified())
                    .await
                    .is_ok();
                let Some(service) = service.upgrade() else {
                    return;
                };
                if !woken && !failed && last.elapsed() < interval {
                    continue;
                }
                last = std::time::Instant::now();
                service.writes.resume_vectors();
                let repaired = service.vectors.repair(service.records.as_ref()).await;
                failed = repaired.is_err();
                if let Err(error) = repaired {
                    tracing::warn!(%error, "repairing the vector store failed; retrying in a minute");
                }
            }
        }))
    }

    /// The data dir's SQLite database on the embedded profile.
    pub fn sqlite(&self) -> Option<&SqliteDatabase> {
        match &self.database {
            Database::Sqlite(db) => Some(db),
            Database::Postgres(_) => None,
        }
    }

    /// The record store, for maintenance that works on it directly (repairs, migrations).
    pub fn records(&self) -> &Arc<dyn RecordStore> {
        &self.records
    }

    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    pub fn embedder(&self) -> &Arc<dyn Embedder> {
        &self.embedder
    }

    async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let context = || format!("embedding with `{}`", self.embedder.id());
        let vectors = self
            .embedder
            .embed(texts)
            .await
            .map_err(|error| MemoryError::storage(context(), error))?;
        check_vectors(self.embedder.as_ref(), texts.len(), &vectors)
            .map_err(|error| MemoryError::storage(context(), error))?;
        Ok(vectors)
    }

    fn notify(&self, record: &MemoryRecord) {
        // No subscribers is fine.
        let _ = self.changes.send(MemoryChange {
            tenant_id: record.tenant_id.clone(),
            scope: record.scope(),
        });
    }

    /// Stores a memory in the caller's scope for `new.layer`; an identical content in that
    /// scope is returned instead of being stored twice.
    pub async fn add(&self, who: &Identity, new: NewMemory) -> Result<AddOutcome> {
        let mut outcomes = self.add_many(who, vec![new], "", None).await?;
        Ok(outcomes.pop().expect("one outcome per memory"))
    }

    /// As [`add`](Self::add), with the id chosen by the caller (an agent whose content names
    /// its own id, such as a note's front matter). The id must be new: a stored one is a
    /// storage error. Use a UUID v7, so ids keep their creation order.
    pub async fn add_with_id(
        &self,
        who: &Identity,
        id: Uuid,
        new: NewMemory,
    ) -> Result<AddOutcome> {
        let mut outcomes = self.add_many(who, vec![new], "", Some(id)).await?;
        Ok(outcomes.pop().expect("one outcome per memory"))
    }

    /// Stores several memories in one transaction (embedded in one batch), with the same
    /// rules as [`add`](Self::add); outcomes are in input order. Errors name the offending
    /// item as `items[i]`.
    pub async fn add_batch(
        &self,
        who: &Identity,
        items: Vec<NewMemory>,
    ) -> Result<Vec<AddOutcome>> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        self.add_many(who, items, "items", None).await
    }

    async fn add_many(
        &self,
        who: &Identity,
        items: Vec<NewMemory>,
        field: &str,
        id: Option<Uuid>,
    ) -> Result<Vec<AddOutcome>> {
        let tenant_id = validate::tenant(who)?;
        let now = now_millis();
        let prefix = |i: usize, name: &str| {
            if field.is_empty() {
                name.to_string()
            } else {
                format!("{field}[{i}].{name}")
            }
        };
        let mut records = Vec::with_capacity(items.len());
        for (i, new) in items.into_iter().enumerate() {
            validate::content(&prefix(i, "content"), &new.content, &self.config)?;
            let scope = validate::scope(who, new.layer, &self.config)?;
            let mut metadata =
                validate::metadata(&prefix(i, "metadata"), new.metadata, &self.config)?;
            let mut content = new.content;
            if self.config.redact_secrets {
                content = validate::redacted("content", content);
                metadata = validate::redacted_metadata(metadata);
            }
            records.push(MemoryRecord {
                id: id.unwrap_or_else(Uuid::now_v7),
                tenant_id: tenant_id.to_string(),
                layer: scope.layer,
                scope_id: scope.scope_id,
                kind: validate::kind(&prefix(i, "kind"), new.kind.as_deref(), &self.config)?,
                tags: validate::tags(&prefix(i, "tags"), &new.tags, &self.config)?,
                metadata,
                content_hash: validate::content_hash(&content),
                content: Some(content),
                embedder_id: self.embedder.id().to_string(),
                created_at: now,
                updated_at: now,
                valid_from: now,
                valid_to: None,
                version: 1,
            });
        }

        // A single add whose content already exists needs no embedding.
        if let [record] = records.as_slice()
            && let Some(existing) = self
                .records
                .find_duplicate(tenant_id, &record.scope(), &record.content_hash)
                .await?
        {
            return Ok(vec![AddOutcome {
                record: existing,
                deduplicated: true,
            }]);
        }

        let texts: Vec<&str> = records
            .iter()
            .map(|r| r.content.as_deref().unwrap_or_default())
            .collect();
        let vectors = self.embed(&texts).await?;
        let new_records: Vec<NewRecord> = records
            .into_iter()
            .zip(vectors)
            .map(|(record, vector)| NewRecord { record, vector })
            .collect();
        let inserted = self
            .writes
            .insert(self.records.as_ref(), self.vectors.as_ref(), new_records)
            .await?;

        Ok(inserted
            .into_iter()
            .map(|outcome| match outcome {
                Inserted::New(record) => {
                    self.notify(&record);
                    AddOutcome {
                        record,
                        deduplicated: false,
                    }
                }
                Inserted::Existing(record) => AddOutcome {
                    record,
                    deduplicated: true,
                },
            })
            .collect())
    }

    /// One record of the caller's tenant.
    pub async fn get(&self, who: &Identity, id: Uuid) -> Result<MemoryRecord> {
        let tenant_id = validate::tenant(who)?;
        self.records
            .get(tenant_id, id)
            .await?
            .filter(|record| who.reaches(&record.scope()))
            .ok_or_else(|| MemoryError::NotFound(id.to_string()))
    }

    /// Ok when the record `id` exists in a scope the caller's grants reach. Records in scopes
    /// they do not reach are indistinguishable from records that do not exist. Free when the
    /// grants reach everything (a record's scope never changes, so the check holds for the
    /// write that follows).
    async fn check_reach(&self, who: &Identity, id: Uuid) -> Result<()> {
        if who.grants.reach_everything() {
            return Ok(());
        }
        self.get(who, id).await.map(drop)
    }

    /// A page of records, newest first.
    pub async fn list(&self, who: &Identity, request: ListRequest) -> Result<Page> {
        let tenant_id = validate::tenant(who)?;
        let limit = validate::limit("limit", request.limit, &self.config)?;
        let before = request.cursor.as_deref().map(cursor::decode).transpose()?;
        let filter = MemoryFilter {
            scopes: validate::scopes(who, request.layers.as_deref(), &self.config)?,
            tags: validate::tags("tags", &request.tags, &self.config)?,
            kinds: validate::kinds("kinds", &request.kinds, &self.config)?,
        };
        if filter.scopes.is_empty() {
            return Ok(Page {
                items: Vec::new(),
                next_cursor: None,
            });
        }
        let query = ListQuery {
            filter,
            before,
            limit,
            metadata_only: request.metadata_only,
        };
        let page = self.records.list(tenant_id, &query).await?;
        Ok(Page {
            items: page.items,
            next_cursor: page.next.map(cursor::encode),
        })
    }

    /// Every committed write, for cache invalidation.
    pub fn subscribe(&self) -> broadcast::Receiver<MemoryChange> {
        self.changes.subscribe()
    }

    /// Ok when every store answers.
    pub async fn ready(&self) -> Result<()> {
        self.records.ping().await?;
        self.vectors.ready().await
    }

    /// Each store and whether it answers, for `/readyz`.
    pub async fn health(&self) -> Vec<StoreHealth> {
        vec![
            StoreHealth::of("records", self.records.backend(), self.records.ping().await),
            StoreHealth::of(
                "vectors",
                self.vectors.backend(),
                self.vectors.ready().await,
            ),
        ]
    }

    pub async fn stats(&self) -> Result<StoreStats> {
        let counts = self.records.counts().await?;
        Ok(StoreStats {
            records: counts.records,
            vectors: self.vectors.count().await?,
            vector_repairs: self.vectors.repairs_total(),
        })
    }

    /// Persists what is held in memory (the vector index). Called on graceful shutdown.
    /// Nothing acknowledged depends on it: every write is durable when it returns.
    pub async fn flush(&self) -> Result<()> {
        let _write = self.writes.lock().await;
        self.vectors.flush().await?;
        if let Some(db) = self.sqlite() {
            db.checkpoint().await?;
        }
        Ok(())
    }
}

/// The vector store `config` asks for: Qdrant when it names one, else the in-process index.
async fn open_vectors(config: &MemoryConfig, dims: usize) -> Result<Arc<dyn VectorStore>> {
    Ok(match &config.qdrant.url {
        Some(url) => Arc::new(QdrantVectorStore::connect(url, dims, &config.qdrant).await?),
        None => Arc::new(InMemoryVectorIndex::new(dims, config.vectors.clone())),
    })
}

pub(crate) fn entry_of(record: &MemoryRecord, vector: Vec<f32>) -> VectorEntry {
    VectorEntry {
        id: record.id,
        scope: record.scope(),
        kind: record.kind.clone(),
        tags: record.tags.clone(),
        vector,
    }
}
