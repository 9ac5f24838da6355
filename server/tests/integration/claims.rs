//! Identities the token proves: a token for team `a` cannot read, write, approve or promote
//! into team `b` by any argument, on any tool, resource or REST route; two different tokens
//! in one request are refused.

use aeterna_memory::Layer;
use aeterna_server::config::{Config, IdentityFields, RolesConfig, TokenConfig};
use reqwest::StatusCode;
use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

use super::common::{TestServer, call, call_err, call_ok, text};

/// Ann: user `ann`, team `a`, org `oa`, approver of team `a`.
const ANN: &str = "ann-token-0123456789";
/// Bob: user `bob`, team `b`, org `ob`, approver of team `b`. Same tenant as Ann.
const BOB: &str = "bob-token-0123456789";
/// Cid: user `cid`, a member of team `a` without the approver role.
const CID: &str = "cid-token-0123456789";

const UNKNOWN_ID: &str = "0190a000-0000-7000-8000-000000000000";
const RUST_ERROR: &str = "error[E0425]: cannot find value `port` in this scope\n \
                          --> src/main.rs:4:20\n  |\n4 |     let addr = parse(port);\n  \
                          |                    ^^^^ not found in this scope\n";

fn token(secret: &str, user: &str, team: &str, org: &str, approver: &[&str]) -> TokenConfig {
    TokenConfig {
        token: secret.into(),
        tenant: "acme".into(),
        user: Some(user.into()),
        teams: vec![team.into()],
        orgs: vec![org.into()],
        roles: RolesConfig {
            approver: approver.iter().map(|scope| (*scope).to_owned()).collect(),
        },
        defaults: IdentityFields {
            project_id: Some("shop".into()),
            ..Default::default()
        },
    }
}

fn acme(config: &mut Config) {
    config.auth.tokens = vec![
        token(ANN, "ann", "a", "oa", &["team:a"]),
        token(BOB, "bob", "b", "ob", &["team:b"]),
        token(CID, "cid", "a", "oa", &[]),
    ];
    config.hindsight.promotion.require_approval = [Layer::Team].into();
}

/// Arguments each tool accepts apart from identity fields, so that the only thing wrong with a
/// probe is the forged field. `None` for a tool this test does not know yet: the test fails,
/// asking for one.
fn probe_args(tool: &str) -> Option<Value> {
    Some(match tool {
        "memory_add" => json!({ "content": "a forged write", "layer": "team" }),
        "memory_get" | "memory_delete" | "memory_history" => json!({ "id": UNKNOWN_ID }),
        "memory_forget" => json!({ "layers": ["team"], "dry_run": true }),
        "memory_update" => json!({ "id": UNKNOWN_ID, "content": "rewritten" }),
        "memory_search" | "context_assemble" => json!({ "query": "deploy window" }),
        "memory_list" | "summary_refresh" | "note_distill" | "note_list" => json!({}),
        "summary_get" => json!({ "layer": "team" }),
        "hindsight_capture" | "hindsight_query" => json!({ "error_text": RUST_ERROR }),
        "hindsight_resolve" => json!({ "signature_id": UNKNOWN_ID, "description": "declare it" }),
        "hindsight_feedback" => json!({ "resolution_id": UNKNOWN_ID, "success": true }),
        "hindsight_approve" => json!({ "promotion_id": UNKNOWN_ID }),
        "hindsight_promotions" | "meta_loop_list" => json!({}),
        "meta_loop_start" => json!({ "task": "make the tests pass" }),
        "meta_loop_step" => json!({ "loop_id": UNKNOWN_ID, "phase": "build", "success": true }),
        "meta_loop_status" | "meta_loop_cancel" => json!({ "loop_id": UNKNOWN_ID }),
        "trajectory_capture" => json!({ "event": {
            "tool_name": "bash", "description": "ran the tests", "success": true } }),
        "note_get" => json!({ "id": UNKNOWN_ID }),
        "knowledge_search" => json!({ "query": "deploy window" }),
        "knowledge_get" => json!({ "id": "deploy-window" }),
        "knowledge_propose" => json!({ "type": "policy", "title": "Deploy window",
            "body": "Deploy on Mondays.", "why": "forged" }),
        _ => return None,
    })
}

