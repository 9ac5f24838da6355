//! The memory operations behind the `memory_*` MCP tools: argument types (with the JSON
//! schemas agents see) and plain async functions over [`MemoryService`].

use aeterna_context::ContextArchitect;
use aeterna_memory::{
    AddOutcome, Conflict, ForgetOutcome, ForgetRequest, Layer, ListRequest, MemoryError,
    MemoryHistory, MemoryPatch, MemoryRecord, MemoryService, NewMemory, Page, SearchHit,
    SearchRequest, Timestamp, UpdateMode,
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
    /// The id of a memory this fact replaces (one an earlier `memory_add` listed in
    /// `conflicts`): instead of a new memory, that one gets this content as its new version,
    /// its history kept (`memory_history`).
    #[serde(default)]
    pub supersedes: Option<String>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// The result of `memory_add`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Added {
    #[serde(flatten)]
    pub outcome: AddOutcome,
    /// The memory whose new version this is, when `supersedes` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<Uuid>,
    /// Memories of the same scope this one probably contradicts or repeats, most likely first.
    /// Nothing was changed: when one is outdated, supersede it (`memory_add` again with
    /// `supersedes`, or `memory_update` on it) or forget it.
    pub conflicts: Vec<Conflict>,
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
    /// Answer as memory stood at this time: each memory as it was then (superseded facts in
    /// their old version), later memories absent. An RFC 3339 time (`2026-05-01T09:00:00Z`),
    /// a date (`2026-05-01`, its start in UTC) or milliseconds since the epoch; now when left
    /// out.
    #[serde(default)]
    pub as_of: Option<TimeArg>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// A point in time as a tool argument: RFC 3339, a date, or milliseconds since the epoch.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TimeArg {
    /// Milliseconds since the Unix epoch (UTC).
    Millis(i64),
    /// `2026-05-01T09:00:00Z` (RFC 3339) or `2026-05-01` (the start of that day, UTC).
    Text(String),
}

