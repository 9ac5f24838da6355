//! [`Distillery`]: reads a session's uncovered events, distils them, stores the note as a
//! project-layer memory of kind `note` linking related earlier notes, and marks the events as
//! covered. Events a distiller declined are marked with [`DECLINED`] instead of a note.
//!
//! A note's id is derived from the events it covers ([`note_id`]) and written in its front
//! matter. One distillation per session runs at a time (an in-process lock per session). If
//! the process dies between storing a note and marking its events, the next distillation finds
//! the note under the same id and only marks the events: no duplicate note, whichever
//! distiller wrote it.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use aeterna_memory::learned::{Learned, LearnedKind, LearnedSink, LearnedSource};
use aeterna_memory::{
    Identity, Layer, MemoryError, MemoryRecord, MemoryService, NewMemory, Scope, SearchRequest,
    kind,
};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::config::DistillConfig;
use crate::distill::{DistillInput, Distillation, DistilledNote, DistillerChain, RelatedNote};
use crate::error::{NotesError, Result};
use crate::event::{CapturedEvent, SessionKey, truncate_at_token};
use crate::note::{NoteMetadata, NoteSummary};
use crate::store::{DECLINED, TrajectoryStore};

/// Characters of the search query for related notes, at most.
const RELATED_QUERY_CHARS: usize = 600;

/// Counters of distillation, for `/metrics`.
#[derive(Debug, Default)]
struct DistillStats {
    notes_created: AtomicU64,
    notes_deduplicated: AtomicU64,
    events_distilled: AtomicU64,
    declined: AtomicU64,
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
    /// Events a distiller found not worth a note (marked as distilled, no note written).
    pub events_declined: u64,
    /// Distillations that failed (the events stay pending and are retried).
    pub failures: u64,
}

/// Events a distiller found not worth a note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DeclinedEvents {
    /// How many events.
    pub events: usize,
    /// Why they hold nothing worth a note.
    pub reason: String,
    /// Which distiller decided.
    pub distiller: String,
}

/// What one distillation wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DistillRun {
    /// Notes written (or found already written), oldest first.
    pub notes: Vec<NoteSummary>,
    /// Events declined, oldest first.
    pub declined: Vec<DeclinedEvents>,
}

