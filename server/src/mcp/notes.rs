//! The Note-Taking agent's tools (`trajectory_capture`, `note_distill`, `note_list`,
//! `note_get`) and its MCP resources: every note of the caller's tenant as
//! `aeterna://notes/{id}`, Markdown for people plus a JSON twin with the metadata.

use aeterna_notes::{CaptureReceipt, DistillOutcome, Note, NotePage, NotesError, note};
use rmcp::handler::server::common::schema_for_output;
use rmcp::model::{
    CacheScope, CallToolResult, ContentBlock, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, tool, tool_router};

use super::params::Parameters;
use super::progress::Progress;
use super::{AeternaMcp, AgentError, Caller, answer, respond};
use crate::config::IdentityFields;
use crate::domain::notes::{self, CaptureArgs, DistillArgs, NoteGetArgs, NoteListArgs};
use aeterna_memory::MemoryError;

const MARKDOWN: &str = "text/markdown";
/// Notes per `resources/list` page.
const RESOURCE_PAGE: usize = 50;

impl AgentError for NotesError {
    fn into_memory(self) -> Result<MemoryError, Self> {
        match self {
            NotesError::Memory(error) => Ok(error),
            other => Err(other),
        }
    }

    fn is_callers(&self) -> bool {
        !matches!(self, NotesError::Storage { .. })
    }
}

#[tool_router(router = notes_router, vis = "pub(crate)")]
impl AeternaMcp {
    /// Record tool calls you made (one `event`, or a batch in `events`): tool_name,
    /// description, input, output, success, duration_ms, tags, metadata. Returns at once;
    /// events are stored in the background with secrets redacted, and a session's events are
    /// distilled into a note automatically once enough accumulate. Each event's `status` says
    /// whether it was accepted, filtered by the capture mode, or dropped (queue full).
    /// `accepted` means queued in memory: stored within about 100 ms, kept across a graceful
    /// stop, but lost if the server crashes (kill -9, power loss) before then. Use memory_add
    /// for anything that must survive a crash once acknowledged.
    #[tool(
        name = "trajectory_capture",
        output_schema = schema_for_output::<CaptureReceipt>(),
        annotations(
            title = "Capture tool calls",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn trajectory_capture(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<CaptureArgs>,
    ) -> CallToolResult {
        answer(
            "trajectory_capture",
            notes::capture(&self.state.notes, &caller, args),
        )
    }

    /// Distil the captured events of a session (`session_id`, `project_id`) that no note
    /// covers yet into a Markdown note (Context, Problem, Solution, Patterns, Tags), stored as
    /// a project memory that memory_search and context_assemble find. Distilling again
    /// without new events writes nothing; `session_notes` lists the session's notes.
    #[tool(
        name = "note_distill",
        output_schema = schema_for_output::<DistillOutcome>(),
        annotations(
            title = "Distil a note",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn note_distill(
        &self,
        Caller(caller): Caller,
        progress: Progress,
        Parameters(args): Parameters<DistillArgs>,
    ) -> CallToolResult {
        progress
            .report(0, 1, "distilling the session's events")
            .await;
        let result = notes::distill(&self.state.notes, &caller, args).await;
        progress.report(1, 1, "done").await;
        answer("note_distill", result)
    }

    /// List notes newest first (title, quality, session, event count, tags), one page at a
    /// time: pass `next_cursor` back as `cursor` for the next page.
    #[tool(
        name = "note_list",
        output_schema = schema_for_output::<NotePage>(),
        annotations(title = "List notes", read_only_hint = true, open_world_hint = false)
    )]
    async fn note_list(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<NoteListArgs>,
    ) -> CallToolResult {
        answer(
            "note_list",
            notes::list(&self.state.notes, &caller, args).await,
        )
    }

    /// Read one note: the Markdown as text, and its sections and metadata as structured JSON.
    /// The same note is the MCP resource `aeterna://notes/{id}`.
    #[tool(
        name = "note_get",
        output_schema = schema_for_output::<Note>(),
        annotations(title = "Read a note", read_only_hint = true, open_world_hint = false)
    )]
    async fn note_get(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<NoteGetArgs>,
    ) -> CallToolResult {
        match notes::get(&self.state.notes, &caller, args).await {
            Ok(note) => {
                let mut result = respond("note_get", Ok(&note));
                if result.is_error != Some(true) {
                    result.content = vec![
                        ContentBlock::text(note.markdown.clone()),
                        summary_block(&note),
                    ];
                }
                result
            }
            Err(error) => answer::<Note, _>("note_get", Err(error)),
        }
    }
}

