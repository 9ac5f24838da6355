//! Operations endpoints: liveness, readiness and Prometheus metrics. They need no token.

use aeterna_memory::StoreHealth;
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

/// Readiness: every store answers. `stores` names each (`records`, `vectors`, `agents` beside
/// PostgreSQL, `cache`) with its `backend` and `status` (`ok` or `down`, and `error`). With LLM providers configured, their circuit breakers
/// (closed, open, half-open) and last errors are in `llm`; an open breaker does not make the
/// server unready, since every role falls back to its deterministic path. `stores.cache` says
/// where the context cache lives (`in-process` or `redis`) and how it is: `ok`, `degraded`
/// (Redis answers again but a recent failure keeps it off until its retry pause ends) or
/// `down` (unreachable); a shared cache that is down does not make the server unready either,
/// since assemblies then run uncached.
pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let mut ready = json!({ "status": "ready" });
    if state.llm.is_enabled() {
        ready["llm"] = json!({ "providers": state.llm.health() });
    }
    let stores = state.memory.health().await;
    let down: Vec<&StoreHealth> = stores.iter().filter(|store| !store.is_ok()).collect();
    let status = if down.is_empty() {
        StatusCode::OK
    } else {
        for store in &down {
            tracing::warn!(store = store.store, backend = store.backend, error = ?store.error, "not ready");
        }
        ready["status"] = json!("unavailable");
        ready["error"] = json!(
            down.iter()
                .map(|store| format!(
                    "{} ({}): {}",
                    store.store,
                    store.backend,
                    store.error.as_deref().unwrap_or("down")
                ))
                .collect::<Vec<_>>()
                .join("; ")
        );
        StatusCode::SERVICE_UNAVAILABLE
    };
    let mut by_name = serde_json::Map::new();
    for store in &stores {
        by_name.insert(store.store.to_string(), json!(store));
    }
    by_name.insert("cache".into(), cache_health(&state).await);
    ready["stores"] = serde_json::Value::Object(by_name);
    (status, Json(ready))
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
