//! The HTTP surface of `aeterna serve`: MCP at `/mcp`, health and metrics, and the
//! CC-MemEx-compatible REST API. Every handler is thin; the work is in [`crate::domain`].
//!
//! Every request passes the same layers, outermost first: in-flight accounting for graceful
//! shutdown ([`in_flight`]), the Host and Origin checks ([`guard`], all routes but `/healthz`),
//! then, on the data routes (`/mcp`, `/v1/*`), authentication ([`authn`]) and a bounded
//! whole-body read ([`body`]). Connection-level bounds (header read timeout,
//! connection cap) are set where connections are accepted, in [`crate::server`].

pub mod authn;
pub mod body;
pub mod error;
pub mod guard;
pub mod in_flight;
pub mod jsonrpc;
pub mod mcp;
pub mod ops;
pub mod rest;
pub mod sessions;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::middleware;
use axum::routing::{get, post};
use tokio_util::sync::CancellationToken;

use crate::state::AppState;

/// The whole HTTP application. Cancelling `mcp_shutdown` ends open MCP sessions and streams;
/// `in_flight` counts the requests not yet answered.
pub fn router(
    state: AppState,
    mcp_shutdown: CancellationToken,
    in_flight: in_flight::InFlight,
) -> anyhow::Result<Router> {
    let http = &state.config.http;
    let request_guard = Arc::new(guard::RequestGuard::from_config(&state.config)?);
    let limits = body::BodyLimits {
        max_bytes: http.max_body_bytes,
        read_timeout: Duration::from_secs(http.body_read_timeout_secs),
    };
    // Route layers run only for matched routes: a token is checked before a body is read.
    let data = Router::new()
        .merge(mcp::routes(&state, mcp_shutdown))
        .route("/v1/ingest-context", post(rest::ingest_context))
        .route(
            "/v1/ingest-context/{ingestion_id}",
            get(rest::ingestion_status),
        )
        .route("/v1/retrieve-context", post(rest::retrieve_context))
        .route_layer(middleware::from_fn_with_state(
            limits,
            body::read_whole_body,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            authn::authenticate,
        ));
    let guarded = data
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .fallback(error::not_found)
        .layer(middleware::from_fn_with_state(
            request_guard,
            guard::check_host_and_origin,
        ));
    Ok(guarded
        .route("/healthz", get(ops::healthz))
        .layer(middleware::from_fn_with_state(in_flight, in_flight::track))
        .with_state(state))
}
