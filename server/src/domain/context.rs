//! The Context Architect's operations behind the `context_assemble`, `summary_get` and
//! `summary_refresh` MCP tools: argument types (with the JSON schemas agents see) and plain async
//! functions over [`ContextArchitect`].

use std::sync::Arc;

use aeterna_context::{
    AssembleRequest, AssembledContext, ContextArchitect, ContextError, Depth, LayerSummary,
    RefreshOutcome,
};
use aeterna_memory::{Identity, Layer};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::memory::parse_layer;
use super::schema::{layer_list_schema, layer_schema};
use crate::auth::Principal;
use crate::config::IdentityFields;

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
#[derive(Debug, Serialize, JsonSchema)]
pub struct Refreshed {
    /// One entry per scope refreshed, narrowest layer first.
    pub refreshed: Vec<RefreshOutcome>,
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

pub async fn assemble(
    context: &ContextArchitect,
    caller: &Principal,
    args: AssembleArgs,
) -> Result<Arc<AssembledContext>, ContextError> {
    let who = &caller.identity(&args.identity)?;
    let request = AssembleRequest {
        query: args.query,
        token_budget: args.token_budget,
        layers: parse_layers(args.layers)?,
        min_relevance: args.min_relevance,
    };
    context.assemble(who, request).await
}

pub async fn summary_get(
    context: &ContextArchitect,
    caller: &Principal,
    args: SummaryGetArgs,
) -> Result<LayerSummary, ContextError> {
    let who = &caller.identity(&args.identity)?;
    let layer = parse_layer("layer", &args.layer)?;
    let depth = parse_depth(args.depth.as_deref())?;
    context.summary(who, layer, depth).await
}

/// The identity and the layers a `summary_refresh` covers: those requested, or every layer
/// the caller can see, narrowest first.
pub fn refresh_plan(
    caller: &Principal,
    args: SummaryRefreshArgs,
) -> Result<(Identity, Vec<Layer>), ContextError> {
    let who = caller.identity(&args.identity)?;
    let layers = match parse_layers(args.layers)? {
        Some(mut layers) => {
            layers.sort_unstable();
            layers.dedup();
            layers
        }
        None => Layer::ALL
            .into_iter()
            .filter(|layer| who.scope(*layer).is_some())
            .collect(),
    };
    Ok((who, layers))
}

/// Regenerates the summaries of one layer of `who`.
pub async fn refresh_layer(
    context: &ContextArchitect,
    who: &Identity,
    layer: Layer,
) -> Result<Vec<RefreshOutcome>, ContextError> {
    context.refresh(who, Some(&[layer])).await
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

    #[test]
    fn unknown_layers_name_the_argument() {
        let error = parse_layers(Some(vec!["galaxy".into()]))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`layers`") && error.contains("galaxy"),
            "{error}"
        );
    }
}
