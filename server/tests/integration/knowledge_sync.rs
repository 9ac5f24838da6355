//! `[knowledge]` repositories in a running server: what lands on the branch (committed by a
//! person with the real `git` CLI) is found by `memory_search` over MCP, edits replace the old
//! text and a deleted file takes its memory with it; `knowledge_propose` writes a review branch
//! that, once merged, is what `knowledge_search` and `knowledge_get` find.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use aeterna_knowledge::{CaptureRules, RepositoryConfig};
use aeterna_memory::Layer;
use aeterna_testkit::git;
use rmcp::RoleClient;
use rmcp::service::Peer;
use serde_json::json;

use super::common::{TestServer, call_ok};

/// Team `core` of the default tenant, kept at `path`.
fn team_core(path: PathBuf, remote: Option<String>, capture: CaptureRules) -> RepositoryConfig {
    RepositoryConfig {
        path,
        branch: "main".into(),
        tenant: "default".into(),
        layer: Layer::Team,
        scope: Some("core".into()),
        remote,
        capture,
    }
}

/// A server polling team `core`'s repository every 200 ms.
async fn polling_server(path: PathBuf, remote: Option<String>) -> TestServer {
    TestServer::start(move |config| {
        config.knowledge.poll_interval_ms = 200;
        config.knowledge.repositories = vec![team_core(path, remote, CaptureRules::default())];
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

/// The error a session hit and the fix it recorded, promoted from project `api` into team
/// `core` once it worked three times.
const PORT_ERROR: &str = "error[E0425]: cannot find value `port` in this scope\n \
                          --> src/main.rs:4:20\n  |\n4 |     let addr = parse(port);\n  \
                          |                    ^^^^ not found in this scope\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_promotion_is_a_lesson_proposal_and_once_merged_it_is_knowledge() {
    let dir = tempfile::tempdir().unwrap();
    let checkout = dir.path().join("core");
    let path = checkout.clone();
    let server = TestServer::start(move |config| {
        config.knowledge.poll_interval_ms = 200;
        let lessons = CaptureRules {
            lessons: true,
            ..CaptureRules::default()
        };
        config.knowledge.repositories = vec![team_core(path, None, lessons)];
        config.hindsight.promotion.require_approval = [Layer::Team].into();
    })
    .await;
    let client = server.mcp(None).await;
    let who = json!({ "project_id": "api", "team_id": "core", "user_id": "ana" });
    let with = |extra: serde_json::Value| {
        let mut args = who.clone();
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        args
    };
    let captured = call_ok(
        &client,
        "hindsight_capture",
        with(json!({ "error_text": PORT_ERROR })),
    )
    .await;
    let resolved = call_ok(
        &client,
        "hindsight_resolve",
        with(json!({ "signature_id": captured["signatures"][0]["signature_id"],
                     "description": "Declare `port` before parsing the address. Read it from PORT." })),
    )
    .await;
    let mut outcome = serde_json::Value::Null;
    for _ in 0..3 {
        outcome = call_ok(
            &client,
            "hindsight_feedback",
            with(json!({ "resolution_id": resolved["resolution"]["id"], "success": true })),
        )
        .await;
    }
    assert_eq!(outcome["promotion"]["status"], "pending", "{outcome}");
    let proposals = || {
        git(&checkout, &["branch", "--format=%(refname:short)"])
            .lines()
            .filter(|b| b.starts_with("aeterna/proposals/"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert!(
        proposals().is_empty(),
        "nothing is proposed before approval"
    );

    call_ok(
        &client,
        "hindsight_approve",
        with(
            json!({ "promotion_id": outcome["promotion"]["promotion"]["id"], "approve": true,
                     "user_id": "lead" }),
        ),
    )
    .await;
    let branches = proposals();
    assert_eq!(branches.len(), 1, "{branches:?}");
    let branch = &branches[0];
    let log = git(&checkout, &["log", "-1", "--format=%an|%s|%b", branch]);
    assert!(
        log.starts_with("Aeterna Hindsight|propose lesson: E0425:"),
        "{log}"
    );
    assert!(log.contains("approved by lead"), "{log}");
    let id = branch.trim_start_matches("aeterna/proposals/");
    let file = git(&checkout, &["show", &format!("{branch}:lessons/{id}.md")]);
    assert!(file.contains("Declare `port` before parsing"), "{file}");
    assert!(file.contains("kind: resolution"), "{file}");

    // A reviewer merges it: it is knowledge of team core.
    git(&checkout, &["merge", "-q", "--ff-only", branch]);
    let started = Instant::now();
    let hits = loop {
        let found = call_ok(
            &client,
            "knowledge_search",
            json!({ "query": "declare port before parsing the address", "team_id": "core",
                    "type": "lesson" }),
        )
        .await;
        if !found["hits"].as_array().unwrap().is_empty()
            || started.elapsed() > Duration::from_secs(15)
        {
            break found["hits"].clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(hits[0]["id"], id, "{hits}");

    // The Context Architect brings it into an agent's context among the project's memories
    // (its own search; the budget share it is kept is tested in `aeterna-context`'s fitter).
    for i in 0..30 {
        call_ok(
            &client,
            "memory_add",
            with(
                json!({ "content": format!("Attempt {i}: cannot find value port when \
                          parsing the address on runner r{i}; declared it before parsing and \
                          the build of service s{i} went on to step {i}"),
                         "layer": "project" }),
            ),
        )
        .await;
    }
    let context = call_ok(
        &client,
        "context_assemble",
        with(
            json!({ "query": "cannot find value port: declare it before parsing the address",
                     "token_budget": 300 }),
        ),
    )
    .await;
    let knowledge = call_ok(
        &client,
        "memory_search",
        with(json!({ "query": "declare port before parsing", "kinds": ["knowledge"] })),
    )
    .await;
    let lesson_memory = &knowledge["hits"][0]["record"]["id"];
    let sources = context["sources"].as_array().unwrap();
    assert!(
        sources.iter().any(|s| &s["id"] == lesson_memory),
        "the lesson ({lesson_memory}) is in the context: {context}"
    );
}
