//! The CC-MemEx-compatible REST API (`docs/rest-api.md`). The endpoints take the same tokens
//! as MCP, as `X-API-Key` (or `Authorization: Bearer`); [`super::authn`] checks them.
//!
//! Both POST endpoints serve two request shapes, told apart by their fields
//! ([`compat::detect_shape`]): the CC-MemEx shape (`text_content`, `query_text`) answers
//! `{"status": …}` bodies and errors `{"status": "ERROR", "message": …}`; the original shape
//! (`content`, `query`) answers as it always did, errors `{"error": {"code", "message"}}`.
//! Handlers are thin: the work is in [`crate::domain::compat`].

use std::time::Instant;

use aeterna_memory::MemoryError;
use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tracing::Instrument;

use super::authn::Caller;
use super::error::{ApiError, ApiJson};
use crate::auth::AuthError;
use crate::domain::compat::{
    self, CcMemexIngestRequest, CcMemexRetrieveRequest, CompatError, Endpoint, IngestRequest,
    RetrieveRequest, Shape,
};
use crate::metrics::Outcome;
use crate::state::AppState;

/// An error answered to a CC-MemEx-shaped request: `{"status": "ERROR", "message": "…"}`.
#[derive(Debug)]
pub struct CcMemexError {
    pub status: StatusCode,
    pub message: String,
}

impl CcMemexError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        CcMemexError {
            status,
            message: message.into(),
        }
    }
}

impl IntoResponse for CcMemexError {
    fn into_response(self) -> Response {
        let body = Json(serde_json::json!({ "status": "ERROR", "message": self.message }));
        let mut response = (self.status, body).into_response();
        if matches!(
            self.status,
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
        ) {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("5"));
        }
        response
    }
}

impl From<CompatError> for CcMemexError {
    fn from(error: CompatError) -> Self {
        let status = match &error {
            CompatError::Invalid(_) => StatusCode::BAD_REQUEST,
            CompatError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            CompatError::QueueFull(_) => StatusCode::TOO_MANY_REQUESTS,
            CompatError::NotFound(_) => StatusCode::NOT_FOUND,
            CompatError::Memory(error) => match error {
                MemoryError::InvalidInput(_) | MemoryError::MissingScope { .. } => {
                    StatusCode::BAD_REQUEST
                }
                MemoryError::Forbidden(_) => StatusCode::FORBIDDEN,
                MemoryError::NotFound(_) => StatusCode::NOT_FOUND,
                MemoryError::Storage { .. } => StatusCode::SERVICE_UNAVAILABLE,
                MemoryError::EmbedderMismatch(_) => StatusCode::INTERNAL_SERVER_ERROR,
            },
        };
        if status.is_server_error() {
            tracing::warn!(%error, "request failed");
        }
        CcMemexError::new(status, error.to_string())
    }
}

impl From<AuthError> for CcMemexError {
    /// CC-MemEx answers a missing or wrong key with 403.
    fn from(error: AuthError) -> Self {
        CcMemexError::new(StatusCode::FORBIDDEN, error.to_string())
    }
}

/// The body [`super::body`] already read whole, and the headers.
async fn take_body(request: Request) -> (axum::http::request::Parts, Bytes) {
    let (parts, body) = request.into_parts();
    // Already in memory and within `http.max_body_bytes`: this cannot fail or wait.
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    (parts, bytes)
}

/// A CC-MemEx body must say it is JSON, like the original shape's.
fn check_json(headers: &HeaderMap) -> Result<(), CcMemexError> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .map(|mime| {
            let mime = mime.trim().to_ascii_lowercase();
            mime == "application/json"
                || (mime.starts_with("application/") && mime.ends_with("+json"))
        })
        .unwrap_or(false);
    if json {
        Ok(())
    } else {
        Err(CcMemexError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be JSON: send it with `Content-Type: application/json`",
        ))
    }
}

