//! The CC-MemEx-compatible operations behind `POST /v1/ingest-context`,
//! `GET /v1/ingest-context/{ingestion_id}` and `POST /v1/retrieve-context`, for clients that do
//! not speak MCP. The contract, with its example requests and answers, is `docs/rest-api.md`.
//!
//! Two request shapes share the two POST endpoints ([`detect_shape`]):
//! * the **CC-MemEx shape** (`text_content`, `query_text`, …): an ingest is validated, written
//!   to the durable queue ([`queue`]) and answered 202 once the job row committed; the worker
//!   ([`worker`]) chunks the text by tokens ([`chunk`]) and stores the chunks;
//! * the **original shape** (`content`, `query`, …): stored synchronously, as before.

pub mod chunk;
pub mod queue;
pub mod worker;

use aeterna_memory::{
    Identity, Layer, MemoryError, MemoryService, SearchHit, SearchRequest, Timestamp,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::memory::{object_or_empty, parse_layer};
use crate::auth::Principal;
use crate::config::IdentityFields;
pub use queue::{IngestQueue, JobState};

/// The bounds of `top_k`.
pub const TOP_K_RANGE: std::ops::RangeInclusive<usize> = 1..=50;
/// `top_k` when the request leaves it out.
pub const DEFAULT_TOP_K: usize = 5;

/// Body of `POST /v1/ingest-context` in the original shape.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IngestRequest {
    /// The text to store (`context` is accepted as a synonym).
    #[serde(alias = "context")]
    pub content: String,
    pub user_id: Option<String>,
    pub session_id: Option<String>,
    pub project_id: Option<String>,
    /// Defaults to `session` when a session id is known, else `user`, else `project`.
    pub layer: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Answer of `POST /v1/ingest-context` (sent with 202 once the write is durable).
#[derive(Debug, Clone, Serialize)]
pub struct IngestResponse {
    pub status: &'static str,
    pub id: Uuid,
    pub layer: Layer,
    pub deduplicated: bool,
}

/// Body of `POST /v1/retrieve-context` in the original shape.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrieveRequest {
    pub query: String,
    pub user_id: Option<String>,
    pub session_id: Option<String>,
    pub project_id: Option<String>,
    /// How many chunks to return, 1 to 50 (default 5).
    pub top_k: Option<usize>,
    /// Only memories whose metadata has each of these keys with exactly this value.
    #[serde(default)]
    pub filter_metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Answer of `POST /v1/retrieve-context`.
#[derive(Debug, Clone, Serialize)]
pub struct RetrieveResponse {
    pub context_chunks: Vec<ContextChunk>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ContextChunk {
    pub id: Uuid,
    pub content: String,
    /// Relevance in 0..1.
    pub relevance_score: f32,
    pub layer: Layer,
    pub tags: Vec<String>,
    pub metadata: serde_json::Value,
    pub created_at: Timestamp,
}

impl IngestRequest {
    /// The identity fields this request names.
    pub fn identity_fields(&self) -> crate::config::IdentityFields {
        crate::config::IdentityFields {
            user_id: self.user_id.clone(),
            session_id: self.session_id.clone(),
            project_id: self.project_id.clone(),
            ..Default::default()
        }
    }
}

impl RetrieveRequest {
    pub fn identity_fields(&self) -> crate::config::IdentityFields {
        crate::config::IdentityFields {
            user_id: self.user_id.clone(),
            session_id: self.session_id.clone(),
            project_id: self.project_id.clone(),
            ..Default::default()
        }
    }
}

/// Stores the context durably; returns only after the write committed.
pub async fn ingest(
    memory: &MemoryService,
    caller: &Principal,
    request: IngestRequest,
) -> Result<IngestResponse, MemoryError> {
    let who = &caller.identity(&request.identity_fields())?;
    let layer = match request.layer.as_deref() {
        Some(layer) => parse_layer("layer", layer)?,
        None => default_layer(
            who,
            "`session_id`, `user_id` or `project_id`, or name a `layer`",
        )?,
    };
    let outcome = memory
        .add(
            who,
            aeterna_memory::NewMemory {
                layer,
                content: request.content,
                tags: request.tags,
                metadata: object_or_empty(request.metadata),
                kind: None,
            },
        )
        .await?;
    Ok(IngestResponse {
        status: "accepted",
        id: outcome.record.id,
        layer: outcome.record.layer,
        deduplicated: outcome.deduplicated,
    })
}

/// Hybrid retrieval over every layer the identity can see.
pub async fn retrieve(
    memory: &MemoryService,
    max_page_size: usize,
    caller: &Principal,
    request: RetrieveRequest,
) -> Result<RetrieveResponse, MemoryError> {
    let who = &caller.identity(&request.identity_fields())?;
    if request.query.trim().is_empty() {
        return Err(MemoryError::invalid(
            "`query` is empty; say what to look for",
        ));
    }
    let top_k = request.top_k.unwrap_or(DEFAULT_TOP_K);
    let filter = request.filter_metadata.unwrap_or_default();
    let hits = ranked_hits(memory, max_page_size, who, request.query, top_k, &filter).await?;
    let context_chunks = hits
        .into_iter()
        .map(|hit| ContextChunk {
            id: hit.record.id,
            content: hit.record.content.unwrap_or_default(),
            relevance_score: hit.score,
            layer: hit.layer,
            tags: hit.record.tags,
            metadata: hit.record.metadata,
            created_at: hit.record.created_at,
        })
        .collect();
    Ok(RetrieveResponse { context_chunks })
}

/// The `top_k` best hits for `query` among the memories whose metadata matches `filter`.
async fn ranked_hits(
    memory: &MemoryService,
    max_page_size: usize,
    who: &Identity,
    query: String,
    top_k: usize,
    filter: &Map<String, Value>,
) -> Result<Vec<SearchHit>, MemoryError> {
    if !TOP_K_RANGE.contains(&top_k) {
        return Err(MemoryError::invalid(format!(
            "`top_k` is {top_k}; ask for 1 to 50 chunks"
        )));
    }
    // A metadata filter is applied to the ranked hits, so ask for more than we keep.
    let limit = if filter.is_empty() {
        top_k
    } else {
        max_page_size.max(top_k)
    };
    let hits = memory
        .search(
            who,
            SearchRequest {
                query,
                layers: None,
                tags: Vec::new(),
                kinds: Vec::new(),
                limit: limit.min(max_page_size.max(1)),
                min_score: 0.0,
                explain: false,
                as_of: None,
            },
        )
        .await?;
    Ok(hits
        .into_iter()
        .filter(|hit| metadata_matches(&hit.record.metadata, filter))
        .take(top_k)
        .collect())
}

// ---- The CC-MemEx shape ----

/// `top_k` of a CC-MemEx retrieve that leaves it out.
pub const CC_MEMEX_DEFAULT_TOP_K: usize = 10;
/// Longest `source_type` and `source_name`, in bytes.
pub const MAX_SOURCE_BYTES: usize = 256;
/// The message of a 202 answer, as CC-MemEx words it.
pub const ACCEPTED_MESSAGE: &str = "Context received and queued for ingestion.";
/// Metadata keys the server sets on every chunk; a client's `metadata` may not use them.
pub const RESERVED_METADATA_KEYS: [&str; 5] = [
    "source_type",
    "source_name",
    "ingestion_id",
    "chunk_index",
    "chunk_count",
];

/// Which endpoint a body was sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Ingest,
    Retrieve,
}

impl Endpoint {
    /// Fields only the CC-MemEx shape has.
    fn cc_memex_fields(self) -> &'static [&'static str] {
        match self {
            Endpoint::Ingest => &["text_content", "source_type", "source_name"],
            Endpoint::Retrieve => &["query_text", "filters"],
        }
    }

    /// Fields only the original shape has.
    fn original_fields(self) -> &'static [&'static str] {
        match self {
            Endpoint::Ingest => &["content", "context", "project_id", "layer", "tags"],
            Endpoint::Retrieve => &["query", "project_id", "filter_metadata"],
        }
    }
}

