//! What a hostile web page or a slow or careless client can do to a real server on loopback:
//! DNS rebinding (Host) and cross-site requests (Origin) on every data route, stalled and
//! oversized requests, too many or foreign MCP sessions, malformed JSON-RPC, and a shutdown
//! under load that must answer or refuse every request it accepted.

use crate::common;

use std::time::Duration;

use common::{ALPHA_TOKEN, BETA_TOKEN, TestServer, two_tenants};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MCP_ACCEPT: &str = "application/json, text/event-stream";

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": { "name": "hardening-test", "version": "1" } } })
}

/// POSTs one JSON-RPC message to `/mcp`.
async fn post_mcp(
    server: &TestServer,
    token: Option<&str>,
    session: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(server.url("/mcp"))
        .header("Accept", MCP_ACCEPT)
        .header("Content-Type", "application/json")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(session) = session {
        request = request.header("Mcp-Session-Id", session);
    }
    request.send().await.expect("send")
}

/// Opens an MCP session (initialize + initialized) and returns its id.
async fn open_session(server: &TestServer, token: Option<&str>) -> String {
    let response = post_mcp(server, token, None, initialize().to_string()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = response
        .headers()
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .expect("text")
        .to_owned();
    let _ = response.bytes().await;
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let response = post_mcp(server, token, Some(&session), initialized.to_string()).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    session
}

/// The JSON-RPC error of a refused `/mcp` request.
async fn jsonrpc_error(response: reqwest::Response) -> (StatusCode, i64, String) {
    let status = response.status();
    let body: Value = response.json().await.expect("a JSON-RPC error body");
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    let code = body["error"]["code"].as_i64().expect("an error code");
    let message = body["error"]["message"]
        .as_str()
        .expect("a message")
        .to_owned();
    (status, code, message)
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused_on_every_data_route() {
    let server = TestServer::start(|_| {}).await;
    let http = reqwest::Client::new();
    let port = server.server.local_addr().port();
    let rest_body = json!({ "content": "rebinding probe", "user_id": "u" });
    for (host, origin, allowed) in [
        (format!("attacker.example:{port}"), None, false),
        (
            format!("127.0.0.1:{port}"),
            Some("https://evil.example"),
            false,
        ),
        (format!("localhost:{port}"), Some("null"), false),
        (
            format!("127.0.0.1:{port}"),
            Some("http://localhost:3000"),
            true,
        ),
        (format!("127.0.0.1:{port}"), None, true),
    ] {
        for path in ["/v1/ingest-context", "/v1/retrieve-context", "/mcp"] {
            let body = match path {
                "/mcp" => initialize(),
                "/v1/retrieve-context" => json!({ "query": "probe", "user_id": "u" }),
                _ => rest_body.clone(),
            };
            let mut request = http
                .post(server.url(path))
                .header("Host", &host)
                .header("Accept", MCP_ACCEPT)
                .json(&body);
            if let Some(origin) = origin {
                request = request.header("Origin", origin);
            }
            let response = request.send().await.expect("send");
            if allowed {
                assert!(
                    response.status().is_success(),
                    "{path} Host {host} Origin {origin:?}: {}",
                    response.status()
                );
            } else {
                assert_eq!(
                    response.status(),
                    StatusCode::FORBIDDEN,
                    "{path} Host {host} Origin {origin:?}"
                );
            }
        }
    }
    // Nothing a refused request sent was stored: only the allowed ingests are there.
    let retrieved: Value = http
        .post(server.url("/v1/retrieve-context"))
        .json(&json!({ "query": "rebinding probe", "user_id": "u", "top_k": 50 }))
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    assert_eq!(
        retrieved["context_chunks"].as_array().map(Vec::len),
        Some(1),
        "identical allowed ingests are one memory; refused ones stored nothing: {retrieved}"
    );

    // Operators can allow other names and pages.
    let open = TestServer::start(|config| {
        config.http.allowed_hosts = vec!["memory.internal".into()];
        config.http.allowed_origins = vec!["https://ide.example.com".into()];
    })
    .await;
    for (host, origin, status) in [
        ("memory.internal", "https://ide.example.com", StatusCode::OK),
        (
            "memory.internal",
            "https://ide.example.com:8443",
            StatusCode::FORBIDDEN,
        ),
        (
            "127.0.0.1",
            "https://ide.example.com",
            StatusCode::FORBIDDEN,
        ),
    ] {
        let response = http
            .post(open.url("/mcp"))
            .header("Host", host)
            .header("Origin", origin)
            .header("Accept", MCP_ACCEPT)
            .json(&initialize())
            .send()
            .await
            .expect("send");
        assert_eq!(response.status(), status, "Host {host} Origin {origin}");
    }
    // Health checks answer whatever the Host (load balancers probe by IP).
    let response = http
        .get(open.url("/healthz"))
        .header("Host", "10.0.0.7")
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), StatusCode::OK);
}

