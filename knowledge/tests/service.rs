//! The repository synced into memory, on a real git repository edited with the `git` CLI and
//! the real memory service (SQLite, or PostgreSQL with `AETERNA_TEST_BACKEND=postgres`).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use aeterna_knowledge::sync::{self, KIND, SyncReport, SyncTarget};
use aeterna_knowledge::{Author, Change, KnowledgeRepo, Limits, Status};
use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{
    Identity, Layer, ListRequest, MemoryConfig, MemoryPatch, MemoryService, SearchRequest,
};
use aeterna_testkit::git;
use common::lesson;
use uuid::Uuid;

async fn memory(dir: &Path) -> MemoryService {
    aeterna_testkit::profile::open_memory(
        dir,
        MemoryConfig::default(),
        Arc::new(HashingEmbedder::default()),
    )
    .await
    .expect("memory opens")
}

fn core() -> SyncTarget {
    SyncTarget {
        tenant_id: "acme".into(),
        layer: Layer::Team,
        scope: Some("core".into()),
    }
}

fn member() -> Identity {
    Identity {
        tenant_id: "acme".into(),
        team_id: Some("core".into()),
        ..Identity::default()
    }
}

async fn sync_now(memory: &MemoryService, repo: &KnowledgeRepo) -> SyncReport {
    let snapshot = repo.snapshot().unwrap();
    sync::sync_into_memory(memory, &core(), &snapshot, 100)
        .await
        .unwrap()
}

/// Added, updated, retired, unchanged.
fn counts(report: &SyncReport) -> (usize, usize, usize, usize) {
    (
        report.added,
        report.updated,
        report.retired,
        report.unchanged,
    )
}

async fn search(memory: &MemoryService, query: &str) -> Vec<String> {
    memory
        .search(
            &member(),
            SearchRequest {
                query: query.into(),
                kinds: vec![KIND.into()],
                limit: 10,
                ..SearchRequest::default()
            },
        )
        .await
        .expect("search")
        .into_iter()
        .map(|hit| hit.record.content.unwrap_or_default())
        .collect()
}

/// Every knowledge memory of the scope, by item id: its memory id and content.
async fn in_memory(memory: &MemoryService) -> BTreeMap<String, (Uuid, String)> {
    let mut found = BTreeMap::new();
    let mut cursor = None;
    loop {
        let request = ListRequest {
            layers: Some(vec![Layer::Team]),
            tags: Vec::new(),
            kinds: vec![KIND.into()],
            cursor,
            limit: 100,
            metadata_only: false,
        };
        let page = memory.list(&member(), request).await.unwrap();
        for record in page.items {
            let id = record.metadata["knowledge"]["id"]
                .as_str()
                .unwrap()
                .to_owned();
            found.insert(id, (record.id, record.content.unwrap_or_default()));
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return found,
        }
    }
}

#[tokio::test]
async fn an_edit_committed_with_git_is_what_search_finds_and_a_deleted_file_retires_its_memory() {
    let dir = tempfile::tempdir().unwrap();
    let memory = memory(&dir.path().join("data")).await;
    let checkout = dir.path().join("knowledge");
    let repo = KnowledgeRepo::open_or_init(&checkout, "main", Limits::default()).unwrap();
    let change = Change {
        put: vec![
            lesson(
                "flaky-port",
                "Tests bind a fixed port 8080 and collide on CI.\n",
            ),
            lesson(
                "offline",
                "Build with SQLX_OFFLINE on runners without a database.\n",
            ),
        ],
        remove: Vec::new(),
    };
    repo.commit("main", &change, &Author::aeterna(), "learn: two lessons")
        .unwrap();
    let report = sync_now(&memory, &repo).await;
    assert_eq!(
        (report.added, report.updated, report.retired),
        (2, 0, 0),
        "{report:?}"
    );
    assert!(search(&memory, "fixed port collide").await[0].contains("port 8080"));

    // Statistics another agent keeps on the memory survive an edit of the item.
    let (record_id, _) = in_memory(&memory).await["flaky-port"];
    let mut metadata = memory.get(&member(), record_id).await.unwrap().metadata;
    metadata["success_rate"] = serde_json::json!(0.75);
    memory
        .update(
            &member(),
            record_id,
            MemoryPatch {
                metadata: Some(metadata),
                ..MemoryPatch::default()
            },
        )
        .await
        .unwrap();

    // A person edits one file and deletes the other, with git.
    let path = checkout.join("lessons/flaky-port.md");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "Tests bind a fixed port 8080 and collide on CI.",
        "Tests bind port zero and read the ephemeral port back.",
    );
    std::fs::write(&path, text).unwrap();
    git(&checkout, &["rm", "-q", "lessons/offline.md"]);
    git(
        &checkout,
        &[
            "commit",
            "-qam",
            "ana: port zero, and the offline lesson is obsolete",
        ],
    );

    let report = sync_now(&memory, &repo).await;
    assert_eq!(counts(&report), (0, 1, 1, 0), "{report:?}");
    let found = search(&memory, "ephemeral port zero").await;
    assert!(
        found[0].contains("read the ephemeral port back"),
        "{found:?}"
    );
    assert!(
        search(&memory, "port 8080 collide")
            .await
            .iter()
            .all(|text| !text.contains("8080"))
    );
    let retired = search(&memory, "SQLX_OFFLINE runners").await;
    assert!(
        retired.iter().all(|text| !text.contains("SQLX_OFFLINE")),
        "{retired:?}"
    );
    let record = memory
        .get(&member(), record_id)
        .await
        .expect("updated in place");
    assert_eq!(
        record.metadata["success_rate"], 0.75,
        "memory keeps its statistics"
    );

    // Twice is a no-op.
    let report = sync_now(&memory, &repo).await;
    assert_eq!(counts(&report), (0, 0, 0, 1));
}

