//! Two real servers sharing one Redis (`redis_url`; `AETERNA_TEST_REDIS_URL`, default
//! `redis://127.0.0.1:6379`): a `context_assemble` cached by one is served by the other, a
//! `memory_add` on one invalidates it for both, `/readyz` shows the cache store, and an
//! unreachable `redis_url` stops the start with an error naming it. Each test uses a tenant of
//! its own, so runs sharing the Redis never meet.

use crate::common;

use aeterna_server::config::RedisUrl;
use aeterna_server::state::AppState;
use common::{TestServer, call_ok, config};
use serde_json::{Value, json};

fn redis_url() -> RedisUrl {
    let url =
        std::env::var("AETERNA_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    RedisUrl::parse(&url).expect("a Redis URL")
}

fn unique_tenant() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("shared-{}-{nanos}", std::process::id())
}

async fn server(tenant: &str) -> TestServer {
    let tenant = tenant.to_owned();
    TestServer::start(move |config| {
        config.redis_url = Some(redis_url());
        config.auth.default_tenant = tenant;
    })
    .await
}

fn assemble_args() -> Value {
    json!({ "query": "payment retry backoff", "project_id": "payments", "user_id": "ann" })
}

async fn readyz(server: &TestServer) -> Value {
    reqwest::get(server.url("/readyz"))
        .await
        .expect("readyz")
        .json()
        .await
        .expect("json")
}

#[tokio::test]
async fn two_servers_share_assembled_contexts_and_a_write_on_one_invalidates_them() {
    let tenant = unique_tenant();
    let (a, b) = (server(&tenant).await, server(&tenant).await);
    let (client_a, client_b) = (a.mcp(None).await, b.mcp(None).await);
    call_ok(
        &client_a,
        "memory_add",
        json!({ "layer": "project", "project_id": "payments",
                "content": "Payment retry uses exponential backoff." }),
    )
    .await;
    call_ok(
        &client_a,
        "summary_refresh",
        json!({ "project_id": "payments", "user_id": "ann" }),
    )
    .await;
    let on_a = call_ok(&client_a, "context_assemble", assemble_args()).await;
    assert!(on_a["content"].as_str().unwrap().contains("exponential"));

    // b holds no memories: its answer is a's, from Redis.
    let on_b = call_ok(&client_b, "context_assemble", assemble_args()).await;
    assert_eq!(on_b, on_a);

    // A write on b: when memory_add returned, the shared entry is gone for everyone.
    call_ok(
        &client_b,
        "memory_add",
        json!({ "layer": "project", "project_id": "payments",
                "content": "Payment retry backoff is capped at 30 s." }),
    )
    .await;
    let on_b = call_ok(&client_b, "context_assemble", assemble_args()).await;
    let content = on_b["content"].as_str().unwrap();
    assert!(content.contains("capped at 30 s"), "{content}");
    assert!(
        !content.contains("exponential"),
        "b assembled anew: {content}"
    );

    for server in [&a, &b] {
        assert_eq!(
            readyz(server).await["stores"]["cache"],
            json!({ "backend": "redis", "status": "ok" })
        );
    }
}

#[tokio::test]
async fn without_redis_url_the_cache_is_in_process() {
    let server = TestServer::start(|_| {}).await;
    assert_eq!(
        readyz(&server).await["stores"]["cache"],
        json!({ "backend": "in-process", "status": "ok" })
    );
}

#[tokio::test]
async fn an_unreachable_redis_url_stops_the_start_with_an_error_naming_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&dir);
    config.redis_url =
        Some(RedisUrl::parse(&format!("redis://:hunter2@127.0.0.1:{port}")).unwrap());
    let error = AppState::open(config)
        .await
        .err()
        .expect("nothing listens there");
    let message = format!("{error:#}");
    assert!(message.contains("redis_url"), "{message}");
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(!message.contains("hunter2"), "{message}");
}
