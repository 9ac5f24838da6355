//! The MCP server: one handler type, [`AeternaMcp`], whose tools come from one module per
//! agent, each with its own `#[tool_router(router = …)]`. The same handler serves Streamable
//! HTTP (`/mcp`, the caller is the request's token) and stdio (the caller is fixed).
//!
//! [`AeternaMcp::call_tool`] wraps every tool call: it resolves the caller, opens a span with
//! the tool and tenant, counts the call and its latency, and turns argument errors into tool
//! errors that name the tool. Tools themselves stay a few lines: parse, call `crate::domain`,
//! shape the result with [`respond`].

mod completion;
mod context;
mod extensions;
mod hindsight;
mod knowledge;
mod memory;
mod meta;
mod notes;
mod params;
mod progress;
mod prompts;
mod subscriptions;
mod summaries;
mod tasks;

use std::sync::Arc;
use std::time::Instant;

use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    CompleteRequestParams, CompleteResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    GetTaskParams, GetTaskResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ResourceContents, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};
use tracing::Instrument;

use self::subscriptions::Subscriptions;
use crate::auth::Principal;
use crate::metrics::Outcome;
use crate::state::AppState;

/// What the server tells clients at initialisation.
pub const INSTRUCTIONS: &str = "\
Aeterna is a long-term memory for coding agents. Memories live in layers, from narrow to broad: \
agent, user, session, project, team, org and company. Each layer is scoped by an id you pass \
(agent_id, user_id, session_id, project_id, team_id, org_id) or that your token configures; \
company needs none.
- memory_add stores a fact, decision or lesson in one layer (identical content is stored once). Its answer lists `conflicts`: memories of the same scope the new one probably contradicts or repeats, with a reason; nothing is changed for them. When the new fact replaces one, add it with supersedes=<that id> (the old memory gets it as a new version) instead of keeping both.
- memory_search finds memories by meaning and keywords across the layers you can see; use it \
before starting work and when stuck.
- memory_get reads one memory by id; memory_list pages through memories, newest first \
(metadata_only=true for a cheap overview).
- memory_update changes content, tags or metadata: a changed fact is superseded (the old \
version stays in memory_history and in memory_search with as_of, a past time), mode=fix \
corrects a typo in place. memory_delete removes one memory for good; memory_forget removes \
memories by filter (dry_run=true first to see what would go).
- context_assemble gives the most relevant memories of every layer, deduplicated and within a \
token budget, as Markdown: call it at the start of a task. summary_get reads a layer's summary \
(sentence, paragraph or detailed); summary_refresh regenerates summaries now.
- When a build, test or command fails, hindsight_query with the raw error output finds fixes that worked before. After fixing it, hindsight_resolve records the fix (hindsight_capture records an error alone), and hindsight_feedback reports whether a suggested fix worked.
- trajectory_capture records the tool calls you make (one event or a batch; it returns at once). \
A session's calls are distilled into a Markdown note (problem, solution, patterns) that search \
and context_assemble find; note_distill distils now, note_list and note_get read notes, also \
available as resources aeterna://notes/{id}.
- extensions_list, extensions_apply and extensions_prompt, when the operator configured an \
extensions directory, run its extension chains; extension state is kept per tenant and session.
- meta_loop_start runs a build → test → improve loop for a task (at most 3 iterations by \
default). Client-driven: report each build and test with meta_loop_step; the answer says what \
to do next, with known fixes, notes and context. Command-driven (the operator's allowed \
commands): the server runs them; meta_loop_status (wait_ms to wait), meta_loop_cancel and \
meta_loop_list follow loops.
Errors say which argument to fix.";

/// The MCP handler. One instance per HTTP session or stdio connection; cheap to create.
#[derive(Clone)]
pub struct AeternaMcp {
    state: AppState,
    tools: Arc<ToolRouter<AeternaMcp>>,
    /// The caller of a stdio connection. HTTP callers come from each request's token.
    fixed_principal: Option<Principal>,
    /// The resources this session watches (`resources/subscribe`).
    subscriptions: Arc<Subscriptions>,
}

impl AeternaMcp {
    /// Every tool the server offers. Agent modules add their routers here.
    pub fn tool_router() -> ToolRouter<Self> {
        Self::memory_router()
            + Self::context_router()
            + Self::hindsight_router()
            + Self::notes_router()
            + Self::meta_router()
            + Self::knowledge_router()
    }

    /// Every tool this server offers with `state`: [`tool_router`](Self::tool_router) plus the
    /// extension tools when `[extensions] dir` is configured.
    pub fn tool_router_for(state: &AppState) -> ToolRouter<Self> {
        Self::tool_router() + extensions::extensions_router(state)
    }

    /// A handler for HTTP sessions: the caller comes from the request (see
    /// [`crate::http::mcp`]). Build `tools` once with [`AeternaMcp::tool_router`] and share it.
    pub fn for_http(state: AppState, tools: Arc<ToolRouter<Self>>) -> Self {
        AeternaMcp {
            state,
            tools,
            fixed_principal: None,
            subscriptions: Arc::default(),
        }
    }

    /// A handler for a stdio connection, acting for `principal`.
    pub fn for_stdio(state: AppState, principal: Principal) -> Self {
        AeternaMcp {
            tools: Arc::new(Self::tool_router_for(&state)),
            state,
            fixed_principal: Some(principal),
            subscriptions: Arc::default(),
        }
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    fn principal(&self, context: &RequestContext<RoleServer>) -> Option<Principal> {
        if let Some(principal) = &self.fixed_principal {
            return Some(principal.clone());
        }
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>())
            .cloned()
    }

    /// The caller of a request other than a tool call (resources, prompts, completions).
    fn caller(&self, context: &RequestContext<RoleServer>) -> Result<Principal, ErrorData> {
        self.principal(context).ok_or_else(|| {
            // The HTTP layer authenticates before MCP sees a request; reaching this is a bug.
            tracing::error!("an MCP request without an authenticated caller");
            ErrorData::internal_error("the request carries no authenticated caller", None)
        })
    }

    /// Runs a request other than a tool call in `span`, counted and timed like a tool call.
    async fn measured<T>(
        &self,
        operation: &'static str,
        span: tracing::Span,
        work: impl Future<Output = Result<T, ErrorData>>,
    ) -> Result<T, ErrorData> {
        let started = Instant::now();
        let result = work.instrument(span).await;
        let outcome = match result {
            Ok(_) => Outcome::Ok,
            Err(_) => Outcome::Error,
        };
        self.state
            .metrics
            .record_call(operation, outcome, started.elapsed());
        result
    }
}

#[tool_handler(router = self.tools)]
impl ServerHandler for AeternaMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_prompts()
                .enable_completions()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("aeterna", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    /// Resources are the notes of the caller's tenant (see [`notes`]), and by template only
    /// the layer summaries (see [`summaries`]; their scopes are whatever ids callers use) and
    /// the knowledge items (see [`knowledge::resources`]).
    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        notes::list_resources(self, request, context).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            notes::resource_template(),
            summaries::template(),
            knowledge::resources::template(),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let summary = uri.starts_with(summaries::URI_PREFIX);
        if summary || uri.starts_with(aeterna_knowledge::tools::RESOURCE_URI_PREFIX) {
            let caller = self.caller(&context)?;
            let span =
                tracing::info_span!("resources_read", tenant = %caller.tenant_id, uri = %uri);
            let read = async {
                if summary {
                    summaries::read(&self.state, &caller, uri).await
                } else {
                    knowledge::resources::read(&self.state, &caller, uri).await
                }
            };
            return self
                .measured("resources/read", span, read)
                .await
                .map(Into::into);
        }
        notes::read_resource(self, request, context)
            .await
            .map(Into::into)
    }

    /// `resources/subscribe` (protocol revisions before 2026-07-28): summaries only.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.caller(&context)?;
        self.subscriptions
            .subscribe(&self.state, &caller, &request.uri, &context)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    /// `subscriptions/listen` (2026-07-28): summary URIs only (see [`subscriptions`]).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(subscriptions::accepted_filter(requested))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let caller = self.caller(context.request_context())?;
        subscriptions::listen(&self.state, &caller, context).await
    }

    /// Prompts fill their message from the caller's memory (see [`prompts`]).
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(prompts::list())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let caller = self.caller(&context)?;
        let span =
            tracing::info_span!("prompt_get", prompt = %request.name, tenant = %caller.tenant_id);
        self.measured(
            "prompts/get",
            span,
            prompts::get(&self.state, &caller, request),
        )
        .await
        .map(Into::into)
    }

    /// `tasks/get` for a command-driven loop (see [`tasks`]).
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = self.caller(&context)?;
        let span =
            tracing::info_span!("tasks_get", task = %request.task_id, tenant = %caller.tenant_id);
        self.measured(
            "tasks/get",
            span,
            tasks::get(&self.state, &caller, &request.task_id),
        )
        .await
    }

    /// `tasks/cancel` for a command-driven loop (see [`tasks`]).
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.caller(&context)?;
        let span = tracing::info_span!("tasks_cancel", task = %request.task_id, tenant = %caller.tenant_id);
        self.measured(
            "tasks/cancel",
            span,
            tasks::cancel(&self.state, &caller, &request.task_id),
        )
        .await
    }

    /// `tasks/update`: loop tasks never ask the client for input.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(ErrorData::invalid_params(
            format!(
                "task `{}` asks for no input: loop tasks run the operator's commands; follow \
                 them with tasks/get",
                request.task_id
            ),
            Some(serde_json::json!({ "taskId": request.task_id })),
        ))
    }

    /// Suggestions for note ids and layer names (see [`completion`]).
    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let caller = self.caller(&context)?;
        let span = tracing::info_span!("complete", argument = %request.argument.name, tenant = %caller.tenant_id);
        self.measured(
            "completion/complete",
            span,
            completion::complete(&self.state, &caller, request),
        )
        .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        if !self.tools.has_route(&tool) {
            self.state
                .metrics
                .record_call("unknown", Outcome::Rejected, Default::default());
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{tool}`: call tools/list for the tools this server offers"),
                None,
            ));
        }
        let Some(principal) = self.principal(&context) else {
            // The HTTP layer authenticates before MCP sees a request; reaching this is a bug.
            tracing::error!(tool, "tool call without an authenticated caller");
            return Err(ErrorData::internal_error(
                "the request carries no authenticated caller",
                None,
            ));
        };
        let span = tracing::info_span!("tool_call", tool = %tool, tenant = %principal.tenant_id);
        context.extensions.insert(principal);
        let _in_flight = self.state.metrics.in_flight();
        let started = Instant::now();
        let mut result = self
            .tools
            .call(ToolCallContext::new(self, request, context))
            .instrument(span.clone())
            .await;
        let elapsed = started.elapsed();
        let outcome = match &mut result {
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                name_argument_errors(&tool, result);
                Outcome::Error
            }
            Ok(_) => Outcome::Ok,
            Err(_) => Outcome::Rejected,
        };
        self.state.metrics.record_call(&tool, outcome, elapsed);
        span.in_scope(|| {
            tracing::debug!(
                ?outcome,
                elapsed_us = elapsed.as_micros() as u64,
                "tool call finished"
            )
        });
        result
    }
}

/// rmcp reports undeserialisable arguments as `failed to deserialize parameters: …`; say
/// which tool and where the schema is.
fn name_argument_errors(tool: &str, result: &mut CallToolResult) {
    for block in &mut result.content {
        if let Some(text) = block.as_text()
            && let Some(detail) = text.text.strip_prefix(params::ARGUMENT_ERROR_PREFIX)
        {
            *block = ContentBlock::text(format!(
                "{tool}: invalid arguments:{detail}; the tool's inputSchema (tools/list) lists \
                 the accepted arguments"
            ));
        }
    }
}

/// The authenticated caller of a tool call, set by [`AeternaMcp::call_tool`].
pub struct Caller(pub Principal);

impl<'a> FromContextPart<ToolCallContext<'a, AeternaMcp>> for Caller {
    fn from_context_part(context: &mut ToolCallContext<'a, AeternaMcp>) -> Result<Self, ErrorData> {
        context
            .request_context
            .extensions
            .get::<Principal>()
            .cloned()
            .map(Caller)
            .ok_or_else(|| {
                ErrorData::internal_error("the tool call has no authenticated caller", None)
            })
    }
}

/// Shapes a domain result as a tool result: structured JSON on success, a tool error
/// (`isError: true`) naming the tool otherwise.
pub fn respond<T: serde::Serialize>(
    tool: &str,
    result: Result<T, aeterna_memory::MemoryError>,
) -> CallToolResult {
    match result {
        Ok(value) => match serde_json::to_value(value) {
            Ok(value) => CallToolResult::structured(value),
            Err(error) => {
                tracing::error!(tool, %error, "cannot serialise a tool result");
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "{tool}: the result could not be encoded; this is a server bug"
                ))])
            }
        },
        Err(error) => {
            if matches!(error, aeterna_memory::MemoryError::Storage { .. }) {
                tracing::warn!(tool, %error, "tool failed");
            } else {
                tracing::debug!(tool, %error, "tool refused its input");
            }
            CallToolResult::error(vec![ContentBlock::text(format!("{tool}: {error}"))])
        }
    }
}

/// An agent's error, as a tool answers it: the memory errors it wraps are answered as memory's
/// are ([`respond`]); the rest are the caller's to fix or the server's failure.
pub(crate) trait AgentError: std::fmt::Display + Sized {
    /// The wrapped memory error, or `self`.
    fn into_memory(self) -> Result<aeterna_memory::MemoryError, Self>;
    /// Whether the caller can fix it (logged at debug) rather than the server failing (warn).
    fn is_callers(&self) -> bool;
}

/// [`respond`] for an agent's errors.
pub(crate) fn answer<T: serde::Serialize, E: AgentError>(
    tool: &str,
    result: Result<T, E>,
) -> CallToolResult {
    match result.map_err(AgentError::into_memory) {
        Ok(value) => respond(tool, Ok(value)),
        Err(Ok(memory)) => respond::<T>(tool, Err(memory)),
        Err(Err(error)) => {
            if error.is_callers() {
                tracing::debug!(tool, %error, "tool refused its input");
            } else {
                tracing::warn!(tool, %error, "tool failed");
            }
            CallToolResult::error(vec![ContentBlock::text(format!("{tool}: {error}"))])
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Every tool declares an object `outputSchema` for what serde writes (not what it would
    /// read): an `Option` field is required, as `null`, unless it is skipped when `None`.
    #[test]
    fn output_schemas_describe_the_serialised_results() {
        let tools = AeternaMcp::tool_router().list_all();
        assert!(tools.len() >= 19, "{}", tools.len());
        let schema = |name: &str| -> Value {
            let tool = tools.iter().find(|tool| tool.name == name).expect(name);
            let schema = tool.output_schema.as_ref().expect("outputSchema");
            Value::Object(schema.as_ref().clone())
        };
        for tool in &tools {
            assert_eq!(schema(&tool.name)["type"], "object", "{}", tool.name);
        }
        let list = schema("memory_list");
        assert_eq!(list["required"], json!(["items", "next_cursor"]));
        let record = &list["$defs"]["MemoryRecord"];
        let required = record["required"].as_array().expect("required");
        assert!(!required.contains(&json!("content")), "skipped when None");
        assert!(required.contains(&json!("metadata")));
        assert_eq!(record["properties"]["metadata"]["type"], "object");
        assert_eq!(record["properties"]["id"]["format"], "uuid");
        // `context_assemble` returns an `Arc<AssembledContext>`: the schema is the context's.
        let assembled = schema("context_assemble");
        assert!(assembled["properties"]["sources"].is_object());
        // `note_get` flattens the note's summary into the note.
        let note = schema("note_get");
        assert!(
            note["properties"]["title"].is_object() && note["properties"]["markdown"].is_object()
        );
    }
}

/// A resource read as two contents of one URI: its Markdown, and the same as JSON. Private to
/// the caller (the cache scope), as every resource here is a tenant's.
pub(super) fn markdown_and_json(uri: &str, markdown: String, json: String) -> ReadResourceResult {
    let text = |mime: &str, text: String| ResourceContents::TextResourceContents {
        uri: uri.to_owned(),
        mime_type: Some(mime.into()),
        text,
        meta: None,
    };
    ReadResourceResult::new(vec![
        text("text/markdown", markdown),
        text("application/json", json),
    ])
    .with_cache_scope(CacheScope::Private)
}
