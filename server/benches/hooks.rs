//! `aeterna hook`, measured as Claude Code runs it: a new process per event, its JSON on stdin,
//! against a warm `aeterna serve` holding 10,000 memories of the project. Each sample is the
//! whole process, start to exit.
//!
//! | what | bar |
//! |---|---|
//! | `aeterna hook UserPromptSubmit` (context for the prompt) | p95 ≤ 50 ms |
//! | `aeterna hook SessionStart` (context for the repository) | p95 ≤ 50 ms |
//! | `aeterna hook PostToolUse` (a trajectory event) | — |
//!
//! Measured (2 cores): UserPromptSubmit p50 18.5 / p95 21.2 ms, SessionStart 12.4 / 14.9 ms,
//! PostToolUse 12.2 / 15.4 ms.
//!
//! Prints p50/p95/p99. `cargo bench -p aeterna-server --bench hooks`

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use futures::StreamExt;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::json;

mod support;
use support::{report, spawn_server};

const MEMORIES: usize = 10_000;
const RUNS: usize = 200;
/// Runs before the measured ones: the server finishes indexing what was just added, and its
/// caches and the page cache are warm, as in a session that is under way.
const WARMUP: usize = 50;

const TOPICS: [&str; 12] = [
    "tokenizer",
    "parser",
    "span",
    "migration",
    "cache",
    "retry",
    "webhook",
    "schema",
    "release",
    "benchmark",
    "allocator",
    "config",
];
const FACTS: [&str; 8] = [
    "must stay below the limit set in the config",
    "was rewritten after the incident in March",
    "is tested by the property suite under tests/",
    "uses the shared connection pool",
    "breaks when the input holds tabs",
    "is owned by the platform team",
    "logs at debug level only",
    "needs a migration when its fields change",
];

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut server, url) = spawn_server(&dir.path().join("server"));
    runtime.block_on(seed(&url));
    let repo = dir.path().join("bench-repo");
    std::fs::create_dir_all(repo.join(".git")).expect("repo");
    std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    let data = dir.path().join("hooks");

    let event = |n: usize, name: &str| {
        let topic = TOPICS[n % TOPICS.len()];
        let mut event = json!({"session_id": format!("bench-{}", n % 10), "cwd": repo,
                               "hook_event_name": name});
        match name {
            "UserPromptSubmit" => {
                event["prompt"] =
                    format!("why does the {topic} break when input {n} holds tabs?").into()
            }
            "SessionStart" => event["source"] = "startup".into(),
            _ => {
                event["tool_name"] = "Read".into();
                event["tool_input"] = json!({"file_path": format!("src/{topic}.rs")});
                event["tool_response"] = json!({"content": format!("pub mod {topic};")});
            }
        }
        event.to_string()
    };
    for name in ["UserPromptSubmit", "SessionStart", "PostToolUse"] {
        let mut times = Vec::with_capacity(RUNS);
        let mut answered = 0;
        for n in 0..RUNS + WARMUP {
            let started = Instant::now();
            let output = run_hook(&url, &data, name, &event(n, name));
            let elapsed = started.elapsed();
            if n >= WARMUP {
                times.push(elapsed);
                answered += usize::from(!output.is_empty());
            }
        }
        report(&format!("aeterna hook {name} (whole process)"), &mut times);
        println!("  answered with context: {answered} of {RUNS}");
    }
    let _ = server.kill();
    let _ = server.wait();
}

/// One hook process: start, event on stdin, answer read, exit.
fn run_hook(url: &str, data: &Path, event: &str, input: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_aeterna"))
        .args(["hook", event, "--server", url, "--data-dir"])
        .arg(data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn aeterna hook");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write the event");
    let output = child.wait_with_output().expect("hook exits");
    assert!(output.status.success());
    String::from_utf8(output.stdout).expect("UTF-8 answer")
}

async fn seed(url: &str) {
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
            .await
            .expect("client");
    let started = Instant::now();
    futures::stream::iter(0..MEMORIES)
        .map(|n| {
            let content = format!(
                "The {} module {} (note {n}); see {} for details.",
                TOPICS[n % TOPICS.len()],
                FACTS[(n / TOPICS.len()) % FACTS.len()],
                TOPICS[(n * 7 + 3) % TOPICS.len()],
            );
            let arguments =
                json!({"content": content, "layer": "project", "project_id": "bench-repo"});
            let client = &client;
            async move {
                let arguments = arguments.as_object().cloned().unwrap_or_default();
                let result = client
                    .call_tool(CallToolRequestParams::new("memory_add").with_arguments(arguments))
                    .await
                    .expect("memory_add");
                assert_ne!(result.is_error, Some(true), "{result:?}");
            }
        })
        .buffer_unordered(8)
        .collect::<Vec<()>>()
        .await;
    println!(
        "seeded {MEMORIES} memories in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
