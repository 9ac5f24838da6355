//! Durability: data and vectors survive a graceful restart and a crash.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use aeterna_memory::{Layer, MemoryConfig, SearchRequest};

use super::*;

fn search(text: &str) -> SearchRequest {
    SearchRequest {
        query: text.into(),
        layers: None,
        tags: vec![],
        kinds: vec![],
        limit: 3,
        min_score: 0.0,
        explain: false,
        as_of: None,
    }
}

#[tokio::test]
async fn records_and_vectors_survive_a_graceful_restart() {
    let dir = tempfile::tempdir().unwrap();
    let who = alice();
    let id = {
        let service = open(dir.path(), MemoryConfig::default()).await;
        service
            .add(
                &who,
                memory(
                    Layer::Project,
                    "Rotating the signing keys happens quarterly.",
                ),
            )
            .await
            .unwrap();
        let id = service
            .add(
                &who,
                memory(
                    Layer::Team,
                    "Configuring the reverse proxy timeouts avoids gateway errors.",
                ),
            )
            .await
            .unwrap()
            .record
            .id;
        service.flush().await.unwrap();
        id
    };
    let service = open(dir.path(), MemoryConfig::default()).await;
    assert_eq!(
        service.stats().await.unwrap(),
        aeterna_memory::StoreStats {
            records: 2,
            vectors: 2,
            vector_repairs: Default::default(),
        }
    );
    assert_eq!(service.get(&who, id).await.unwrap().layer, Layer::Team);
    // No word of this query occurs in the memory: only its vector can find it.
    let hits = service
        .search(&who, search("configure proxies timeout"))
        .await
        .unwrap();
    assert_eq!(hits[0].record.id, id);
}

#[tokio::test]
async fn a_second_process_cannot_open_the_same_data_dir() {
    if crate::backend() != crate::Backend::Sqlite {
        eprintln!("SKIPPED: the data-dir lock is the embedded profile's; PostgreSQL is shared");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let _first = open(dir.path(), MemoryConfig::default()).await;
    let error = aeterna_memory::MemoryService::open_embedded(
        dir.path(),
        MemoryConfig::default(),
        std::sync::Arc::new(aeterna_memory::embed::HashingEmbedder::default()),
    )
    .await
    .err()
    .expect("the data dir is locked");
    assert!(
        error.to_string().contains("another Aeterna process"),
        "{error}"
    );
}

const CRASH_DIR: &str = "AETERNA_TEST_CRASH_DIR";

/// Run by `acknowledged_writes_survive_a_killed_process` in a child process: adds memories
/// until killed, printing the id of each as soon as `add` returns.
#[tokio::test]
#[ignore = "helper process of acknowledged_writes_survive_a_killed_process"]
async fn crash_child_writes_until_killed() {
    let Ok(dir) = std::env::var(CRASH_DIR) else {
        return;
    };
    let service = open(std::path::Path::new(&dir), MemoryConfig::default()).await;
    let who = alice();
    for i in 0.. {
        let text = format!("crash-test memory number {i} about configuring replicas");
        let added = service
            .add(&who, memory(Layer::Project, &text))
            .await
            .unwrap();
        println!("ACK {} {i}", added.record.id);
    }
}

/// A process killed (SIGKILL) in the middle of writing loses no acknowledged memory or vector.
#[tokio::test]
async fn acknowledged_writes_survive_a_killed_process() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "restart::crash_child_writes_until_killed",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CRASH_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut acknowledged = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("ACK ") {
            let (id, i) = rest.split_once(' ').unwrap();
            acknowledged.push((
                id.parse::<uuid::Uuid>().unwrap(),
                i.parse::<usize>().unwrap(),
            ));
            if acknowledged.len() == 200 {
                child.kill().unwrap();
                break;
            }
        }
    }
    child.wait().unwrap();
    assert_eq!(acknowledged.len(), 200, "the child wrote");

    let service = open(dir.path(), MemoryConfig::default()).await;
    let who = alice();
    for (id, i) in &acknowledged {
        let record = service.get(&who, *id).await.unwrap();
        assert!(record.content.unwrap().contains(&format!("number {i} ")));
    }
    let stats = service.stats().await.unwrap();
    assert!(
        stats.records >= 200 && stats.vectors == stats.records,
        "{stats:?}"
    );
    // Every vector is searchable: restrict to exact content to check one by one.
    let (last, i) = acknowledged.last().unwrap();
    let hits = service
        .search(&who, search(&format!("crash-test memory number {i}")))
        .await
        .unwrap();
    assert_eq!(hits[0].record.id, *last);
}
