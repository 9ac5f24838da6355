//! Configuration of the Note-Taking agent. Every number is configurable; the defaults are the
//! design's.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::capture::CaptureMode;

/// Everything the Note-Taking agent can be told (the `[notes]` section of the server config).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NotesConfig {
    pub capture: CaptureConfig,
    pub limits: EventLimits,
    pub queue: QueueConfig,
    pub distill: DistillConfig,
}

impl NotesConfig {
    /// Checks what serde cannot; the message names the offending key.
    pub fn validate(&self) -> Result<(), String> {
        self.capture.validate()?;
        self.queue.validate()?;
        self.distill.validate()?;
        self.limits.validate()
    }
}

/// Which events are kept. The most specific rule wins: a project rule, then a tenant rule, then
/// `mode`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CaptureConfig {
    /// The mode when no tenant or project rule matches: `all` (default), `errors_only`,
    /// `disabled`, or `sampled:N` to keep one event in N (`sampled` alone means 1 in 10).
    pub mode: CaptureMode,
    /// Per-tenant modes, keyed by tenant id.
    pub tenants: BTreeMap<String, CaptureMode>,
    /// Per-project modes, keyed by `"<tenant>/<project_id>"`.
    pub projects: BTreeMap<String, CaptureMode>,
}

impl CaptureConfig {
    fn validate(&self) -> Result<(), String> {
        let check = |key: String, mode: &CaptureMode| match mode {
            CaptureMode::Sampled { every: 0 } => Err(format!(
                "{key}: `sampled:N` needs N of at least 1 (1 keeps every event)"
            )),
            _ => Ok(()),
        };
        check("notes.capture.mode".into(), &self.mode)?;
        for (tenant, mode) in &self.tenants {
            check(format!("notes.capture.tenants.{tenant}"), mode)?;
        }
        for (key, mode) in &self.projects {
            if !key.contains('/') {
                return Err(format!(
                    "notes.capture.projects.{key}: project keys are \"<tenant>/<project_id>\""
                ));
            }
            check(format!("notes.capture.projects.{key}"), mode)?;
        }
        Ok(())
    }
}

/// Caps applied to each captured event before it is queued. Longer values are cut at a token
/// boundary and marked as truncated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EventLimits {
    /// Longest tool name kept, in bytes (128).
    pub max_tool_name_bytes: usize,
    /// Longest description kept, in bytes (2 KiB).
    pub max_description_bytes: usize,
    /// Longest tool input kept, in bytes (8 KiB).
    pub max_input_bytes: usize,
    /// Longest tool output kept, in bytes (8 KiB).
    pub max_output_bytes: usize,
    /// Most tags kept per event (16), each at most `max_tag_bytes` (64).
    pub max_tags: usize,
    pub max_tag_bytes: usize,
    /// Largest metadata object kept, as JSON text (4 KiB); larger objects are replaced by a
    /// marker saying so.
    pub max_metadata_bytes: usize,
    /// Most events accepted in one `trajectory_capture` call (100).
    pub max_batch_events: usize,
    /// Longest identity id (session, project, … id), in bytes (256, as for memories).
    pub max_id_bytes: usize,
}

impl Default for EventLimits {
    fn default() -> Self {
        EventLimits {
            max_tool_name_bytes: 128,
            max_description_bytes: 2 * 1024,
            max_input_bytes: 8 * 1024,
            max_output_bytes: 8 * 1024,
            max_tags: 16,
            max_tag_bytes: 64,
            max_metadata_bytes: 4 * 1024,
            max_batch_events: 100,
            max_id_bytes: 256,
        }
    }
}

impl EventLimits {
    fn validate(&self) -> Result<(), String> {
        if self.max_tool_name_bytes == 0 {
            return Err("notes.limits.max_tool_name_bytes must be at least 1".into());
        }
        if self.max_batch_events == 0 {
            return Err("notes.limits.max_batch_events must be at least 1".into());
        }
        Ok(())
    }
}

/// The capture queue and its writer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QueueConfig {
    /// Events held in memory before new ones are dropped (1000).
    pub capacity: usize,
    /// A batch is written as soon as this many events wait (10)…
    pub batch_size: usize,
    /// …or when the oldest waiting event has waited this long, in milliseconds (100).
    pub flush_interval_ms: u64,
    /// When a backlog builds up (a slow disk, a burst), the writer takes up to this many
    /// waiting events into one transaction instead of `batch_size` (500), so it catches up.
    pub max_batch: usize,
    /// First delay before retrying a failed write, in milliseconds (100); doubles per failure.
    pub retry_initial_ms: u64,
    /// Longest delay between retries, in milliseconds (10 000).
    pub retry_max_ms: u64,
    /// How long shutdown waits for the queue to reach storage, in milliseconds (10 000).
    pub drain_timeout_ms: u64,
    /// Where events still unstored at the end of the drain are written, to be stored at the
    /// next start (see `spill.rs`). Unset: they are counted as lost. The server uses
    /// `<data dir>/trajectory-spill.jsonl` unless this is set.
    pub spill_file: Option<PathBuf>,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            capacity: 1000,
            batch_size: 10,
            flush_interval_ms: 100,
            max_batch: 500,
            retry_initial_ms: 100,
            retry_max_ms: 10_000,
            drain_timeout_ms: 10_000,
            spill_file: None,
        }
    }
}

