//! Operations endpoints: liveness, readiness and Prometheus metrics. They need no token.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde_json::json;

use aeterna_context::CacheHealth;

use crate::state::AppState;

/// Liveness: the process answers.
pub async fn healthz() -> impl IntoResponse {
    Json(json!({ "status": "ok" }))
}

/// Readiness: every store answers. With LLM providers configured, their circuit breakers
/// (closed, open, half-open) and last errors are in `llm`; an open breaker does not make the
/// server unready, since every role falls back to its deterministic path. `stores.cache` says
/// where the context cache lives (`in-process` or `redis`) and how it is: `ok`, `degraded`
/// (Redis answers again but a recent failure keeps it off until its retry pause ends) or
/// `down` (unreachable); a shared cache that is down does not make the server unready either,
/// since assemblies then run uncached.
pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let mut ready = json!({ "status": "ready" });
    ready["stores"] = json!({ "cache": cache_health(&state).await });
    if state.llm.is_enabled() {
        ready["llm"] = json!({ "providers": state.llm.health() });
    }
    match state.memory.ready().await {
        Ok(()) => (StatusCode::OK, Json(ready)),
        Err(error) => {
            tracing::warn!(%error, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "unavailable", "error": error.to_string() })),
            )
        }
    }
}

async fn cache_health(state: &AppState) -> serde_json::Value {
    match state.context.shared_cache() {
        Some(cache) => json!({ "backend": "redis", "status": cache.health().await }),
        None => json!({ "backend": "in-process", "status": CacheHealth::Ok }),
    }
}

/// Prometheus text exposition, with store sizes read at scrape time.
pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    match state.memory.stats().await {
        Ok(stats) => state.metrics.set_store_stats(&stats),
        Err(error) => tracing::warn!(%error, "cannot read store sizes for /metrics"),
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
}