/// Stalled clients are disconnected and cannot hold the connection slots: with the cap
/// filled by connections that never finish their headers, a health check is served once the
/// header timeout has closed them.
#[tokio::test]
async fn stalled_clients_are_timed_out_and_cannot_exhaust_connections() {
    let server = TestServer::start(|config| {
        config.http.header_read_timeout_secs = 1;
        config.http.body_read_timeout_secs = 1;
        config.http.max_connections = 8;
    })
    .await;
    let addr = server.server.local_addr();
    let mut stalled = Vec::new();
    for _ in 0..8 {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await
            .expect("half a request");
        stalled.push(stream);
    }
    let health = reqwest::Client::new()
        .get(server.url("/healthz"))
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .expect("served once the stalled connections time out");
    assert_eq!(health.status(), StatusCode::OK);
    for mut stream in stalled {
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut rest))
            .await
            .expect("the server closed the stalled connection");
        assert!(
            read.is_err() || rest.is_empty() || rest.starts_with(b"HTTP/1.1 408"),
            "{}",
            String::from_utf8_lossy(&rest)
        );
    }

    // A body that stops arriving gets 408 once its time is up.
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(
            b"POST /v1/ingest-context HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: \
              application/json\r\nContent-Length: 100\r\n\r\n{\"content\":",
        )
        .await
        .expect("send");
    let response = read_response(&mut stream).await;
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(
        response.contains("http.body_read_timeout_secs"),
        "{response}"
    );
}

/// Reads until the server closes the connection (or 20 s pass).
async fn read_response(stream: &mut TcpStream) -> String {
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut response)).await;
    String::from_utf8_lossy(&response).into_owned()
}

#[tokio::test]
async fn bodies_too_large_or_cut_short_get_client_errors_on_mcp() {
    let server = TestServer::start(|config| {
        config.memory.max_content_bytes = 1024;
        config.http.max_body_bytes = 4096;
    })
    .await;
    let addr = server.server.local_addr();

    // Chunked, over the limit: 413 with the limit named.
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: application/json, \
              text/event-stream\r\nContent-Type: application/json\r\nTransfer-Encoding: \
              chunked\r\n\r\n",
        )
        .await
        .expect("send headers");
    let chunk = format!("400\r\n{}\r\n", " ".repeat(1024));
    for _ in 0..8 {
        if stream.write_all(chunk.as_bytes()).await.is_err() {
            break; // the server answered and closed early
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let response = read_response(&mut stream).await;
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(response.contains("http.max_body_bytes"), "{response}");

    // Shorter than its Content-Length: 400, not 500.
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: application/json, \
              text/event-stream\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n\
              {\"jsonrpc\":\"2.0\"",
        )
        .await
        .expect("send");
    stream.shutdown().await.expect("half-close");
    let response = read_response(&mut stream).await;
    assert!(response.starts_with("HTTP/1.1 400"), "{response}");
}

#[tokio::test]
async fn malformed_json_rpc_gets_the_codes_the_specification_assigns() {
    let server = TestServer::start(|_| {}).await;
    let session = open_session(&server, None).await;
    for (body, code, says) in [
        (
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ",
            -32700,
            "not valid JSON",
        ),
        ("not json at all", -32700, "not valid JSON"),
        ("{\"hello\": \"world\"}", -32600, "jsonrpc"),
        ("[1, 2]", -32600, "batches"),
        (
            r#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"arguments": {}}}"#,
            -32602,
            "name",
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "memory_search", "arguments": [1]}}"#,
            -32602,
            "arguments",
        ),
    ] {
        let response = post_mcp(&server, None, Some(&session), body).await;
        let (status, got, message) = jsonrpc_error(response).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(got, code, "{body}: {message}");
        assert!(message.contains(says), "{body}: {message}");
    }
}

#[tokio::test]
async fn sessions_are_capped_and_bound_to_the_token_that_opened_them() {
    let server = TestServer::start(|config| {
        two_tenants(config);
        config.http.max_sessions = 2;
    })
    .await;
    let first = open_session(&server, Some(ALPHA_TOKEN)).await;
    let _second = open_session(&server, Some(ALPHA_TOKEN)).await;
    let response = post_mcp(&server, Some(BETA_TOKEN), None, initialize().to_string()).await;
    assert!(response.headers().contains_key("retry-after"));
    let (status, _, message) = jsonrpc_error(response).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(message.contains("http.max_sessions = 2"), "{message}");

    // Another tenant cannot use or end alpha's session.
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }).to_string();
    let response = post_mcp(&server, Some(BETA_TOKEN), Some(&first), list.clone()).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let http = reqwest::Client::new();
    let response = http
        .delete(server.url("/mcp"))
        .bearer_auth(BETA_TOKEN)
        .header("Mcp-Session-Id", &first)
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = post_mcp(&server, Some(ALPHA_TOKEN), Some(&first), list.clone()).await;
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "alpha's session survived"
    );
    let _ = response.bytes().await;

    // Unknown sessions are 404; ending a session frees its slot.
    let response = http
        .delete(server.url("/mcp"))
        .bearer_auth(ALPHA_TOKEN)
        .header("Mcp-Session-Id", "no-such-session")
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = http
        .delete(server.url("/mcp"))
        .bearer_auth(ALPHA_TOKEN)
        .header("Mcp-Session-Id", &first)
        .send()
        .await
        .expect("send");
    assert!(response.status().is_success(), "{}", response.status());
    let response = post_mcp(&server, Some(ALPHA_TOKEN), Some(&first), list).await;
    assert_eq!(
        response.status(),
        StatusCode::NOT_FOUND,
        "a closed session is gone"
    );
    open_session(&server, Some(BETA_TOKEN)).await;
}