impl QueueConfig {
    fn validate(&self) -> Result<(), String> {
        if self.capacity == 0 {
            return Err("notes.queue.capacity must be at least 1".into());
        }
        if self.batch_size == 0 {
            return Err("notes.queue.batch_size must be at least 1".into());
        }
        if self.max_batch < self.batch_size {
            return Err(format!(
                "notes.queue.max_batch ({}) must be at least notes.queue.batch_size ({})",
                self.max_batch, self.batch_size
            ));
        }
        if self.flush_interval_ms == 0 {
            return Err("notes.queue.flush_interval_ms must be at least 1".into());
        }
        if self.retry_initial_ms == 0 || self.retry_max_ms < self.retry_initial_ms {
            return Err(
                "notes.queue.retry_initial_ms must be at least 1 and at most notes.queue.retry_max_ms"
                    .into(),
            );
        }
        Ok(())
    }
}

/// When and how sessions are distilled into notes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DistillConfig {
    /// A session is distilled automatically once this many of its events are not yet covered
    /// by a note (10). 0 turns automatic distillation off (`note_distill` still works).
    pub threshold: usize,
    /// Most events one note covers (200); a longer backlog becomes several notes.
    pub max_events_per_note: usize,
    /// How long `note_distill` waits for queued events to be stored first, in milliseconds
    /// (5 000).
    pub flush_timeout_ms: u64,
    /// Earlier notes of the project linked from a new note's "Related notes" section, at most
    /// (5). 0 leaves the section empty and skips the search.
    pub related_notes: usize,
    /// Search score (a calibrated probability of relevance) an earlier note needs to be linked
    /// as related (0.15).
    pub related_min_score: f32,
}

impl Default for DistillConfig {
    fn default() -> Self {
        DistillConfig {
            threshold: 10,
            max_events_per_note: 200,
            flush_timeout_ms: 5_000,
            related_notes: 5,
            related_min_score: 0.15,
        }
    }
}

impl DistillConfig {
    fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.related_min_score) {
            return Err(format!(
                "notes.distill.related_min_score = {} must be between 0 and 1",
                self.related_min_score
            ));
        }
        if self.related_notes > 20 {
            return Err(format!(
                "notes.distill.related_notes = {} is more than 20; a note links a few of its \
                 closest relatives",
                self.related_notes
            ));
        }
        if self.max_events_per_note == 0 {
            return Err("notes.distill.max_events_per_note must be at least 1".into());
        }
        if self.threshold > self.max_events_per_note {
            return Err(format!(
                "notes.distill.threshold ({}) must not exceed notes.distill.max_events_per_note ({})",
                self.threshold, self.max_events_per_note
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_designs() {
        let config = NotesConfig::default();
        assert_eq!(config.queue.capacity, 1000);
        assert_eq!(config.queue.batch_size, 10);
        assert_eq!(config.queue.flush_interval_ms, 100);
        assert_eq!(config.distill.threshold, 10);
        assert_eq!(config.capture.mode, CaptureMode::All);
        assert!(config.validate().is_ok());
    }

    #[test]
    fn modes_parse_from_their_string_form() {
        let config: NotesConfig = serde_json::from_value(serde_json::json!({
            "capture": {
                "mode": "sampled:4",
                "tenants": { "acme": "errors_only", "beta": "sampled" },
                "projects": { "acme/web": "disabled" }
            }
        }))
        .expect("valid config");
        assert_eq!(config.capture.mode, CaptureMode::Sampled { every: 4 });
        assert_eq!(config.capture.tenants["acme"], CaptureMode::ErrorsOnly);
        assert_eq!(config.capture.projects["acme/web"], CaptureMode::Disabled);
        assert_eq!(
            config.capture.tenants["beta"],
            CaptureMode::Sampled { every: 10 }
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        let mut config = NotesConfig::default();
        config
            .capture
            .tenants
            .insert("acme".into(), CaptureMode::Sampled { every: 0 });
        assert!(
            config
                .validate()
                .unwrap_err()
                .contains("notes.capture.tenants.acme")
        );
        let bad_mode = serde_json::from_value::<NotesConfig>(
            serde_json::json!({ "capture": { "mode": "sometimes" } }),
        );
        assert!(bad_mode.unwrap_err().to_string().contains("errors_only"));

        let mut config = NotesConfig::default();
        config.queue.max_batch = 2;
        assert!(
            config
                .validate()
                .unwrap_err()
                .contains("notes.queue.max_batch")
        );

        let mut config = NotesConfig::default();
        config
            .capture
            .projects
            .insert("web".into(), CaptureMode::All);
        assert!(
            config
                .validate()
                .unwrap_err()
                .contains("<tenant>/<project_id>")
        );

        let unknown =
            serde_json::from_value::<NotesConfig>(serde_json::json!({ "queue": { "capacty": 5 } }));
        assert!(unknown.unwrap_err().to_string().contains("capacty"));
    }
}
