//! The durable queue of CC-MemEx ingests: table `ingest_jobs` (migration `0600_ingest_queue`)
//! in the deployment's database, SQLite or PostgreSQL, and [`IngestQueue`], the handle the
//! REST handler writes to and the [`worker`](super::worker)s read from.
//!
//! Invariants:
//! * a job is answered 202 only after its row committed, so an accepted ingest survives a
//!   crash or restart and is processed by the next worker that runs;
//! * request-path statements filter by `tenant_id`; the worker's claim, reclaim and prune read
//!   across tenants by state (maintenance, like the Meta-Agent's recovery scan);
//! * a job is claimed by one worker at a time: the claim is one `UPDATE … RETURNING` of the
//!   oldest claimable row, under SQLite's write lock, or with `FOR UPDATE SKIP LOCKED` on
//!   PostgreSQL, so two instances never take the same job; the claim sets a fresh
//!   `claim_token`, and only its holder can finish the job (a stale worker's late result is
//!   dropped);
//! * a job left PROCESSING longer than `rest.reclaim_after_secs` is claimed again (its process
//!   died); on SQLite, where one process owns the data dir, PROCESSING jobs are requeued when
//!   the worker starts. Reprocessing is safe: the memory service stores identical content in
//!   one scope once, so the chunks a dead attempt stored are found again, not duplicated;
//! * a tenant has at most `rest.max_queued_jobs_per_tenant` jobs QUEUED or PROCESSING: the
//!   count and the insert run in one write transaction (on PostgreSQL under a per-tenant
//!   advisory lock);
//! * a job's text and metadata are redacted before its row is written; a finished job's text
//!   is emptied (the memories hold the chunks) and its row is deleted
//!   `rest.job_retention_secs` after it finished.

use std::sync::Arc;
use std::time::Duration;

use aeterna_memory::storage::{Database, Transaction};
use aeterna_memory::{Identity, Layer, MemoryError, MemoryService, Timestamp, now_millis};
use aeterna_memory::{with_connection, with_pool};
use parking_lot::Mutex;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::CompatError;
use super::chunk::ChunkParams;
use crate::config::RestConfig;
use crate::metrics::Metrics;

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobState {
    Queued,
    Processing,
    Completed,
    Failed,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "QUEUED",
            JobState::Processing => "PROCESSING",
            JobState::Completed => "COMPLETED",
            JobState::Failed => "FAILED",
        }
    }

    fn parse(text: &str) -> Option<JobState> {
        [
            JobState::Queued,
            JobState::Processing,
            JobState::Completed,
            JobState::Failed,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
    }
}

/// A validated ingest, ready to queue.
#[derive(Debug, Clone)]
pub struct NewJob {
    /// Whom the chunks are stored for (resolved from the caller's key and the request).
    pub identity: Identity,
    pub layer: Layer,
    pub user_id: Option<String>,
    pub session_id: Option<String>,
    pub text: String,
    pub source_type: Option<String>,
    pub source_name: Option<String>,
    pub metadata: Map<String, Value>,
}

/// A job a worker holds.
#[derive(Debug, Clone)]
pub struct ClaimedJob {
    pub tenant_id: String,
    pub id: Uuid,
    pub claim_token: String,
    pub identity: Identity,
    pub layer: Layer,
    pub text: String,
    pub source_type: Option<String>,
    pub source_name: Option<String>,
    pub metadata: Map<String, Value>,
    /// Including this one.
    pub attempts: u32,
}

/// What a status request reads.
#[derive(Debug, Clone)]
pub struct StoredStatus {
    pub state: JobState,
    pub identity: Identity,
    pub chunks: Option<u64>,
    pub memory_ids: Vec<Uuid>,
    pub error: Option<String>,
    pub attempts: u32,
}

type ClaimRow = (
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    String,
    i64,
);

type StatusRow = (
    String,
    String,
    Option<i64>,
    Option<String>,
    Option<String>,
    i64,
);