/// The forgeries: a field, an id Ann's token does not hold, and the claim a refusal names.
const FORGERIES: [(&str, &str, &str); 3] = [
    ("user_id", "bob", "`user` claim holds `ann`"),
    ("team_id", "b", "`teams` claim holds `a`"),
    ("org_id", "ob", "`orgs` claim holds `oa`"),
];

fn assert_refused(message: &str, field: &str, forged: &str, claim: &str, context: &str) {
    assert!(
        message.contains(&format!("`{field}` = `{forged}`")) && message.contains(claim),
        "{context}: the refusal should name the scope and the claim: {message}"
    );
}

#[tokio::test]
async fn every_tool_refuses_a_user_team_or_org_the_token_does_not_hold() {
    let server = TestServer::start(acme).await;
    let ann = server.mcp(Some(ANN)).await;
    let bob = server.mcp(Some(BOB)).await;
    let bobs = call_ok(
        &bob,
        "memory_add",
        json!({ "content": "Team b deploys on Thursdays", "layer": "team" }),
    )
    .await;

    let tools = ann.list_all_tools().await.expect("tools/list");
    let mut probed = 0;
    for tool in &tools {
        let properties = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object);
        let takes_identity = properties.is_some_and(|p| p.contains_key("team_id"));
        assert!(
            takes_identity,
            "{} takes no identity fields: decide how this test probes it",
            tool.name
        );
        let args = probe_args(&tool.name)
            .unwrap_or_else(|| panic!("add probe arguments for the new tool `{}`", tool.name));
        for (field, forged, claim) in FORGERIES {
            let mut forged_args = args.clone();
            forged_args[field] = json!(forged);
            let message = call_err(&ann, &tool.name, forged_args).await;
            assert_refused(&message, field, forged, claim, &tool.name);
        }
        probed += 1;
    }
    assert!(probed >= 24, "only {probed} tools were probed");

    // Identity fields inside a trajectory event are checked like the call's own.
    let message = call_err(
        &ann,
        "trajectory_capture",
        json!({ "events": [{ "tool_name": "bash", "description": "d", "success": true,
                             "team_id": "b" }] }),
    )
    .await;
    assert_refused(
        &message,
        "team_id",
        "b",
        "`teams` claim holds `a`",
        "an event",
    );

    // Nothing forged was written: Bob's team holds only what Bob wrote, and his memory is
    // unchanged.
    let listed = call_ok(&bob, "memory_list", json!({ "layers": ["team"] })).await;
    let items = listed["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{listed}");
    assert_eq!(items[0]["id"], bobs["record"]["id"]);
    assert_eq!(items[0]["content"], "Team b deploys on Thursdays");

    // Narrowing to what the token holds works, and a claim with one id is the default.
    let added = call_ok(
        &ann,
        "memory_add",
        json!({ "content": "Team a deploys on Mondays", "layer": "team", "team_id": "a",
                "user_id": "ann" }),
    )
    .await;
    assert_eq!(added["record"]["scope_id"], "a");
    let added = call_ok(
        &ann,
        "memory_add",
        json!({ "content": "Org oa freezes in December", "layer": "org" }),
    )
    .await;
    assert_eq!(added["record"]["scope_id"], "oa");
}

