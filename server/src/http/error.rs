//! Errors of the HTTP surface. REST and operations routes answer
//! `{"error": {"code": "...", "message": "..."}}`; `/mcp` answers a JSON-RPC error object, so
//! an MCP client can read why its request was refused before it reached the protocol layer.

use aeterna_memory::MemoryError;
use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use crate::auth::AuthError;

/// An HTTP error with a machine-readable code and a message that says what to fix.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Json(serde_json::json!({
            "error": { "code": self.code, "message": self.message }
        }));
        let mut response = (self.status, body).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

impl From<MemoryError> for ApiError {
    fn from(error: MemoryError) -> Self {
        let (status, code) = match &error {
            MemoryError::InvalidInput(_) | MemoryError::MissingScope { .. } => {
                (StatusCode::UNPROCESSABLE_ENTITY, "invalid_input")
            }
            MemoryError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            MemoryError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            MemoryError::Storage { .. } => (StatusCode::SERVICE_UNAVAILABLE, "storage_unavailable"),
            MemoryError::EmbedderMismatch(_) => {
                (StatusCode::INTERNAL_SERVER_ERROR, "embedder_mismatch")
            }
        };
        if status.is_server_error() {
            tracing::warn!(%error, "request failed");
        }
        ApiError::new(status, code, error.to_string())
    }
}

impl From<AuthError> for ApiError {
    fn from(error: AuthError) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", error.to_string())
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        let code = match &rejection {
            JsonRejection::JsonDataError(_) => "invalid_input",
            JsonRejection::JsonSyntaxError(_) => "malformed_json",
            JsonRejection::MissingJsonContentType(_) => "unsupported_media_type",
            _ if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
            _ => "bad_request",
        };
        ApiError::new(rejection.status(), code, rejection.body_text())
    }
}

/// `Json<T>` whose rejections are [`ApiError`]s.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(ApiJson(value)),
            Err(rejection) => Err(rejection.into()),
        }
    }
}

/// JSON-RPC error codes used before a request reaches the MCP handler.
pub mod jsonrpc_code {
    /// The body is not JSON.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON is not a JSON-RPC 2.0 message.
    pub const INVALID_REQUEST: i32 = -32600;
    /// The message is well-formed but its `params` are not what the method takes.
    pub const INVALID_PARAMS: i32 = -32602;
    /// Refused by the transport (forbidden, unknown session, too many sessions, …).
    pub const TRANSPORT: i32 = -32000;
}

/// A JSON-RPC error response with `status`; `id` is the request's, or `null` when unknown.
pub fn jsonrpc_error(
    status: StatusCode,
    id: Option<&serde_json::value::RawValue>,
    code: i32,
    message: impl Into<String>,
) -> Response {
    let id = id
        .and_then(|id| serde_json::from_str::<serde_json::Value>(id.get()).ok())
        .unwrap_or(serde_json::Value::Null);
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message.into() },
    });
    (status, Json(body)).into_response()
}

/// A refusal in the shape the route speaks: JSON-RPC on `/mcp`, [`ApiError`] elsewhere.
pub fn reject(
    path: &str,
    status: StatusCode,
    code: &'static str,
    message: impl Into<String>,
) -> Response {
    if path == "/mcp" {
        jsonrpc_error(status, None, jsonrpc_code::TRANSPORT, message)
    } else {
        ApiError::new(status, code, message).into_response()
    }
}

/// Unknown paths.
pub async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such endpoint: MCP is at /mcp; REST at /v1/ingest-context and /v1/retrieve-context",
    )
}
