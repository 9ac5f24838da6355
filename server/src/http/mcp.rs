//! `/mcp`: rmcp's Streamable HTTP service behind token authentication. The authenticated
//! [`Principal`] travels in the request extensions, where [`crate::mcp::AeternaMcp`] finds it.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::error::ApiError;
use crate::auth::bearer_token;
use crate::mcp::AeternaMcp;
use crate::state::AppState;

/// The `/mcp` route. Cancelling `shutdown` ends every open session and stream.
pub fn routes(state: &AppState, shutdown: CancellationToken) -> Router<AppState> {
    let tools = Arc::new(AeternaMcp::tool_router());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(state.config.allowed_hosts())
        .with_max_request_body_bytes(state.config.http.max_body_bytes)
        .with_cancellation_token(shutdown);
    let handler_state = state.clone();
    let service = StreamableHttpService::new(
        move || Ok(AeternaMcp::for_http(handler_state.clone(), tools.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new()
        .route_service("/mcp", service)
        .route_layer(middleware::from_fn_with_state(state.clone(), authenticate))
}

/// Resolves `Authorization: Bearer …` to a principal, or answers 401.
async fn authenticate(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_token);
    match state.auth.authenticate(presented) {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(error) => {
            state.metrics.record_auth_failure("mcp");
            tracing::info!(%error, "refused an MCP request");
            ApiError::from(error).into_response()
        }
    }
}