fn failed(context: &'static str) -> impl Fn(sqlx::Error) -> MemoryError {
    move |error| MemoryError::storage(context, error)
}

fn corrupt(context: &str, error: impl std::fmt::Display) -> MemoryError {
    MemoryError::storage(
        context.to_owned(),
        anyhow::anyhow!("corrupt ingest_jobs row: {error}"),
    )
}

fn encode(value: &impl Serialize) -> Result<String, MemoryError> {
    serde_json::to_string(value)
        .map_err(|error| MemoryError::storage("encoding an ingest job", error))
}

/// The SQL of the `ingest_jobs` table.
#[derive(Clone, Debug)]
pub struct QueueStore {
    db: Database,
}

impl QueueStore {
    pub fn new(db: Database) -> Self {
        QueueStore { db }
    }

    /// True on PostgreSQL, where other processes may claim jobs too.
    pub fn shared(&self) -> bool {
        self.db.shared()
    }

    /// Writes a QUEUED job, unless the tenant already has `limit` unfinished ones (then
    /// `Ok(false)`). Returns after the commit.
    pub async fn insert(&self, id: Uuid, job: &NewJob, limit: usize) -> Result<bool, MemoryError> {
        let tenant = job.identity.tenant_id.as_str();
        let identity = encode(&job.identity)?;
        let metadata = encode(&job.metadata)?;
        let now = now_millis();
        let context = "queueing an ingest";
        let mut tx = self.db.begin_write().await.map_err(failed(context))?;
        if let Transaction::Postgres(pg) = &mut tx {
            // Concurrent inserts of one tenant count one after the other.
            sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 600))")
                .bind(tenant)
                .execute(&mut **pg)
                .await
                .map_err(failed(context))?;
        }
        let (unfinished,): (i64,) = with_connection!(&mut tx, |conn| {
            sqlx::query_as(
                "SELECT COUNT(*) FROM ingest_jobs \
                 WHERE tenant_id = $1 AND state IN ('QUEUED', 'PROCESSING')",
            )
            .bind(tenant)
            .fetch_one(conn)
            .await
        })
        .map_err(failed(context))?;
        if usize::try_from(unfinished).unwrap_or(usize::MAX) >= limit {
            tx.rollback().await.map_err(failed(context))?;
            return Ok(false);
        }
        with_connection!(&mut tx, |conn| {
            sqlx::query(
                "INSERT INTO ingest_jobs (tenant_id, id, state, identity, layer, user_id, \
                 session_id, text_content, source_type, source_name, metadata, attempts, \
                 run_after, created_at, updated_at) \
                 VALUES ($1, $2, 'QUEUED', $3, $4, $5, $6, $7, $8, $9, $10, 0, $11, $12, $13)",
            )
            .bind(tenant)
            .bind(id.to_string())
            .bind(&identity)
            .bind(job.layer.as_str())
            .bind(&job.user_id)
            .bind(&job.session_id)
            .bind(&job.text)
            .bind(&job.source_type)
            .bind(&job.source_name)
            .bind(&metadata)
            .bind(now)
            .bind(now)
            .bind(now)
            .execute(conn)
            .await
            .map(drop)
        })
        .map_err(failed(context))?;
        tx.commit().await.map_err(failed(context))?;
        Ok(true)
    }

    /// Takes the oldest job that is QUEUED and due, or PROCESSING since before
    /// `abandoned_before`, marking it PROCESSING under a new claim token.
    pub async fn claim(
        &self,
        abandoned_before: Timestamp,
    ) -> Result<Option<ClaimedJob>, MemoryError> {
        let now = now_millis();
        let token = Uuid::now_v7().to_string();
        let context = "claiming an ingest job";
        // The claim, with PostgreSQL's row lock as the one difference between the backends.
        macro_rules! claim_sql {
            ($lock:literal) => {
                concat!(
                    "UPDATE ingest_jobs SET state = 'PROCESSING', attempts = attempts + 1, \
                     claim_token = $1, claimed_at = $2, updated_at = $3 \
                     WHERE (tenant_id, id) IN (SELECT tenant_id, id FROM ingest_jobs \
                        WHERE (state = 'QUEUED' AND run_after <= $4) \
                           OR (state = 'PROCESSING' AND claimed_at < $5) \
                        ORDER BY created_at, id LIMIT 1",
                    $lock,
                    ") RETURNING tenant_id, id, identity, layer, text_content, source_type, \
                     source_name, metadata, attempts"
                )
            };
        }
        const SQLITE: &str = claim_sql!("");
        const POSTGRES: &str = claim_sql!(" FOR UPDATE SKIP LOCKED");
        // An idle worker polls: it looks with a plain read (no write lock, no transaction on
        // SQLite's one writer connection) and claims only when a job is there to take.
        let due: Option<i32> = with_pool!(&self.db, |pool| {
            sqlx::query_scalar(
                "SELECT 1 FROM ingest_jobs \
                 WHERE (state = 'QUEUED' AND run_after <= $1) \
                    OR (state = 'PROCESSING' AND claimed_at < $2) \
                 LIMIT 1",
            )
            .bind(now)
            .bind(abandoned_before)
            .fetch_optional(pool)
            .await
        })
        .map_err(failed(context))?;
        if due.is_none() {
            return Ok(None);
        }
        let mut tx = self.db.begin_write().await.map_err(failed(context))?;
        let sql = match &tx {
            Transaction::Postgres(_) => POSTGRES,
            _ => SQLITE,
        };
        let row: Option<ClaimRow> = with_connection!(&mut tx, |conn| {
            sqlx::query_as(sql)
                .bind(&token)
                .bind(now)
                .bind(now)
                .bind(now)
                .bind(abandoned_before)
                .fetch_optional(conn)
                .await
        })
        .map_err(failed(context))?;
        tx.commit().await.map_err(failed(context))?;
        let Some((
            tenant_id,
            id,
            identity,
            layer,
            text,
            source_type,
            source_name,
            metadata,
            attempts,
        )) = row
        else {
            return Ok(None);
        };
        let metadata = match serde_json::from_str::<Value>(&metadata) {
            Ok(Value::Object(metadata)) => metadata,
            Ok(other) => return Err(corrupt(context, format!("metadata is {other}"))),
            Err(error) => return Err(corrupt(context, error)),
        };
        Ok(Some(ClaimedJob {
            id: Uuid::parse_str(&id).map_err(|error| corrupt(context, error))?,
            identity: serde_json::from_str(&identity).map_err(|error| corrupt(context, error))?,
            layer: layer
                .parse()
                .map_err(|error| corrupt(context, format!("layer: {error}")))?,
            tenant_id,
            claim_token: token,
            text,
            source_type,
            source_name,
            metadata,
            attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
        }))
    }

    /// Marks a claimed job COMPLETED with its memories; false when the claim was lost.
    pub async fn complete(
        &self,
        job: &ClaimedJob,
        memory_ids: &[Uuid],
    ) -> Result<bool, MemoryError> {
        let ids = encode(&memory_ids)?;
        let chunks = i64::try_from(memory_ids.len()).unwrap_or(i64::MAX);
        let updated = with_pool!(&self.db, |pool| {
            sqlx::query(
                "UPDATE ingest_jobs SET state = 'COMPLETED', chunks = $1, memory_ids = $2, \
                 error = NULL, text_content = '', claim_token = NULL, updated_at = $3 \
                 WHERE tenant_id = $4 AND id = $5 AND claim_token = $6",
            )
            .bind(chunks)
            .bind(&ids)
            .bind(now_millis())
            .bind(&job.tenant_id)
            .bind(job.id.to_string())
            .bind(&job.claim_token)
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
        })
        .map_err(failed("completing an ingest job"))?;
        Ok(updated == 1)
    }

    /// Puts a claimed job back in the queue, due at `run_after`, with the error of this attempt.
    pub async fn retry(
        &self,
        job: &ClaimedJob,
        error: &str,
        run_after: Timestamp,
    ) -> Result<bool, MemoryError> {
        let updated = with_pool!(&self.db, |pool| {
            sqlx::query(
                "UPDATE ingest_jobs SET state = 'QUEUED', run_after = $1, error = $2, \
                 claim_token = NULL, claimed_at = NULL, updated_at = $3 \
                 WHERE tenant_id = $4 AND id = $5 AND claim_token = $6",
            )
            .bind(run_after)
            .bind(error)
            .bind(now_millis())
            .bind(&job.tenant_id)
            .bind(job.id.to_string())
            .bind(&job.claim_token)
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
        })
        .map_err(failed("requeueing an ingest job"))?;
        Ok(updated == 1)
    }

    /// Marks a claimed job FAILED with `error`.
    pub async fn fail(&self, job: &ClaimedJob, error: &str) -> Result<bool, MemoryError> {
        let updated = with_pool!(&self.db, |pool| {
            sqlx::query(
                "UPDATE ingest_jobs SET state = 'FAILED', error = $1, text_content = '', \
                 claim_token = NULL, updated_at = $2 \
                 WHERE tenant_id = $3 AND id = $4 AND claim_token = $5",
            )
            .bind(error)
            .bind(now_millis())
            .bind(&job.tenant_id)
            .bind(job.id.to_string())
            .bind(&job.claim_token)
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
        })
        .map_err(failed("failing an ingest job"))?;
        Ok(updated == 1)
    }

    /// Requeues every PROCESSING job (SQLite at start: no other process can hold one).
    pub async fn requeue_processing(&self) -> Result<u64, MemoryError> {
        with_pool!(&self.db, |pool| {
            sqlx::query(
                "UPDATE ingest_jobs SET state = 'QUEUED', claim_token = NULL, claimed_at = NULL, \
                 updated_at = $1 WHERE state = 'PROCESSING'",
            )
            .bind(now_millis())
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
        })
        .map_err(failed("requeueing abandoned ingest jobs"))
    }

    /// Deletes the jobs that finished before `before`.
    pub async fn prune(&self, before: Timestamp) -> Result<u64, MemoryError> {
        with_pool!(&self.db, |pool| {
            sqlx::query(
                "DELETE FROM ingest_jobs \
                 WHERE state IN ('COMPLETED', 'FAILED') AND updated_at < $1",
            )
            .bind(before)
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
        })
        .map_err(failed("pruning finished ingest jobs"))
    }

    /// Deletes every job of `tenant`, finished or not (a tenant purge).
    pub async fn purge_tenant(&self, tenant: &str) -> Result<u64, MemoryError> {
        with_pool!(&self.db, |pool| {
            sqlx::query("DELETE FROM ingest_jobs WHERE tenant_id = $1")
                .bind(tenant)
                .execute(pool)
                .await
                .map(|done| done.rows_affected())
        })
        .map_err(failed("deleting a tenant's ingest jobs"))
    }

    /// The status of job `id` of `tenant`.
    pub async fn status(
        &self,
        tenant: &str,
        id: Uuid,
    ) -> Result<Option<StoredStatus>, MemoryError> {
        let context = "reading an ingest job";
        let row: Option<StatusRow> = with_pool!(&self.db, |pool| {
            sqlx::query_as(
                "SELECT state, identity, chunks, memory_ids, error, attempts FROM ingest_jobs \
                 WHERE tenant_id = $1 AND id = $2",
            )
            .bind(tenant)
            .bind(id.to_string())
            .fetch_optional(pool)
            .await
        })
        .map_err(failed(context))?;
        let Some((state, identity, chunks, memory_ids, error, attempts)) = row else {
            return Ok(None);
        };
        Ok(Some(StoredStatus {
            state: JobState::parse(&state)
                .ok_or_else(|| corrupt(context, format!("state `{state}`")))?,
            identity: serde_json::from_str(&identity).map_err(|error| corrupt(context, error))?,
            chunks: chunks.and_then(|chunks| u64::try_from(chunks).ok()),
            memory_ids: match memory_ids {
                Some(ids) => serde_json::from_str(&ids).map_err(|error| corrupt(context, error))?,
                None => Vec::new(),
            },
            error,
            attempts: u32::try_from(attempts).unwrap_or(u32::MAX),
        }))
    }
}

