//! The HTTP surface of `aeterna serve`: MCP at `/mcp`, health and metrics, and the
//! CC-MemEx-compatible REST API. Every handler is thin; the work is in [`crate::domain`].

pub mod error;
pub mod mcp;
pub mod ops;
pub mod rest;

use axum::Router;
use axum::routing::{get, post};
use tokio_util::sync::CancellationToken;
use tower_http::limit::RequestBodyLimitLayer;

use crate::state::AppState;

/// The whole HTTP application. Cancelling `mcp_shutdown` ends open MCP sessions and streams.
pub fn router(state: AppState, mcp_shutdown: CancellationToken) -> Router {
    let max_body_bytes = state.config.http.max_body_bytes;
    Router::new()
        .merge(mcp::routes(&state, mcp_shutdown))
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .route("/v1/ingest-context", post(rest::ingest_context))
        .route("/v1/retrieve-context", post(rest::retrieve_context))
        .fallback(error::not_found)
        .layer(RequestBodyLimitLayer::new(max_body_bytes))
        .with_state(state)
}
