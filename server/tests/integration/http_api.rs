//! The HTTP layer over real HTTP on an ephemeral loopback port: MCP through rmcp's client,
//! the REST API and the operations endpoints through reqwest.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{ALPHA_TOKEN, BETA_TOKEN, TestServer, call, call_err, call_ok, two_tenants};
use reqwest::StatusCode;
use serde_json::{Value, json};

const MCP_ACCEPT: &str = "application/json, text/event-stream";

#[tokio::test]
async fn tools_are_listed_with_schemas_and_annotations() {
    let server = TestServer::start(|_| {}).await;
    let client = server.mcp(None).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|server| server.name.as_str()),
        Some("aeterna")
    );
    assert!(
        info.instructions
            .as_deref()
            .unwrap_or_default()
            .contains("memory_search")
    );

    let tools: BTreeMap<String, rmcp::model::Tool> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|tool| (tool.name.to_string(), tool))
        .collect();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "context_assemble",
            "hindsight_approve",
            "hindsight_capture",
            "hindsight_feedback",
            "hindsight_promotions",
            "hindsight_query",
            "hindsight_resolve",
            "knowledge_get",
            "knowledge_propose",
            "knowledge_search",
            "memory_add",
            "memory_delete",
            "memory_forget",
            "memory_get",
            "memory_history",
            "memory_list",
            "memory_search",
            "memory_update",
            "meta_loop_cancel",
            "meta_loop_list",
            "meta_loop_start",
            "meta_loop_status",
            "meta_loop_step",
            "note_distill",
            "note_get",
            "note_list",
            "summary_get",
            "summary_refresh",
            "trajectory_capture"
        ]
    );
    let add = &tools["memory_add"];
    let properties = add.input_schema.get("properties").expect("properties");
    assert_eq!(properties["layer"]["enum"][0], "agent");
    assert!(
        properties.get("session_id").is_some(),
        "identity fields are arguments"
    );
    let required = add.input_schema.get("required").expect("required");
    assert!(
        required
            .as_array()
            .expect("array")
            .contains(&json!("content"))
    );
    let annotations = |name: &str| tools[name].annotations.clone().expect("annotations");
    assert_eq!(annotations("memory_search").read_only_hint, Some(true));
    assert_eq!(annotations("memory_delete").destructive_hint, Some(true));
    assert_eq!(annotations("memory_add").destructive_hint, Some(false));
    assert_eq!(annotations("memory_add").idempotent_hint, Some(true));
    assert!(
        tools
            .values()
            .all(|tool| tool.description.as_deref().is_some_and(|d| d.len() > 40))
    );
    // Every tool returns structuredContent, so every tool declares an object outputSchema.
    for (name, tool) in &tools {
        let output = tool
            .output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{name} declares no outputSchema"));
        assert_eq!(output.get("type"), Some(&json!("object")), "{name}");
        assert!(
            output.get("properties").is_some_and(Value::is_object),
            "{name}"
        );
    }
    let properties = |name: &str| -> BTreeSet<String> {
        let output = tools[name].output_schema.as_ref().expect("outputSchema");
        output["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(
        properties("memory_add"),
        ["conflicts", "deduplicated", "record", "superseded"]
            .map(String::from)
            .into()
    );
    assert!(
        properties("note_get").is_superset(&["id", "markdown", "title"].map(String::from).into())
    );
    client.cancel().await.expect("close");
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn add_search_get_delete_over_mcp() {
    let server = TestServer::start(|_| {}).await;
    let client = server.mcp(None).await;
    let added = call_ok(
        &client,
        "memory_add",
        json!({ "content": "Run cargo nextest for the fast test loop", "layer": "project",
                "project_id": "aeterna", "tags": ["testing"], "metadata": { "by": "test" } }),
    )
    .await;
    let id = added["record"]["id"].as_str().expect("id").to_owned();
    assert_eq!(added["record"]["tenant_id"], "default");
    assert_eq!(added["record"]["scope_id"], "aeterna");

    let found = call_ok(
        &client,
        "memory_search",
        json!({ "query": "fast test loop", "project_id": "aeterna" }),
    )
    .await;
    assert_eq!(found["hits"][0]["record"]["id"], id.as_str());
    let score = found["hits"][0]["score"].as_f64().expect("score");
    assert!(score > 0.0 && score <= 1.0, "{score}");

    let got = call_ok(&client, "memory_get", json!({ "id": id })).await;
    assert_eq!(got["content"], "Run cargo nextest for the fast test loop");
    assert_eq!(got["metadata"], json!({ "by": "test" }));

    let updated = call_ok(
        &client,
        "memory_update",
        json!({ "id": id, "tags": ["testing", "ci"] }),
    )
    .await;
    assert_eq!(updated["tags"], json!(["testing", "ci"]));

    let page = call_ok(
        &client,
        "memory_list",
        json!({ "project_id": "aeterna", "limit": 1 }),
    )
    .await;
    assert_eq!(page["items"].as_array().map(Vec::len), Some(1));

    call_ok(&client, "memory_delete", json!({ "id": id })).await;
    let message = call_err(&client, "memory_get", json!({ "id": id })).await;
    assert!(
        message.contains("memory_get") && message.contains("no memory with id"),
        "{message}"
    );
    client.cancel().await.expect("close");
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn tenants_are_isolated_through_every_tool_and_endpoint() {
    let server = TestServer::start(two_tenants).await;
    let alpha = server.mcp(Some(ALPHA_TOKEN)).await;
    let beta = server.mcp(Some(BETA_TOKEN)).await;
    let secret = "alpha's staging database lives on host db7";
    let added = call_ok(
        &alpha,
        "memory_add",
        json!({ "content": secret, "layer": "project" }),
    )
    .await;
    let id = added["record"]["id"].as_str().expect("id").to_owned();
    assert_eq!(added["record"]["tenant_id"], "alpha");

    // Beta uses the same user and project ids, and still sees nothing.
    let found = call_ok(
        &beta,
        "memory_search",
        json!({ "query": "staging database host" }),
    )
    .await;
    assert_eq!(found["hits"], json!([]));
    let page = call_ok(&beta, "memory_list", json!({})).await;
    assert_eq!(page["items"], json!([]));
    for (tool, arguments) in [
        ("memory_get", json!({ "id": id })),
        (
            "memory_update",
            json!({ "id": id, "content": "overwritten by beta" }),
        ),
        ("memory_delete", json!({ "id": id })),
    ] {
        let message = call_err(&beta, tool, arguments).await;
        assert!(message.contains("no memory with id"), "{tool}: {message}");
    }
    // Tool arguments cannot pick a tenant.
    let found = call_ok(
        &beta,
        "memory_search",
        json!({ "query": "staging database host", "tenant_id": "alpha", "tenant": "alpha" }),
    )
    .await;
    assert_eq!(found["hits"], json!([]));

    // The REST API maps the same tokens to the same tenants.
    let http = reqwest::Client::new();
    let response = http
        .post(server.url("/v1/retrieve-context"))
        .header("X-API-Key", BETA_TOKEN)
        .json(&json!({ "query": "staging database host", "user_id": "ann", "top_k": 50 }))
        .send()
        .await
        .expect("retrieve");
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["context_chunks"], json!([]));

    // Alpha's memory survived everything beta tried.
    let got = call_ok(&alpha, "memory_get", json!({ "id": id })).await;
    assert_eq!(got["content"], secret);
    let response = http
        .post(server.url("/v1/retrieve-context"))
        .header("X-API-Key", ALPHA_TOKEN)
        .json(&json!({ "query": "staging database host", "user_id": "ann" }))
        .send()
        .await
        .expect("retrieve");
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["context_chunks"][0]["id"], id.as_str());
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn missing_or_wrong_tokens_are_refused() {
    let server = TestServer::start(two_tenants).await;
    assert!(common::mcp_client(&server.url("/mcp"), None).await.is_err());
    assert!(
        common::mcp_client(&server.url("/mcp"), Some("wrong-token"))
            .await
            .is_err()
    );

    let http = reqwest::Client::new();
    for (path, key) in [
        ("/mcp", None),
        ("/mcp", Some("wrong-token")),
        ("/v1/ingest-context", None),
        ("/v1/retrieve-context", Some("wrong-token")),
    ] {
        let mut request = http
            .post(server.url(path))
            .header("Accept", MCP_ACCEPT)
            .json(&json!({ "query": "x", "content": "x", "user_id": "u" }));
        if let Some(key) = key {
            request = request.header("X-API-Key", key).bearer_auth(key);
        }
        let response = request.send().await.expect("send");
        assert_eq!(
            response.status(),
            StatusCode::UNAUTHORIZED,
            "{path} {key:?}"
        );
        assert_eq!(
            response
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok()),
            Some("Bearer")
        );
        let body: Value = response.json().await.expect("json error");
        assert_eq!(body["error"]["code"], "unauthorized");
    }
    // Operations endpoints need no token.
    let response = http
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("healthz");
    assert_eq!(response.status(), StatusCode::OK);
    // And a good token still works afterwards.
    let client = server.mcp(Some(ALPHA_TOKEN)).await;
    call_ok(&client, "memory_list", json!({})).await;
    let metrics = http
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("metrics");
    let metrics = metrics.text().await.expect("text");
    assert!(
        metrics.contains("aeterna_auth_failures_total{transport=\"mcp\"}"),
        "{metrics}"
    );
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn bad_input_gets_clear_errors_and_the_server_keeps_serving() {
    let server = TestServer::start(|config| {
        config.memory.max_content_bytes = 1024;
        config.http.max_body_bytes = 64 * 1024;
    })
    .await;
    let client = server.mcp(None).await;

    // Wrong types and missing arguments are tool errors that name the tool and the field.
    let message = call_err(
        &client,
        "memory_add",
        json!({ "content": 42, "layer": "user" }),
    )
    .await;
    assert!(
        message.starts_with("memory_add: invalid arguments")
            && message.contains("expected a string"),
        "{message}"
    );
    let message = call_err(&client, "memory_search", json!({ "limit": 3 })).await;
    assert!(message.contains("missing field `query`"), "{message}");
    let message = call_err(
        &client,
        "memory_add",
        json!({ "content": "x", "layer": "user" }),
    )
    .await;
    assert!(
        message.contains("user_id"),
        "a user-layer memory needs a user id: {message}"
    );
    let message = call_err(&client, "memory_get", json!({ "id": "123" })).await;
    assert!(message.contains("not a memory id"), "{message}");
    let message = call_err(
        &client,
        "memory_delete",
        json!({ "id": "0190d2c1-7b1e-7cc0-9a43-000000000000" }),
    )
    .await;
    assert!(message.contains("no memory with id"), "{message}");
    // Oversized content is refused by the memory limits, with the limit named.
    let message = call_err(
        &client,
        "memory_add",
        json!({ "content": "z".repeat(2000), "layer": "company" }),
    )
    .await;
    assert!(message.contains("1024"), "{message}");
    // An unknown tool is a protocol error.
    let error = call(&client, "memory_teleport", json!({}))
        .await
        .expect_err("unknown tool");
    assert!(
        error.to_string().contains("unknown tool `memory_teleport`"),
        "{error}"
    );

    let http = reqwest::Client::new();
    // Malformed JSON-RPC.
    let response = http
        .post(server.url("/mcp"))
        .header("Accept", MCP_ACCEPT)
        .header("Content-Type", "application/json")
        .body("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ")
        .send()
        .await
        .expect("send");
    assert!(response.status().is_client_error(), "{}", response.status());
    // An oversized body is refused before it is read.
    let response = http
        .post(server.url("/mcp"))
        .header("Accept", MCP_ACCEPT)
        .header("Content-Type", "application/json")
        .body(vec![b' '; 100 * 1024])
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let response = http
        .post(server.url("/v1/ingest-context"))
        .json(&json!({ "content": "x".repeat(100 * 1024), "user_id": "u" }))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);

    // REST: malformed JSON, wrong types, out-of-range values, unknown fields.
    for (path, body, status, code) in [
        (
            "/v1/ingest-context",
            "{not json",
            StatusCode::BAD_REQUEST,
            "malformed_json",
        ),
        (
            "/v1/ingest-context",
            r#"{"content": 5, "user_id": "u"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "/v1/ingest-context",
            r#"{"content": "x"}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "/v1/retrieve-context",
            r#"{"query": "x", "top_k": 0}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "/v1/retrieve-context",
            r#"{"query": "x", "top_k": 51}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            "/v1/retrieve-context",
            r#"{"query": "x", "topk": 3}"#,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
    ] {
        let response = http
            .post(server.url(path))
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .expect("send");
        assert_eq!(response.status(), status, "{path} {body}");
        let error: Value = response.json().await.expect("json error body");
        assert_eq!(error["error"]["code"], code, "{path} {body}: {error}");
        assert!(
            error["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    let response = http.get(server.url("/nope")).send().await.expect("send");
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    // Still serving, through both APIs.
    let added = call_ok(
        &client,
        "memory_add",
        json!({ "content": "still alive", "layer": "company" }),
    )
    .await;
    assert!(added["record"]["id"].is_string());
    let response = http
        .post(server.url("/v1/ingest-context"))
        .json(&json!({ "content": "also alive", "user_id": "u" }))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn rest_ingest_then_retrieve_and_operations_endpoints() {
    let server = TestServer::start(|_| {}).await;
    let http = reqwest::Client::new();
    let response = http
        .post(server.url("/v1/ingest-context"))
        .json(
            &json!({ "content": "The release checklist lives in docs/RELEASING.md",
                        "user_id": "ann", "session_id": "s1", "metadata": { "kind": "doc" } }),
        )
        .send()
        .await
        .expect("ingest");
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let ingested: Value = response.json().await.expect("json");
    assert_eq!(ingested["status"], "accepted");
    assert_eq!(ingested["layer"], "session");

    let response = http
        .post(server.url("/v1/retrieve-context"))
        .json(
            &json!({ "query": "release checklist", "user_id": "ann", "session_id": "s1",
                        "top_k": 3, "filter_metadata": { "kind": "doc" } }),
        )
        .send()
        .await
        .expect("retrieve");
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.expect("json");
    let chunk = &body["context_chunks"][0];
    assert_eq!(chunk["id"], ingested["id"]);
    assert_eq!(
        chunk["content"],
        "The release checklist lives in docs/RELEASING.md"
    );
    assert!(chunk["relevance_score"].as_f64().is_some_and(|s| s > 0.0));

    let health: Value = http
        .get(server.url("/healthz"))
        .send()
        .await
        .expect("healthz")
        .json()
        .await
        .expect("json");
    assert_eq!(health["status"], "ok");
    let ready = http
        .get(server.url("/readyz"))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status(), StatusCode::OK);
    let client = server.mcp(None).await;
    call_ok(
        &client,
        "memory_search",
        json!({ "query": "release", "user_id": "ann" }),
    )
    .await;
    call_err(&client, "memory_get", json!({ "id": "nope" })).await;
    let metrics = http
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for expected in [
        "aeterna_calls_total{operation=\"memory_search\",outcome=\"ok\"} 1",
        "aeterna_calls_total{operation=\"memory_get\",outcome=\"error\"} 1",
        "aeterna_calls_total{operation=\"rest_ingest_context\",outcome=\"ok\"} 1",
        "aeterna_call_duration_seconds_bucket{le=",
        "aeterna_memory_records 1",
    ] {
        assert!(
            metrics.contains(expected),
            "missing {expected:?} in\n{metrics}"
        );
    }
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn shutdown_flushes_and_a_restart_finds_the_data() {
    let server = TestServer::start(|_| {}).await;
    let client = server.mcp(None).await;
    let id = call_ok(
        &client,
        "memory_add",
        json!({ "content": "Prefer thiserror for library error enums", "layer": "company" }),
    )
    .await["record"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let TestServer { server, dir, .. } = server;
    server.shutdown().await.expect("graceful shutdown");

    let restarted = TestServer::start_in(dir, |_| {}).await;
    let client = restarted.mcp(None).await;
    let found = call_ok(
        &client,
        "memory_search",
        json!({ "query": "library error enums" }),
    )
    .await;
    assert_eq!(found["hits"][0]["record"]["id"], id.as_str());
    restarted.server.shutdown().await.expect("shutdown");
}