pub(crate) struct Distillery {
    store: TrajectoryStore,
    memory: Arc<MemoryService>,
    chain: DistillerChain,
    config: DistillConfig,
    locks: Mutex<HashMap<SessionKey, Arc<tokio::sync::Mutex<()>>>>,
    stats: DistillStats,
    /// Where new notes are announced (the knowledge repositories, by their rules).
    learned: std::sync::OnceLock<Arc<dyn LearnedSink>>,
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
            learned: std::sync::OnceLock::new(),
        }
    }

    pub fn store(&self) -> &TrajectoryStore {
        &self.store
    }

    pub fn memory(&self) -> &Arc<MemoryService> {
        &self.memory
    }

    /// Where new notes are announced (once; later calls are ignored).
    pub fn set_learned_sink(&self, sink: Arc<dyn LearnedSink>) {
        let _ = self.learned.set(sink);
    }

    /// Distils the uncovered events of `who`'s session into notes, `max_events_per_note` at a
    /// time, while at least `min_events` are uncovered.
    pub async fn distill(&self, who: &Identity, min_events: usize) -> Result<DistillRun> {
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
    ) -> Result<DistillRun> {
        let mut run = DistillRun::default();
        loop {
            let events = self
                .store
                .pending_events(session, self.config.max_events_per_note)
                .await?;
            if events.len() < min_events {
                return Ok(run);
            }
            let distillation = self
                .chain
                .distill(DistillInput {
                    session,
                    events: &events,
                })
                .await;
            let ids: Vec<_> = events.iter().map(|e| e.id).collect();
            let note = match distillation {
                Distillation::Note(note) => note,
                Distillation::Declined(declined) => {
                    self.mark(session, &ids, DECLINED).await?;
                    self.stats
                        .declined
                        .fetch_add(events.len() as u64, Ordering::Relaxed);
                    tracing::info!(
                        %session,
                        events = events.len(),
                        distiller = declined.distiller,
                        reason = declined.reason,
                        "nothing worth a note in these events"
                    );
                    run.declined.push(DeclinedEvents {
                        events: events.len(),
                        reason: declined.reason,
                        distiller: declined.distiller,
                    });
                    continue;
                }
            };
            let id = note_id(session, &events);
            let (record, deduplicated) = match self.memory.get(who, id).await {
                // Stored before a crash kept its events from being marked.
                Ok(record) => (record, true),
                Err(MemoryError::NotFound(_)) => {
                    let related = self.related(who, layer, &note, id).await;
                    let new = self.new_memory(layer, &note, id, &related, session, &events);
                    let added = self.memory.add_with_id(who, id, new).await?;
                    (added.record, added.deduplicated)
                }
                Err(error) => return Err(error.into()),
            };
            self.mark(session, &ids, record.id).await?;
            if !deduplicated {
                self.announce(who, &record, &note).await;
            }
            let counter = if deduplicated {
                &self.stats.notes_deduplicated
            } else {
                &self.stats.notes_created
            };
            counter.fetch_add(1, Ordering::Relaxed);
            self.stats
                .events_distilled
                .fetch_add(events.len() as u64, Ordering::Relaxed);
            tracing::info!(
                note = %record.id,
                %session,
                events = events.len(),
                quality = note.quality,
                distiller = note.distiller,
                fallbacks = note.fallbacks.len(),
                deduplicated,
                "distilled a note"
            );
            run.notes.push(NoteSummary::of(&record));
        }
    }

    /// Announces a new note to the learned sink, in the note's own scope.
    async fn announce(&self, who: &Identity, record: &MemoryRecord, note: &DistilledNote) {
        let Some(sink) = self.learned.get() else {
            return;
        };
        let markdown = note.to_markdown();
        // The item has the title in its front matter; the body starts after the heading.
        let body = match markdown.strip_prefix("# ") {
            Some(rest) => rest.split_once("\n\n").map_or("", |(_, body)| body),
            None => markdown.as_str(),
        };
        let by = who
            .user_id
            .clone()
            .or_else(|| who.agent_id.clone())
            .unwrap_or_else(|| "an agent".into());
        sink.learned(Learned {
            kind: LearnedKind::Note,
            tenant_id: who.tenant_id.clone(),
            scope: Scope::new(record.layer, record.scope_id.clone()),
            key: record.id.to_string(),
            title: note.title.clone(),
            description: Some(note.description.clone()).filter(|d| !d.trim().is_empty()),
            body: body.to_owned(),
            tags: note.tags.clone(),
            sources: vec![LearnedSource {
                kind: "note",
                id: record.id.to_string(),
            }],
            why: format!(
                "A session's work distilled into a note of quality {:.2} by {}.",
                note.quality, note.distiller
            ),
            by,
            quality: Some(note.quality),
        })
        .await;
    }

    /// Marks `ids` as covered by `note_id` (or [`DECLINED`]).
    async fn mark(&self, session: &SessionKey, ids: &[Uuid], note_id: Uuid) -> Result<()> {
        let marked = self
            .store
            .mark_covered(&session.tenant_id, ids, note_id)
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
        Ok(())
    }

    /// Earlier notes of the same scope that search finds for `note`, best first. A failed
    /// search leaves the section empty rather than failing the distillation.
    async fn related(
        &self,
        who: &Identity,
        layer: Layer,
        note: &DistilledNote,
        id: Uuid,
    ) -> Vec<RelatedNote> {
        let wanted = self.config.related_notes;
        if wanted == 0 {
            return Vec::new();
        }
        let query: String = [note.title.as_str(), note.description.as_str()]
            .into_iter()
            .chain(note.keywords.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(RELATED_QUERY_CHARS)
            .collect();
        let request = SearchRequest {
            query,
            layers: Some(vec![layer]),
            tags: Vec::new(),
            kinds: vec![kind::NOTE.to_owned()],
            limit: wanted + 1,
            min_score: self.config.related_min_score,
            explain: false,
            as_of: None,
        };
        match self.memory.search(who, request).await {
            Ok(hits) => hits
                .iter()
                .filter(|hit| hit.record.id != id)
                .take(wanted)
                .map(|hit| {
                    let summary = NoteSummary::of(&hit.record);
                    RelatedNote {
                        id: summary.id,
                        title: summary.title,
                        description: summary.description,
                    }
                })
                .collect(),
            Err(error) => {
                tracing::warn!(%error, "cannot search for related notes; the note links none");
                Vec::new()
            }
        }
    }

    /// The memory to store for `note`: Markdown content within the service's size limit,
    /// the note's tags, and metadata (with the sections when they fit).
    fn new_memory(
        &self,
        layer: Layer,
        note: &DistilledNote,
        id: Uuid,
        related: &[RelatedNote],
        session: &SessionKey,
        events: &[CapturedEvent],
    ) -> NewMemory {
        let limits = self.memory.config();
        let mut content = note.to_document(id, related);
        if truncate_at_token(&mut content, limits.max_content_bytes.saturating_sub(64)) {
            content.push_str("\n\n_(note cut to the memory size limit)_\n");
        }
        let mut metadata = NoteMetadata::new(note, session, events);
        metadata.related = related.iter().map(|r| r.id).collect();
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
            events_declined: load(&self.stats.declined),
            failures: load(&self.stats.failures),
        }
    }
}

/// The id of the note covering `events` of `session`: a UUID v7 with the time of the last
/// event and bits hashed from the session and the first event. Distilling the same events
/// again gives the same id, so a note stored before a crash is found rather than duplicated.
pub fn note_id(session: &SessionKey, events: &[CapturedEvent]) -> Uuid {
    let mut hasher = Sha256::new();
    for part in [
        session.tenant_id.as_str(),
        session.project_id.as_str(),
        session.session_id.as_str(),
    ] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    if let Some(first) = events.first() {
        hasher.update(first.id.as_bytes());
    }
    let digest = hasher.finalize();
    let mut random = [0u8; 10];
    random.copy_from_slice(&digest[..10]);
    let millis = events
        .iter()
        .map(|e| e.captured_at)
        .max()
        .unwrap_or_default()
        .max(0) as u64;
    uuid::Builder::from_unix_timestamp_millis(millis, &random).into_uuid()
}