/// The two request shapes of the POST endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `text_content` / `query_text`: queued ingest, `{"status": …}` answers.
    CcMemex,
    /// `content` / `query`: synchronous ingest, `context_chunks`, `{"error": …}` errors.
    Original,
}

/// Which shape `body` is in. A JSON object naming a field only the original shape has is in
/// the original shape; one naming a field only the CC-MemEx shape has, or neither shape's own
/// fields, is in the CC-MemEx shape; one naming both is refused, naming the two fields. A body
/// that is not a JSON object is in the CC-MemEx shape only when it mentions one of its fields
/// (so `{not json` stays an original-shape `malformed_json` error).
pub fn detect_shape(endpoint: Endpoint, body: &[u8]) -> Result<Shape, CompatError> {
    let object = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| match value {
            Value::Object(object) => Some(object),
            _ => None,
        });
    let Some(object) = object else {
        let mentions = |field: &&str| {
            let quoted = format!("\"{field}\"");
            body.windows(quoted.len()).any(|w| w == quoted.as_bytes())
        };
        return Ok(if endpoint.cc_memex_fields().iter().any(mentions) {
            Shape::CcMemex
        } else {
            Shape::Original
        });
    };
    let ours = endpoint
        .cc_memex_fields()
        .iter()
        .find(|field| object.contains_key(**field));
    let theirs = endpoint
        .original_fields()
        .iter()
        .find(|field| object.contains_key(**field));
    match (ours, theirs) {
        (Some(ours), Some(theirs)) => Err(CompatError::Invalid(format!(
            "the body mixes `{ours}` (the CC-MemEx request shape) with `{theirs}` (the original \
             shape); send one shape: {}",
            match endpoint {
                Endpoint::Ingest => {
                    "`text_content` with `user_id`, `session_id`, `source_type`, `source_name` \
                     and `metadata`, or `content` with the original fields"
                }
                Endpoint::Retrieve => {
                    "`query_text` with `user_id`, `session_id`, `top_k` and `filters`, or \
                     `query` with the original fields"
                }
            }
        ))),
        (None, Some(_)) => Ok(Shape::Original),
        _ => Ok(Shape::CcMemex),
    }
}

