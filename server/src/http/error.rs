//! JSON errors of the HTTP API: `{"error": {"code": "...", "message": "..."}}`.

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

/// Unknown paths.
pub async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such endpoint: MCP is at /mcp; REST at /v1/ingest-context and /v1/retrieve-context",
    )
}
