//! End to end: every sample extension, built from source for wasm32-wasip2 by the testkit, loaded
//! with its example manifest and run through the real host.
//!
//! Each test asserts what the sample does (redaction, checklist lines, context messages,
//! compaction) and what it leaves in the host's state store.

use aeterna_host::{
    CallContext, ExtensionHost, FailurePolicy, FaultKind, Hook, HostConfig, HostError, Message,
    Outcome, StateScope,
};
use aeterna_testkit::ExtensionsDir;
use serde_json::{Value, json};

const GITHUB_TOKEN: &str = "ghp_R3aLi5t1cButFak3T0kenF0rT3sts0000001";
const TENANT: &str = "acme";
const SESSION: &str = "session-1";

fn ctx() -> CallContext {
    CallContext::new(TENANT, SESSION)
}

/// A host with `dir` loaded; every file must load.
async fn load(dir: &ExtensionsDir) -> ExtensionHost {
    let host = ExtensionHost::new(HostConfig::default()).expect("host");
    let report = host.load_dir(dir.path()).await.expect("load_dir");
    assert!(
        report.rejected.is_empty(),
        "rejected: {:?}",
        report
            .rejected
            .iter()
            .map(|(file, error)| format!("{}: {error}", file.display()))
            .collect::<Vec<_>>()
    );
    host
}

/// The JSON state `key` of `extension` in the test session.
async fn state(host: &ExtensionHost, extension: &str, key: &str) -> Option<Value> {
    let scope = StateScope::new(TENANT, SESSION, extension);
    let bytes = host
        .state_store()
        .get(&scope, key)
        .await
        .expect("state store")?;
    Some(serde_json::from_slice(&bytes).expect("state holds JSON"))
}

/// Every run in these tests must be fault-free.
fn assert_no_faults(report: &aeterna_host::RunReport) {
    let faults: Vec<_> = report.faults().collect();
    assert!(faults.is_empty(), "faults: {faults:?}");
}

#[tokio::test]
async fn all_samples_load_with_their_example_manifests() {
    let dir = ExtensionsDir::with_all_samples().expect("samples build");
    let host = load(&dir).await;

    let loaded: Vec<(String, i32)> = host
        .extensions()
        .into_iter()
        .map(|info| (info.registration.id, info.registration.priority))
        .collect();
    assert_eq!(
        loaded,
        [
            ("secret-redactor".to_owned(), 1000),
            ("context-injector".to_owned(), 100),
            ("todo-tags".to_owned(), 0),
            ("output-compactor".to_owned(), -100),
        ]
    );

    let redactor = host.extension("secret-redactor").unwrap();
    assert_eq!(redactor.failure, FailurePolicy::Closed);
    assert_eq!(redactor.limits.timeout_ms, 1000);
    assert!(redactor.registration.handles(Hook::InputMessages));
    assert!(redactor.registration.handles(Hook::LlmOutput));
    assert_eq!(
        host.extension("todo-tags").unwrap().registration.tags,
        ["todo"]
    );

    let additions: Vec<(String, String)> = host
        .prompt_additions()
        .into_iter()
        .map(|addition| (addition.extension, addition.text))
        .collect();
    assert_eq!(additions.len(), 2, "{additions:?}");
    assert!(additions.contains(&(
        "context-injector".to_owned(),
        "Prefer small, reviewable diffs.".to_owned()
    )));
    assert!(
        additions
            .iter()
            .any(|(id, text)| id == "todo-tags" && text.contains("<todo owner=")),
        "{additions:?}"
    );
}

