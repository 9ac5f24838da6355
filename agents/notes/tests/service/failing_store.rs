//! A database that refuses writes: batches are kept and retried, the failure is visible in
//! the counters, and nothing is lost once the database recovers — nor when it is still down at
//! shutdown (the events are spilled to a file and stored at the next start).

use aeterna_memory::MemoryConfig;
use serde_json::json;
use sqlx::Connection;
use sqlx::sqlite::SqliteConnection;

use crate::{Agent, alice, count_events, event, eventually, for_whom, inspect, manual};

/// Holds SQLite's write lock from another connection, as a long migration or a stuck
/// process would.
async fn lock_writes(path: &std::path::Path) -> SqliteConnection {
    let mut conn =
        SqliteConnection::connect(&format!("sqlite://{}", path.join("aeterna.db").display()))
            .await
            .unwrap();
    sqlx::raw_sql("BEGIN EXCLUSIVE")
        .execute(&mut conn)
        .await
        .unwrap();
    conn
}

#[tokio::test]
async fn writes_are_retried_until_the_database_accepts_them() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut memory = MemoryConfig::default();
    memory.sqlite.busy_timeout_ms = 50;
    let mut config = manual();
    config.queue.retry_initial_ms = 20;
    config.queue.retry_max_ms = 100;
    config.distill.flush_timeout_ms = 300;
    let agent = Agent::open_with(dir.path(), config, memory).await;

    let mut blocker = lock_writes(dir.path()).await;
    let events = (0..20)
        .map(|n| event("bash", "", json!(n), "", true))
        .collect();
    assert_eq!(
        agent
            .notes
            .capture(for_whom(&alice(), events))
            .unwrap()
            .accepted,
        20
    );
    eventually("failed writes", || async {
        agent.notes.snapshot().capture.write_failures >= 2
    })
    .await;
    let snapshot = agent.notes.snapshot().capture;
    assert!(snapshot.store_failing);
    assert_eq!(
        (snapshot.written, snapshot.pending, snapshot.lost),
        (0, 20, 0)
    );
    assert!(
        snapshot
            .last_error
            .as_deref()
            .unwrap_or_default()
            .contains("locked"),
        "{snapshot:?}"
    );

    // note_distill says what is going on instead of hanging.
    let error = agent.notes.distill(&alice()).await.unwrap_err().to_string();
    assert!(
        error.contains("20 events still waiting") && error.contains("retried"),
        "{error}"
    );

    sqlx::raw_sql("ROLLBACK")
        .execute(&mut blocker)
        .await
        .unwrap();
    eventually("the retried batch", || async {
        agent.notes.snapshot().capture.written == 20
    })
    .await;
    assert!(!agent.notes.snapshot().capture.store_failing);
    assert_eq!(count_events(&inspect(dir.path()).await, "acme").await, 20);
    agent.close().await;
}

#[tokio::test]
async fn a_database_still_locked_at_shutdown_spills_and_the_next_start_stores_everything() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spill_file = dir.path().join("trajectory-spill.jsonl");
    let mut memory = MemoryConfig::default();
    memory.sqlite.busy_timeout_ms = 50;
    let mut config = manual();
    config.queue.retry_initial_ms = 20;
    config.queue.retry_max_ms = 100;
    config.queue.drain_timeout_ms = 300;
    config.queue.spill_file = Some(spill_file.clone());
    let agent = Agent::open_with(dir.path(), config.clone(), memory.clone()).await;

    let mut blocker = lock_writes(dir.path()).await;
    let events = (0..20)
        .map(|n| event("bash", "", json!(n), "", true))
        .collect();
    let accepted = agent.notes.capture(for_whom(&alice(), events)).unwrap();
    assert_eq!(accepted.accepted, 20);
    let report = agent.notes.shutdown().await;
    assert_eq!((report.drained, report.spilled, report.lost), (0, 20, 0));
    assert_eq!(agent.notes.snapshot().capture.spilled, 20);
    assert_eq!(
        std::fs::read_to_string(&spill_file)
            .unwrap()
            .lines()
            .count(),
        20
    );
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut blocker)
        .await
        .unwrap();
    drop(blocker);
    agent.close().await;

    let agent = Agent::open_with(dir.path(), config, memory).await;
    eventually("the spilled events stored", || async {
        agent.notes.snapshot().capture.written == 20
    })
    .await;
    assert_eq!(count_events(&inspect(dir.path()).await, "acme").await, 20);
    eventually("the spill file removed", || async {
        std::fs::read_dir(dir.path()).unwrap().all(|entry| {
            !entry
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("spill")
        })
    })
    .await;
    agent.close().await;
}