/// Why a CC-MemEx request failed; the HTTP layer picks the status.
#[derive(Debug, thiserror::Error)]
pub enum CompatError {
    /// A bad payload (400): the message names the field and what to send.
    #[error("{0}")]
    Invalid(String),
    /// Over a size limit (413): the message names the limit and its configuration key.
    #[error("{0}")]
    TooLarge(String),
    /// The tenant's queue is full (429): the message names the limit and its key.
    #[error("{0}")]
    QueueFull(String),
    /// No such ingestion for this caller (404).
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Memory(#[from] MemoryError),
}

/// Reads a CC-MemEx body into `T`; errors name the field (`metadata`, `top_k`).
pub fn parse_cc_memex<T: serde::de::DeserializeOwned>(
    endpoint: Endpoint,
    body: &[u8],
) -> Result<T, CompatError> {
    let example = match endpoint {
        Endpoint::Ingest => {
            r#"{"user_id": "…", "session_id": "…", "text_content": "…", "source_type": "…", "source_name": "…", "metadata": {}}"#
        }
        Endpoint::Retrieve => {
            r#"{"user_id": "…", "session_id": "…", "query_text": "…", "top_k": 10, "filters": {}}"#
        }
    };
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        CompatError::Invalid(format!(
            "the body is not valid JSON ({error}); send a JSON object such as {example}"
        ))
    })?;
    if !value.is_object() {
        return Err(CompatError::Invalid(format!(
            "the body is not a JSON object; send one such as {example}"
        )));
    }
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        CompatError::Invalid(if path.is_empty() || path == "." {
            format!("{inner}; send a JSON object such as {example}")
        } else {
            format!("`{path}`: {inner}; fix this field and send the request again")
        })
    })
}

