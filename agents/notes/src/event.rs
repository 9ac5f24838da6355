//! Trajectory events: what a client sends ([`TrajectoryEvent`]) and what is queued and stored
//! ([`CapturedEvent`]) after validation and truncation.

use aeterna_memory::{Identity, Timestamp, now_millis};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::config::EventLimits;
use crate::error::NotesError;

/// One tool call of an agent, as reported by the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrajectoryEvent {
    /// The tool that was called, such as `read_file`, `bash` or `cargo_test`.
    pub tool_name: String,
    /// What the call was for, in a sentence ("run the parser tests").
    #[serde(default)]
    pub description: String,
    /// The call's input: a string or any JSON value. Long values are truncated.
    #[serde(default)]
    pub input: serde_json::Value,
    /// The call's output or error text: a string or any JSON value. Long values are truncated.
    #[serde(default)]
    pub output: serde_json::Value,
    /// Whether the call succeeded (a failing test run is `false`).
    pub success: bool,
    /// How long the call took, in milliseconds.
    #[serde(default)]
    pub duration_ms: u64,
    /// Labels such as the language or the area of the code.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Any JSON object to keep with the event (for example `{"files": ["src/lib.rs"]}`).
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A validated, truncated event on its way to storage. Secrets are still in it: they are
/// redacted by the writer, just before the row is stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapturedEvent {
    /// Time-ordered (UUID v7), so storage order is capture order.
    pub id: Uuid,
    pub identity: Identity,
    pub tool_name: String,
    pub description: String,
    pub input: String,
    pub output: String,
    pub success: bool,
    pub duration_ms: u64,
    pub tags: Vec<String>,
    /// A JSON object.
    pub metadata: serde_json::Value,
    /// The fields that were cut to their cap.
    pub truncated: Vec<String>,
    pub captured_at: Timestamp,
}

impl CapturedEvent {
    /// Validates `event` for `identity` and applies `limits`. The error names the field.
    pub fn build(
        identity: Identity,
        event: TrajectoryEvent,
        limits: &EventLimits,
    ) -> Result<CapturedEvent, NotesError> {
        if identity.tenant_id.is_empty() {
            return Err(NotesError::invalid(
                "the caller has no tenant; authenticate first",
            ));
        }
        check_ids(&identity, limits.max_id_bytes)?;
        let mut truncated = Vec::new();
        let mut tool_name = event.tool_name.trim().to_owned();
        if tool_name.is_empty() {
            return Err(NotesError::invalid(
                "`tool_name` is empty; name the tool that was called, such as `bash`",
            ));
        }
        if truncate_at_token(&mut tool_name, limits.max_tool_name_bytes) {
            truncated.push("tool_name".to_owned());
        }
        let mut description = event.description;
        if truncate_at_token(&mut description, limits.max_description_bytes) {
            truncated.push("description".to_owned());
        }
        let mut input = value_text(event.input);
        if truncate_at_token(&mut input, limits.max_input_bytes) {
            truncated.push("input".to_owned());
        }
        let mut output = value_text(event.output);
        if truncate_at_token(&mut output, limits.max_output_bytes) {
            truncated.push("output".to_owned());
        }
        let (tags, tags_cut) = clean_tags(event.tags, limits);
        if tags_cut {
            truncated.push("tags".to_owned());
        }
        let metadata = serde_json::Value::Object(event.metadata.unwrap_or_default());
        let metadata = match serde_json::to_string(&metadata) {
            Ok(text) if text.len() > limits.max_metadata_bytes => {
                truncated.push("metadata".to_owned());
                serde_json::json!({ "truncated": true, "original_bytes": text.len() })
            }
            _ => metadata,
        };
        Ok(CapturedEvent {
            id: Uuid::now_v7(),
            identity,
            tool_name,
            description,
            input,
            output,
            success: event.success,
            duration_ms: event.duration_ms,
            tags,
            metadata,
            truncated,
            captured_at: now_millis(),
        })
    }

    /// The session this event belongs to, for grouping and distillation.
    pub fn session_key(&self) -> SessionKey {
        SessionKey::of(&self.identity)
    }
}

/// One distillation unit: the events of one session of one project of one tenant. Missing ids
/// are empty strings, so events without a session still group together.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SessionKey {
    pub tenant_id: String,
    pub project_id: String,
    pub session_id: String,
}

impl SessionKey {
    pub fn of(identity: &Identity) -> SessionKey {
        SessionKey {
            tenant_id: identity.tenant_id.clone(),
            project_id: identity.project_id.clone().unwrap_or_default(),
            session_id: identity.session_id.clone().unwrap_or_default(),
        }
    }
}

impl std::fmt::Display for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let or_none = |s: &str| {
            if s.is_empty() {
                "-".to_owned()
            } else {
                s.to_owned()
            }
        };
        write!(
            f,
            "tenant {} project {} session {}",
            self.tenant_id,
            or_none(&self.project_id),
            or_none(&self.session_id)
        )
    }
}

fn check_ids(identity: &Identity, max_bytes: usize) -> Result<(), NotesError> {
    let fields = [
        ("agent_id", &identity.agent_id),
        ("user_id", &identity.user_id),
        ("session_id", &identity.session_id),
        ("project_id", &identity.project_id),
        ("team_id", &identity.team_id),
        ("org_id", &identity.org_id),
    ];
    for (name, value) in fields {
        if let Some(value) = value
            && value.len() > max_bytes
        {
            return Err(NotesError::invalid(format!(
                "`{name}` is {} bytes; the limit is {max_bytes} bytes",
                value.len()
            )));
        }
    }
    Ok(())
}

