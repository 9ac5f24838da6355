//! The CC-MemEx-compatible REST API. Both endpoints take the same tokens as MCP, as
//! `X-API-Key` (or `Authorization: Bearer`); [`super::authn`] checks them.

use std::time::Instant;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use tracing::Instrument;

use super::authn::Caller;
use super::error::{ApiError, ApiJson};
use crate::domain::compat::{self, IngestRequest, RetrieveRequest};
use crate::metrics::Outcome;
use crate::state::AppState;

/// `POST /v1/ingest-context`: 202 once the memory is durably stored.
pub async fn ingest_context(
    State(state): State<AppState>,
    Caller(caller): Caller,
    ApiJson(request): ApiJson<IngestRequest>,
) -> Result<impl IntoResponse, ApiError> {
    let span =
        tracing::info_span!("rest_call", operation = "ingest_context", tenant = %caller.tenant_id);
    let started = Instant::now();
    let result = compat::ingest(&state.memory, &caller, request)
        .instrument(span)
        .await;
    state.context.writes_published().await;
    record(&state, "rest_ingest_context", result.is_ok(), started);
    Ok((StatusCode::ACCEPTED, Json(result?)))
}

/// `POST /v1/retrieve-context`: the most relevant chunks for a query.
pub async fn retrieve_context(
    State(state): State<AppState>,
    Caller(caller): Caller,
    ApiJson(request): ApiJson<RetrieveRequest>,
) -> Result<impl IntoResponse, ApiError> {
    let span = tracing::info_span!("rest_call", operation = "retrieve_context", tenant = %caller.tenant_id);
    let started = Instant::now();
    let max_page_size = state.config.memory.max_page_size;
    let result = compat::retrieve(&state.memory, max_page_size, &caller, request)
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
