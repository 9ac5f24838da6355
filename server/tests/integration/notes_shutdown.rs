//! SIGTERM while trajectory events are still queued: the real `aeterna serve` binary drains
//! its capture queue to storage before exiting, and after a restart every acknowledged event
//! is there (note_distill covers exactly the acknowledged events).

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{call_ok, mcp_client};
use serde_json::{Value, json};

/// `aeterna serve` on an ephemeral port over `data_dir`, with a capture queue that would hold
/// events for a minute: only the shutdown drain can store them in time.
fn spawn(data_dir: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_aeterna"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .env_remove("AETERNA_CONFIG")
        .env("AETERNA_NOTES__QUEUE__BATCH_SIZE", "1000")
        .env("AETERNA_NOTES__QUEUE__MAX_BATCH", "1000")
        .env("AETERNA_NOTES__QUEUE__FLUSH_INTERVAL_MS", "60000")
        .env("AETERNA_NOTES__DISTILL__THRESHOLD", "0")
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn aeterna serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the listen line");
    let base = line
        .trim()
        .strip_prefix("aeterna listening on ")
        .and_then(|url| url.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
        .to_owned();
    (child, base)
}

fn terminate(child: &mut Child) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -TERM failed");
    for _ in 0..300 {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().ok();
    panic!("aeterna did not exit within 15 s of SIGTERM");
}

fn event(n: usize) -> Value {
    json!({
        "tool_name": "bash",
        "description": format!("step {n}"),
        "input": { "command": format!("cargo test case_{n}") },
        "output": if n.is_multiple_of(3) { "test result: FAILED" } else { "test result: ok" },
        "success": !n.is_multiple_of(3),
        "duration_ms": 12,
    })
}

async fn metric(base: &str, name: &str) -> f64 {
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("metrics body");
    text.lines()
        .find_map(|line| {
            line.strip_prefix(name)
                .and_then(|rest| rest.trim().parse().ok())
        })
        .unwrap_or_else(|| panic!("{name} not in /metrics:\n{text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_the_capture_queue_and_nothing_acknowledged_is_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut child, base) = spawn(dir.path());
    let client = mcp_client(&format!("{base}/mcp"), None)
        .await
        .expect("connect");
    let mut acknowledged = 0;
    for round in 0..3 {
        let events: Vec<Value> = (0..100).map(|n| event(round * 100 + n)).collect();
        let receipt = call_ok(
            &client,
            "trajectory_capture",
            json!({ "events": events, "session_id": "s-1", "project_id": "p1" }),
        )
        .await;
        acknowledged += receipt["accepted"].as_u64().expect("accepted");
    }
    assert_eq!(acknowledged, 300);
    // Every acknowledged event is still in memory: none has reached storage yet.
    assert_eq!(metric(&base, "aeterna_notes_events_pending").await, 300.0);
    assert_eq!(
        metric(&base, "aeterna_notes_events_written_total").await,
        0.0
    );
    drop(client);

    let status = terminate(&mut child);
    assert!(status.success(), "graceful exit, got {status}");

    let (mut child, base) = spawn(dir.path());
    let client = mcp_client(&format!("{base}/mcp"), None)
        .await
        .expect("connect");
    let outcome = call_ok(
        &client,
        "note_distill",
        json!({ "session_id": "s-1", "project_id": "p1" }),
    )
    .await;
    assert_eq!(outcome["distilled_events"], 300, "{outcome}");
    let covered: u64 = outcome["session_notes"]
        .as_array()
        .expect("session_notes")
        .iter()
        .map(|note| note["events"].as_u64().expect("events"))
        .sum();
    assert_eq!(covered, 300);
    drop(client);
    assert!(terminate(&mut child).success());
}
