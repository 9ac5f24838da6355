//! The CC-MemEx REST contract (`docs/rest-api.md`) over real HTTP against a real server: the
//! documented example requests, sent byte for byte, get the documented answers; long texts are
//! chunked with overlap; queued ingests survive a restart; bad payloads get 400, bad keys 403,
//! a full queue 429, and another tenant's ingestion is not found.

use crate::common;

use std::time::Duration;

use aeterna_server::config::{Config, TokenConfig};
use common::TestServer;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The contract these tests hold the server to; the examples below appear in it verbatim.
const CONTRACT: &str = include_str!("../../../docs/rest-api.md");

/// The documented example ingest request, byte for byte.
const EXAMPLE_INGEST: &str = r#"{"user_id": "user-123", "session_id": "session-abc", "text_content": "The billing service stores invoices in PostgreSQL: the database needs transactions that span invoices and payments.", "source_type": "chat", "source_name": "claude-code", "metadata": {"project": "billing"}}"#;
/// The documented example retrieve request, byte for byte.
const EXAMPLE_RETRIEVE: &str = r#"{"user_id": "user-123", "session_id": "session-abc", "query_text": "Which database does the billing service use?", "top_k": 10, "filters": {"source_type": "chat"}}"#;
const EXAMPLE_TEXT: &str = "The billing service stores invoices in PostgreSQL: the database needs transactions that span invoices and payments.";

const EXAMPLE_KEY: &str = "cc-memex-example-key";
const OTHER_KEY: &str = "cc-memex-other-tenant-key";

/// Two service keys (any user), of tenants `acme` and `globex`.
fn keys(config: &mut Config) {
    config.auth.tokens = [(EXAMPLE_KEY, "acme"), (OTHER_KEY, "globex")]
        .into_iter()
        .map(|(token, tenant)| TokenConfig {
            token: token.into(),
            tenant: tenant.into(),
            user: Some("*".into()),
            ..Default::default()
        })
        .collect();
}

async fn post(
    server: &TestServer,
    path: &str,
    key: Option<&str>,
    body: &str,
) -> (StatusCode, String) {
    let mut request = reqwest::Client::new()
        .post(server.url(path))
        .header("Content-Type", "application/json")
        .body(body.to_owned());
    if let Some(key) = key {
        request = request.header("X-API-Key", key);
    }
    let response = request.send().await.expect("send");
    let status = response.status();
    (status, response.text().await.expect("body"))
}

async fn status_of(server: &TestServer, key: Option<&str>, id: &str) -> (StatusCode, Value) {
    let mut request = reqwest::Client::new().get(server.url(&format!("/v1/ingest-context/{id}")));
    if let Some(key) = key {
        request = request.header("X-API-Key", key);
    }
    let response = request.send().await.expect("send");
    let status = response.status();
    (status, response.json().await.expect("json"))
}

