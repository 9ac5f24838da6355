//! `/mcp`: rmcp's Streamable HTTP service behind token authentication and a gate.
//!
//! The caller was authenticated before (see [`super::authn`]: the [`Principal`] is in the
//! request extensions, where [`crate::mcp::AeternaMcp`] finds it). [`gate`] refuses what
//! rmcp would answer badly or not at all — a body that is not one JSON-RPC message (400 with
//! -32700/-32600/-32602), a session id that is unknown or another principal's (404), an
//! `initialize` beyond `http.max_sessions` (503) — and binds each new session to its
//! principal ([`SessionRegistry`]). Host, Origin and body bounds are checked before, for every
//! route alike (see [`super::router`]).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::error::{jsonrpc_code, jsonrpc_error};
use super::in_flight::OpenEnded;
use super::jsonrpc;
use super::sessions::SessionRegistry;
use crate::auth::Principal;
use crate::mcp::AeternaMcp;
use crate::state::AppState;

/// The header that carries an MCP session id.
const SESSION_HEADER: &str = "mcp-session-id";
/// The request whose response is a stream that lasts as long as the client wants.
const LISTEN_METHOD: &str = "subscriptions/listen";

/// The `/mcp` route. Cancelling `shutdown` ends every open session and stream.
pub fn routes(state: &AppState, shutdown: CancellationToken) -> Router<AppState> {
    let http = &state.config.http;
    let sessions = Arc::new(SessionRegistry::new(
        http.max_sessions,
        Duration::from_secs(http.session_idle_secs),
    ));
    let tools = Arc::new(AeternaMcp::tool_router_for(state));
    // Host, Origin and the body limit are enforced for every route before this service runs.
    // A stateless request whose first message is its answer gets it as one JSON body, not an
    // event stream of one event; one that sends progress first still streams. Sessions of
    // older protocol revisions always stream.
    let config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(http.max_body_bytes)
        .with_cancellation_token(shutdown);
    let handler_state = state.clone();
    let service = StreamableHttpService::new(
        move || Ok(AeternaMcp::for_http(handler_state.clone(), tools.clone())),
        sessions.clone(),
        config,
    );
    Router::new()
        .route_service("/mcp", service)
        .route_layer(middleware::from_fn_with_state(sessions, gate))
}

/// Checks the message and the session before rmcp sees the request (see the module doc).
async fn gate(
    State(sessions): State<Arc<SessionRegistry>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(principal) = request.extensions().get::<Principal>().cloned() else {
        tracing::error!("an MCP request reached the gate unauthenticated");
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .map(|value| value.to_str().unwrap_or_default().to_owned());
    if let Some(id) = &session
        && !sessions.is_owned_by(id, &principal)
    {
        tracing::info!(tenant = %principal.tenant_id, "refused an unknown or foreign MCP session");
        return jsonrpc_error(
            StatusCode::NOT_FOUND,
            None,
            jsonrpc_code::TRANSPORT,
            "unknown MCP session: it was closed, expired after being idle, or was opened with \
             another token; send `initialize` without a session id to open a new one",
        );
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // The body was read whole (and bounded) by the body middleware: this cannot wait.
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(error) => {
            return jsonrpc_error(
                StatusCode::BAD_REQUEST,
                None,
                jsonrpc_code::PARSE_ERROR,
                format!("the request body could not be read: {error}"),
            );
        }
    };
    let (slot, open_ended) = {
        let inspected = match jsonrpc::inspect(&bytes) {
            Ok(inspected) => inspected,
            Err(refusal) => {
                return jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    refusal.id,
                    refusal.code,
                    refusal.message,
                );
            }
        };
        let open_ended = inspected.method.as_deref() == Some(LISTEN_METHOD);
        let slot = if session.is_none() && inspected.is_initialize() {
            match sessions.reserve() {
                Some(slot) => Some(slot),
                None => {
                    tracing::warn!(
                        max_sessions = sessions.max_sessions(),
                        "refused an MCP session: at the cap"
                    );
                    let mut response = jsonrpc_error(
                        StatusCode::SERVICE_UNAVAILABLE,
                        inspected.id,
                        jsonrpc_code::TRANSPORT,
                        format!(
                            "too many open MCP sessions (http.max_sessions = {}); close sessions \
                             you no longer use (DELETE /mcp) or retry later",
                            sessions.max_sessions()
                        ),
                    );
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                    return response;
                }
            }
        } else {
            None
        };
        (slot, open_ended)
    };
    let mut response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    if open_ended {
        // A subscription stream lasts until shutdown ends it; shutdown must not wait for it.
        response.extensions_mut().insert(OpenEnded);
    }
    if let Some(slot) = slot
        && let Some(id) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
    {
        sessions.bind(id.into(), principal, slot).await;
    }
    response
}
