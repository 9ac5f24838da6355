//! `[knowledge]` repositories in a running server: what lands on the branch (committed by a
//! person with the real `git` CLI) is found by `memory_search` over MCP, edits replace the old
//! text and a deleted file takes its memory with it; `knowledge_propose` writes a review branch
//! that, once merged, is what `knowledge_search` and `knowledge_get` find.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use aeterna_knowledge::RepositoryConfig;
use aeterna_memory::Layer;
use aeterna_testkit::git;
use rmcp::RoleClient;
use rmcp::service::Peer;
use serde_json::json;

use super::common::{TestServer, call_ok};

/// A server polling one repository (team `core` of the default tenant) every 200 ms.
async fn polling_server(path: PathBuf, remote: Option<String>) -> TestServer {
    TestServer::start(move |config| {
        config.knowledge.poll_interval_ms = 200;
        config.knowledge.repositories = vec![RepositoryConfig {
            path,
            branch: "main".into(),
            tenant: "default".into(),
            layer: Layer::Team,
            scope: Some("core".into()),
            remote,
        }];
    })
    .await
}

fn lesson(body: &str) -> String {
    format!(
        "---\nid: flaky-port\ntype: lesson\ntitle: Tests and ports\nlayer: team\nscope: core\n\
         ---\n{body}\n"
    )
}

/// The contents of the knowledge hits for `query`, once `done` accepts them (or the deadline
/// passes), and how long that took.
async fn search_until(
    client: &Peer<RoleClient>,
    query: &str,
    done: impl Fn(&[String]) -> bool,
) -> (Vec<String>, Duration) {
    let started = Instant::now();
    loop {
        let found = call_ok(
            client,
            "memory_search",
            json!({ "query": query, "team_id": "core", "kinds": ["knowledge"] }),
        )
        .await;
        let contents: Vec<String> = found["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|hit| {
                hit["record"]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        if done(&contents) || started.elapsed() > Duration::from_secs(15) {
            return (contents, started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_lands_on_the_branch_is_searchable_and_what_leaves_it_is_not() {
    let knowledge = tempfile::tempdir().unwrap();
    let checkout = knowledge.path().join("core");
    let path = checkout.clone();
    let server = polling_server(path, None).await;
    let client = server.mcp(None).await;
    assert!(checkout.join(".git").is_dir(), "the repository was created");

    std::fs::create_dir_all(checkout.join("lessons")).unwrap();
    let file = checkout.join("lessons/flaky-port.md");
    std::fs::write(
        &file,
        lesson("Tests bind the fixed port 8080 and collide on CI."),
    )
    .unwrap();
    git(&checkout, &["add", "-A"]);
    git(&checkout, &["commit", "-qm", "lesson: fixed ports collide"]);
    let (found, waited) = search_until(&client, "fixed port collide", |found| {
        found.iter().any(|text| text.contains("8080"))
    })
    .await;
    assert!(found.iter().any(|text| text.contains("8080")), "{found:?}");
    eprintln!("a new commit was searchable after {waited:?}");

    std::fs::write(
        &file,
        lesson("Tests bind port zero and read the ephemeral port back."),
    )
    .unwrap();
    git(&checkout, &["commit", "-qam", "lesson: port zero instead"]);
    let (found, waited) = search_until(&client, "ephemeral port", |found| {
        found.iter().any(|text| text.contains("ephemeral"))
    })
    .await;
    assert!(
        found.iter().any(|text| text.contains("ephemeral")),
        "{found:?}"
    );
    assert!(found.iter().all(|text| !text.contains("8080")), "{found:?}");
    eprintln!("an edit was searchable after {waited:?}");

    git(&checkout, &["rm", "-q", "lessons/flaky-port.md"]);
    git(&checkout, &["commit", "-qm", "retire the lesson"]);
    let (found, _) = search_until(&client, "ephemeral port", |found| found.is_empty()).await;
    assert!(found.is_empty(), "{found:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_is_a_pushed_branch_until_merged_and_then_it_is_knowledge() {
    let dir = tempfile::tempdir().unwrap();
    let checkout = dir.path().join("core");
    let remote = dir.path().join("review.git");
    git(
        dir.path(),
        &["init", "-q", "--bare", "-b", "main", "review.git"],
    );
    let (path, remote_url) = (checkout.clone(), remote.to_str().unwrap().to_owned());
    let server = polling_server(path, Some(remote_url)).await;
    let client = server.mcp(None).await;

    let receipt = call_ok(
        &client,
        "knowledge_propose",
        json!({ "type": "pattern", "title": "Retry idempotent requests once",
                "body": "Retry GET and PUT once after a connection reset; never POST.",
                "why": "Three incidents this month were single resets.",
                "team_id": "core", "user_id": "ana" }),
    )
    .await;
    assert_eq!(
        receipt["branch"],
        "aeterna/proposals/retry-idempotent-requests-once"
    );
    assert_eq!(receipt["pushed_to"], remote.to_str().unwrap());
    let on_remote = git(
        &remote,
        &[
            "log",
            "--format=%an %s",
            "aeterna/proposals/retry-idempotent-requests-once",
        ],
    );
    assert_eq!(
        on_remote.trim(),
        "ana propose pattern: Retry idempotent requests once"
    );
    // Not knowledge until reviewed: the protected branch has nothing.
    let missing = super::common::call_err(
        &client,
        "knowledge_get",
        json!({ "id": "retry-idempotent-requests-once", "team_id": "core" }),
    )
    .await;
    assert!(missing.contains("no knowledge item"), "{missing}");

    // A reviewer merges it.
    git(
        &checkout,
        &[
            "merge",
            "-q",
            "--ff-only",
            "aeterna/proposals/retry-idempotent-requests-once",
        ],
    );
    let started = Instant::now();
    let hits = loop {
        let found = call_ok(
            &client,
            "knowledge_search",
            json!({ "query": "retry after a connection reset", "team_id": "core" }),
        )
        .await;
        if !found["hits"].as_array().unwrap().is_empty()
            || started.elapsed() > Duration::from_secs(15)
        {
            break found["hits"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(hits[0]["id"], "retry-idempotent-requests-once", "{hits}");
    assert_eq!(hits[0]["type"], "pattern");
    assert_eq!(
        hits[0]["path"],
        "patterns/retry-idempotent-requests-once.md"
    );

    let document = call_ok(
        &client,
        "knowledge_get",
        json!({ "id": "retry-idempotent-requests-once", "team_id": "core" }),
    )
    .await;
    assert!(
        document["text"].as_str().unwrap().contains("never POST"),
        "{document}"
    );
    assert_eq!(document["history"][0]["author"], "ana");
    // Another team's call does not see core's repository.
    let elsewhere = super::common::call_err(
        &client,
        "knowledge_get",
        json!({ "id": "retry-idempotent-requests-once", "team_id": "web" }),
    )
    .await;
    assert!(elsewhere.contains("no knowledge item"), "{elsewhere}");
    let no_repository = super::common::call_err(
        &client,
        "knowledge_propose",
        json!({ "type": "note", "title": "t", "body": "b", "why": "w", "team_id": "web" }),
    )
    .await;
    assert!(
        no_repository.contains("no knowledge repository holds team `web`"),
        "{no_repository}"
    );
}