#[tokio::test]
async fn memories_loops_and_summaries_of_other_teams_are_out_of_reach() {
    let server = TestServer::start(acme).await;
    let ann = server.mcp(Some(ANN)).await;
    let bob = server.mcp(Some(BOB)).await;
    let bobs = call_ok(
        &bob,
        "memory_add",
        json!({ "content": "The billing deploy window is Thursday noon", "layer": "team" }),
    )
    .await;
    let id = bobs["record"]["id"].as_str().expect("id").to_owned();

    for (tool, args) in [
        ("memory_get", json!({ "id": id })),
        (
            "memory_update",
            json!({ "id": id, "content": "overwritten by ann" }),
        ),
        ("memory_history", json!({ "id": id })),
        ("memory_delete", json!({ "id": id })),
    ] {
        let message = call_err(&ann, tool, args).await;
        assert!(message.contains("no memory with id"), "{tool}: {message}");
    }
    // Forgetting by id or by layer does not reach another team's memory.
    for args in [json!({ "ids": [id] }), json!({ "layers": ["team"] })] {
        let forgot = call_ok(&ann, "memory_forget", args).await;
        assert_eq!(
            (&forgot["matched"], &forgot["forgotten"]),
            (&json!(0), &json!(0)),
            "{forgot}"
        );
    }
    let unchanged = call_ok(&bob, "memory_get", json!({ "id": id })).await;
    assert_eq!(
        unchanged["content"],
        "The billing deploy window is Thursday noon"
    );

    // Search and assembly without any identity argument see Ann's own scopes only.
    let hits = call_ok(
        &ann,
        "memory_search",
        json!({ "query": "billing deploy window Thursday" }),
    )
    .await;
    assert_eq!(hits["hits"], json!([]), "{hits}");
    let assembled = call_ok(
        &ann,
        "context_assemble",
        json!({ "query": "billing deploy window Thursday", "min_relevance": 0.0 }),
    )
    .await;
    assert!(
        !assembled.to_string().contains("billing deploy window"),
        "{assembled}"
    );

    // A loop started for team b is not found through Ann's token, by id or in a listing.
    let started = call_ok(
        &bob,
        "meta_loop_start",
        json!({ "task": "fix the billing tests" }),
    )
    .await;
    let loop_id = started["loop"]["loop_id"]
        .as_str()
        .expect("loop_id")
        .to_owned();
    for tool in ["meta_loop_status", "meta_loop_cancel"] {
        let message = call_err(&ann, tool, json!({ "loop_id": loop_id })).await;
        assert!(message.contains(&loop_id), "{tool}: {message}");
    }
    let listed = call_ok(&ann, "meta_loop_list", json!({})).await;
    assert_eq!(listed["loops"], json!([]), "{listed}");
    let listed = call_ok(&bob, "meta_loop_list", json!({})).await;
    assert_eq!(listed["loops"][0]["loop_id"], loop_id.as_str());

    // Team b's summary is refused as a resource, naming the claim.
    let read = ann
        .read_resource(ReadResourceRequestParams::new("aeterna://summaries/team/b"))
        .await
        .expect_err("team b's summary");
    assert!(
        read.to_string().contains("`teams` claim holds `a`"),
        "{read}"
    );
    let own = ann
        .read_resource(ReadResourceRequestParams::new("aeterna://summaries/team/a"))
        .await;
    assert!(own.is_ok(), "{own:?}");
}

