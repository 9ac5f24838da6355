//! Authentication of every data route: the token (`Authorization: Bearer …`, or `X-API-Key`
//! for CC-MemEx clients; two different ones are refused) is resolved to a [`Principal`] before
//! the request body is read, and
//! placed in the request extensions for the handlers. Without configured tokens every caller
//! is the default principal (allowed on loopback only).

use axum::extract::{FromRequestParts, Request, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use crate::auth::{Principal, presented_token};
use crate::state::AppState;

/// Middleware: answers 401 unless the request presents an accepted token.
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
            ApiError::from(error).into_response()
        }
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
