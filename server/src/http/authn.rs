//! Authentication of every data route: the token (`Authorization: Bearer …`, or `X-API-Key`
//! for CC-MemEx clients; two different ones are refused, compared in constant time by
//! [`crate::auth`]) is resolved to a [`Principal`] before the request body is read, and
//! placed in the request extensions for the handlers. Without configured tokens every caller
//! is the default principal (allowed on loopback only). A refusal is 401 `{"error": …}`,
//! except for CC-MemEx-shaped REST requests, which get 403 `{"status": "ERROR", …}` as
//! CC-MemEx clients expect.

use axum::extract::{FromRequestParts, Request, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::body::BodyLimits;
use super::error::ApiError;
use super::rest::CcMemexError;
use crate::auth::{Principal, presented_token};
use crate::domain::compat::{self, Endpoint, Shape};
use crate::state::AppState;

/// Middleware: refuses the request (401, or 403 in the CC-MemEx shape) unless it presents an
/// accepted token.
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let values = |name| {
        headers
            .get_all(name)
            .into_iter()
            .filter_map(|value| value.to_str().ok())
    };
    let principal = presented_token(values(header::AUTHORIZATION.as_str()), values("x-api-key"))
        .and_then(|presented| state.auth.authenticate(presented));
    match principal {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Err(error) => {
            let transport = if request.uri().path() == "/mcp" {
                "mcp"
            } else {
                "rest"
            };
            state.metrics.record_auth_failure(transport);
            tracing::info!(%error, path = %request.uri().path(), "refused a request");
            if speaks_cc_memex(&state, request).await {
                CcMemexError::from(error).into_response()
            } else {
                ApiError::from(error).into_response()
            }
        }
    }
}

/// Whether a refused request should hear its refusal as CC-MemEx does (403 with
/// `{"status": "ERROR", …}`): the status endpoint always; the two POST endpoints when their
/// body is in the CC-MemEx shape. Only for those is the body read, within the usual bounds
/// (`http.max_body_bytes`, `http.body_read_timeout_secs`), and only to pick the refusal's
/// shape: it never reaches a handler. Anything else (and a body that cannot be read) gets the
/// original 401.
async fn speaks_cc_memex(state: &AppState, request: Request) -> bool {
    let path = request.uri().path();
    let endpoint = match path {
        "/v1/ingest-context" => Endpoint::Ingest,
        "/v1/retrieve-context" => Endpoint::Retrieve,
        _ => return path.starts_with("/v1/ingest-context/"),
    };
    let limits = BodyLimits {
        max_bytes: state.config.http.max_body_bytes,
        read_timeout: std::time::Duration::from_secs(state.config.http.body_read_timeout_secs),
    };
    match super::body::read_bounded(request.into_body(), limits).await {
        Some(body) => matches!(
            compat::detect_shape(endpoint, &body),
            Ok(Shape::CcMemex) | Err(_)
        ),
        None => false,
    }
}

/// The caller of a request, as [`authenticate`] resolved it.
pub struct Caller(pub Principal);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<Principal>()
            .cloned()
            .map(Caller)
            .ok_or_else(|| {
                tracing::error!(path = %parts.uri.path(), "a route missed authentication");
                ApiError::new(
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "the request was not authenticated; this is a server bug",
                )
            })
    }
}
