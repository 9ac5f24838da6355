//! `aeterna backup` through the real binary, against the data dir of a server that is running
//! and writing: the copy is a consistent database holding what was written before it.

use std::process::Command;

use serde_json::json;
use sqlx::ConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;

use crate::common::{TestServer, call_ok};

fn backup(data_dir: &std::path::Path, to: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_aeterna"))
        .args(["backup", "--data-dir"])
        .arg(data_dir)
        .arg("--to")
        .arg(to)
        .env("AETERNA_LOG", "error")
        .output()
        .expect("the aeterna binary runs")
}

#[tokio::test]
async fn a_running_servers_database_is_copied_whole_and_a_copy_is_never_overwritten() {
    let server = TestServer::start(|_| {}).await;
    let client = server.mcp(None).await;
    for n in 0..5 {
        call_ok(
            &client,
            "memory_add",
            json!({"content": format!("backup note {n}"), "layer": "project", "project_id": "p"}),
        )
        .await;
    }
    let copies = tempfile::tempdir().unwrap();
    let to = copies.path().join("aeterna-copy.db");
    let output = backup(server.dir.path(), &to);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("copied") && stdout.contains("bytes"),
        "{stdout}"
    );

    let mut copy = SqliteConnectOptions::new()
        .filename(&to)
        .read_only(true)
        .connect()
        .await
        .expect("the copy is a database");
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM memories WHERE content LIKE 'backup note %'")
            .fetch_one(&mut copy)
            .await
            .unwrap();
    assert_eq!(stored, 5);
    // The server keeps serving while and after it is copied.
    call_ok(
        &client,
        "memory_add",
        json!({"content": "after the backup", "layer": "project", "project_id": "p"}),
    )
    .await;

    let again = backup(server.dir.path(), &to);
    assert!(!again.status.success());
    let error = String::from_utf8_lossy(&again.stderr);
    assert!(error.contains("already exists"), "{error}");

    let empty = tempfile::tempdir().unwrap();
    let missing = backup(empty.path(), &copies.path().join("other.db"));
    assert!(!missing.status.success());
    let error = String::from_utf8_lossy(&missing.stderr);
    assert!(error.contains("there is no database at"), "{error}");
}
