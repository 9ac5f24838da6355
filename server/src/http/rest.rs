//! The CC-MemEx-compatible REST API. Both endpoints take the same tokens as MCP, as
//! `X-API-Key` (or `Authorization: Bearer`).

use std::time::Instant;

use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::IntoResponse;
use tracing::Instrument;

use super::error::{ApiError, ApiJson};
use crate::auth::{Principal, bearer_token};
use crate::domain::compat::{self, IngestRequest, RetrieveRequest};
use crate::metrics::Outcome;
use crate::state::AppState;

/// The caller of a REST request.
pub struct ApiCaller(pub Principal);

impl FromRequestParts<AppState> for ApiCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let headers = &parts.headers;
        let presented = headers
            .get("x-api-key")
            .and_then(|value| value.to_str().ok())
            .or_else(|| {
                headers
                    .get(axum::http::header::AUTHORIZATION)
                    .and_then(|value| value.to_str().ok())
                    .and_then(bearer_token)
            });
        state
            .auth
            .authenticate(presented)
            .map(ApiCaller)
            .map_err(|error| {
                state.metrics.record_auth_failure("rest");
                ApiError::from(error)
            })
    }
}

/// `POST /v1/ingest-context`: 202 once the memory is durably stored.
pub async fn ingest_context(
    State(state): State<AppState>,
    ApiCaller(caller): ApiCaller,
    ApiJson(request): ApiJson<IngestRequest>,
) -> Result<impl IntoResponse, ApiError> {
    let who = caller.identity(&request.identity_fields());
    let span =
        tracing::info_span!("rest_call", operation = "ingest_context", tenant = %caller.tenant_id);
    let started = Instant::now();
    let result = compat::ingest(&state.memory, &who, request)
        .instrument(span)
        .await;
    record(&state, "rest_ingest_context", result.is_ok(), started);
    Ok((StatusCode::ACCEPTED, Json(result?)))
}

/// `POST /v1/retrieve-context`: the most relevant chunks for a query.
pub async fn retrieve_context(
    State(state): State<AppState>,
    ApiCaller(caller): ApiCaller,
    ApiJson(request): ApiJson<RetrieveRequest>,
) -> Result<impl IntoResponse, ApiError> {
    let who = caller.identity(&request.identity_fields());
    let span = tracing::info_span!("rest_call", operation = "retrieve_context", tenant = %caller.tenant_id);
    let started = Instant::now();
    let max_page_size = state.config.memory.max_page_size;
    let result = compat::retrieve(&state.memory, max_page_size, &who, request)
        .instrument(span)
        .await;
    record(&state, "rest_retrieve_context", result.is_ok(), started);
    Ok(Json(result?))
}

fn record(state: &AppState, operation: &str, ok: bool, started: Instant) {
    let outcome = if ok { Outcome::Ok } else { Outcome::Error };
    state
        .metrics
        .record_call(operation, outcome, started.elapsed());
}