/// `POST /v1/ingest-context`. CC-MemEx shape: 202 once the job is durably queued. Original
/// shape: 202 once the memory is durably stored.
pub async fn ingest_context(
    State(state): State<AppState>,
    Caller(caller): Caller,
    request: Request,
) -> Response {
    let (parts, body) = take_body(request).await;
    let started = Instant::now();
    let shape = compat::detect_shape(Endpoint::Ingest, &body);
    if let Ok(Shape::Original) = shape {
        let request = Request::from_parts(parts, Body::from(body));
        return match ApiJson::<IngestRequest>::from_request(request, &()).await {
            Ok(ApiJson(request)) => original_ingest(&state, caller, request, started)
                .await
                .into_response(),
            Err(error) => {
                record(&state, "rest_ingest_context", false, started);
                error.into_response()
            }
        };
    }
    let span = tracing::info_span!(
        "rest_call",
        operation = "ingest_context",
        shape = "cc_memex",
        tenant = %caller.tenant_id
    );
    let result = async {
        shape?;
        check_json(&parts.headers)?;
        let request: CcMemexIngestRequest = compat::parse_cc_memex(Endpoint::Ingest, &body)?;
        let accepted =
            compat::ingest_cc_memex(&state.ingest, &state.config.memory, &caller, request).await?;
        Ok::<_, CcMemexError>(accepted)
    }
    .instrument(span)
    .await;
    record(&state, "rest_ingest_context", result.is_ok(), started);
    match result {
        Ok(accepted) => (StatusCode::ACCEPTED, Json(accepted)).into_response(),
        Err(error) => error.into_response(),
    }
}

async fn original_ingest(
    state: &AppState,
    caller: crate::auth::Principal,
    request: IngestRequest,
    started: Instant,
) -> Result<impl IntoResponse, ApiError> {
    let span = tracing::info_span!(
        "rest_call",
        operation = "ingest_context",
        shape = "original",
        tenant = %caller.tenant_id
    );
    let result = compat::ingest(&state.memory, &caller, request)
        .instrument(span)
        .await;
    state.context.writes_published().await;
    record(state, "rest_ingest_context", result.is_ok(), started);
    Ok((StatusCode::ACCEPTED, Json(result?)))
}

/// `GET /v1/ingest-context/{ingestion_id}`: where a queued ingest stands.
pub async fn ingestion_status(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Path(ingestion_id): Path<String>,
) -> Response {
    let span = tracing::info_span!(
        "rest_call",
        operation = "ingestion_status",
        tenant = %caller.tenant_id
    );
    let started = Instant::now();
    let result = compat::ingestion_status(&state.ingest, &caller, &ingestion_id)
        .instrument(span)
        .await;
    record(&state, "rest_ingestion_status", result.is_ok(), started);
    match result {
        Ok(status) => Json(status).into_response(),
        Err(error) => CcMemexError::from(error).into_response(),
    }
}

/// `POST /v1/retrieve-context`: the most relevant chunks for a query.
pub async fn retrieve_context(
    State(state): State<AppState>,
    Caller(caller): Caller,
    request: Request,
) -> Response {
    let (parts, body) = take_body(request).await;
    let started = Instant::now();
    let max_page_size = state.config.memory.max_page_size;
    let shape = compat::detect_shape(Endpoint::Retrieve, &body);
    if let Ok(Shape::Original) = shape {
        let request = Request::from_parts(parts, Body::from(body));
        let request = match ApiJson::<RetrieveRequest>::from_request(request, &()).await {
            Ok(ApiJson(request)) => request,
            Err(error) => {
                record(&state, "rest_retrieve_context", false, started);
                return error.into_response();
            }
        };
        let span = tracing::info_span!(
            "rest_call",
            operation = "retrieve_context",
            shape = "original",
            tenant = %caller.tenant_id
        );
        let result = compat::retrieve(&state.memory, max_page_size, &caller, request)
            .instrument(span)
            .await;
        record(&state, "rest_retrieve_context", result.is_ok(), started);
        return match result {
            Ok(answer) => Json(answer).into_response(),
            Err(error) => ApiError::from(error).into_response(),
        };
    }
    let span = tracing::info_span!(
        "rest_call",
        operation = "retrieve_context",
        shape = "cc_memex",
        tenant = %caller.tenant_id
    );
    let result = async {
        shape?;
        check_json(&parts.headers)?;
        let request: CcMemexRetrieveRequest = compat::parse_cc_memex(Endpoint::Retrieve, &body)?;
        let answer =
            compat::retrieve_cc_memex(&state.memory, max_page_size, &caller, request).await?;
        Ok::<_, CcMemexError>(answer)
    }
    .instrument(span)
    .await;
    record(&state, "rest_retrieve_context", result.is_ok(), started);
    match result {
        Ok(answer) => Json(answer).into_response(),
        Err(error) => error.into_response(),
    }
}

fn record(state: &AppState, operation: &str, ok: bool, started: Instant) {
    let outcome = if ok { Outcome::Ok } else { Outcome::Error };
    state
        .metrics
        .record_call(operation, outcome, started.elapsed());
}
