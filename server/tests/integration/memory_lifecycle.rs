//! Correcting and forgetting over real MCP (HTTP): a new fact is flagged against the one it
//! contradicts, supersedes it with its history kept, searches answer as memory is now and as
//! it was, and a forgotten memory is gone from search and from assembled contexts — for the
//! tenant that forgot it only.

use crate::common;

use common::{ALPHA_TOKEN, BETA_TOKEN, TestServer, call_err, call_ok, two_tenants};
use serde_json::{Value, json};

fn contents(hits: &Value) -> Vec<String> {
    hits["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|hit| {
            hit["record"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn source_ids(context: &Value) -> Vec<Value> {
    context["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .map(|source| source["id"].clone())
        .collect()
}

async fn tick() {
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
}

#[tokio::test]
async fn a_changed_fact_is_flagged_superseded_and_searched_now_and_then() {
    let server = TestServer::start(two_tenants).await;
    let alpha = server.mcp(Some(ALPHA_TOKEN)).await;
    let tuesday = "The release deploy window is Tuesday afternoon.";
    let old = call_ok(
        &alpha,
        "memory_add",
        json!({ "content": tuesday, "layer": "project" }),
    )
    .await;
    let old_id = old["record"]["id"].clone();
    assert_eq!(old["conflicts"], json!([]), "{old}");
    tick().await;
    let before_change = common_now();
    tick().await;

    // A contradicting fact is stored and flagged, and the old one is left as it is.
    let thursday = "The release deploy window is Thursday afternoon.";
    let added = call_ok(
        &alpha,
        "memory_add",
        json!({ "content": thursday, "layer": "project" }),
    )
    .await;
    let conflicts = added["conflicts"].as_array().expect("conflicts");
    assert_eq!(conflicts.len(), 1, "{added}");
    assert_eq!(conflicts[0]["id"], old_id);
    assert_eq!(conflicts[0]["relation"], "contradicts");
    let reason = conflicts[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("thursday") && reason.contains("tuesday"),
        "{reason}"
    );
    let untouched = call_ok(&alpha, "memory_get", json!({ "id": old_id })).await;
    assert_eq!(untouched["version"], 1);

    // The caller decides: the duplicate goes, the old memory gets the new value as a version.
    call_ok(
        &alpha,
        "memory_delete",
        json!({ "id": added["record"]["id"] }),
    )
    .await;
    let superseded = call_ok(
        &alpha,
        "memory_add",
        json!({ "content": thursday, "layer": "project", "supersedes": old_id }),
    )
    .await;
    assert_eq!(superseded["superseded"], old_id);
    assert_eq!(superseded["record"]["id"], old_id);
    assert_eq!(superseded["record"]["version"], 2);

    let now = call_ok(
        &alpha,
        "memory_search",
        json!({ "query": "release deploy window" }),
    )
    .await;
    assert_eq!(contents(&now), [thursday], "{now}");
    let then = call_ok(
        &alpha,
        "memory_search",
        json!({ "query": "release deploy window", "as_of": before_change }),
    )
    .await;
    assert_eq!(contents(&then), [tuesday], "{then}");
    let history = call_ok(&alpha, "memory_history", json!({ "id": old_id })).await;
    let versions: Vec<(i64, &str)> = history["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["version"].as_i64().unwrap(),
                v["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(versions, [(2, thursday), (1, tuesday)], "{history}");
    let closed = &history["versions"][1];
    assert_eq!(closed["valid_to"], history["versions"][0]["valid_from"]);

    // A supersede across layers is refused, naming the argument.
    let error = call_err(
        &alpha,
        "memory_add",
        json!({ "content": "Friday", "layer": "user", "supersedes": old_id }),
    )
    .await;
    assert!(error.contains("`supersedes`"), "{error}");
}

#[tokio::test]
async fn a_forgotten_memory_leaves_search_and_context_for_its_tenant_only() {
    let server = TestServer::start(two_tenants).await;
    let alpha = server.mcp(Some(ALPHA_TOKEN)).await;
    let beta = server.mcp(Some(BETA_TOKEN)).await;
    let fact = "The billing export job runs at 02:00 UTC from the cron host.";
    let kept = "The billing service owns the invoices table.";
    let mut forget_me = Vec::new();
    for client in [&alpha, &beta] {
        let added = call_ok(
            client,
            "memory_add",
            json!({ "content": fact, "layer": "project", "tags": ["billing-cron"] }),
        )
        .await;
        forget_me.push(added["record"]["id"].clone());
    }
    call_ok(
        &alpha,
        "memory_add",
        json!({ "content": kept, "layer": "project" }),
    )
    .await;
    let query = json!({ "query": "when does the billing export job run" });
    let context = call_ok(&alpha, "context_assemble", query.clone()).await;
    assert!(source_ids(&context).contains(&forget_me[0]), "{context}");

    let dry = call_ok(
        &alpha,
        "memory_forget",
        json!({ "tags": ["billing-cron"], "dry_run": true }),
    )
    .await;
    assert_eq!(
        (dry["matched"].clone(), dry["forgotten"].clone()),
        (json!(1), json!(0)),
        "{dry}"
    );
    assert_eq!(dry["ids"], json!([forget_me[0]]));
    let still = call_ok(&alpha, "memory_search", query.clone()).await;
    assert!(
        contents(&still).contains(&fact.to_owned()),
        "a dry run forgets nothing"
    );

    let forgot = call_ok(&alpha, "memory_forget", json!({ "tags": ["billing-cron"] })).await;
    assert_eq!(forgot["forgotten"], 1, "{forgot}");
    let after = call_ok(&alpha, "memory_search", query.clone()).await;
    assert!(!contents(&after).contains(&fact.to_owned()), "{after}");
    assert!(contents(&after).contains(&kept.to_owned()), "{after}");
    let context = call_ok(&alpha, "context_assemble", query.clone()).await;
    assert!(!source_ids(&context).contains(&forget_me[0]), "{context}");
    assert!(
        !context.to_string().contains("02:00 UTC"),
        "no summary or excerpt keeps the forgotten text: {context}"
    );
    let error = call_err(&alpha, "memory_get", json!({ "id": forget_me[0] })).await;
    assert!(
        error.contains("not found") || error.contains("no memory"),
        "{error}"
    );

    // The other tenant's copy is untouched.
    let theirs = call_ok(&beta, "memory_search", query).await;
    assert_eq!(contents(&theirs), [fact], "{theirs}");
    let error = call_err(&alpha, "memory_forget", json!({})).await;
    assert!(
        error.contains("nothing selected"),
        "an empty selection is refused: {error}"
    );
}

fn common_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}