/// Polls the ingestion's status until it is COMPLETED (at most 60 s).
async fn completed(server: &TestServer, key: &str, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (status, body) = status_of(server, Some(key), id).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        match body["status"].as_str() {
            Some("COMPLETED") => return body,
            Some("QUEUED" | "PROCESSING") => {}
            _ => panic!("the ingestion did not complete: {body}"),
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still not completed: {body}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Sends an ingest, checks the 202 answer byte for byte, returns the ingestion id.
async fn accepted(server: &TestServer, key: &str, body: &str) -> String {
    let (status, answer) = post(server, "/v1/ingest-context", Some(key), body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    let parsed: Value = serde_json::from_str(&answer).expect("json");
    let id = parsed["ingestion_id"]
        .as_str()
        .expect("an ingestion id")
        .to_owned();
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    assert_eq!(
        answer,
        format!(
            r#"{{"status":"ACCEPTED","message":"Context received and queued for ingestion.","ingestion_id":"{id}"}}"#
        )
    );
    id
}

fn assert_error(status: StatusCode, body: &str, expected: StatusCode, needles: &[&str]) {
    assert_eq!(status, expected, "{body}");
    let error: Value = serde_json::from_str(body).expect("a JSON error body");
    assert_eq!(error["status"], "ERROR", "{body}");
    let message = error["message"].as_str().expect("a message");
    assert_eq!(
        error.as_object().map(|o| o.len()),
        Some(2),
        "only status and message: {body}"
    );
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in {message:?}");
    }
}

#[test]
fn the_contract_holds_the_examples_verbatim() {
    for example in [EXAMPLE_INGEST, EXAMPLE_RETRIEVE] {
        assert!(
            CONTRACT.contains(example),
            "docs/rest-api.md lacks {example}"
        );
    }
}

#[tokio::test]
async fn the_example_ingest_and_retrieve_get_the_documented_answers() {
    let server = TestServer::start(keys).await;
    let id = accepted(&server, EXAMPLE_KEY, EXAMPLE_INGEST).await;

    let status = completed(&server, EXAMPLE_KEY, &id).await;
    assert_eq!(status["ingestion_id"], id.as_str());
    assert_eq!(status["chunks"], 1);
    assert_eq!(status["error"], Value::Null);
    assert_eq!(status["attempts"], 1);
    let memory_id = status["memory_ids"][0]
        .as_str()
        .expect("a memory id")
        .to_owned();

    let (code, answer) = post(
        &server,
        "/v1/retrieve-context",
        Some(EXAMPLE_KEY),
        EXAMPLE_RETRIEVE,
    )
    .await;
    assert_eq!(code, StatusCode::OK, "{answer}");
    assert!(
        answer.starts_with(r#"{"status":"SUCCESS","retrieved_chunks":[{"chunk_id":""#),
        "{answer}"
    );
    let body: Value = serde_json::from_str(&answer).expect("json");
    let chunk = &body["retrieved_chunks"][0];
    let keys: Vec<&str> = chunk
        .as_object()
        .expect("a chunk")
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = [
        "chunk_id",
        "text",
        "score",
        "source_type",
        "source_name",
        "session_id",
        "metadata",
        "created_at",
    ];
    expected.sort_unstable();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, expected, "{answer}");
    assert_eq!(chunk["chunk_id"], memory_id.as_str());
    assert_eq!(chunk["text"], EXAMPLE_TEXT);
    assert_eq!(chunk["source_type"], "chat");
    assert_eq!(chunk["source_name"], "claude-code");
    assert_eq!(chunk["session_id"], "session-abc");
    assert!(
        chunk["score"].as_f64().is_some_and(|s| s > 0.0 && s <= 1.0),
        "{answer}"
    );
    assert!(
        chunk["created_at"]
            .as_i64()
            .is_some_and(|t| t > 1_700_000_000_000)
    );
    assert_eq!(
        chunk["metadata"],
        json!({ "project": "billing", "source_type": "chat", "source_name": "claude-code",
                "ingestion_id": id, "chunk_index": 0, "chunk_count": 1 })
    );
    eprintln!("example retrieve answer: {answer}");

    // The filters select on metadata: another source type finds nothing.
    let (code, answer) = post(
        &server,
        "/v1/retrieve-context",
        Some(EXAMPLE_KEY),
        r#"{"user_id": "user-123", "session_id": "session-abc", "query_text": "billing database", "filters": {"source_type": "file"}}"#,
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(answer, r#"{"status":"SUCCESS","retrieved_chunks":[]}"#);

    let metrics = reqwest::get(server.url("/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for expected in [
        "aeterna_calls_total{operation=\"rest_ingest_context\",outcome=\"ok\"} 1",
        "aeterna_calls_total{operation=\"rest_ingest_job\",outcome=\"ok\"} 1",
        "aeterna_calls_total{operation=\"rest_retrieve_context\",outcome=\"ok\"} 2",
    ] {
        assert!(
            metrics.contains(expected),
            "missing {expected:?} in\n{metrics}"
        );
    }
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn a_long_text_becomes_overlapping_bounded_chunks_each_retrievable() {
    let server = TestServer::start(keys).await;
    let text: String = (0..320)
        .map(|n| {
            format!("Entry {n} of the ledger records payment {n} for invoice {n} of customer {n}. ")
        })
        .collect();
    assert!(text.split_whitespace().count() > 3000);
    let body = json!({ "user_id": "user-123", "text_content": text, "source_type": "file",
                       "source_name": "ledger.txt" })
    .to_string();
    let id = accepted(&server, EXAMPLE_KEY, &body).await;
    let status = completed(&server, EXAMPLE_KEY, &id).await;
    let ids: Vec<String> = status["memory_ids"]
        .as_array()
        .expect("ids")
        .iter()
        .map(|id| id.as_str().expect("id").to_owned())
        .collect();
    assert!(ids.len() > 5, "{status}");
    assert_eq!(status["chunks"], ids.len());

    let tokenizer = aeterna_context::Tokenizer::get().expect("bpe");
    let mut chunks = Vec::new();
    for (index, memory_id) in ids.iter().enumerate() {
        let request = json!({ "user_id": "user-123", "query_text": "ledger payment invoice",
                              "top_k": 1,
                              "filters": { "ingestion_id": id, "chunk_index": index } })
        .to_string();
        let (code, answer) =
            post(&server, "/v1/retrieve-context", Some(EXAMPLE_KEY), &request).await;
        assert_eq!(code, StatusCode::OK, "{answer}");
        let body: Value = serde_json::from_str(&answer).expect("json");
        let chunk = &body["retrieved_chunks"][0];
        assert_eq!(
            chunk["chunk_id"],
            memory_id.as_str(),
            "chunk {index}: {answer}"
        );
        assert_eq!(chunk["source_name"], "ledger.txt");
        assert_eq!(chunk["metadata"]["chunk_count"], ids.len());
        let text = chunk["text"].as_str().expect("text").to_owned();
        assert!(
            tokenizer.count(&text) <= 256,
            "chunk {index} is over 256 tokens"
        );
        chunks.push(text);
    }
    let source: Vec<&str> = text.split_whitespace().collect();
    for (index, pair) in chunks.windows(2).enumerate() {
        let (before, after): (Vec<&str>, Vec<&str>) = (
            pair[0].split_whitespace().collect(),
            pair[1].split_whitespace().collect(),
        );
        let shared = (1..=before.len().min(after.len()))
            .rev()
            .find(|&n| before[before.len() - n..] == after[..n])
            .unwrap_or(0);
        assert!(
            shared >= 2,
            "chunks {index} and {} share {shared} words",
            index + 1
        );
        // Chunks are whole words of the text: never a word cut in half.
        for word in before.iter().chain(&after) {
            assert!(source.contains(word), "{word:?} is not a word of the text");
        }
    }
    assert!(chunks[0].starts_with("Entry 0 of the ledger"));
    assert!(chunks.last().is_some_and(|c| c.ends_with("customer 319.")));
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn a_queued_ingest_survives_a_restart_and_is_processed_then() {
    // No worker in the first run: the job is only written.
    let server = TestServer::start(|config| {
        keys(config);
        config.rest.ingest_workers = 0;
    })
    .await;
    let id = accepted(&server, EXAMPLE_KEY, EXAMPLE_INGEST).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (code, status) = status_of(&server, Some(EXAMPLE_KEY), &id).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(status["status"], "QUEUED", "{status}");
    assert_eq!(status["memory_ids"], json!([]));
    let TestServer { server, dir, .. } = server;
    server.shutdown().await.expect("shutdown");

    let restarted = TestServer::start_in(dir, keys).await;
    let status = completed(&restarted, EXAMPLE_KEY, &id).await;
    assert_eq!(status["chunks"], 1);
    let (code, answer) = post(
        &restarted,
        "/v1/retrieve-context",
        Some(EXAMPLE_KEY),
        EXAMPLE_RETRIEVE,
    )
    .await;
    assert_eq!(code, StatusCode::OK);
    let body: Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(body["retrieved_chunks"][0]["text"], EXAMPLE_TEXT);
    restarted.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn bad_payloads_get_400_and_bad_keys_403_in_the_cc_memex_shape() {
    let server = TestServer::start(|config| {
        keys(config);
        config.rest.max_text_bytes = 2000;
        config.rest.chunk_tokens = 16;
        config.rest.chunk_overlap_tokens = 2;
        config.rest.max_chunks_per_job = 3;
    })
    .await;
    let ingest = "/v1/ingest-context";
    let retrieve = "/v1/retrieve-context";
    for (path, body, needles) in [
        (
            ingest,
            r#"{"text_content": "x", "user_id": "#,
            &["not valid JSON"][..],
        ),
        (
            ingest,
            r#"{"user_id": "user-123", "session_id": "session-abc", "source_type": "chat"}"#,
            &["`text_content` is missing"],
        ),
        (
            ingest,
            r#"{"user_id": "user-123", "text_content": 42}"#,
            &["text_content", "expected a string"],
        ),
        (
            ingest,
            r#"{"user_id": "user-123", "text_content": "  "}"#,
            &["`text_content` is empty"],
        ),
        (
            ingest,
            r#"{"user_id": "user-123", "text_content": "x", "metadata": "oops"}"#,
            &["metadata"],
        ),
        (
            ingest,
            r#"{"user_id": "user-123", "text_content": "x", "colour": "red"}"#,
            &["colour"],
        ),
        (
            ingest,
            r#"{"user_id": "user-123", "text_content": "x", "metadata": {"chunk_index": 3}}"#,
            &["metadata.chunk_index"],
        ),
        (
            ingest,
            r#"{"user_id": "user-123", "text_content": "x", "content": "y"}"#,
            &["mixes", "`text_content`", "`content`"],
        ),
        (
            ingest,
            r#"{"text_content": "no scope at all"}"#,
            &["user_id", "session_id"],
        ),
        (
            retrieve,
            r#"{"query_text": 5}"#,
            &["query_text", "expected a string"],
        ),
        (
            retrieve,
            r#"{"user_id": "u", "filters": {}}"#,
            &["`query_text` is missing"],
        ),
        (
            retrieve,
            r#"{"query_text": "x", "top_k": 0}"#,
            &["top_k", "1 to 50"],
        ),
        (
            retrieve,
            r#"{"query_text": "x", "top_k": 51}"#,
            &["top_k", "1 to 50"],
        ),
        (
            retrieve,
            r#"{"query_text": "x", "top_k": "ten"}"#,
            &["top_k"],
        ),
        (
            retrieve,
            r#"{"query_text": "x", "filters": [1]}"#,
            &["filters"],
        ),
        (
            retrieve,
            r#"{"query_text": "x", "query": "y"}"#,
            &["mixes", "`query_text`", "`query`"],
        ),
    ] {
        let (status, answer) = post(&server, path, Some(EXAMPLE_KEY), body).await;
        assert_error(status, &answer, StatusCode::BAD_REQUEST, needles);
    }

    // Size limits name their configuration keys.
    let big = json!({ "user_id": "u", "text_content": "word ".repeat(500) }).to_string();
    let (status, answer) = post(&server, ingest, Some(EXAMPLE_KEY), &big).await;
    assert_error(
        status,
        &answer,
        StatusCode::PAYLOAD_TOO_LARGE,
        &["rest.max_text_bytes", "2000"],
    );
    let long = json!({ "user_id": "u", "text_content": "many words here ".repeat(30) }).to_string();
    let (status, answer) = post(&server, ingest, Some(EXAMPLE_KEY), &long).await;
    assert_error(
        status,
        &answer,
        StatusCode::PAYLOAD_TOO_LARGE,
        &["rest.max_chunks_per_job"],
    );

    // Missing, wrong and conflicting keys: 403.
    for (path, body) in [(ingest, EXAMPLE_INGEST), (retrieve, EXAMPLE_RETRIEVE)] {
        for key in [None, Some("wrong-key")] {
            let (status, answer) = post(&server, path, key, body).await;
            assert_error(
                status,
                &answer,
                StatusCode::FORBIDDEN,
                &["X-API-Key"][..key.map_or(1, |_| 0)],
            );
        }
    }
    let (status, body) = status_of(&server, None, "0190d2c1-7b1e-7cc0-9a43-000000000000").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["status"], "ERROR");
    let response = reqwest::Client::new()
        .post(server.url(ingest))
        .header("Content-Type", "application/json")
        .header("X-API-Key", EXAMPLE_KEY)
        .bearer_auth(OTHER_KEY)
        .body(EXAMPLE_INGEST)
        .send()
        .await
        .expect("send");
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    // The original shape keeps its 401 and error shape.
    let (status, answer) = post(
        &server,
        ingest,
        Some("wrong-key"),
        r#"{"content": "x", "user_id": "u"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let error: Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(error["error"]["code"], "unauthorized");

    // A CC-MemEx body must be sent as JSON.
    let response = reqwest::Client::new()
        .post(server.url(ingest))
        .header("X-API-Key", EXAMPLE_KEY)
        .header("Content-Type", "text/plain")
        .body(EXAMPLE_INGEST)
        .send()
        .await
        .expect("send");
    let status = response.status();
    assert_error(
        status,
        &response.text().await.expect("body"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        &["application/json"],
    );

    // Still serving.
    accepted(&server, EXAMPLE_KEY, EXAMPLE_INGEST).await;
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn a_full_queue_is_refused_and_jobs_are_private_to_their_tenant() {
    let server = TestServer::start(|config| {
        keys(config);
        config.rest.ingest_workers = 0;
        config.rest.max_queued_jobs_per_tenant = 2;
    })
    .await;
    let first = accepted(&server, EXAMPLE_KEY, EXAMPLE_INGEST).await;
    accepted(&server, EXAMPLE_KEY, EXAMPLE_INGEST).await;
    let (status, answer) = post(
        &server,
        "/v1/ingest-context",
        Some(EXAMPLE_KEY),
        EXAMPLE_INGEST,
    )
    .await;
    assert_error(
        status,
        &answer,
        StatusCode::TOO_MANY_REQUESTS,
        &["rest.max_queued_jobs_per_tenant", "2"],
    );
    // The bound is per tenant.
    accepted(&server, OTHER_KEY, EXAMPLE_INGEST).await;

    // Another tenant cannot read a job's status; a malformed id is a 400.
    let (code, body) = status_of(&server, Some(OTHER_KEY), &first).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["status"], "ERROR");
    assert!(
        body["message"].as_str().is_some_and(|m| m.contains(&first)),
        "{body}"
    );
    let (code, body) = status_of(&server, Some(EXAMPLE_KEY), &first).await;
    assert_eq!(code, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "QUEUED");
    let (code, body) = status_of(&server, Some(EXAMPLE_KEY), "not-an-id").await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{body}");
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn the_original_shape_is_unchanged_beside_the_cc_memex_shape() {
    let server = TestServer::start(keys).await;
    let (status, answer) = post(
        &server,
        "/v1/ingest-context",
        Some(EXAMPLE_KEY),
        r#"{"content": "Deploys go through the staging cluster first", "user_id": "ann"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    let ingested: Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(ingested["status"], "accepted");
    assert_eq!(ingested["layer"], "user");
    // Stored synchronously: found at once, in the original answer shape.
    let (status, answer) = post(
        &server,
        "/v1/retrieve-context",
        Some(EXAMPLE_KEY),
        r#"{"query": "staging cluster deploys", "user_id": "ann"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let body: Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(body["context_chunks"][0]["id"], ingested["id"]);
    // The same memory through the CC-MemEx shape.
    let (status, answer) = post(
        &server,
        "/v1/retrieve-context",
        Some(EXAMPLE_KEY),
        r#"{"query_text": "staging cluster deploys", "user_id": "ann"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let body: Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(body["retrieved_chunks"][0]["chunk_id"], ingested["id"]);
    assert_eq!(body["retrieved_chunks"][0]["source_type"], Value::Null);
    // Original-shape errors keep their codes.
    let (status, answer) = post(
        &server,
        "/v1/ingest-context",
        Some(EXAMPLE_KEY),
        r#"{"content": 5, "user_id": "u"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    server.server.shutdown().await.expect("shutdown");
}

#[tokio::test]
async fn secrets_are_redacted_before_the_job_row_is_written() {
    // No worker: what the queue holds is what the request left in storage.
    let server = TestServer::start(|config| {
        keys(config);
        config.rest.ingest_workers = 0;
    })
    .await;
    let token = "ghp_Tk9sY2FsRGV2VG9rZW5Gb3JUZXN0czEyMzQ1Ng";
    let body = json!({
        "user_id": "user-123",
        "session_id": "session-abc",
        "text_content": format!("CI pushes with GITHUB_TOKEN={token} to the release repo"),
        "metadata": { "env": { "DB_PASSWORD": "DB_PASSWORD=hunter2hunter2" } },
    })
    .to_string();
    let id = accepted(&server, EXAMPLE_KEY, &body).await;
    let (text, metadata): (String, String) =
        aeterna_memory::with_pool!(server.server.state().memory.database(), |pool| {
            sqlx::query_as(
                "SELECT text_content, metadata FROM ingest_jobs WHERE tenant_id = $1 AND id = $2",
            )
            .bind("acme")
            .bind(&id)
            .fetch_one(pool)
            .await
        })
        .expect("the job row");
    assert!(
        !text.contains(token) && text.contains("[REDACTED:github-token]"),
        "{text}"
    );
    assert!(!metadata.contains("hunter2"), "{metadata}");
    server.server.shutdown().await.expect("shutdown");
}
