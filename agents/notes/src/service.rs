//! [`NotesService`]: the Note-Taking agent's entry point, used by the MCP tools. Capture is
//! synchronous and never waits; distillation, listing and reading are async.

use std::sync::Arc;
use std::time::Duration;

use aeterna_memory::{Identity, Layer, ListRequest, MemoryError, MemoryService, kind};
use schemars::JsonSchema;
use serde::Serialize;
use uuid::Uuid;

use crate::auto::{AutoDistiller, NotesSink};
use crate::capture::{CaptureMode, CapturePolicy, Verdict};
use crate::config::NotesConfig;
use crate::distill::DistillerChain;
use crate::distillery::{DeclinedEvents, DistillSnapshot, Distillery, note_layer};
use crate::error::{NotesError, Result};
use crate::event::{CapturedEvent, SessionKey, TrajectoryEvent};
use crate::note::{Note, NoteSummary};
use crate::queue::{CaptureQueue, CaptureSnapshot, DrainReport, RedactFn, Refusal};
use crate::redaction::{redact_event, redactor};
use crate::store::TrajectoryStore;

/// What happened to one event of a capture call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CaptureStatus {
    /// Queued; it will be stored.
    Accepted,
    /// Left out by the capture mode of its tenant or project.
    Filtered,
    /// The queue was full (storage is slow or down); the event was not kept.
    Dropped,
    /// The server is shutting down; the event was not kept.
    Refused,
}

/// What happened to one event of a capture call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CaptureResult {
    /// Accepted, filtered, dropped or refused.
    pub status: CaptureStatus,
    /// The event's id, when accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// The capture mode that applied.
    pub mode: CaptureMode,
}

/// The answer to a capture call: counts, one result per event in order, and the queue level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CaptureReceipt {
    /// Events queued for storage.
    pub accepted: usize,
    /// Events left out by the capture mode.
    pub filtered: usize,
    /// Events not kept: the queue was full or the server is shutting down.
    pub dropped: usize,
    /// One result per event, in the order given.
    pub events: Vec<CaptureResult>,
    /// Events waiting to be stored.
    pub queue_depth: u64,
    /// How many events the queue holds.
    pub queue_capacity: u64,
    /// What `accepted` promises: queued in memory, not yet on disk.
    pub durability: String,
}

/// The answer to `note_distill`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DistillOutcome {
    /// Notes written by this call (or found already written with the same content).
    pub notes: Vec<NoteSummary>,
    /// Events these notes cover.
    pub distilled_events: usize,
    /// Events a distiller found not worth a note, and why: they are marked as distilled and no
    /// note was written for them.
    pub declined: Vec<DeclinedEvents>,
    /// Every note covering this session so far, oldest first, with its event count.
    pub session_notes: Vec<SessionNote>,
}

/// A note covering a session, with the number of the session's events it covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SessionNote {
    /// The note's id (for `note_get`).
    pub id: Uuid,
    /// Captured events of the session this note covers.
    pub events: u64,
}

/// A page of notes, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NotePage {
    /// The notes of this page, newest first.
    pub notes: Vec<NoteSummary>,
    /// Pass back as `cursor` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// Which notes `note_list` returns, beyond the caller's tenant.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NoteListRequest {
    /// `None`: every layer the caller can see.
    pub layers: Option<Vec<Layer>>,
    pub tags: Vec<String>,
    pub cursor: Option<String>,
    pub limit: usize,
}

/// Counters of the agent, for `/metrics`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NotesSnapshot {
    pub capture: CaptureSnapshot,
    pub distill: DistillSnapshot,
}

/// The Note-Taking agent. Shared as an `Arc`.
pub struct NotesService {
    config: NotesConfig,
    policy: CapturePolicy,
    queue: CaptureQueue,
    distillery: Arc<Distillery>,
    auto: Option<Arc<AutoDistiller>>,
}

