//! The OpenAI-compatible embedder against a stand-in embeddings server over real HTTP.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use aeterna_memory::embed::{Embedder, HashingEmbedder, OpenAiConfig, OpenAiEmbedder};
use aeterna_memory::{Layer, MemoryConfig, MemoryError, SearchRequest};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use parking_lot::Mutex;

use super::*;

const DIMS: usize = 64;
const KEY: &str = "test-key";

/// A stand-in for a paid embeddings API: deterministic vectors (the hashing embedder's,
/// deliberately not unit length and in reverse order), bearer auth, and scripted failures.
#[derive(Default)]
struct StandIn {
    batch_sizes: Mutex<Vec<usize>>,
    fail_next: AtomicUsize,
    delay_ms: AtomicUsize,
}

async fn embeddings(
    State(state): State<Arc<StandIn>>,
    headers: HeaderMap,
    Json(body): Json<serde_json::Value>,
) -> Response {
    let delay = state.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay as u64)).await;
    }
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&format!("Bearer {KEY}"))
    {
        return (
            StatusCode::UNAUTHORIZED,
            Json(serde_json::json!({"error": {"message": "Incorrect API key provided"}})),
        )
            .into_response();
    }
    if state.fail_next.load(Ordering::SeqCst) > 0 {
        state.fail_next.fetch_sub(1, Ordering::SeqCst);
        return (StatusCode::SERVICE_UNAVAILABLE, "overloaded").into_response();
    }
    let model = body["model"].as_str().unwrap_or_default();
    if model != "stand-in" {
        return (
            StatusCode::NOT_FOUND,
            Json(serde_json::json!({"error": {"message": format!("model {model} not found")}})),
        )
            .into_response();
    }
    let inputs: Vec<String> = serde_json::from_value(body["input"].clone()).unwrap();
    state.batch_sizes.lock().push(inputs.len());
    let embedder = HashingEmbedder::new(DIMS);
    let mut data: Vec<serde_json::Value> = inputs
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let vector: Vec<f32> = embedder.embed_one(text).iter().map(|x| x * 3.0).collect();
            serde_json::json!({"object": "embedding", "index": index, "embedding": vector})
        })
        .collect();
    data.reverse();
    Json(serde_json::json!({"object": "list", "data": data, "model": model})).into_response()
}

async fn serve() -> (String, Arc<StandIn>) {
    let state = Arc::new(StandIn::default());
    let app = Router::new()
        .route("/v1/embeddings", post(embeddings))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, state)
}

fn config(url: &str) -> OpenAiConfig {
    OpenAiConfig {
        api_key: Some(KEY.into()),
        batch_size: 3,
        timeout_ms: 2_000,
        ..OpenAiConfig::new(url, "stand-in", DIMS)
    }
}

#[tokio::test]
async fn the_memory_service_runs_on_a_remote_embeddings_server() {
    let (url, state) = serve().await;
    let embedder = Arc::new(OpenAiEmbedder::new(config(&url)).unwrap());
    assert_eq!(embedder.id(), "openai:stand-in:64");
    let dir = tempfile::tempdir().unwrap();
    let service = crate::open_with_embedder(dir.path(), MemoryConfig::default(), embedder)
        .await
        .unwrap();
    let texts = [
        "Postgres backups run nightly and are kept for 30 days.",
        "The frontend dev server listens on port 5173.",
        "Rotate TLS certificates with make certs.",
        "Flaky tests came from a shared temp directory.",
        "Rate limit: 100 requests per minute per token.",
        "Pods autoscale on CPU above 70 percent.",
        "Secrets live in Vault; never commit .env files.",
    ];
    let outcomes = service
        .add_batch(
            &alice(),
            texts.iter().map(|t| memory(Layer::Project, t)).collect(),
        )
        .await
        .unwrap();
    assert_eq!(
        *state.batch_sizes.lock(),
        [3, 3, 1],
        "7 texts in batches of 3"
    );
    assert!(
        outcomes
            .iter()
            .all(|o| o.record.embedder_id == "openai:stand-in:64")
    );

    let request = SearchRequest {
        query: "autoscaling pods".into(),
        layers: None,
        tags: vec![],
        kinds: vec![],
        limit: 3,
        min_score: 0.0,
        explain: false,
        as_of: None,
    };
    let hits = service.search(&alice(), request).await.unwrap();
    assert_eq!(hits[0].record.content.as_deref(), Some(texts[5]));
    assert!(hits.iter().all(|hit| (0.0..=1.0).contains(&hit.score)));
}