/// A JSON value as text: strings as they are, `null` as empty, anything else as compact JSON.
fn value_text(value: serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(text) => text,
        other => other.to_string(),
    }
}

/// Characters that end a token. A cut inside a token drops the whole token, so a truncated
/// secret never leaves a recognisable-looking prefix behind for the redactor to miss.
fn is_token_boundary(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '"' | '\'' | '`' | ',' | ';' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>'
        )
}

/// Cuts `text` to at most `max_bytes` bytes, ending at a token boundary. Returns whether it cut.
pub fn truncate_at_token(text: &mut String, max_bytes: usize) -> bool {
    if text.len() <= max_bytes {
        return false;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    // If the cut falls inside a token, step back to the boundary before it.
    let next_is_boundary = text[end..].chars().next().is_some_and(is_token_boundary);
    if !next_is_boundary {
        end = text[..end]
            .rfind(is_token_boundary)
            .map_or(0, |index| index);
    }
    text.truncate(end);
    true
}

fn clean_tags(tags: Vec<String>, limits: &EventLimits) -> (Vec<String>, bool) {
    let mut cut = false;
    let mut kept: Vec<String> = Vec::with_capacity(tags.len().min(limits.max_tags));
    for tag in tags {
        let mut tag = tag.trim().to_owned();
        if tag.is_empty() {
            continue;
        }
        if tag.len() > limits.max_tag_bytes {
            let mut end = limits.max_tag_bytes;
            while !tag.is_char_boundary(end) {
                end -= 1;
            }
            tag.truncate(end);
            cut = true;
        }
        if kept.contains(&tag) {
            continue;
        }
        if kept.len() == limits.max_tags {
            cut = true;
            break;
        }
        kept.push(tag);
    }
    (kept, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(tool: &str) -> TrajectoryEvent {
        TrajectoryEvent {
            tool_name: tool.into(),
            description: String::new(),
            input: serde_json::Value::Null,
            output: serde_json::Value::Null,
            success: true,
            duration_ms: 3,
            tags: vec![],
            metadata: None,
        }
    }

    #[test]
    fn truncation_cuts_at_a_token_boundary() {
        let mut text = "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 tail".to_owned();
        assert!(truncate_at_token(&mut text, 20));
        assert_eq!(text, "token");
        let mut short = "fits".to_owned();
        assert!(!truncate_at_token(&mut short, 4));
        assert_eq!(short, "fits");
        // A cut that lands exactly on a boundary keeps the whole previous token.
        let mut exact = "alpha beta gamma".to_owned();
        assert!(truncate_at_token(&mut exact, 10));
        assert_eq!(exact, "alpha beta");
        // One huge token is dropped entirely rather than leaving a prefix.
        let mut blob = "A".repeat(100);
        assert!(truncate_at_token(&mut blob, 10));
        assert_eq!(blob, "");
    }

    #[test]
    fn truncation_respects_utf8() {
        let mut text = "é é é é".to_owned();
        assert!(truncate_at_token(&mut text, 4));
        assert!(text.len() <= 4);
        assert_eq!(text, "é");
    }

    #[test]
    fn fields_are_capped_and_marked() {
        let limits = EventLimits {
            max_description_bytes: 8,
            max_input_bytes: 10,
            max_output_bytes: 10,
            max_tags: 2,
            max_tag_bytes: 3,
            max_metadata_bytes: 10,
            ..EventLimits::default()
        };
        let mut raw = event("bash");
        raw.description = "run all the tests".into();
        raw.input = serde_json::json!({ "command": "cargo test --workspace" });
        raw.output = "ok ok ok ok ok ok".into();
        raw.tags = vec![
            "rust".into(),
            "rust".into(),
            " ".into(),
            "ci".into(),
            "more".into(),
        ];
        raw.metadata =
            Some(serde_json::from_str(r#"{"files": ["src/lib.rs", "src/main.rs"]}"#).unwrap());
        let captured = CapturedEvent::build(Identity::new("t"), raw, &limits).expect("valid");
        assert!(captured.description.len() <= 8);
        assert!(captured.input.len() <= 10);
        assert_eq!(captured.output, "ok ok ok");
        assert_eq!(captured.tags, vec!["rus", "ci"]);
        assert_eq!(captured.metadata["truncated"], true);
        assert_eq!(
            captured.truncated,
            vec!["description", "input", "output", "tags", "metadata"]
        );
    }

    #[test]
    fn json_inputs_become_compact_text() {
        let mut raw = event("edit");
        raw.input = serde_json::json!({ "path": "src/a.rs" });
        raw.output = serde_json::Value::Null;
        let captured =
            CapturedEvent::build(Identity::new("t"), raw, &EventLimits::default()).expect("valid");
        assert_eq!(captured.input, r#"{"path":"src/a.rs"}"#);
        assert_eq!(captured.output, "");
        assert!(captured.truncated.is_empty());
        assert_eq!(captured.metadata, serde_json::json!({}));
    }

    #[test]
    fn a_missing_tool_name_or_tenant_is_refused_by_name() {
        let error = CapturedEvent::build(Identity::new("t"), event("  "), &EventLimits::default())
            .unwrap_err();
        assert!(error.to_string().contains("tool_name"), "{error}");
        let error =
            CapturedEvent::build(Identity::default(), event("bash"), &EventLimits::default())
                .unwrap_err();
        assert!(error.to_string().contains("tenant"), "{error}");
    }

    #[test]
    fn ids_are_time_ordered() {
        let limits = EventLimits::default();
        let ids: Vec<Uuid> = (0..100)
            .map(|_| {
                CapturedEvent::build(Identity::new("t"), event("x"), &limits)
                    .unwrap()
                    .id
            })
            .collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
    }
}