/// The note's id, URI, title and quality as a small JSON text block, for clients that read
/// only `content`.
fn summary_block(note: &Note) -> ContentBlock {
    ContentBlock::text(serde_json::to_string(&note.summary).unwrap_or_default())
}

fn resource(note: &aeterna_notes::NoteSummary) -> Resource {
    Resource::new(note.uri.clone(), format!("note-{}", note.id))
        .with_title(note.title.clone())
        .with_description(format!(
            "Note distilled from {} events of session {} (quality {:.2})",
            note.event_count,
            if note.session_id.is_empty() {
                "-"
            } else {
                &note.session_id
            },
            note.quality
        ))
        .with_mime_type(MARKDOWN)
}

/// The MCP error for a failed resource request; `uri` is the resource asked for, which
/// not-found errors carry as `data.uri`.
fn storage_error(error: NotesError, uri: Option<&str>) -> ErrorData {
    match error {
        NotesError::NotFound(_) | NotesError::Memory(aeterna_memory::MemoryError::NotFound(_)) => {
            ErrorData::resource_not_found(
                error.to_string(),
                uri.map(|uri| serde_json::json!({ "uri": uri })),
            )
        }
        NotesError::InvalidInput(_)
        | NotesError::Memory(
            aeterna_memory::MemoryError::InvalidInput(_)
            | aeterna_memory::MemoryError::Forbidden(_),
        ) => ErrorData::invalid_params(error.to_string(), None),
        other => {
            tracing::warn!(error = %other, "resource request failed");
            ErrorData::internal_error(other.to_string(), None)
        }
    }
}

/// `resources/list`: the notes of the caller's tenant, oldest first, 50 per page.
pub(super) async fn list_resources(
    mcp: &AeternaMcp,
    request: Option<PaginatedRequestParams>,
    context: RequestContext<RoleServer>,
) -> Result<ListResourcesResult, ErrorData> {
    let caller = mcp.caller(&context)?;
    let span = tracing::info_span!("resources_list", tenant = %caller.tenant_id);
    mcp.measured("resources/list", span, async {
        let who = caller
            .identity(&IdentityFields::default())
            .map_err(|error| storage_error(error.into(), None))?;
        let cursor = request.and_then(|request| request.cursor);
        let page = mcp
            .state
            .notes
            .tenant_notes(&who, cursor.as_deref(), RESOURCE_PAGE)
            .await
            .map_err(|error| storage_error(error, None))?;
        let mut result =
            ListResourcesResult::with_all_items(page.notes.iter().map(resource).collect());
        result.next_cursor = page.next_cursor;
        result.cache_scope = Some(CacheScope::Private);
        Ok(result)
    })
    .await
}

/// The note URI template.
pub(super) fn resource_template() -> ResourceTemplate {
    ResourceTemplate::new(format!("{}{{id}}", note::URI_PREFIX), "note")
        .with_title("Distilled note")
        .with_description(
            "A note distilled from captured tool calls, by id (note_list and note_distill \
             return ids): Markdown, plus its metadata as JSON",
        )
        .with_mime_type(MARKDOWN)
}

/// `resources/read`: a note of the caller's tenant, as Markdown and as JSON.
pub(super) async fn read_resource(
    mcp: &AeternaMcp,
    request: ReadResourceRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<ReadResourceResult, ErrorData> {
    let caller = mcp.caller(&context)?;
    let uri = request.uri;
    let span = tracing::info_span!("resources_read", tenant = %caller.tenant_id, uri = %uri);
    mcp.measured("resources/read", span, async {
        let Some(id) = note::id_from_uri(&uri) else {
            return Err(ErrorData::resource_not_found(
                format!(
                    "no resource `{uri}`: notes are `{}{{id}}` with a UUID id (resources/list shows them)",
                    note::URI_PREFIX
                ),
                Some(serde_json::json!({ "uri": uri })),
            ));
        };
        let who = caller
            .identity(&IdentityFields::default())
            .map_err(|error| storage_error(error.into(), Some(&uri)))?;
        let note = mcp
            .state
            .notes
            .get(&who, id)
            .await
            .map_err(|error| storage_error(error, Some(&uri)))?;
        let json = serde_json::to_string(&note).map_err(|error| {
            ErrorData::internal_error(format!("cannot encode the note: {error}"), None)
        })?;
        Ok(super::markdown_and_json(&uri, note.markdown, json))
    })
    .await
}