#[tokio::test]
async fn vectors_come_back_normalised_and_in_input_order() {
    let (url, _state) = serve().await;
    let embedder = OpenAiEmbedder::new(config(&url)).unwrap();
    let texts = [
        "alpha beta",
        "gamma delta",
        "epsilon",
        "zeta eta theta",
        "iota",
    ];
    let vectors = embedder.embed(&texts).await.unwrap();
    let local = HashingEmbedder::new(DIMS);
    for (text, vector) in texts.iter().zip(&vectors) {
        let expected = local.embed_one(text);
        assert!(
            vector
                .iter()
                .zip(&expected)
                .all(|(a, b)| (a - b).abs() < 1e-5),
            "{text}"
        );
    }
}

#[tokio::test]
async fn failures_say_what_to_check() {
    let (url, state) = serve().await;
    let message = |config: OpenAiConfig| async move {
        let embedder = OpenAiEmbedder::new(config).unwrap();
        embedder.embed(&["hello"]).await.unwrap_err().to_string()
    };

    let error = message(OpenAiConfig {
        api_key: Some("wrong".into()),
        ..config(&url)
    })
    .await;
    assert!(
        error.contains("401") && error.contains("API key") && error.contains("Incorrect API key"),
        "{error}"
    );
    let error = message(OpenAiConfig {
        model: "missing".into(),
        ..config(&url)
    })
    .await;
    assert!(
        error.contains("404") && error.contains("base_url"),
        "{error}"
    );
    let error = message(OpenAiConfig {
        dimensions: 32,
        ..config(&url)
    })
    .await;
    assert!(
        error.contains("64-dimensional") && error.contains("`dimensions` is 32"),
        "{error}"
    );

    let closed = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let error = message(OpenAiConfig {
        max_retries: 0,
        ..config(&format!("http://{closed}/v1"))
    })
    .await;
    assert!(
        error.contains("cannot connect") && error.contains("running"),
        "{error}"
    );

    state.delay_ms.store(1_500, Ordering::SeqCst);
    let error = message(OpenAiConfig {
        timeout_ms: 200,
        max_retries: 0,
        ..config(&url)
    })
    .await;
    assert!(error.contains("within 200 ms"), "{error}");
    state.delay_ms.store(0, Ordering::SeqCst);

    // Overload is retried; persistent overload is reported.
    state.fail_next.store(2, Ordering::SeqCst);
    let embedder = OpenAiEmbedder::new(config(&url)).unwrap();
    assert_eq!(embedder.embed(&["retried"]).await.unwrap().len(), 1);
    state.fail_next.store(5, Ordering::SeqCst);
    let error = message(OpenAiConfig {
        max_retries: 1,
        ..config(&url)
    })
    .await;
    assert!(error.contains("503"), "{error}");
    state.fail_next.store(0, Ordering::SeqCst);

    // Through the service: a clear storage error, and nothing stored.
    let dir = tempfile::tempdir().unwrap();
    let broken = Arc::new(
        OpenAiEmbedder::new(OpenAiConfig {
            api_key: None,
            ..config(&url)
        })
        .unwrap(),
    );
    let service = crate::open_with_embedder(dir.path(), MemoryConfig::default(), broken)
        .await
        .unwrap();
    let error = service
        .add(&alice(), memory(Layer::User, "x"))
        .await
        .unwrap_err();
    assert!(matches!(error, MemoryError::Storage { .. }), "{error:?}");
    assert!(
        error.to_string().contains("openai:stand-in:64")
            && error.to_string().contains("nothing was written"),
        "{error}"
    );
    assert_eq!(service.stats().await.unwrap().records, 0);
}
