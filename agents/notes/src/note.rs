//! Notes as the tools return them: a summary for listings, the full note (Markdown for people,
//! sections and metadata for programs) for `note_get`. A note is a memory record of kind
//! [`aeterna_memory::kind::NOTE`]; what is specific to notes lives in its metadata.

use aeterna_memory::{Layer, MemoryRecord, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::distill::DistilledNote;
use crate::event::{CapturedEvent, SessionKey};

/// The URI scheme of notes as MCP resources.
pub const URI_PREFIX: &str = "aeterna://notes/";

/// The MCP resource URI of a note.
pub fn uri(id: Uuid) -> String {
    format!("{URI_PREFIX}{id}")
}

/// The note id in a resource URI, if it is one.
pub fn id_from_uri(uri: &str) -> Option<Uuid> {
    uri.strip_prefix(URI_PREFIX)
        .and_then(|id| Uuid::parse_str(id).ok())
}

/// The sections of a note, for programs: the lines of each Markdown section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sections {
    /// Where and when: session, project, tools, files, themes.
    pub context: Vec<String>,
    /// What went wrong (failing calls, tests and errors).
    pub problem: Vec<String>,
    /// What fixed it, as ordered steps, ending with the outcome.
    pub solution: Vec<String>,
    /// What to reuse next time: workflow, attempts, files that change together.
    pub patterns: Vec<String>,
}

/// What a note's memory metadata holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NoteMetadata {
    pub title: String,
    pub description: String,
    pub keywords: Vec<String>,
    pub quality: f32,
    pub distiller: String,
    /// Why distillers tried before `distiller` did not serve.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<String>,
    /// The earlier notes linked as related.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Uuid>,
    pub session_id: String,
    pub project_id: String,
    /// How many events the note was distilled from.
    pub event_count: usize,
    pub first_event_id: Option<Uuid>,
    pub last_event_id: Option<Uuid>,
    pub first_event_at: Timestamp,
    pub last_event_at: Timestamp,
    /// Left out when it would not fit the memory service's metadata limit; the Markdown
    /// content always has every section.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sections: Option<Sections>,
}

impl NoteMetadata {
    pub fn new(note: &DistilledNote, session: &SessionKey, events: &[CapturedEvent]) -> Self {
        NoteMetadata {
            title: note.title.clone(),
            description: note.description.clone(),
            keywords: note.keywords.clone(),
            quality: note.quality,
            distiller: note.distiller.clone(),
            fallbacks: note.fallbacks.clone(),
            related: Vec::new(),
            session_id: session.session_id.clone(),
            project_id: session.project_id.clone(),
            event_count: events.len(),
            first_event_id: events.first().map(|e| e.id),
            last_event_id: events.last().map(|e| e.id),
            first_event_at: events
                .iter()
                .map(|e| e.captured_at)
                .min()
                .unwrap_or_default(),
            last_event_at: events
                .iter()
                .map(|e| e.captured_at)
                .max()
                .unwrap_or_default(),
            sections: Some(Sections {
                context: note.context.clone(),
                problem: note.problem.clone(),
                solution: note.solution.clone(),
                patterns: note.patterns.clone(),
            }),
        }
    }

    fn of(record: &MemoryRecord) -> Self {
        serde_json::from_value(record.metadata.clone()).unwrap_or_default()
    }
}

/// A note in a listing.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct NoteSummary {
    /// The note's id (for `note_get`); also its memory id.
    pub id: Uuid,
    /// The note as an MCP resource: `aeterna://notes/{id}`.
    pub uri: String,
    /// A one-line title.
    pub title: String,
    /// One or two sentences saying what the note is about.
    pub description: String,
    /// Search terms of the note (also in its front matter).
    pub keywords: Vec<String>,
    /// The layer the note is stored in (project, or session when there is no project).
    pub layer: Layer,
    /// The scope within that layer.
    pub scope_id: String,
    /// How complete and specific the note is, from 0 to 1.
    pub quality: f32,
    /// Which distiller wrote it (`deterministic-v1`, or a provider's id).
    pub distiller: String,
    /// The session it was distilled from (empty when unknown).
    pub session_id: String,
    /// The project of that session (empty when unknown).
    pub project_id: String,
    /// How many events the note was distilled from.
    pub event_count: usize,
    /// The note's tags (also in its Markdown).
    pub tags: Vec<String>,
    /// When it was stored, in milliseconds since the Unix epoch (UTC).
    pub created_at: Timestamp,
}

impl NoteSummary {
    pub fn of(record: &MemoryRecord) -> Self {
        let metadata = NoteMetadata::of(record);
        NoteSummary {
            id: record.id,
            uri: uri(record.id),
            title: metadata.title,
            description: metadata.description,
            keywords: metadata.keywords,
            layer: record.layer,
            scope_id: record.scope_id.clone(),
            quality: metadata.quality,
            distiller: metadata.distiller,
            session_id: metadata.session_id,
            project_id: metadata.project_id,
            event_count: metadata.event_count,
            tags: record.tags.clone(),
            created_at: record.created_at,
        }
    }
}

/// One note in full: the fields of its listing entry, the Markdown and its sections.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Note {
    #[serde(flatten)]
    pub summary: NoteSummary,
    /// The rendered note.
    pub markdown: String,
    /// The sections as lists of lines; left out when they did not fit the note's metadata
    /// (the Markdown always has every section).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sections: Option<Sections>,
    /// When the first event it covers was captured, in milliseconds since the Unix epoch.
    pub first_event_at: Timestamp,
    /// When the last event it covers was captured, in milliseconds since the Unix epoch.
    pub last_event_at: Timestamp,
    /// Captured events this note covers now (events can be fewer than `event_count` if the
    /// trajectory store was pruned).
    pub covered_events: u64,
}

impl Note {
    pub fn of(record: &MemoryRecord, covered_events: u64) -> Self {
        let metadata = NoteMetadata::of(record);
        Note {
            summary: NoteSummary::of(record),
            markdown: record.content.clone().unwrap_or_default(),
            sections: metadata.sections,
            first_event_at: metadata.first_event_at,
            last_event_at: metadata.last_event_at,
            covered_events,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_and_reject_other_schemes() {
        let id = Uuid::now_v7();
        assert_eq!(id_from_uri(&uri(id)), Some(id));
        assert_eq!(id_from_uri("aeterna://memories/x"), None);
        assert_eq!(id_from_uri("aeterna://notes/not-a-uuid"), None);
    }
}