/// Body of `POST /v1/ingest-context` in the CC-MemEx shape.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcMemexIngestRequest {
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    /// The text to ingest (required); long texts are chunked by tokens.
    #[serde(default)]
    pub text_content: Option<String>,
    /// Where the text comes from (`chat`, `file`, …); stored as metadata `source_type`.
    #[serde(default)]
    pub source_type: Option<String>,
    /// Which source (a file name, a tool); stored as metadata `source_name`.
    #[serde(default)]
    pub source_name: Option<String>,
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// The 202 answer of a CC-MemEx ingest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CcMemexAccepted {
    /// `ACCEPTED`.
    pub status: &'static str,
    pub message: &'static str,
    /// Where to follow the job: `GET /v1/ingest-context/{ingestion_id}`.
    pub ingestion_id: Uuid,
}

/// Answer of `GET /v1/ingest-context/{ingestion_id}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IngestionStatus {
    pub status: JobState,
    pub ingestion_id: Uuid,
    /// How many chunks the text made (once COMPLETED).
    pub chunks: Option<u64>,
    /// The stored memories, one per chunk in order (once COMPLETED).
    pub memory_ids: Vec<Uuid>,
    /// Why the last attempt failed (FAILED; or QUEUED for a retry).
    pub error: Option<String>,
    /// Attempts made so far.
    pub attempts: u32,
}

/// Body of `POST /v1/retrieve-context` in the CC-MemEx shape.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcMemexRetrieveRequest {
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    /// What to look for (required).
    #[serde(default)]
    pub query_text: Option<String>,
    /// How many chunks, 1 to 50 (default 10).
    #[serde(default)]
    pub top_k: Option<usize>,
    /// Only chunks whose metadata has each of these keys with exactly this value.
    #[serde(default)]
    pub filters: Option<Map<String, Value>>,
}

/// The answer of a CC-MemEx retrieve.
#[derive(Debug, Clone, Serialize)]
pub struct CcMemexRetrieved {
    /// `SUCCESS`.
    pub status: &'static str,
    pub retrieved_chunks: Vec<RetrievedChunk>,
}

/// One chunk of a CC-MemEx retrieve.
#[derive(Debug, Clone, Serialize)]
pub struct RetrievedChunk {
    /// The memory's id.
    pub chunk_id: Uuid,
    pub text: String,
    /// Relevance in 0..1.
    pub score: f32,
    pub source_type: Option<String>,
    pub source_name: Option<String>,
    /// The session the chunk belongs to (session-layer memories).
    pub session_id: Option<String>,
    /// Everything stored with the chunk: the client's metadata plus `source_type`,
    /// `source_name`, `ingestion_id`, `chunk_index`, `chunk_count`.
    pub metadata: Value,
    /// Milliseconds since the Unix epoch, UTC.
    pub created_at: Timestamp,
}

/// The narrowest scope a context can be stored in for `who`: session, else user, else project.
fn default_layer(who: &Identity, fields: &str) -> Result<Layer, MemoryError> {
    [Layer::Session, Layer::User, Layer::Project]
        .into_iter()
        .find(|layer| who.scope(*layer).is_some())
        .ok_or_else(|| {
            MemoryError::invalid(format!(
                "no scope for this context: pass {fields} (or configure a default for the token)"
            ))
        })
}

fn optional_source(field: &str, value: Option<String>) -> Result<Option<String>, CompatError> {
    let Some(value) = value.filter(|value| !value.trim().is_empty()) else {
        return Ok(None);
    };
    if value.len() > MAX_SOURCE_BYTES {
        return Err(CompatError::Invalid(format!(
            "`{field}` is {} bytes; at most {MAX_SOURCE_BYTES} are accepted: send a short label",
            value.len()
        )));
    }
    Ok(Some(value))
}

