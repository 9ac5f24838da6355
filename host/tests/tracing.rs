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