#[tokio::test]
async fn items_out_of_scope_or_not_in_force_stay_out_of_memory_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let memory = memory(&dir.path().join("data")).await;
    let repo =
        KnowledgeRepo::open_or_init(&dir.path().join("knowledge"), "main", Limits::default())
            .unwrap();
    let mut elsewhere = lesson("web-only", "For the web team.\n");
    elsewhere.front.scope = Some("web".into());
    let mut superseded = lesson("old", "The old way.\n");
    superseded.front.status = Status::Superseded;
    let change = Change {
        put: vec![elsewhere, superseded, lesson("kept", "Kept.\n")],
        remove: Vec::new(),
    };
    repo.commit("main", &change, &Author::aeterna(), "three items")
        .unwrap();
    let report = sync_now(&memory, &repo).await;
    assert_eq!(report.added, 1);
    assert_eq!(report.problems.len(), 1, "{report:?}");
    assert!(
        report.problems[0]
            .message
            .contains("it is for team `web` but this repository holds team `core`'s"),
        "{report:?}"
    );
    assert_eq!(
        in_memory(&memory).await.keys().collect::<Vec<_>>(),
        ["kept"]
    );
}

#[tokio::test]
async fn after_a_large_change_memory_and_the_repository_agree() {
    let dir = tempfile::tempdir().unwrap();
    let memory = memory(&dir.path().join("data")).await;
    let repo =
        KnowledgeRepo::open_or_init(&dir.path().join("knowledge"), "main", Limits::default())
            .unwrap();
    let first = Change {
        put: (0..300)
            .map(|n| {
                lesson(
                    &format!("l{n:03}"),
                    &format!("Lesson number {n} says {}.\n", n * 7),
                )
            })
            .collect(),
        remove: Vec::new(),
    };
    repo.commit("main", &first, &Author::aeterna(), "seed")
        .unwrap();
    sync::sync_into_memory(&memory, &core(), &repo.snapshot().unwrap(), 1000)
        .await
        .unwrap();
    let second = Change {
        put: (0..300)
            .step_by(3)
            .map(|n| lesson(&format!("l{n:03}"), &format!("Revised lesson {n}.\n")))
            .collect(),
        remove: (1..300).step_by(3).map(|n| format!("l{n:03}")).collect(),
    };
    repo.commit("main", &second, &Author::aeterna(), "revise and retire")
        .unwrap();
    let snapshot = repo.snapshot().unwrap();
    let report = sync::sync_into_memory(&memory, &core(), &snapshot, 1000)
        .await
        .unwrap();
    assert_eq!(
        (report.updated, report.retired, report.unchanged),
        (100, 100, 100),
        "{report:?}"
    );

    let expected: BTreeMap<String, String> = snapshot
        .entries
        .iter()
        .map(|entry| (entry.item.id().to_owned(), sync::memory_text(&entry.item)))
        .collect();
    let actual: BTreeMap<String, String> = in_memory(&memory)
        .await
        .into_iter()
        .map(|(id, (_, content))| (id, content))
        .collect();
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn an_item_memory_refuses_is_reported_and_the_rest_is_synced() {
    let dir = tempfile::tempdir().unwrap();
    let memory = memory(&dir.path().join("data")).await;
    let repo =
        KnowledgeRepo::open_or_init(&dir.path().join("knowledge"), "main", Limits::default())
            .unwrap();
    let too_long = "t".repeat(memory.config().max_tag_bytes + 1);
    let mut refused = lesson("refused", "A lesson with an unusable tag.\n");
    refused.front.tags = vec![too_long.clone()];
    let change = Change {
        put: vec![
            refused,
            lesson("kept", "Kept.\n"),
            lesson("edited", "First text.\n"),
        ],
        remove: Vec::new(),
    };
    repo.commit("main", &change, &Author::aeterna(), "three")
        .unwrap();
    let report = sync_now(&memory, &repo).await;
    assert_eq!(counts(&report), (2, 0, 0, 0), "{report:?}");
    assert_eq!(report.problems.len(), 1, "{report:?}");
    assert_eq!(report.problems[0].path, "lessons/refused.md");
    assert!(
        report.problems[0].message.contains("max_tag_bytes"),
        "{report:?}"
    );

    // An edit memory refuses leaves the memory as it was, and says why.
    let mut edited = lesson("edited", "Second text.\n");
    edited.front.tags = vec![too_long];
    repo.commit(
        "main",
        &Change {
            put: vec![edited],
            remove: Vec::new(),
        },
        &Author::aeterna(),
        "edit",
    )
    .unwrap();
    let report = sync_now(&memory, &repo).await;
    assert_eq!(report.updated, 0, "{report:?}");
    assert!(
        report
            .problems
            .iter()
            .any(|problem| problem.path == "lessons/edited.md"),
        "{report:?}"
    );
    let stored = in_memory(&memory).await;
    assert!(stored["edited"].1.contains("First text."), "{stored:?}");
    assert_eq!(stored.len(), 2);
}
