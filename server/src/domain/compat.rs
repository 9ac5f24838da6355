//! The CC-MemEx-compatible operations behind `POST /v1/ingest-context` and
//! `POST /v1/retrieve-context`, for clients that do not speak MCP.

use aeterna_memory::{Layer, MemoryError, MemoryService, SearchRequest, Timestamp};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::memory::{object_or_empty, parse_layer};
use crate::auth::Principal;

/// The bounds of `top_k`.
pub const TOP_K_RANGE: std::ops::RangeInclusive<usize> = 1..=50;
/// `top_k` when the request leaves it out.
pub const DEFAULT_TOP_K: usize = 5;

/// Body of `POST /v1/ingest-context`.
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

/// Body of `POST /v1/retrieve-context`.
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
        None => [Layer::Session, Layer::User, Layer::Project]
            .into_iter()
            .find(|layer| who.scope(*layer).is_some())
            .ok_or_else(|| {
                MemoryError::invalid(
                    "no scope for this context: pass `session_id`, `user_id` or `project_id`, \
                     or name a `layer`",
                )
            })?,
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
    if !TOP_K_RANGE.contains(&top_k) {
        return Err(MemoryError::invalid(format!(
            "`top_k` is {top_k}; ask for 1 to 50 chunks"
        )));
    }
    let filter = request.filter_metadata.unwrap_or_default();
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
                query: request.query,
                layers: None,
                tags: Vec::new(),
                kinds: Vec::new(),
                limit: limit.min(max_page_size.max(1)),
                min_score: 0.0,
                explain: false,
            },
        )
        .await?;
    let context_chunks = hits
        .into_iter()
        .filter(|hit| metadata_matches(&hit.record.metadata, &filter))
        .take(top_k)
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