impl TimeArg {
    /// The time in milliseconds since the epoch; `field` names the argument in the error.
    pub fn millis(&self, field: &str) -> Result<Timestamp, MemoryError> {
        match self {
            TimeArg::Millis(ms) if *ms >= 0 => Ok(*ms),
            TimeArg::Millis(ms) => Err(MemoryError::invalid(format!(
                "`{field}` is {ms}; a time is milliseconds since 1970-01-01 (not negative), an \
                 RFC 3339 time or a date"
            ))),
            TimeArg::Text(text) => {
                let text = text.trim();
                if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
                    return Ok(time.timestamp_millis());
                }
                if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
                    return Ok(day
                        .and_hms_opt(0, 0, 0)
                        .expect("midnight exists")
                        .and_utc()
                        .timestamp_millis());
                }
                Err(MemoryError::invalid(format!(
                    "`{field}` is {text:?}; write a time as RFC 3339 (`2026-05-01T09:00:00Z`), \
                     a date (`2026-05-01`) or milliseconds since the epoch"
                )))
            }
        }
    }
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
    /// `supersede`: the fact changed — the old version is kept (`memory_history`, searches
    /// `as_of` an earlier time) and a new one opens. `fix`: it was wrong as written (a typo) —
    /// rewritten in place, no history. Default: `supersede` for memories whose content or
    /// metadata change, `fix` for the agents' notes, lessons and knowledge and for tag changes.
    #[serde(default)]
    pub mode: Option<UpdateMode>,
    /// When a superseding change took effect ("she moved last week"): after the current
    /// version's `valid_from` and not in the future; now when left out. Same forms as
    /// `memory_search`'s `as_of`.
    #[serde(default)]
    pub valid_from: Option<TimeArg>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `memory_forget`. Every condition given must hold; name at least one.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ForgetArgs {
    /// Only these layers (in your scopes); every layer you can see when left out.
    #[serde(default)]
    #[schemars(schema_with = "layer_list_schema")]
    pub layers: Option<Vec<String>>,
    /// Only memories carrying every one of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Only these memories (at most 100 ids).
    #[serde(default)]
    pub ids: Vec<String>,
    /// Only memories last changed before this time (same forms as `memory_search`'s `as_of`).
    #[serde(default)]
    pub updated_before: Option<TimeArg>,
    /// Count and list what would be forgotten, and forget nothing. Use it first.
    #[serde(default)]
    pub dry_run: bool,
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
) -> Result<Added, MemoryError> {
    let who = &caller.identity(&args.identity)?;
    let layer = parse_layer("layer", &args.layer)?;
    if let Some(old) = &args.supersedes {
        let id = parse_id(old).map_err(|_| {
            MemoryError::invalid(format!(
                "`supersedes` is `{old}`, not a memory id; pass the `id` of a conflict"
            ))
        })?;
        let existing = memory.get(who, id).await?;
        if existing.layer != layer {
            return Err(MemoryError::invalid(format!(
                "`supersedes` names a memory of layer `{}`, this one is for `{}`: a memory is \
                 superseded in its own layer",
                existing.layer.as_str(),
                layer.as_str()
            )));
        }
        let patch = MemoryPatch {
            content: Some(args.content),
            tags: (!args.tags.is_empty()).then_some(args.tags),
            metadata: args.metadata.map(serde_json::Value::Object),
            mode: Some(UpdateMode::Supersede),
            valid_from: None,
        };
        let record = memory.update(who, id, patch).await?;
        return Ok(Added {
            outcome: AddOutcome {
                record,
                deduplicated: false,
            },
            superseded: Some(id),
            conflicts: Vec::new(),
        });
    }
    let outcome = memory
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
        .await?;
    let conflicts = if outcome.deduplicated {
        Vec::new()
    } else {
        memory.conflicts(who, &outcome.record).await?
    };
    Ok(Added {
        outcome,
        superseded: None,
        conflicts,
    })
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
                as_of: args.as_of.map(|at| at.millis("as_of")).transpose()?,
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
        mode: args.mode,
        valid_from: args
            .valid_from
            .map(|at| at.millis("valid_from"))
            .transpose()?,
    };
    memory.update(who, id, patch).await
}

/// Forgets what `args` select: the memories, their vectors and versions, and the stored
/// summaries of their scopes (made from them).
pub async fn forget(
    memory: &MemoryService,
    context: &ContextArchitect,
    caller: &Principal,
    args: ForgetArgs,
) -> Result<ForgetOutcome, MemoryError> {
    let who = &caller.identity(&args.identity)?;
    let request = ForgetRequest {
        layers: parse_layers(args.layers)?,
        tags: args.tags,
        kinds: Vec::new(),
        ids: args
            .ids
            .iter()
            .map(|id| parse_id(id))
            .collect::<Result<_, _>>()?,
        updated_before: args
            .updated_before
            .map(|at| at.millis("updated_before"))
            .transpose()?,
        dry_run: args.dry_run,
    };
    let outcome = memory.forget(who, request).await?;
    context
        .forget_summaries(&who.tenant_id, &outcome.scopes)
        .await
        .map_err(|error| MemoryError::storage("forgetting the summaries made from them", error))?;
    Ok(outcome)
}

/// One retention pass: forgets expired memories and the summaries made from them.
pub async fn expire(
    memory: &MemoryService,
    context: &ContextArchitect,
) -> Result<usize, MemoryError> {
    let mut total = 0;
    for expired in memory.expire().await? {
        context
            .forget_summaries(&expired.tenant_id, &expired.scopes)
            .await
            .map_err(|error| {
                MemoryError::storage("forgetting the summaries of expired memories", error)
            })?;
        total += expired.forgotten;
    }
    Ok(total)
}

/// Every version of one memory, the current one first.
pub async fn history(
    memory: &MemoryService,
    caller: &Principal,
    args: IdArgs,
) -> Result<MemoryHistory, MemoryError> {
    let who = &caller.identity(&args.identity)?;
    memory.history(who, parse_id(&args.id)?).await
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