#[tokio::test]
async fn input_messages_are_redacted_then_given_the_project_context() {
    let dir = ExtensionsDir::new().unwrap();
    dir.add_sample("secret-redactor").unwrap();
    dir.add_sample_with(
        "context-injector",
        r#"
[config]
project = "aeterna"
conventions = ["Rust 2024", "errors carry context"]
text = "The WIT contract is the source of truth."
"#,
    )
    .unwrap();
    let host = load(&dir).await;

    let messages = vec![
        Message::new("system", "You are a coding agent."),
        Message::new(
            "user",
            format!("push with GITHUB_TOKEN={GITHUB_TOKEN}, the db password: hunter22"),
        ),
        Message::new(
            "tool",
            "DATABASE_URL=postgres://app:s3cr3t-pass@db:5432/app",
        ),
    ];
    let run = host.run_input_messages(&ctx(), messages).await.unwrap();
    assert_no_faults(&run.report);
    let order: Vec<&str> = run
        .report
        .rows
        .iter()
        .map(|r| r.extension.as_str())
        .collect();
    assert_eq!(order, ["secret-redactor", "context-injector"]);

    let context = "## Project context (from context-injector)\n\n\
                   Project: aeterna\n\n\
                   Conventions:\n- Rust 2024\n- errors carry context\n\n\
                   The WIT contract is the source of truth.";
    assert_eq!(
        run.output,
        vec![
            Message::new("system", "You are a coding agent."),
            Message::new("system", context),
            Message::new(
                "user",
                "push with GITHUB_TOKEN=[REDACTED:github-token], the db password: hunter22"
            ),
            Message::new(
                "tool",
                "DATABASE_URL=postgres://app:[REDACTED:url-password]@db:5432/app"
            ),
        ]
    );

    assert_eq!(
        state(&host, "secret-redactor", "counts").await,
        Some(json!({
            "total": 2,
            "by_kind": {"github-token": 1, "url-password": 1},
            "by_hook": {"input-messages": 2},
        }))
    );

    // The next turn carries the injected message along: it is not injected twice.
    let again = host
        .run_input_messages(&ctx(), run.output.clone())
        .await
        .unwrap();
    assert_eq!(again.output, run.output);
}

#[tokio::test]
async fn llm_output_turns_todos_into_checklists_and_redacts_secrets() {
    let dir = ExtensionsDir::new().unwrap();
    dir.add_sample("secret-redactor").unwrap();
    dir.add_sample("todo-tags").unwrap();
    let host = load(&dir).await;

    let response = format!(
        "Plan:\n\
         <todo owner=\"ana\" due=\"friday\">write the migration</todo>\n\
         <todo>rotate {GITHUB_TOKEN}</todo>\n\
         Done."
    );
    let run = host.run_llm_output(&ctx(), &response).await.unwrap();
    assert_no_faults(&run.report);
    assert_eq!(
        run.output,
        "Plan:\n\
         - [ ] write the migration (owner: ana, due: friday)\n\
         - [ ] rotate [REDACTED:github-token]\n\
         Done."
    );
    // One priority-ordered pipeline: the redactor (priority 1000) sees the response first, then
    // the tag stage (todo-tags, priority 0) gets the redacted text.
    let rows: Vec<(&str, Hook)> = run
        .report
        .rows
        .iter()
        .map(|r| (r.extension.as_str(), r.hook))
        .collect();
    assert_eq!(
        rows,
        [
            ("secret-redactor", Hook::LlmOutput),
            ("todo-tags", Hook::Tag),
            ("todo-tags", Hook::Tag),
        ]
    );

    // So the redactor's promise holds for later extensions too: todo-tags never saw the token,
    // and its state holds only the redacted text.
    let todos = state(&host, "todo-tags", "todos").await.unwrap();
    assert_eq!(todos[0]["text"], "write the migration");
    assert_eq!(
        todos[0]["attributes"],
        json!([["owner", "ana"], ["due", "friday"]])
    );
    assert_eq!(todos[0]["done"], false);
    assert_eq!(todos[1]["text"], "rotate [REDACTED:github-token]");
    assert_eq!(todos.as_array().unwrap().len(), 2);
    assert!(!todos.to_string().contains(GITHUB_TOKEN));

    // Checking a task off later in the session updates the recorded one.
    let run = host
        .run_llm_output(&ctx(), "<todo done=\"true\">Write the migration</todo>")
        .await
        .unwrap();
    assert_eq!(run.output, "- [x] Write the migration");
    let todos = state(&host, "todo-tags", "todos").await.unwrap();
    assert_eq!(todos.as_array().unwrap().len(), 2);
    assert_eq!(todos[0]["done"], true);

    // Another session has its own list.
    let other = CallContext::new(TENANT, "session-2");
    host.run_llm_output(&other, "<todo>review</todo>")
        .await
        .unwrap();
    let scope = StateScope::new(TENANT, "session-2", "todo-tags");
    let theirs = host
        .state_store()
        .get(&scope, "todos")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&theirs).unwrap(),
        json!([{"text": "review", "attributes": [], "done": false}])
    );
}

