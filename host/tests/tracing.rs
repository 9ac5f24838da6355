//! Guest output reaches `tracing`, attributed to the extension, inside the callback's span.
//!
//! In its own test binary: a thread-local subscriber races with callsite registration by tests
//! running in parallel threads.

mod common;

use aeterna_host::{ExtensionHost, Outcome};
use common::{ExtDir, ctx, load_all, test_config};

/// A `MakeWriter` collecting formatted log lines in memory.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[tokio::test]
async fn guest_output_goes_to_tracing_attributed_to_the_extension_within_the_callback_span() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::INFO)
        .with_current_span(true)
        .with_writer(captured.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let dir = ExtDir::new();
    dir.hostile("hostile", "stdout-flood", "");
    let host = ExtensionHost::new(test_config()).unwrap();
    load_all(&host, &dir).await;
    let run = host.run_plain_text(&ctx(), "in".into()).await.unwrap();
    assert_eq!(run.report.rows[0].outcome, Outcome::Ok);

    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON log line"))
        .collect();
    let guest_lines: Vec<&serde_json::Value> = events
        .iter()
        .filter(|event| {
            event["target"] == "aeterna_host::guest" && event["fields"]["stream"].is_string()
        })
        .collect();
    // 64 KiB of 1 KiB lines (1023 bytes + newline), alternating stdout and stderr.
    assert_eq!(guest_lines.len(), 64, "{} guest lines", guest_lines.len());
    for event in &guest_lines {
        assert_eq!(event["fields"]["extension"], "hostile");
        assert_eq!(event["span"]["name"], "extension_callback");
        assert_eq!(event["span"]["extension"], "hostile");
        assert_eq!(event["span"]["tenant"], "tenant-a");
        assert_eq!(event["span"]["session"], "session-1");
        assert_eq!(event["span"]["hook"], "plain-text");
    }
    assert!(
        guest_lines
            .iter()
            .any(|event| event["fields"]["stream"] == "stderr")
    );
    assert!(
        events
            .iter()
            .any(|event| event["fields"]["dropped_bytes"] == 2 * 1024 * 1024 - 64 * 1024),
        "the dropped byte count is logged"
    );
}

/// The JSON events a subscriber captured while `work` ran on this thread.
async fn captured_events(work: impl std::future::Future<Output = ()>) -> Vec<serde_json::Value> {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_max_level(tracing::Level::INFO)
        .with_writer(captured.clone())
        .finish();
    {
        let _guard = tracing::subscriber::set_default(subscriber);
        work.await;
    }
    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    text.lines()
        .map(|line| serde_json::from_str(line).expect("JSON log line"))
        .collect()
}

#[tokio::test]
async fn a_million_empty_log_calls_reach_the_log_as_the_record_cap_and_one_summary() {
    let dir = ExtDir::new();
    dir.hostile("hostile", "log-empty", "");
    // What is measured is the log, not the speed: a debug build on a busy machine needs more
    // than the usual 2 s for a million host calls, and a timeout would hide the log's answer.
    let mut config = test_config();
    config.limits.timeout_ms = 30_000;
    let host = ExtensionHost::new(config).unwrap();
    load_all(&host, &dir).await;
    let events = captured_events(async {
        let run = host.run_plain_text(&ctx(), "in".into()).await.unwrap();
        assert_eq!(run.report.rows[0].outcome, Outcome::Ok);
    })
    .await;
    let guest: Vec<_> = events
        .iter()
        .filter(|event| event["target"] == "aeterna_host::guest")
        .collect();
    assert_eq!(
        guest.len(),
        1024 + 1,
        "the record cap, then one summary line"
    );
    let summary = guest.last().unwrap();
    assert_eq!(summary["fields"]["dropped_records"], 1_000_000 - 1024);
    assert_eq!(summary["fields"]["dropped_bytes"], 0);
}

#[tokio::test]
async fn compilation_reports_its_progress_in_the_log() {
    let dir = ExtDir::new();
    let wasm = dir.add("p", "probe", "");
    let mut config = test_config();
    config.cache_dir = None;
    let host = ExtensionHost::new(config).unwrap();
    let events = captured_events(async {
        host.load_file(&wasm).await.unwrap();
    })
    .await;
    let compile: Vec<&str> = events
        .iter()
        .filter(|event| event["target"] == "aeterna_host::compile")
        .filter_map(|event| event["fields"]["message"].as_str())
        .collect();
    // First and last; on a slow machine, "still compiling" every 5 s in between.
    assert!(compile.len() >= 2, "{compile:?}");
    assert!(
        compile[0].starts_with("compiling the component"),
        "{compile:?}"
    );
    assert!(
        compile[1..compile.len() - 1]
            .iter()
            .all(|m| *m == "still compiling")
    );
    assert_eq!(compile[compile.len() - 1], "compiled the component");
}