/// The queue and its workers: what the REST handlers and `AppState` hold.
pub struct IngestQueue {
    store: QueueStore,
    config: RestConfig,
    wake: Arc<Notify>,
    stop: CancellationToken,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for IngestQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IngestQueue")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl IngestQueue {
    /// The queue in `memory`'s database, with `config.ingest_workers` workers started (inside
    /// a Tokio runtime).
    pub fn start(
        config: RestConfig,
        memory: Arc<MemoryService>,
        context: Arc<aeterna_context::ContextArchitect>,
        metrics: Arc<Metrics>,
    ) -> Arc<IngestQueue> {
        let queue = Arc::new(IngestQueue {
            store: QueueStore::new(memory.database().clone()),
            config,
            wake: Arc::new(Notify::new()),
            stop: CancellationToken::new(),
            workers: Mutex::new(Vec::new()),
        });
        let workers = (0..queue.config.ingest_workers)
            .map(|index| {
                let worker = super::worker::Worker {
                    index,
                    store: queue.store.clone(),
                    config: queue.config.clone(),
                    memory: memory.clone(),
                    context: context.clone(),
                    metrics: metrics.clone(),
                    wake: queue.wake.clone(),
                    stop: queue.stop.clone(),
                };
                tokio::spawn(worker.run())
            })
            .collect();
        *queue.workers.lock() = workers;
        queue
    }