#[tokio::test]
async fn an_empty_todo_faults_open_and_the_block_stays() {
    let dir = ExtensionsDir::new().unwrap();
    dir.add_sample("todo-tags").unwrap();
    let host = load(&dir).await;
    let run = host
        .run_llm_output(&ctx(), "a <todo> </todo> b")
        .await
        .unwrap();
    assert_eq!(run.output, "a <todo> </todo> b");
    let (row, fault) = run.report.faults().next().expect("one fault");
    assert_eq!(row.extension, "todo-tags");
    assert_eq!(fault.kind, FaultKind::ExtError);
    assert_eq!(fault.code.as_deref(), Some("invalid-input"));
    assert_eq!(state(&host, "todo-tags", "todos").await, None);
}

#[tokio::test]
async fn long_tool_output_is_compacted_with_a_marker() {
    let dir = ExtensionsDir::new().unwrap();
    dir.add_sample_with("output-compactor", "[config]\nmax_tokens = 216\n")
        .unwrap();
    let host = load(&dir).await;

    // 1000 lines of 40 ASCII bytes: 10 estimated tokens each.
    let text: String = (0..1000)
        .map(|i| format!("line {i:>6}: {:<26}\n", "compiling crate"))
        .collect();
    let run = host.run_plain_text(&ctx(), text.clone()).await.unwrap();
    assert_no_faults(&run.report);
    let lines: Vec<&str> = run.output.lines().collect();
    let original: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 21);
    assert_eq!(lines[..10], original[..10]);
    assert_eq!(lines[10], "[… 980 lines (~9,800 tokens) cut …]");
    assert_eq!(lines[11..], original[990..]);
    assert_eq!(
        state(&host, "output-compactor", "stats").await,
        Some(json!({"compactions": 1, "lines_cut": 980, "tokens_cut": 9800}))
    );

    // Short output passes through untouched and is not counted.
    let run = host.run_plain_text(&ctx(), "ok\n".into()).await.unwrap();
    assert_eq!(run.output, "ok\n");
    assert_eq!(
        state(&host, "output-compactor", "stats").await.unwrap()["compactions"],
        1
    );
}

#[tokio::test]
async fn a_failing_fail_closed_redactor_stops_the_chain() {
    let dir = ExtensionsDir::new().unwrap();
    // The example manifest's policy (fail-closed) with a config the redactor refuses.
    dir.add_sample_with(
        "secret-redactor",
        "failure = \"closed\"\n[config]\nredact_emails = \"sometimes\"\n",
    )
    .unwrap();
    let host = load(&dir).await;
    let error = host
        .run_llm_output(&ctx(), &format!("token {GITHUB_TOKEN}"))
        .await
        .unwrap_err();
    let HostError::ChainStopped(stopped) = error else {
        panic!("expected the chain to stop, got {error}");
    };
    assert_eq!(stopped.extension, "secret-redactor");
    assert_eq!(stopped.fault.kind, FaultKind::ExtError);
    assert_eq!(stopped.fault.code.as_deref(), Some("invalid-config"));
    assert!(
        stopped.fault.message.contains("redact_emails"),
        "{}",
        stopped.fault.message
    );
}

#[tokio::test]
async fn every_sample_runs_within_its_default_limits() {
    // A realistic turn through all four samples; the report's fuel shows each callback's cost.
    let dir = ExtensionsDir::with_all_samples().unwrap();
    let host = load(&dir).await;
    let tool_output: String = (0..400)
        .map(|i| format!("test case {i} ... ok\n"))
        .collect();
    let turn = [
        host.run_input_messages(
            &ctx(),
            vec![Message::new("user", format!("use {GITHUB_TOKEN}"))],
        )
        .await
        .unwrap()
        .report,
        host.run_plain_text(&ctx(), tool_output)
            .await
            .unwrap()
            .report,
        host.run_llm_output(&ctx(), "<todo owner=\"bo\">ship it</todo>")
            .await
            .unwrap()
            .report,
    ];
    for report in &turn {
        assert_no_faults(report);
        for row in &report.rows {
            assert_eq!(row.outcome, Outcome::Ok);
            eprintln!(
                "{:>17} {:<15} fuel {:>10}  {:?}",
                row.extension,
                format!("{:?}", row.hook),
                row.fuel_used,
                row.duration
            );
        }
    }
}
