//! `aeterna hook` against a real server: Claude Code's events as it sends them, through the
//! hooks crate's one entry point, over real HTTP. (The real Claude Code drives the real binary
//! in `tests/mcp/test_claude_code.py`.)

use std::path::Path;

use aeterna_hooks::{Event, HookConfig, Outcome};
use serde_json::{Value, json};

use crate::common::{TestServer, call_ok};

/// A rustc error as `cargo test` prints it, behind Claude Code's `Exit code` line.
const CARGO_FAILURE: &str = "Exit code 101\n   Compiling parser v0.1.0 (/work/parser-rs)\n\
error[E0308]: mismatched types\n --> src/lib.rs:4:20\n  |\n4 |     let width: u32 = \"4\";\n  \
|                ---   ^^^ expected `u32`, found `&str`\n  |                |\n  |                \
expected due to this\n\nFor more information about this error, try `rustc --explain E0308`.\n\
error: could not compile `parser` (lib test) due to 1 previous error";

/// A repository directory named `parser-rs` on branch `main`.
fn repository(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("parser-rs");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    root
}

fn hook_config(server: &str, data_dir: &Path) -> HookConfig {
    HookConfig::new(server, data_dir.to_path_buf())
}

async fn run(event: Event, input: Value, config: &HookConfig) -> Outcome {
    let mut input = input;
    input["hook_event_name"] = event.name().into();
    aeterna_hooks::run(event, input.to_string().as_bytes(), config).await
}

#[tokio::test]
async fn sessions_and_prompts_get_the_memories_that_answer_them() {
    let server = TestServer::start(|_| {}).await;
    let client = server.mcp(None).await;
    for content in [
        "The tokenizer treats a tab as four columns when it computes spans (ADR 7).",
        "Release builds are cut from the main branch every second Tuesday.",
    ] {
        call_ok(
            &client,
            "memory_add",
            json!({"content": content, "layer": "project", "project_id": "parser-rs"}),
        )
        .await;
    }
    call_ok(
        &client,
        "memory_add",
        json!({"content": "The billing service retries webhooks three times.",
               "layer": "project", "project_id": "billing"}),
    )
    .await;
    let temp = tempfile::tempdir().unwrap();
    let root = repository(temp.path());
    let config = hook_config(&server.url("/mcp"), &temp.path().join("hooks"));

    let start = run(
        Event::SessionStart,
        json!({"session_id": "s1", "cwd": root, "source": "startup"}),
        &config,
    )
    .await;
    assert!(start.warnings.is_empty(), "{:?}", start.warnings);
    let context = start.context.as_deref().expect("session context");
    assert!(context.contains("parser-rs (branch main)"), "{context}");
    assert!(context.contains("a tab as four columns"), "{context}");
    assert!(
        !context.contains("webhooks"),
        "another project's memory: {context}"
    );

    let prompt = run(
        Event::UserPromptSubmit,
        json!({"session_id": "s1", "cwd": root.join("src"),
               "prompt": "how wide is a tab when the tokenizer computes spans?"}),
        &config,
    )
    .await;
    let answer: Value = serde_json::from_str(&prompt.stdout(Event::UserPromptSubmit)).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert_eq!(
        answer["hookSpecificOutput"]["hookEventName"],
        "UserPromptSubmit"
    );
    assert!(context.contains("a tab as four columns"), "{context}");

    let unrelated = run(
        Event::UserPromptSubmit,
        json!({"session_id": "s1", "cwd": root, "prompt": "zyxxy qwop flurb"}),
        &config,
    )
    .await;
    assert_eq!(
        unrelated.stdout(Event::UserPromptSubmit),
        "",
        "nothing relevant, nothing added"
    );
}