impl std::fmt::Debug for NotesService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NotesService")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl NotesService {
    /// Starts the agent on the memory service's SQLite database (the embedded profile) with
    /// the deterministic distiller. Runs background tasks: call inside a Tokio runtime.
    pub fn start(config: NotesConfig, memory: Arc<MemoryService>) -> Result<Arc<Self>> {
        Self::start_with(config, memory, DistillerChain::default())
    }

    /// Starts the agent with `chain` (an LLM provider with deterministic fallback, say).
    pub fn start_with(
        config: NotesConfig,
        memory: Arc<MemoryService>,
        chain: DistillerChain,
    ) -> Result<Arc<Self>> {
        config
            .validate()
            .map_err(|e| NotesError::invalid(format!("invalid configuration: {e}")))?;
        let store = TrajectoryStore::new(memory.database().clone());
        let distillery = Arc::new(Distillery::new(
            store.clone(),
            memory,
            chain,
            config.distill.clone(),
        ));
        let auto = (config.distill.threshold > 0)
            .then(|| AutoDistiller::start(distillery.clone(), config.distill.threshold));
        // Compile the redactor now rather than on the first batch.
        let redactor = redactor();
        let redact: RedactFn =
            Arc::new(move |event: &mut CapturedEvent| redact_event(redactor, event));
        let sink = Arc::new(NotesSink {
            store,
            auto: auto.clone(),
        });
        let queue = CaptureQueue::start(&config.queue, sink, redact);
        if let Some(auto) = auto.clone() {
            tokio::spawn(async move { auto.schedule_backlog().await });
        }
        Ok(Arc::new(NotesService {
            policy: CapturePolicy::new(config.capture.clone()),
            config,
            queue,
            distillery,
            auto,
        }))
    }

    /// Where new notes are announced (the knowledge repositories, by their capture rules).
    pub fn set_learned_sink(&self, sink: Arc<dyn aeterna_memory::learned::LearnedSink>) {
        self.distillery.set_learned_sink(sink);
    }

    pub fn config(&self) -> &NotesConfig {
        &self.config
    }

    /// Validates every event, applies the capture mode and enqueues the kept ones without
    /// waiting. An invalid event fails the whole call before anything is enqueued.
    pub fn capture(&self, events: Vec<(Identity, TrajectoryEvent)>) -> Result<CaptureReceipt> {
        let limits = &self.config.limits;
        if events.is_empty() {
            return Err(NotesError::invalid(
                "`events` is empty; send at least one event",
            ));
        }
        if events.len() > limits.max_batch_events {
            return Err(NotesError::invalid(format!(
                "{} events in one call; the limit is {} (limits.max_batch_events): split the batch",
                events.len(),
                limits.max_batch_events
            )));
        }
        let numbered = events.len() > 1;
        let built: Vec<CapturedEvent> = events
            .into_iter()
            .enumerate()
            .map(|(index, (who, event))| {
                CapturedEvent::build(who, event, limits).map_err(|error| match error {
                    NotesError::InvalidInput(message) if numbered => {
                        NotesError::invalid(format!("events[{index}]: {message}"))
                    }
                    other => other,
                })
            })
            .collect::<Result<_>>()?;
        let mut receipt = CaptureReceipt {
            accepted: 0,
            filtered: 0,
            dropped: 0,
            events: Vec::with_capacity(built.len()),
            queue_depth: 0,
            queue_capacity: 0,
            durability: format!(
                "accepted events are queued in memory and stored within {} ms; a graceful stop \
                 keeps them, a crash before then loses them",
                self.config.queue.flush_interval_ms
            ),
        };
        for event in built {
            let who = &event.identity;
            let mode = self
                .policy
                .mode_for(&who.tenant_id, who.project_id.as_deref());
            let (status, id) = match self.policy.decide(mode, event.success) {
                Verdict::Filtered => (CaptureStatus::Filtered, None),
                Verdict::Keep => {
                    let id = event.id;
                    match self.queue.try_enqueue(event) {
                        Ok(()) => (CaptureStatus::Accepted, Some(id)),
                        Err(Refusal::QueueFull) => (CaptureStatus::Dropped, None),
                        Err(Refusal::Closed) => (CaptureStatus::Refused, None),
                    }
                }
            };
            match status {
                CaptureStatus::Accepted => receipt.accepted += 1,
                CaptureStatus::Filtered => receipt.filtered += 1,
                CaptureStatus::Dropped | CaptureStatus::Refused => receipt.dropped += 1,
            }
            receipt.events.push(CaptureResult { status, id, mode });
        }
        self.queue.stats().record_filtered(receipt.filtered);
        if receipt.accepted == 0
            && receipt
                .events
                .iter()
                .any(|r| r.status == CaptureStatus::Refused)
        {
            return Err(NotesError::ShuttingDown);
        }
        let snapshot = self.queue.snapshot();
        receipt.queue_depth = snapshot.depth;
        receipt.queue_capacity = snapshot.capacity;
        Ok(receipt)
    }

    /// Distils the uncovered events of the caller's session (its `project_id` and
    /// `session_id`) into notes, after storing what is still queued.
    pub async fn distill(&self, who: &Identity) -> Result<DistillOutcome> {
        note_layer(who)?;
        self.flush().await?;
        let run = self.distillery.distill(who, 1).await?;
        let session_notes = self
            .distillery
            .store()
            .session_notes(&SessionKey::of(who))
            .await?
            .into_iter()
            .map(|(id, events)| SessionNote { id, events })
            .collect();
        Ok(DistillOutcome {
            distilled_events: run.notes.iter().map(|note| note.event_count).sum(),
            notes: run.notes,
            declined: run.declined,
            session_notes,
        })
    }

    /// Waits until everything queued so far is stored, or fails after the flush timeout
    /// while the store is failing.
    pub async fn flush(&self) -> Result<()> {
        let timeout = Duration::from_millis(self.config.distill.flush_timeout_ms);
        match tokio::time::timeout(timeout, self.queue.flush()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(NotesError::ShuttingDown),
            Err(_) => {
                let snapshot = self.queue.snapshot();
                Err(NotesError::storage(
                    "storing the queued events before distilling",
                    anyhow::anyhow!(
                        "{} events still waiting after {} ms (last store error: {}); they are kept \
                         and retried: call note_distill again later",
                        snapshot.pending,
                        timeout.as_millis(),
                        snapshot.last_error.as_deref().unwrap_or("none"),
                    ),
                ))
            }
        }
    }

    /// Notes the caller can see, newest first.
    pub async fn list(&self, who: &Identity, request: NoteListRequest) -> Result<NotePage> {
        let page = self
            .memory()
            .list(
                who,
                ListRequest {
                    layers: request.layers,
                    tags: request.tags,
                    kinds: vec![kind::NOTE.to_owned()],
                    cursor: request.cursor,
                    limit: request.limit,
                    metadata_only: true,
                },
            )
            .await?;
        Ok(NotePage {
            notes: page.items.iter().map(NoteSummary::of).collect(),
            next_cursor: page.next_cursor,
        })
    }

    /// Every note of the caller's tenant, whatever its scope, in creation order: the notes
    /// as MCP resources. `cursor` is the `next_cursor` of the previous page.
    pub async fn tenant_notes(
        &self,
        who: &Identity,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<NotePage> {
        let after = cursor
            .filter(|cursor| !cursor.is_empty())
            .map(|cursor| {
                Uuid::parse_str(cursor).map_err(|_| {
                    NotesError::invalid(format!(
                        "cursor {cursor:?} is not one this server returned; start without a cursor"
                    ))
                })
            })
            .transpose()?;
        let limit = limit.max(1);
        let store = self.distillery.store();
        let mut ids = store.note_ids(&who.tenant_id, after, limit + 1).await?;
        let next_cursor = (ids.len() > limit).then(|| ids[limit - 1].to_string());
        ids.truncate(limit);
        let mut notes = Vec::with_capacity(ids.len());
        for id in ids {
            match self.memory().get(who, id).await {
                Ok(record) if record.kind == kind::NOTE => notes.push(NoteSummary::of(&record)),
                // Deleted with memory_delete: its events still name it.
                Ok(_) | Err(MemoryError::NotFound(_)) => {}
                Err(error) => return Err(error.into()),
            }
        }
        Ok(NotePage { notes, next_cursor })
    }

    /// One note of the caller's tenant. Memories that are not notes are not found here.
    pub async fn get(&self, who: &Identity, id: Uuid) -> Result<Note> {
        let record = match self.memory().get(who, id).await {
            Ok(record) if record.kind == kind::NOTE => record,
            Ok(_) | Err(MemoryError::NotFound(_)) => {
                return Err(NotesError::NotFound(id.to_string()));
            }
            Err(error) => return Err(error.into()),
        };
        let covered = self
            .distillery
            .store()
            .covered_count(&who.tenant_id, id)
            .await?;
        Ok(Note::of(&record, covered))
    }

    pub fn snapshot(&self) -> NotesSnapshot {
        NotesSnapshot {
            capture: self.queue.snapshot(),
            distill: self.distillery.snapshot(),
        }
    }

    /// Stops capturing, stores everything acknowledged (see [`CaptureQueue::shutdown`]), then
    /// stops automatic distillation. Call before flushing the memory service.
    pub async fn shutdown(&self) -> DrainReport {
        let report = self.queue.shutdown().await;
        if report.lost > 0 {
            tracing::error!(
                lost = report.lost,
                "trajectory events were lost at shutdown"
            );
        } else if report.spilled > 0 {
            tracing::warn!(
                drained = report.drained,
                spilled = report.spilled,
                "trajectory queue drained to the spill file; stored at the next start"
            );
        } else {
            tracing::info!(drained = report.drained, "trajectory queue drained");
        }
        if let Some(auto) = &self.auto {
            auto.stop(Duration::from_millis(self.config.queue.drain_timeout_ms))
                .await;
        }
        report
    }

    fn memory(&self) -> &Arc<MemoryService> {
        self.distillery.memory()
    }
}