/// Validates a CC-MemEx ingest and queues it; returns once the job row committed. The text is
/// chunked and stored later, by the queue's worker, under the identity resolved here.
pub async fn ingest_cc_memex(
    queue: &IngestQueue,
    memory_config: &aeterna_memory::MemoryConfig,
    caller: &Principal,
    request: CcMemexIngestRequest,
) -> Result<CcMemexAccepted, CompatError> {
    let limits = queue.config();
    let text = request.text_content.ok_or_else(|| {
        CompatError::Invalid(
            "`text_content` is missing: send the text to ingest as a string in `text_content`"
                .into(),
        )
    })?;
    if text.trim().is_empty() {
        return Err(CompatError::Invalid(
            "`text_content` is empty; send the text to ingest".into(),
        ));
    }
    if text.len() > limits.max_text_bytes {
        return Err(CompatError::TooLarge(format!(
            "`text_content` is {} bytes; at most {} are accepted (rest.max_text_bytes): split \
             the text into several requests",
            text.len(),
            limits.max_text_bytes
        )));
    }
    let source_type = optional_source("source_type", request.source_type)?;
    let source_name = optional_source("source_name", request.source_name)?;
    let metadata = request.metadata.unwrap_or_default();
    if let Some(key) = RESERVED_METADATA_KEYS
        .iter()
        .find(|key| metadata.contains_key(**key))
    {
        return Err(CompatError::Invalid(format!(
            "`metadata.{key}` is set by the server on every chunk; remove it (pass \
             `source_type` and `source_name` as top-level fields)"
        )));
    }
    // The stored metadata is this plus the source fields and the chunk's position.
    let stored = Value::Object(metadata.clone()).to_string().len()
        + source_type.as_deref().map_or(0, str::len)
        + source_name.as_deref().map_or(0, str::len)
        + 160;
    if stored > memory_config.max_metadata_bytes {
        return Err(CompatError::Invalid(format!(
            "`metadata` is too large: with the source fields each chunk's metadata would be \
             about {stored} bytes, over {} (memory.max_metadata_bytes); send less metadata",
            memory_config.max_metadata_bytes
        )));
    }
    let fields = IdentityFields {
        user_id: request.user_id.clone(),
        session_id: request.session_id.clone(),
        ..Default::default()
    };
    let who = caller.identity(&fields)?;
    let layer = default_layer(&who, "`user_id` or `session_id`")?;
    let params = queue.chunk_params();
    // Secrets are redacted before the job row is written, as the memory service would: the
    // queue is storage too.
    let redact = memory_config.redact_secrets;
    let (text, tokens) = tokio::task::spawn_blocking(move || {
        let text = if redact {
            aeterna_memory::redaction::text("text_content", text)
        } else {
            text
        };
        let tokens = aeterna_context::Tokenizer::get().map(|tokenizer| tokenizer.count(&text));
        (text, tokens)
    })
    .await
    .map_err(|error| MemoryError::storage("counting the text's tokens", error))?;
    let tokens =
        tokens.map_err(|error| MemoryError::storage("counting the text's tokens", error))?;
    let chunks = chunk::min_chunks(tokens, params);
    if chunks > limits.max_chunks_per_job {
        return Err(CompatError::TooLarge(format!(
            "`text_content` is {tokens} tokens, at least {chunks} chunks of {} tokens; at most \
             {} chunks are accepted per request (rest.max_chunks_per_job): split the text into \
             several requests",
            params.max_tokens, limits.max_chunks_per_job
        )));
    }
    let id = queue
        .enqueue(queue::NewJob {
            identity: who,
            layer,
            user_id: request.user_id,
            session_id: request.session_id,
            text,
            source_type,
            source_name,
            metadata: if redact {
                match aeterna_memory::redaction::metadata(Value::Object(metadata)) {
                    Value::Object(metadata) => metadata,
                    _ => Map::new(),
                }
            } else {
                metadata
            },
        })
        .await?;
    Ok(CcMemexAccepted {
        status: "ACCEPTED",
        message: ACCEPTED_MESSAGE,
        ingestion_id: id,
    })
}

