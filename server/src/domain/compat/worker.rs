//! The ingest queue's worker: claims a job, chunks its text by tokens with overlap
//! ([`chunk_text`]), stores the chunks with [`MemoryService::add_batch`] under the job's
//! identity, and marks it COMPLETED with the memory ids. A failure it can fix by waiting
//! (storage unreachable, embedder down) is retried with exponential backoff up to
//! `rest.max_attempts` times; invalid input fails at once. Finished jobs are pruned after
//! `rest.job_retention_secs`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aeterna_context::{ContextArchitect, Tokenizer};
use aeterna_memory::{MemoryError, MemoryService, NewMemory, now_millis};
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uuid::Uuid;

use super::chunk::{ChunkParams, chunk_text};
use super::queue::{ClaimedJob, QueueStore};
use crate::config::RestConfig;
use crate::metrics::{Metrics, Outcome};

/// Chunks embedded and stored per `add_batch` call (one transaction each).
const BATCH: usize = 64;
/// How often finished jobs are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// The longest retry backoff.
const MAX_BACKOFF_SECS: u64 = 300;

/// One worker task's handles.
pub(crate) struct Worker {
    pub index: usize,
    pub store: QueueStore,
    pub config: RestConfig,
    pub memory: Arc<MemoryService>,
    pub context: Arc<ContextArchitect>,
    pub metrics: Arc<Metrics>,
    pub wake: Arc<Notify>,
    pub stop: CancellationToken,
}

/// Why an attempt failed.
enum JobError {
    /// Retrying cannot help (invalid input, over a limit).
    Permanent(String),
    /// It may work later (storage, embedder).
    Transient(String),
}

impl From<MemoryError> for JobError {
    fn from(error: MemoryError) -> Self {
        match error {
            MemoryError::InvalidInput(_)
            | MemoryError::MissingScope { .. }
            | MemoryError::Forbidden(_)
            | MemoryError::NotFound(_) => JobError::Permanent(error.to_string()),
            MemoryError::Storage { .. } | MemoryError::EmbedderMismatch(_) => {
                JobError::Transient(error.to_string())
            }
        }
    }
}

