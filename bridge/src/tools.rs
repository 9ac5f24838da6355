//! The extension tools as MCP tools, for any rmcp server that embeds [`Extensions`]: their
//! definitions ([`definitions`]) and one dispatcher ([`call`]) that parses the arguments, runs
//! the domain function and shapes the result. The bridge and `aeterna serve` both use these,
//! so the two surfaces cannot drift apart.

use std::sync::Arc;

use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::Instrument;

use crate::extensions::{
    ApplyArgs, ApplyError, ApplyResult, Extensions, ExtensionsList, NoArgs, PromptResult,
};

pub const LIST: &str = "extensions_list";
pub const APPLY: &str = "extensions_apply";
pub const PROMPT: &str = "extensions_prompt";

/// Whether `name` is one of the extension tools.
pub fn is_extension_tool(name: &str) -> bool {
    matches!(name, LIST | APPLY | PROMPT)
}

/// The three tools, with input and output schemas.
pub fn definitions() -> Vec<Tool> {
    vec![
        Tool::new(
            LIST,
            "List the loaded extensions in execution order (id, version, hooks, tags, health and \
             quarantine), the component files that were refused and why, and the directory.",
            schema_for_type::<NoArgs>(),
        )
        .with_raw_output_schema(schema_for_output::<ExtensionsList>())
        .annotate(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        ),
        Tool::new(
            APPLY,
            "Run a hook's extension chain over a payload and return the output with one report \
             row per extension. hook: input-messages (payload: [{role, content}]), plain-text \
             (a tool's output), tag or llm-output (an LLM response). Extensions keep state per \
             session.",
            schema_for_type::<ApplyArgs>(),
        )
        .with_raw_output_schema(schema_for_output::<ApplyResult>())
        .annotate(
            ToolAnnotations::new()
                .read_only(false)
                .destructive(false)
                .idempotent(false)
                .open_world(false),
        ),
        Tool::new(
            PROMPT,
            "The loaded extensions' prompt additions (text for the system prompt) and tool \
             configuration (tools to add, remove or override), per extension and merged.",
            schema_for_type::<NoArgs>(),
        )
        .with_raw_output_schema(schema_for_output::<PromptResult>())
        .annotate(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        ),
    ]
}

/// Runs extension tool `name` for `tenant`. `None` when `name` is not an extension tool.
pub async fn call(
    extensions: &Arc<Extensions>,
    tenant: &str,
    name: &str,
    arguments: Option<JsonObject>,
) -> Option<CallToolResult> {
    if !is_extension_tool(name) {
        return None;
    }
    let span = tracing::info_span!("extension_tool", tool = name, tenant);
    Some(
        run(extensions, tenant, name, arguments)
            .instrument(span)
            .await,
    )
}

async fn run(
    extensions: &Arc<Extensions>,
    tenant: &str,
    name: &str,
    arguments: Option<JsonObject>,
) -> CallToolResult {
    let started = std::time::Instant::now();
    let result = match name {
        LIST => match parse::<NoArgs>(name, arguments) {
            Ok(NoArgs {}) => structured(name, extensions.list()),
            Err(error) => error,
        },
        PROMPT => match parse::<NoArgs>(name, arguments) {
            Ok(NoArgs {}) => structured(name, extensions.prompt()),
            Err(error) => error,
        },
        _ => match parse::<ApplyArgs>(name, arguments) {
            Ok(args) => match extensions.apply(tenant, args).await {
                Ok(result) => structured(name, result),
                Err(error) => apply_error(&error),
            },
            Err(error) => error,
        },
    };
    tracing::debug!(
        elapsed_us = started.elapsed().as_micros() as u64,
        failed = result.is_error == Some(true),
        "extension tool finished"
    );
    result
}

fn parse<T: DeserializeOwned>(
    tool: &str,
    arguments: Option<JsonObject>,
) -> Result<T, CallToolResult> {
    let value = serde_json::Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|error| {
        error_result(format!(
            "{tool}: invalid arguments: {error}; the tool's inputSchema (tools/list) lists the \
             accepted arguments"
        ))
    })
}

fn structured<T: Serialize>(tool: &str, value: T) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(value) => CallToolResult::structured(value),
        Err(error) => error_result(format!("{tool}: the result could not be encoded: {error}")),
    }
}

fn apply_error(error: &ApplyError) -> CallToolResult {
    let text = format!("{APPLY}: {error}");
    match error {
        ApplyError::ChainStopped { report, .. } => {
            let mut result = error_result(text);
            if let Ok(report) = serde_json::to_string(report) {
                result
                    .content
                    .push(ContentBlock::text(format!("report: {report}")));
            }
            result
        }
        _ => error_result(text),
    }
}

/// A tool error (`isError: true`) with one text block.
pub fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}