    pub fn config(&self) -> &RestConfig {
        &self.config
    }

    pub fn chunk_params(&self) -> ChunkParams {
        ChunkParams {
            max_tokens: self.config.chunk_tokens,
            overlap_tokens: self.config.chunk_overlap_tokens,
        }
    }

    /// Queues `job` and wakes a worker; returns its id once the row committed.
    pub async fn enqueue(&self, job: NewJob) -> Result<Uuid, CompatError> {
        let id = Uuid::now_v7();
        let limit = self.config.max_queued_jobs_per_tenant;
        if !self.store.insert(id, &job, limit).await? {
            return Err(CompatError::QueueFull(format!(
                "this tenant already has {limit} ingests queued or in progress, the most \
                 allowed (rest.max_queued_jobs_per_tenant); retry once some have completed"
            )));
        }
        self.wake.notify_one();
        Ok(id)
    }

    pub async fn status(
        &self,
        tenant: &str,
        id: Uuid,
    ) -> Result<Option<StoredStatus>, MemoryError> {
        self.store.status(tenant, id).await
    }

    /// Forgets every ingest of `tenant`, queued or finished, with its text.
    pub async fn purge_tenant(&self, tenant: &str) -> Result<u64, MemoryError> {
        self.store.purge_tenant(tenant).await
    }

    /// Stops the workers: each finishes the job it holds, within `grace`; a job still running
    /// then is abandoned to the reclaim.
    pub async fn shutdown(&self, grace: Duration) {
        self.stop.cancel();
        let workers = std::mem::take(&mut *self.workers.lock());
        let deadline = tokio::time::Instant::now() + grace;
        for mut worker in workers {
            if tokio::time::timeout_at(deadline, &mut worker)
                .await
                .is_err()
            {
                tracing::warn!(
                    "an ingest worker was still busy at shutdown; its job is reclaimed later"
                );
                worker.abort();
            }
        }
    }
}
