//! The memory operations behind the `memory_*` MCP tools: argument types (with the JSON
//! schemas agents see) and plain async functions over [`MemoryService`].

use aeterna_memory::{
    AddOutcome, Layer, ListRequest, MemoryError, MemoryPatch, MemoryRecord, MemoryService,
    NewMemory, Page, SearchHit, SearchRequest,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::schema::{layer_list_schema, layer_schema};
use crate::auth::Principal;
use crate::config::IdentityFields;

/// Results per search when the caller does not say.
pub const DEFAULT_SEARCH_LIMIT: usize = 10;
/// Records per listing page when the caller does not say.
pub const DEFAULT_LIST_LIMIT: usize = 20;

/// Arguments of `memory_add`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct AddArgs {
    /// The text to remember. Exact duplicates in the same scope are stored once.
    pub content: String,
    /// Where the memory lives: `agent`, `user`, `session`, `project`, `team`, `org` or
    /// `company`. The scope comes from the matching id (`session` needs `session_id`, …).
    #[schemars(schema_with = "layer_schema")]
    pub layer: String,
    /// Labels to filter by later.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Any JSON object to keep alongside the content.
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of the tools that address one memory by id.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct IdArgs {
    /// The memory's id, as returned by `memory_add`, `memory_search` or `memory_list`.
    pub id: String,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `memory_search`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// What to look for, in natural language or keywords.
    pub query: String,
    /// Only these layers; all layers the identity can see when left out.
    #[serde(default)]
    #[schemars(schema_with = "layer_list_schema")]
    pub layers: Option<Vec<String>>,
    /// Only memories carrying every one of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Most results to return (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Drop results scoring below this relevance, from 0 to 1 (default 0). The score estimates
    /// the probability that a memory answers the query, so 0.5 keeps what is more likely
    /// relevant than not, for any query.
    #[serde(default)]
    pub min_score: Option<f32>,
    /// Say why each hit was found: every signal's value (semantic, lexical, coverage,
    /// proximity, interaction, entity, speaker, time, brevity, neighbour) and its first-stage
    /// ranks.
    #[serde(default)]
    pub explain: bool,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `memory_list`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ListArgs {
    /// Only these layers; all layers the identity can see when left out.
    #[serde(default)]
    #[schemars(schema_with = "layer_list_schema")]
    pub layers: Option<Vec<String>>,
    /// Only memories carrying every one of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// `next_cursor` from the previous page; leave out for the first page.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Records per page (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Leave the content out and return only ids, tags, metadata and timestamps.
    #[serde(default)]
    pub metadata_only: bool,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `memory_update`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UpdateArgs {
    /// The memory's id.
    pub id: String,
    /// New content; the memory is re-embedded.
    #[serde(default)]
    pub content: Option<String>,
    /// New tags, replacing the old ones.
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// New metadata, replacing the old object.
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// The result of `memory_search`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchResult {
    /// The matching memories, most relevant first.
    pub hits: Vec<SearchHit>,
}

/// The result of `memory_delete`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Deleted {
    /// The id of the deleted memory.
    pub id: Uuid,
    /// Always true: a memory that could not be deleted is a tool error.
    pub deleted: bool,
}

/// Stores a memory in the caller's scope for the requested layer.
pub async fn add(
    memory: &MemoryService,
    caller: &Principal,
    args: AddArgs,
) -> Result<AddOutcome, MemoryError> {
    let who = &caller.identity(&args.identity)?;
    let layer = parse_layer("layer", &args.layer)?;
    memory
        .add(
            who,
            NewMemory {
                layer,
                content: args.content,
                tags: args.tags,
                metadata: object_or_empty(args.metadata),
                kind: None,
            },
        )
        .await
}

pub async fn get(
    memory: &MemoryService,
    caller: &Principal,
    args: IdArgs,
) -> Result<MemoryRecord, MemoryError> {
    let who = &caller.identity(&args.identity)?;
    memory.get(who, parse_id(&args.id)?).await
}

pub async fn search(
    memory: &MemoryService,
    caller: &Principal,
    args: SearchArgs,
) -> Result<SearchResult, MemoryError> {
    let who = &caller.identity(&args.identity)?;
    if args.query.trim().is_empty() {
        return Err(MemoryError::invalid(
            "`query` is empty; say what to look for",
        ));
    }
    let min_score = args.min_score.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&min_score) {
        return Err(MemoryError::invalid(format!(
            "`min_score` is {min_score}; use a relevance between 0 and 1"
        )));
    }
    let hits = memory
        .search(
            who,
            SearchRequest {
                query: args.query,
                layers: parse_layers(args.layers)?,
                tags: args.tags,
                kinds: Vec::new(),
                limit: args.limit.unwrap_or(DEFAULT_SEARCH_LIMIT),
                min_score,
                explain: args.explain,
            },
        )
        .await?;
    Ok(SearchResult { hits })
}

pub async fn list(
    memory: &MemoryService,
    caller: &Principal,
    args: ListArgs,
) -> Result<Page, MemoryError> {
    let who = &caller.identity(&args.identity)?;
    memory
        .list(
            who,
            ListRequest {
                layers: parse_layers(args.layers)?,
                tags: args.tags,
                kinds: Vec::new(),
                cursor: args.cursor.filter(|cursor| !cursor.is_empty()),
                limit: args.limit.unwrap_or(DEFAULT_LIST_LIMIT),
                metadata_only: args.metadata_only,
            },
        )
        .await
}

pub async fn update(
    memory: &MemoryService,
    caller: &Principal,
    args: UpdateArgs,
) -> Result<MemoryRecord, MemoryError> {
    let who = &caller.identity(&args.identity)?;
    let id = parse_id(&args.id)?;
    if args.content.is_none() && args.tags.is_none() && args.metadata.is_none() {
        return Err(MemoryError::invalid(
            "nothing to update: pass at least one of `content`, `tags` or `metadata`",
        ));
    }
    let patch = MemoryPatch {
        content: args.content,
        tags: args.tags,
        metadata: args.metadata.map(serde_json::Value::Object),
    };
    memory.update(who, id, patch).await
}

pub async fn delete(
    memory: &MemoryService,
    caller: &Principal,
    args: IdArgs,
) -> Result<Deleted, MemoryError> {
    let who = &caller.identity(&args.identity)?;
    let id = parse_id(&args.id)?;
    memory.delete(who, id).await?;
    Ok(Deleted { id, deleted: true })
}

/// Parses a memory id, naming the argument when it is not a UUID.
pub fn parse_id(id: &str) -> Result<Uuid, MemoryError> {
    Uuid::parse_str(id.trim()).map_err(|_| {
        MemoryError::invalid(format!(
            "`id` {id:?} is not a memory id; ids are UUIDs such as those memory_list returns"
        ))
    })
}

/// Parses a layer name, naming the argument and the accepted values.
pub fn parse_layer(field: &str, value: &str) -> Result<Layer, MemoryError> {
    value
        .trim()
        .parse::<Layer>()
        .map_err(|error| MemoryError::invalid(format!("`{field}`: {error}")))
}

fn parse_layers(layers: Option<Vec<String>>) -> Result<Option<Vec<Layer>>, MemoryError> {
    layers
        .map(|layers| {
            layers
                .iter()
                .map(|layer| parse_layer("layers", layer))
                .collect()
        })
        .transpose()
}

pub(crate) fn object_or_empty(
    metadata: Option<serde_json::Map<String, serde_json::Value>>,
) -> serde_json::Value {
    serde_json::Value::Object(metadata.unwrap_or_default())
}
