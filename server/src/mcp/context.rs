//! The Context Architect's tools: `context_assemble`, `summary_get` and `summary_refresh`.
//! Each parses its arguments, calls [`aeterna_context::ContextArchitect`] and shapes the result.

use aeterna_context::{AssembleRequest, ContextError, Depth};
use aeterna_memory::Layer;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::{AeternaMcp, Caller, respond};
use crate::config::IdentityFields;
use crate::domain::memory::parse_layer;
use crate::domain::schema::{layer_list_schema, layer_schema};

/// Arguments of `context_assemble`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AssembleArgs {
    /// What the context is for: the task at hand, in natural language or keywords.
    pub query: String,
    /// Most tokens the assembled Markdown may use, from 100 to 32000 (default 4000). Counted
    /// with the o200k_base BPE.
    #[serde(default)]
    pub token_budget: Option<usize>,
    /// Only these layers; every layer you can see when left out.
    #[serde(default)]
    #[schemars(schema_with = "layer_list_schema")]
    pub layers: Option<Vec<String>>,
    /// Leave out memories less relevant than this, from 0 to 1 (default 0.3).
    #[serde(default)]
    pub min_relevance: Option<f32>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `summary_get`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SummaryGetArgs {
    /// The layer to summarise; its scope is the matching id (`project` needs `project_id`, …).
    #[schemars(schema_with = "layer_schema")]
    pub layer: String,
    /// `sentence` (~50 tokens), `paragraph` (~200, the default) or `detailed` (~500).
    #[serde(default)]
    #[schemars(schema_with = "depth_schema")]
    pub depth: Option<String>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `summary_refresh`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SummaryRefreshArgs {
    /// Only these layers; every layer you can see when left out.
    #[serde(default)]
    #[schemars(schema_with = "layer_list_schema")]
    pub layers: Option<Vec<String>>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// The result of `summary_refresh`.
#[derive(Debug, Serialize)]
struct Refreshed {
    refreshed: Vec<aeterna_context::RefreshOutcome>,
}

fn depth_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = Depth::ALL.iter().map(|depth| depth.as_str()).collect();
    json_schema!({ "type": ["string", "null"], "enum": names })
}

fn parse_layers(layers: Option<Vec<String>>) -> Result<Option<Vec<Layer>>, ContextError> {
    layers
        .map(|layers| {
            layers
                .iter()
                .map(|layer| parse_layer("layers", layer))
                .collect()
        })
        .transpose()
        .map_err(ContextError::from)
}

fn parse_depth(depth: Option<&str>) -> Result<Depth, ContextError> {
    match depth.map(str::trim) {
        None | Some("") => Ok(Depth::Paragraph),
        Some(depth) => depth
            .parse()
            .map_err(|error| ContextError::invalid(format!("`depth`: {error}"))),
    }
}

/// [`respond`] for the Context Architect's errors.
fn answer<T: Serialize>(tool: &str, result: Result<T, ContextError>) -> CallToolResult {
    match result {
        Ok(value) => respond(tool, Ok(value)),
        Err(ContextError::Memory(error)) => respond::<T>(tool, Err(error)),
        Err(error) => {
            if matches!(
                error,
                ContextError::Storage { .. } | ContextError::Tokenizer(_)
            ) {
                tracing::warn!(tool, %error, "tool failed");
            } else {
                tracing::debug!(tool, %error, "tool refused its input");
            }
            CallToolResult::error(vec![ContentBlock::text(format!("{tool}: {error}"))])
        }
    }
}

#[tool_router(router = context_router, vis = "pub(crate)")]
impl AeternaMcp {
    /// Assemble the context for a task: the most relevant memories of every layer you can see
    /// (and layer summaries where a layer has more than fits), deduplicated, as Markdown grouped
    /// by layer, within `token_budget` tokens. `sources` lists what went in, most relevant first.
    #[tool(
        name = "context_assemble",
        annotations(
            title = "Assemble context",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn context_assemble(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<AssembleArgs>,
    ) -> CallToolResult {
        let who = caller.identity(&args.identity);
        let result = async {
            let request = AssembleRequest {
                query: args.query,
                token_budget: args.token_budget,
                layers: parse_layers(args.layers)?,
                min_relevance: args.min_relevance,
            };
            self.state.context.assemble(&who, request).await
        };
        answer("context_assemble", result.await)
    }

    /// Read the summary of one layer at a depth: `sentence` (~50 tokens), `paragraph` (~200)
    /// or `detailed` (~500). Generated on first use; kept fresh as the layer changes.
    #[tool(
        name = "summary_get",
        annotations(
            title = "Read a layer summary",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn summary_get(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<SummaryGetArgs>,
    ) -> CallToolResult {
        let who = caller.identity(&args.identity);
        let result = async {
            let layer = parse_layer("layer", &args.layer)?;
            let depth = parse_depth(args.depth.as_deref())?;
            self.state.context.summary(&who, layer, depth).await
        };
        answer("summary_get", result.await)
    }

    /// Regenerate layer summaries now (every layer you can see, or only `layers`). A layer
    /// whose memories are unchanged since its last summary is skipped (`regenerated: false`).
    #[tool(
        name = "summary_refresh",
        annotations(
            title = "Refresh layer summaries",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn summary_refresh(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<SummaryRefreshArgs>,
    ) -> CallToolResult {
        let who = caller.identity(&args.identity);
        let result = async {
            let layers = parse_layers(args.layers)?;
            let refreshed = self.state.context.refresh(&who, layers.as_deref()).await?;
            Ok(Refreshed { refreshed })
        };
        answer("summary_refresh", result.await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_defaults_to_paragraph_and_names_the_argument_when_wrong() {
        assert_eq!(parse_depth(None).unwrap(), Depth::Paragraph);
        assert_eq!(parse_depth(Some(" detailed ")).unwrap(), Depth::Detailed);
        let error = parse_depth(Some("huge")).unwrap_err().to_string();
        assert!(
            error.contains("`depth`") && error.contains("sentence"),
            "{error}"
        );
    }
}