/// Where a CC-MemEx ingest stands. Another tenant's id, or one whose identity the caller's
/// grants do not reach, is not found.
pub async fn ingestion_status(
    queue: &IngestQueue,
    caller: &Principal,
    ingestion_id: &str,
) -> Result<IngestionStatus, CompatError> {
    let not_found = || {
        CompatError::NotFound(format!(
            "no ingestion with id `{ingestion_id}` for this key; use the `ingestion_id` a \
             202 answer of POST /v1/ingest-context gave"
        ))
    };
    let id = Uuid::parse_str(ingestion_id.trim()).map_err(|_| {
        CompatError::Invalid(format!(
            "`{ingestion_id}` is not an ingestion id; use the `ingestion_id` (a UUID) of a 202 \
             answer"
        ))
    })?;
    let job = queue
        .status(&caller.tenant_id, id)
        .await?
        .ok_or_else(not_found)?;
    let me = caller.identity(&IdentityFields::default())?;
    if !me.reaches_identity(&job.identity) {
        return Err(not_found());
    }
    Ok(IngestionStatus {
        status: job.state,
        ingestion_id: id,
        chunks: job.chunks,
        memory_ids: job.memory_ids,
        error: job.error,
        attempts: job.attempts,
    })
}

/// Hybrid retrieval for a CC-MemEx client: the `top_k` best chunks whose metadata matches
/// `filters`, over every layer the identity can see.
pub async fn retrieve_cc_memex(
    memory: &MemoryService,
    max_page_size: usize,
    caller: &Principal,
    request: CcMemexRetrieveRequest,
) -> Result<CcMemexRetrieved, CompatError> {
    let query = request.query_text.ok_or_else(|| {
        CompatError::Invalid(
            "`query_text` is missing: send what to look for as a string in `query_text`".into(),
        )
    })?;
    if query.trim().is_empty() {
        return Err(CompatError::Invalid(
            "`query_text` is empty; say what to look for".into(),
        ));
    }
    let top_k = request.top_k.unwrap_or(CC_MEMEX_DEFAULT_TOP_K);
    let fields = IdentityFields {
        user_id: request.user_id,
        session_id: request.session_id,
        ..Default::default()
    };
    let who = caller.identity(&fields)?;
    let filter = request.filters.unwrap_or_default();
    let hits = ranked_hits(memory, max_page_size, &who, query, top_k, &filter).await?;
    let text_of =
        |metadata: &Value, key: &str| metadata.get(key).and_then(Value::as_str).map(str::to_owned);
    let retrieved_chunks = hits
        .into_iter()
        .map(|hit| RetrievedChunk {
            chunk_id: hit.record.id,
            source_type: text_of(&hit.record.metadata, "source_type"),
            source_name: text_of(&hit.record.metadata, "source_name"),
            session_id: (hit.record.layer == Layer::Session).then(|| hit.record.scope_id.clone()),
            text: hit.record.content.unwrap_or_default(),
            score: hit.score,
            metadata: hit.record.metadata,
            created_at: hit.record.created_at,
        })
        .collect();
    Ok(CcMemexRetrieved {
        status: "SUCCESS",
        retrieved_chunks,
    })
}

fn metadata_matches(
    metadata: &serde_json::Value,
    filter: &serde_json::Map<String, serde_json::Value>,
) -> bool {
    filter
        .iter()
        .all(|(key, wanted)| metadata.get(key) == Some(wanted))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_filter_needs_every_key_equal() {
        let metadata = json!({"source": "ci", "n": 3});
        let filter = |value: serde_json::Value| value.as_object().cloned().unwrap_or_default();
        assert!(metadata_matches(&metadata, &filter(json!({}))));
        assert!(metadata_matches(
            &metadata,
            &filter(json!({"source": "ci"}))
        ));
        assert!(!metadata_matches(
            &metadata,
            &filter(json!({"source": "ci", "n": 4}))
        ));
        assert!(!metadata_matches(
            &metadata,
            &filter(json!({"missing": null}))
        ));
    }
}