#[tokio::test]
async fn idle_sessions_are_closed_and_their_slots_returned() {
    let server = TestServer::start(|config| {
        config.http.max_sessions = 1;
        config.http.session_idle_secs = 1;
    })
    .await;
    let idle = open_session(&server, None).await;
    let mut reopened = None;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let response = post_mcp(&server, None, None, initialize().to_string()).await;
        if response.status() == StatusCode::OK {
            reopened = response.headers().get("mcp-session-id").cloned();
            break;
        }
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    }
    assert!(
        reopened.is_some(),
        "the idle session's slot was never returned"
    );
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }).to_string();
    let response = post_mcp(&server, None, Some(&idle), list).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

/// Requests the server is reading when it is told to stop are answered and stored; a new
/// connection meanwhile is refused with 503, not dropped.
#[tokio::test]
async fn shutdown_answers_the_requests_in_flight_and_refuses_new_ones() {
    let server = TestServer::start(|config| config.http.shutdown_grace_secs = 30).await;
    let addr = server.server.local_addr();
    let mut writers = Vec::new();
    for index in 0..4 {
        let body =
            json!({ "content": format!("in-flight write {index}"), "user_id": "u" }).to_string();
        let (first, rest) = body.split_at(body.len() / 2);
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let head = format!(
            "POST /v1/ingest-context HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{first}",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.expect("send half");
        writers.push((stream, rest.to_owned()));
    }
    // The server is reading those four bodies when it is told to stop.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let TestServer { server, dir, base } = server;
    let shutdown = tokio::spawn(server.shutdown());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = reqwest::Client::new()
        .post(format!("{base}/v1/ingest-context"))
        .json(&json!({ "content": "too late", "user_id": "u" }))
        .send()
        .await
        .expect("answered while draining");
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = refused.json().await.expect("json");
    assert_eq!(body["error"]["code"], "shutting_down");
    for (mut stream, rest) in writers {
        stream
            .write_all(rest.as_bytes())
            .await
            .expect("send the rest");
        let response = read_response(&mut stream).await;
        assert!(response.starts_with("HTTP/1.1 202"), "{response}");
    }
    shutdown.await.expect("task").expect("shutdown");

    let restarted = TestServer::start_in(dir, |_| {}).await;
    assert_eq!(stored_memories(&restarted).await, 4);
}

/// Many writes racing a shutdown: every write answered 202 is stored and none is stored
/// without an answer; the others fail before any answer (503, refused, or a connection the
/// server closed before reading a request), never halfway through one.
#[tokio::test]
async fn shutdown_under_load_loses_no_answered_write_and_answers_every_stored_one() {
    let server = TestServer::start(|config| config.http.shutdown_grace_secs = 20).await;
    let url = server.url("/v1/ingest-context");
    let http = reqwest::Client::new();
    let mut writes = tokio::task::JoinSet::new();
    for index in 0..200 {
        let (http, url) = (http.clone(), url.clone());
        writes.spawn(async move {
            let body = json!({ "content": format!("write number {index}"), "user_id": "u" });
            match http.post(&url).json(&body).send().await {
                Ok(response) => Some(response.status()),
                Err(error) => {
                    assert!(!error.is_body() && !error.is_decode(), "{error:?}");
                    None
                }
            }
        });
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    let TestServer { server, dir, .. } = server;
    server.shutdown().await.expect("shutdown");
    let mut answered = 0;
    while let Some(outcome) = writes.join_next().await {
        match outcome.expect("task") {
            Some(StatusCode::ACCEPTED) => answered += 1,
            Some(status) => assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE),
            None => {}
        }
    }
    let restarted = TestServer::start_in(dir, |_| {}).await;
    assert_eq!(stored_memories(&restarted).await, answered);
}

/// `aeterna_memory_records` from `/metrics`.
async fn stored_memories(server: &TestServer) -> usize {
    let metrics = reqwest::get(server.url("/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    metrics
        .lines()
        .find_map(|line| line.strip_prefix("aeterna_memory_records "))
        .and_then(|count| count.trim().parse().ok())
        .unwrap_or_else(|| panic!("no aeterna_memory_records in {metrics}"))
}