impl Worker {
    pub(crate) async fn run(self) {
        if self.index == 0 && !self.store.shared() {
            // SQLite: this process owns the data dir, so no PROCESSING job is really running.
            match self.store.requeue_processing().await {
                Ok(0) => {}
                Ok(requeued) => {
                    tracing::info!(requeued, "requeued ingest jobs left by the last run")
                }
                Err(error) => tracing::warn!(%error, "cannot requeue abandoned ingest jobs"),
            }
        }
        let poll = Duration::from_millis(self.config.poll_interval_ms.max(1));
        let mut pruned: Option<Instant> = None;
        while !self.stop.is_cancelled() {
            let abandoned_before = now_millis().saturating_sub(
                i64::try_from(self.config.reclaim_after_secs * 1000).unwrap_or(i64::MAX),
            );
            match self.store.claim(abandoned_before).await {
                Ok(Some(job)) => {
                    self.process(job).await;
                    continue;
                }
                Ok(None) => {}
                Err(error) => tracing::warn!(%error, "cannot claim an ingest job; retrying later"),
            }
            if self.index == 0 && pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                pruned = Some(Instant::now());
                let retention =
                    i64::try_from(self.config.job_retention_secs * 1000).unwrap_or(i64::MAX);
                match self
                    .store
                    .prune(now_millis().saturating_sub(retention))
                    .await
                {
                    Ok(0) => {}
                    Ok(pruned) => tracing::debug!(pruned, "pruned finished ingest jobs"),
                    Err(error) => tracing::warn!(%error, "cannot prune finished ingest jobs"),
                }
            }
            tokio::select! {
                () = self.stop.cancelled() => break,
                () = self.wake.notified() => {}
                () = tokio::time::sleep(poll) => {}
            }
        }
    }

    async fn process(&self, job: ClaimedJob) {
        let span = tracing::info_span!(
            "ingest_job",
            tenant = %job.tenant_id,
            ingestion_id = %job.id,
            attempt = job.attempts
        );
        async {
            let started = Instant::now();
            let result = if job.attempts > self.config.max_attempts {
                Err(JobError::Permanent(format!(
                    "gave up after {} attempts (rest.max_attempts): the process stopped while \
                     ingesting this text",
                    self.config.max_attempts
                )))
            } else {
                self.ingest(&job).await
            };
            let outcome = if result.is_ok() {
                Outcome::Ok
            } else {
                Outcome::Error
            };
            let recorded = match result {
                Ok(ids) => {
                    self.context.writes_published().await;
                    tracing::info!(chunks = ids.len(), "ingested");
                    self.store.complete(&job, &ids).await
                }
                Err(JobError::Permanent(error)) => {
                    tracing::info!(%error, "ingest failed");
                    self.store.fail(&job, &error).await
                }
                Err(JobError::Transient(error)) if job.attempts >= self.config.max_attempts => {
                    tracing::warn!(%error, "ingest failed; no attempts left");
                    let error = format!(
                        "{error} (gave up after {} attempts, rest.max_attempts)",
                        job.attempts
                    );
                    self.store.fail(&job, &error).await
                }
                Err(JobError::Transient(error)) => {
                    let backoff = self
                        .config
                        .retry_backoff_secs
                        .saturating_mul(1 << (job.attempts.saturating_sub(1)).min(16))
                        .min(MAX_BACKOFF_SECS);
                    tracing::warn!(%error, backoff_secs = backoff, "ingest failed; will retry");
                    let due = now_millis()
                        .saturating_add(i64::try_from(backoff * 1000).unwrap_or(i64::MAX));
                    self.store.retry(&job, &error, due).await
                }
            };
            match recorded {
                Ok(true) => {}
                Ok(false) => tracing::warn!(
                    "the job was reclaimed by another worker while this one ran; its result is \
                     left to that worker"
                ),
                // The claim stays PROCESSING and is reclaimed after rest.reclaim_after_secs.
                Err(error) => tracing::warn!(%error, "cannot record the ingest job's outcome"),
            }
            self.metrics
                .record_call("rest_ingest_job", outcome, started.elapsed());
        }
        .instrument(span)
        .await
    }

    /// Chunks and stores the job's text; the ids of the stored memories, in chunk order.
    async fn ingest(&self, job: &ClaimedJob) -> Result<Vec<Uuid>, JobError> {
        let params = ChunkParams {
            max_tokens: self.config.chunk_tokens,
            overlap_tokens: self.config.chunk_overlap_tokens,
        };
        let text = job.text.clone();
        let chunks = tokio::task::spawn_blocking(move || {
            Tokenizer::get().map(|tokenizer| chunk_text(tokenizer, &text, params))
        })
        .await
        .map_err(|error| JobError::Transient(format!("chunking the text failed: {error}")))?
        .map_err(|error| JobError::Transient(error.to_string()))?;
        if chunks.is_empty() {
            return Err(JobError::Permanent(
                "`text_content` holds no words; nothing was stored".into(),
            ));
        }
        if chunks.len() > self.config.max_chunks_per_job {
            return Err(JobError::Permanent(format!(
                "the text makes {} chunks of at most {} tokens; at most {} are stored per \
                 request (rest.max_chunks_per_job): split it into several requests",
                chunks.len(),
                params.max_tokens,
                self.config.max_chunks_per_job
            )));
        }
        let count = chunks.len();
        let items: Vec<NewMemory> = chunks
            .into_iter()
            .enumerate()
            .map(|(index, content)| {
                let mut metadata = job.metadata.clone();
                for (key, value) in [
                    ("source_type", &job.source_type),
                    ("source_name", &job.source_name),
                ] {
                    if let Some(value) = value {
                        metadata.insert(key.into(), Value::String(value.clone()));
                    }
                }
                metadata.insert("ingestion_id".into(), Value::String(job.id.to_string()));
                metadata.insert("chunk_index".into(), Value::from(index));
                metadata.insert("chunk_count".into(), Value::from(count));
                NewMemory {
                    layer: job.layer,
                    content,
                    tags: Vec::new(),
                    metadata: Value::Object(metadata),
                    kind: None,
                }
            })
            .collect();
        let mut ids = Vec::with_capacity(count);
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            let batch: Vec<NewMemory> = items.by_ref().take(BATCH).collect();
            let outcomes = self.memory.add_batch(&job.identity, batch).await?;
            ids.extend(outcomes.into_iter().map(|outcome| outcome.record.id));
        }
        Ok(ids)
    }
}
