//! Request bodies are read whole, bounded in size and in time, before any handler runs.
//!
//! One middleware for every route: a body over `http.max_body_bytes` gets 413 (whether it came
//! with a `Content-Length`, chunked, or lied about its length), one that is not complete
//! within `http.body_read_timeout_secs` gets 408, and one that breaks off gets 400. Handlers
//! and rmcp then see a complete in-memory body and can never fail on a client's transfer.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::{BodyExt, LengthLimitError, Limited};

use super::error::reject;

/// The bounds of a request body.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimits {
    pub max_bytes: usize,
    pub read_timeout: Duration,
}

/// Middleware: replaces the streaming body with the complete one, or refuses the request.
pub async fn read_whole_body(
    State(limits): State<BodyLimits>,
    request: Request,
    next: Next,
) -> Response {
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        return next.run(request).await;
    }
    let path = request.uri().path().to_owned();
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limits.max_bytes as u64) {
        return too_large(&path, limits);
    }
    let (parts, body) = request.into_parts();
    match read(body, limits).await {
        Ok(bytes) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(BodyError::TooLarge) => too_large(&path, limits),
        Err(BodyError::TimedOut) => reject(
            &path,
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!(
                "the request body did not arrive within {} s (http.body_read_timeout_secs)",
                limits.read_timeout.as_secs()
            ),
        ),
        Err(BodyError::Broken(error)) => reject(
            &path,
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("the request body could not be read ({error}); send it complete"),
        ),
    }
}

enum BodyError {
    TooLarge,
    TimedOut,
    Broken(String),
}

async fn read(body: Body, limits: BodyLimits) -> Result<Bytes, BodyError> {
    let collect = Limited::new(body, limits.max_bytes).collect();
    match tokio::time::timeout(limits.read_timeout, collect).await {
        Err(_) => Err(BodyError::TimedOut),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) if error.is::<LengthLimitError>() => Err(BodyError::TooLarge),
        Ok(Err(error)) => Err(BodyError::Broken(error.to_string())),
    }
}

/// The whole body within `limits`, or `None` when it is too large, too slow or broken.
pub(super) async fn read_bounded(body: Body, limits: BodyLimits) -> Option<Bytes> {
    read(body, limits).await.ok()
}

fn too_large(path: &str, limits: BodyLimits) -> Response {
    reject(
        path,
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        format!(
            "the request body is larger than {} bytes (http.max_body_bytes); send less at once",
            limits.max_bytes
        ),
    )
}
