//! The Note-Taking agent's operations behind `trajectory_capture`, `note_distill`, `note_list`
//! and `note_get`: argument types (with the JSON schemas agents see) and plain functions over
//! [`NotesService`].

use aeterna_memory::MemoryError;
use aeterna_notes::{
    CaptureReceipt, DistillOutcome, Note, NoteListRequest, NotePage, NotesError, NotesService,
    TrajectoryEvent,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::memory::{DEFAULT_LIST_LIMIT, parse_id, parse_layer};
use super::schema::layer_list_schema;
use crate::auth::Principal;
use crate::config::IdentityFields;

/// One tool call of an agent, with optional identity fields that win over the call's.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct EventArgs {
    #[serde(flatten)]
    pub event: TrajectoryEvent,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `trajectory_capture`: `event` for one event, or `events` for a batch.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CaptureArgs {
    /// One event. Pass either `event` or `events`.
    #[serde(default)]
    pub event: Option<EventArgs>,
    /// A batch of events, in the order they happened (at most 100 by default).
    #[serde(default)]
    pub events: Option<Vec<EventArgs>>,
    /// The session (`session_id`) and project (`project_id`) the events belong to; notes are
    /// distilled per session and stored in the project layer.
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `note_distill`: the session to distil, by its identity fields.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DistillArgs {
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `note_list`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NoteListArgs {
    /// Only these layers; all layers the identity can see when left out (notes live in the
    /// project layer, or the session layer when there is no project).
    #[serde(default)]
    #[schemars(schema_with = "layer_list_schema")]
    pub layers: Option<Vec<String>>,
    /// Only notes carrying every one of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// `next_cursor` from the previous page; leave out for the first page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Notes per page (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `note_get`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct NoteGetArgs {
    /// The note's id, as returned by `note_distill` or `note_list`.
    pub id: String,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Enqueues the events for `caller`; each event's identity is its own fields over the call's
/// over the token's defaults. Never waits on storage.
pub fn capture(
    notes: &NotesService,
    caller: &Principal,
    args: CaptureArgs,
) -> Result<CaptureReceipt, NotesError> {
    let batched = args.events.is_some();
    let events = match (args.event, args.events) {
        (Some(event), None) => vec![event],
        (None, Some(events)) => events,
        (Some(_), Some(_)) => {
            return Err(NotesError::invalid(
                "pass either `event` (one event) or `events` (a batch), not both",
            ));
        }
        (None, None) => {
            return Err(NotesError::invalid(
                "no event: pass `event` with tool_name, success, … or `events` with a list of them",
            ));
        }
    };
    let events = events
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let who = caller
                .identity(&item.identity.or(&args.identity))
                .map_err(|error| match batched {
                    true => NotesError::invalid(format!("`events[{index}]`: {error}")),
                    false => error.into(),
                })?;
            Ok((who, item.event))
        })
        .collect::<Result<_, NotesError>>()?;
    notes.capture(events)
}

pub async fn distill(
    notes: &NotesService,
    caller: &Principal,
    args: DistillArgs,
) -> Result<DistillOutcome, NotesError> {
    notes.distill(&caller.identity(&args.identity)?).await
}

pub async fn list(
    notes: &NotesService,
    caller: &Principal,
    args: NoteListArgs,
) -> Result<NotePage, NotesError> {
    let who = &caller.identity(&args.identity)?;
    let layers = args
        .layers
        .map(|layers| {
            layers
                .iter()
                .map(|layer| parse_layer("layers", layer))
                .collect::<Result<Vec<_>, MemoryError>>()
        })
        .transpose()?;
    notes
        .list(
            who,
            NoteListRequest {
                layers,
                tags: args.tags,
                cursor: args.cursor.filter(|cursor| !cursor.is_empty()),
                limit: args.limit.unwrap_or(DEFAULT_LIST_LIMIT),
            },
        )
        .await
}

pub async fn get(
    notes: &NotesService,
    caller: &Principal,
    args: NoteGetArgs,
) -> Result<Note, NotesError> {
    let who = &caller.identity(&args.identity)?;
    let id = parse_id(&args.id).map_err(|_| {
        NotesError::invalid(format!(
            "`id` {:?} is not a note id; ids are UUIDs such as those note_list returns",
            args.id
        ))
    })?;
    notes.get(who, id).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(session: Option<&str>, project: Option<&str>) -> IdentityFields {
        IdentityFields {
            session_id: session.map(str::to_owned),
            project_id: project.map(str::to_owned),
            ..IdentityFields::default()
        }
    }

    #[test]
    fn event_fields_win_over_call_fields_over_token_defaults() {
        let caller = Principal::new("acme", fields(Some("token-session"), Some("token-project")));
        let call = fields(Some("call-session"), None);
        let event = fields(None, Some("event-project"));
        let who = caller.identity(&event.or(&call)).expect("short ids");
        assert_eq!(who.session_id.as_deref(), Some("call-session"));
        assert_eq!(who.project_id.as_deref(), Some("event-project"));
        assert_eq!(who.tenant_id, "acme");
    }

    #[test]
    fn one_event_or_a_batch_is_parsed_with_identity_at_each_level() {
        let args: CaptureArgs = serde_json::from_value(serde_json::json!({
            "session_id": "s-1",
            "events": [
                { "tool_name": "bash", "success": true, "input": {"command": "ls"} },
                { "tool_name": "bash", "success": false, "project_id": "web" }
            ]
        }))
        .expect("valid arguments");
        let events = args.events.expect("a batch");
        assert_eq!(events[1].identity.project_id.as_deref(), Some("web"));
        assert_eq!(events[0].event.input, serde_json::json!({"command": "ls"}));
        assert_eq!(args.identity.session_id.as_deref(), Some("s-1"));

        let missing = serde_json::from_value::<CaptureArgs>(serde_json::json!({
            "event": { "tool_name": "bash" }
        }));
        assert!(missing.unwrap_err().to_string().contains("success"));
    }
}