#[tokio::test]
async fn a_failing_command_is_remembered_and_its_known_fix_handed_to_the_model() {
    let server = TestServer::start(|_| {}).await;
    let client = server.mcp(None).await;
    let temp = tempfile::tempdir().unwrap();
    let root = repository(temp.path());
    let config = hook_config(&server.url("/mcp"), &temp.path().join("hooks"));
    let failure = json!({
        "session_id": "s1", "cwd": root, "tool_name": "Bash",
        "tool_input": {"command": "cargo test", "description": "Run the tests"},
        "error": CARGO_FAILURE, "is_interrupt": false, "duration_ms": 2400,
    });

    let first = run(Event::PostToolUseFailure, failure.clone(), &config).await;
    assert!(first.warnings.is_empty(), "{:?}", first.warnings);
    assert_eq!(first.context, None, "nothing is known about it yet");
    let known = call_ok(
        &client,
        "hindsight_query",
        json!({"error_text": CARGO_FAILURE, "project_id": "parser-rs"}),
    )
    .await;
    let signature = &known["matched"][0];
    assert_eq!(signature["error_type"], "E0308", "{known}");
    call_ok(
        &client,
        "hindsight_resolve",
        json!({"signature_id": signature["signature_id"], "project_id": "parser-rs",
               "description": "Parse the literal: `let width: u32 = \"4\".parse()?;`"}),
    )
    .await;

    // Another session meets the same error.
    let mut again = failure.clone();
    again["session_id"] = "s2".into();
    let second = run(Event::PostToolUseFailure, again, &config).await;
    let context = second.context.as_deref().expect("the known fix");
    assert!(context.contains("E0308"), "{context}");
    assert!(context.contains("Parse the literal"), "{context}");
    assert!(context.contains("hindsight_feedback"), "{context}");

    // A test failure hidden behind a zero exit status (`cargo test | tail`) counts too.
    let piped = run(
        Event::PostToolUse,
        json!({"session_id": "s3", "cwd": root, "tool_name": "Bash",
               "tool_input": {"command": "cargo test 2>&1 | tail -20"},
               "tool_response": {"stdout": CARGO_FAILURE.trim_start_matches("Exit code 101\n"),
                                 "stderr": "", "interrupted": false}}),
        &config,
    )
    .await;
    assert!(
        piped
            .context
            .as_deref()
            .is_some_and(|c| c.contains("Parse the literal"))
    );

    // Every call was a trajectory event of its session; the session's end distils them.
    let end = run(
        Event::SessionEnd,
        json!({"session_id": "s1", "cwd": root, "reason": "other"}),
        &config,
    )
    .await;
    assert!(end.warnings.is_empty(), "{:?}", end.warnings);
    let distilled = call_ok(
        &client,
        "note_distill",
        json!({"session_id": "s1", "project_id": "parser-rs"}),
    )
    .await;
    assert_eq!(
        distilled["session_notes"].as_array().unwrap().len(),
        1,
        "{distilled}"
    );
}

#[tokio::test]
async fn writes_made_while_the_server_is_down_are_queued_and_delivered_once() {
    let temp = tempfile::tempdir().unwrap();
    let root = repository(temp.path());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}/mcp", closed.local_addr().unwrap());
    drop(closed);
    let data_dir = temp.path().join("hooks");
    let config = hook_config(&down, &data_dir);
    let tool_call = |n: u32| {
        json!({"session_id": "s1", "cwd": root, "tool_name": "Read",
               "tool_input": {"file_path": format!("src/file{n}.rs")},
               "tool_response": {"content": "fn main() {}"}, "duration_ms": 3})
    };

    // Context hooks answer nothing and say why on one line; writes are queued.
    let prompt = run(
        Event::UserPromptSubmit,
        json!({"session_id": "s1", "cwd": root, "prompt": "what is the plan?"}),
        &config,
    )
    .await;
    assert_eq!(prompt.stdout(Event::UserPromptSubmit), "");
    let line = prompt.stderr(Event::UserPromptSubmit).unwrap();
    assert!(
        line.contains("unreachable") && line.contains(&down),
        "{line}"
    );
    for n in 0..3 {
        let outcome = run(Event::PostToolUse, tool_call(n), &config).await;
        let line = outcome.stderr(Event::PostToolUse).unwrap();
        assert!(line.contains("trajectory_capture queued"), "{line}");
    }
    let queued = std::fs::read_dir(data_dir.join("queue"))
        .unwrap()
        .filter(|entry| {
            entry
                .as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|e| e == "json")
        })
        .count();
    assert_eq!(queued, 3);

    // The server is back: the next write sends the queue first, then itself.
    let server = TestServer::start(|_| {}).await;
    let client = server.mcp(None).await;
    let config = hook_config(&server.url("/mcp"), &data_dir);
    let outcome = run(Event::PostToolUse, tool_call(3), &config).await;
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
    let queue = aeterna_bridge::queue::WriteQueue::open(data_dir.join("queue"), Default::default())
        .unwrap();
    assert!(queue.is_empty());
    let distilled = call_ok(
        &client,
        "note_distill",
        json!({"session_id": "s1", "project_id": "parser-rs"}),
    )
    .await;
    let covered: u64 = distilled["session_notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|note| note["events"].as_u64().unwrap())
        .sum::<u64>()
        + distilled["declined"]
            .as_array()
            .unwrap()
            .iter()
            .map(|declined| declined["events"].as_u64().unwrap())
            .sum::<u64>();
    assert_eq!(covered, 4, "every event arrived once: {distilled}");
}