#[tokio::test]
async fn approving_a_promotion_needs_the_approver_role_on_its_team() {
    let server = TestServer::start(acme).await;
    let ann = server.mcp(Some(ANN)).await;
    let bob = server.mcp(Some(BOB)).await;
    let cid = server.mcp(Some(CID)).await;

    let captured = call_ok(
        &ann,
        "hindsight_capture",
        json!({ "error_text": RUST_ERROR }),
    )
    .await;
    let signature_id = captured["signatures"][0]["signature_id"].clone();
    let resolved = call_ok(
        &ann,
        "hindsight_resolve",
        json!({ "signature_id": signature_id, "description": "declare `port` first" }),
    )
    .await;
    let resolution_id = resolved["resolution"]["id"].clone();

    // Promoting into team b is a forged team, refused like any other.
    let message = call_err(
        &ann,
        "hindsight_feedback",
        json!({ "resolution_id": resolution_id, "success": true, "team_id": "b" }),
    )
    .await;
    assert_refused(
        &message,
        "team_id",
        "b",
        "`teams` claim holds `a`",
        "feedback",
    );

    let mut outcome = Value::Null;
    for _ in 0..3 {
        outcome = call_ok(
            &ann,
            "hindsight_feedback",
            json!({ "resolution_id": resolution_id, "success": true }),
        )
        .await;
    }
    assert_eq!(outcome["promotion"]["status"], "pending", "{outcome}");
    let promotion_id = outcome["promotion"]["promotion"]["id"].clone();
    assert_eq!(outcome["promotion"]["promotion"]["to_scope"], "a");

    // A member of team a without the role sees it pending but cannot decide it.
    let pending = call_ok(&cid, "hindsight_promotions", json!({ "status": "pending" })).await;
    assert_eq!(pending["promotions"][0]["id"], promotion_id);
    for approve in [true, false] {
        let message = call_err(
            &cid,
            "hindsight_approve",
            json!({ "promotion_id": promotion_id, "approve": approve }),
        )
        .await;
        assert!(message.contains("`approver` role on `team:a`"), "{message}");
    }
    // Bob, an approver of team b, can neither name team a nor reach it as team b.
    let message = call_err(
        &bob,
        "hindsight_approve",
        json!({ "promotion_id": promotion_id, "team_id": "a" }),
    )
    .await;
    assert_refused(&message, "team_id", "a", "`teams` claim holds `b`", "bob");
    let message = call_err(
        &bob,
        "hindsight_approve",
        json!({ "promotion_id": promotion_id }),
    )
    .await;
    assert!(message.contains("team `a`"), "{message}");
    let still = call_ok(&ann, "hindsight_promotions", json!({ "status": "pending" })).await;
    assert_eq!(still["promotions"][0]["id"], promotion_id);

    let decided = call_ok(
        &ann,
        "hindsight_approve",
        json!({ "promotion_id": promotion_id }),
    )
    .await;
    assert_eq!(decided["status"], "promoted");
    assert_eq!(decided["decided_by"], "ann");
}

#[tokio::test]
async fn rest_routes_refuse_forged_users_and_requests_with_two_tokens() {
    let server = TestServer::start(acme).await;
    let http = reqwest::Client::new();
    for (path, body) in [
        (
            "/v1/ingest-context",
            json!({ "content": "forged", "user_id": "bob" }),
        ),
        (
            "/v1/retrieve-context",
            json!({ "query": "forged", "user_id": "bob" }),
        ),
    ] {
        let response = http
            .post(server.url(path))
            .header("X-API-Key", ANN)
            .json(&body)
            .send()
            .await
            .expect("send");
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{path}");
        let body: Value = response.json().await.expect("json");
        assert_eq!(body["error"]["code"], "forbidden");
        let message = body["error"]["message"].as_str().expect("message");
        assert_refused(message, "user_id", "bob", "`user` claim holds `ann`", path);
    }
    let own = http
        .post(server.url("/v1/ingest-context"))
        .header("X-API-Key", ANN)
        .header("Authorization", format!("Bearer {ANN}"))
        .json(&json!({ "content": "Ann's own note", "user_id": "ann" }))
        .send()
        .await
        .expect("send");
    assert!(own.status().is_success(), "{}", own.status());

    for path in ["/mcp", "/v1/ingest-context", "/v1/retrieve-context"] {
        let response = http
            .post(server.url(path))
            .header("Accept", "application/json, text/event-stream")
            .header("Authorization", format!("Bearer {ANN}"))
            .header("X-API-Key", BOB)
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list",
                           "content": "x", "query": "x" }))
            .send()
            .await
            .expect("send");
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
        let body: Value = response.json().await.expect("json");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("conflicting credentials"),
            "{path}: {body}"
        );
    }
}

#[tokio::test]
async fn without_tokens_the_single_user_names_any_scope() {
    let server = TestServer::start(|_| {}).await;
    let client = server.mcp(None).await;
    for (field, id) in [
        ("user_id", "anyone"),
        ("team_id", "any-team"),
        ("org_id", "any-org"),
    ] {
        let layer = &field[..field.len() - 3];
        let added = call(
            &client,
            "memory_add",
            json!({ "content": format!("a {layer} memory"), "layer": layer, field: id }),
        )
        .await
        .expect("no protocol error");
        assert_ne!(added.is_error, Some(true), "{}", text(&added));
    }
}
