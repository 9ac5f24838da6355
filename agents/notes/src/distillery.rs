//! [`Distillery`]: reads a session's uncovered events, distils them, stores the note as a
//! project-layer memory of kind `note`, and marks the events as covered.
//!
//! One distillation per session runs at a time (an in-process lock per session). If the
//! process dies between storing a note and marking its events, the next distillation writes
//! the same content, which the memory service deduplicates: no duplicate note.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use aeterna_memory::{Identity, Layer, MemoryService, NewMemory, kind};
use parking_lot::Mutex;
use serde::Serialize;

use crate::config::DistillConfig;
use crate::distill::{DistillInput, DistilledNote, DistillerChain};
use crate::error::{NotesError, Result};
use crate::event::{CapturedEvent, SessionKey, truncate_at_token};
use crate::note::{NoteMetadata, NoteSummary};
use crate::store::TrajectoryStore;

/// Counters of distillation, for `/metrics`.
#[derive(Debug, Default)]
struct DistillStats {
    notes_created: AtomicU64,
    notes_deduplicated: AtomicU64,
    events_distilled: AtomicU64,
    failures: AtomicU64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DistillSnapshot {
    /// Notes stored.
    pub notes_created: u64,
    /// Distillations whose note already existed (same content in the same scope).
    pub notes_deduplicated: u64,
    /// Events covered by notes.
    pub events_distilled: u64,
    /// Distillations that failed (the events stay pending and are retried).
    pub failures: u64,
}

pub(crate) struct Distillery {
    store: TrajectoryStore,
    memory: Arc<MemoryService>,
    chain: DistillerChain,
    config: DistillConfig,
    locks: Mutex<HashMap<SessionKey, Arc<tokio::sync::Mutex<()>>>>,
    stats: DistillStats,
}

/// The layer a note of `who` goes to: the project, else (no project) the session.
pub fn note_layer(who: &Identity) -> Result<Layer> {
    if who.project_id.as_deref().is_some_and(|p| !p.is_empty()) {
        Ok(Layer::Project)
    } else if who.session_id.as_deref().is_some_and(|s| !s.is_empty()) {
        Ok(Layer::Session)
    } else {
        Err(NotesError::invalid(
            "notes are stored in the project layer: pass `project_id` (or at least \
             `session_id`) with the events and with note_distill",
        ))
    }
}

impl Distillery {
    pub fn new(
        store: TrajectoryStore,
        memory: Arc<MemoryService>,
        chain: DistillerChain,
        config: DistillConfig,
    ) -> Self {
        Distillery {
            store,
            memory,
            chain,
            config,
            locks: Mutex::new(HashMap::new()),
            stats: DistillStats::default(),
        }
    }

    pub fn store(&self) -> &TrajectoryStore {
        &self.store
    }

    pub fn memory(&self) -> &Arc<MemoryService> {
        &self.memory
    }

    /// Distils the uncovered events of `who`'s session into notes, `max_events_per_note` at a
    /// time, while at least `min_events` are uncovered. Returns the notes written (or found
    /// already written), oldest first.
    pub async fn distill(&self, who: &Identity, min_events: usize) -> Result<Vec<NoteSummary>> {
        let layer = note_layer(who)?;
        let session = SessionKey::of(who);
        let lock = self.lock_for(&session);
        let _guard = lock.lock().await;
        let outcome = self
            .distill_locked(who, layer, &session, min_events.max(1))
            .await;
        drop(_guard);
        self.release_lock(&session, lock);
        if outcome.is_err() {
            self.stats.failures.fetch_add(1, Ordering::Relaxed);
        }
        outcome
    }

    async fn distill_locked(
        &self,
        who: &Identity,
        layer: Layer,
        session: &SessionKey,
        min_events: usize,
    ) -> Result<Vec<NoteSummary>> {
        let mut notes = Vec::new();
        loop {
            let events = self
                .store
                .pending_events(session, self.config.max_events_per_note)
                .await?;
            if events.len() < min_events {
                return Ok(notes);
            }
            let note = self
                .chain
                .distill(DistillInput {
                    session,
                    events: &events,
                })
                .await;
            let new = self.new_memory(layer, &note, session, &events);
            let added = self.memory.add(who, new).await?;
            let ids: Vec<_> = events.iter().map(|e| e.id).collect();
            let marked = self
                .store
                .mark_covered(&session.tenant_id, &ids, added.record.id)
                .await?;
            if marked == 0 {
                // The same events would come back forever; stop rather than spin.
                return Err(NotesError::storage(
                    "marking distilled events",
                    anyhow::anyhow!(
                        "none of the {} events could be marked as covered",
                        ids.len()
                    ),
                ));
            }
            let counter = if added.deduplicated {
                &self.stats.notes_deduplicated
            } else {
                &self.stats.notes_created
            };
            counter.fetch_add(1, Ordering::Relaxed);
            self.stats
                .events_distilled
                .fetch_add(events.len() as u64, Ordering::Relaxed);
            tracing::info!(
                note = %added.record.id,
                %session,
                events = events.len(),
                quality = note.quality,
                distiller = note.distiller,
                deduplicated = added.deduplicated,
                "distilled a note"
            );
            notes.push(NoteSummary::of(&added.record));
        }
    }

    /// The memory to store for `note`: Markdown content within the service's size limit,
    /// the note's tags, and metadata (with the sections when they fit).
    fn new_memory(
        &self,
        layer: Layer,
        note: &DistilledNote,
        session: &SessionKey,
        events: &[CapturedEvent],
    ) -> NewMemory {
        let limits = self.memory.config();
        let mut content = note.to_markdown();
        if truncate_at_token(&mut content, limits.max_content_bytes.saturating_sub(64)) {
            content.push_str("\n\n_(note cut to the memory size limit)_\n");
        }
        let mut metadata = NoteMetadata::new(note, session, events);
        let mut value = serde_json::to_value(&metadata).unwrap_or_default();
        if value.to_string().len() > limits.max_metadata_bytes {
            metadata.sections = None;
            value = serde_json::to_value(&metadata).unwrap_or_default();
        }
        let tags = note
            .tags
            .iter()
            .filter(|tag| tag.len() <= limits.max_tag_bytes)
            .take(limits.max_tags)
            .cloned()
            .collect();
        NewMemory {
            layer,
            content,
            tags,
            metadata: value,
            kind: Some(kind::NOTE.to_owned()),
        }
    }

    fn lock_for(&self, session: &SessionKey) -> Arc<tokio::sync::Mutex<()>> {
        self.locks
            .lock()
            .entry(session.clone())
            .or_default()
            .clone()
    }

    /// Forgets a session's lock once nobody else holds or waits for it.
    fn release_lock(&self, session: &SessionKey, lock: Arc<tokio::sync::Mutex<()>>) {
        let mut locks = self.locks.lock();
        drop(lock);
        if locks
            .get(session)
            .is_some_and(|held| Arc::strong_count(held) == 1)
        {
            locks.remove(session);
        }
    }

    pub fn snapshot(&self) -> DistillSnapshot {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        DistillSnapshot {
            notes_created: load(&self.stats.notes_created),
            notes_deduplicated: load(&self.stats.notes_deduplicated),
            events_distilled: load(&self.stats.events_distilled),
            failures: load(&self.stats.failures),
        }
    }
}
