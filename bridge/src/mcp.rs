//! [`BridgeMcp`]: the bridge's MCP server (served on stdio). Its tools are the local extension
//! tools followed by the memory server's tools, schemas passed through; a local tool wins over a
//! server tool of the same name. Resources are the server's.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use tracing::Instrument;

use crate::commands;
use crate::extensions::Extensions;
use crate::forward::Forwarder;
use crate::remote::RemoteError;
use crate::tools;

/// The tenant the bridge's local extension state is kept under (the bridge serves one user).
pub const LOCAL_TENANT: &str = "local";

const INSTRUCTIONS: &str = "\
The Aeterna bridge: your local extensions plus the Aeterna memory server's tools in one \
connection. extensions_apply runs an extension chain (input-messages before sending messages \
to the model, plain-text on tool output, llm-output on the model's answer); extensions_list and \
extensions_prompt describe what is loaded. Every other tool is the memory server's (see its \
descriptions). While the server is unreachable its tools answer with an error that says so; \
memory_add and trajectory_capture are then queued locally and sent when it is back.";

/// The bridge's MCP handler.
#[derive(Clone)]
pub struct BridgeMcp {
    extensions: Arc<Extensions>,
    forwarder: Arc<Forwarder>,
    local_tools: Arc<Vec<Tool>>,
    /// The local command runner's allow-list (`--commands`), if any.
    commands: Option<Arc<aeterna_meta::MetaConfig>>,
    /// The stdio client, once initialised: told when the server's tool list changes.
    client: Arc<OnceLock<Peer<RoleServer>>>,
}

impl BridgeMcp {
    pub fn new(
        extensions: Arc<Extensions>,
        forwarder: Arc<Forwarder>,
        commands: Option<aeterna_meta::MetaConfig>,
    ) -> Self {
        let mut local_tools = tools::definitions();
        if commands.is_some() {
            local_tools.push(commands::definition());
        }
        let bridge = Self {
            extensions,
            forwarder,
            local_tools: Arc::new(local_tools),
            commands: commands.map(Arc::new),
            client: Arc::default(),
        };
        bridge.spawn_tool_list_notifier();
        bridge
    }

    /// Local tools, then the server's (except names the local ones take).
    pub fn tools(&self) -> Vec<Tool> {
        let remote = self.forwarder.remote().tools();
        let mut all: Vec<Tool> = self.local_tools.as_ref().clone();
        all.extend(
            remote
                .iter()
                .filter(|tool| !Self::is_local_tool(&tool.name))
                .cloned(),
        );
        all
    }

    fn is_local_tool(name: &str) -> bool {
        tools::is_extension_tool(name) || name == commands::RUN_LOCAL
    }

    /// Sends `notifications/tools/list_changed` after each reconnection.
    fn spawn_tool_list_notifier(&self) {
        let mut connections = self.forwarder.remote().subscribe();
        let client = self.client.clone();
        tokio::spawn(async move {
            while connections.changed().await.is_ok() {
                if let Some(peer) = client.get()
                    && let Err(error) = peer.notify_tool_list_changed().await
                {
                    tracing::debug!(%error, "cannot tell the client the tool list changed");
                }
            }
        });
    }

    fn unreachable_error(error: RemoteError) -> ErrorData {
        match error {
            RemoteError::Protocol(error) => error,
            other => ErrorData::internal_error(other.to_string(), None),
        }
    }
}

impl ServerHandler for BridgeMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new(
            "aeterna-bridge",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let _ = self.client.set(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        if tool == commands::RUN_LOCAL {
            let result = commands::run_local(
                self.commands.as_deref(),
                &self.forwarder,
                request.arguments,
                &context.ct,
            )
            .await;
            return Ok(result.into());
        }
        if let Some(result) = tools::call(
            &self.extensions,
            LOCAL_TENANT,
            &tool,
            request.arguments.clone(),
        )
        .await
        {
            return Ok(result.into());
        }
        let span = tracing::info_span!("forwarded_call", tool = %tool);
        let started = Instant::now();
        let result = self.forwarder.call(request).instrument(span.clone()).await;
        span.in_scope(|| {
            tracing::debug!(
                elapsed_us = started.elapsed().as_micros() as u64,
                "forwarded call finished"
            )
        });
        result
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        match self.forwarder.remote().list_resources(request).await {
            Ok(result) => Ok(result),
            // An agent lists resources at start; an empty list beats a failed start.
            Err(RemoteError::Unreachable { .. }) => Ok(ListResourcesResult::default()),
            Err(error) => Err(Self::unreachable_error(error)),
        }
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        match self
            .forwarder
            .remote()
            .list_resource_templates(request)
            .await
        {
            Ok(result) => Ok(result),
            Err(RemoteError::Unreachable { .. }) => Ok(ListResourceTemplatesResult::default()),
            Err(error) => Err(Self::unreachable_error(error)),
        }
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.forwarder
            .remote()
            .read_resource(request)
            .await
            .map_err(Self::unreachable_error)
    }
}
