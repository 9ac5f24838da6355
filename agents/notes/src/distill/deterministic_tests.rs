use super::*;
use crate::distill::testing::{call, shell};
use crate::event::{CapturedEvent, SessionKey};

const FAILING_RUN: &str = "running 3 tests
test parser::tests::parses_numbers ... ok
test parser::tests::parses_sums ... ok
test parser::tests::parses_empty_input ... FAILED

failures:

---- parser::tests::parses_empty_input stdout ----

thread 'parser::tests::parses_empty_input' panicked at src/parser.rs:17:9:
index out of bounds: the len is 0 but the index is 0

failures:
    parser::tests::parses_empty_input

test result: FAILED. 2 passed; 1 failed; 0 ignored";

/// search → read → edit → test fails → fix → test passes.
fn realistic_session() -> Vec<CapturedEvent> {
    let mut events = vec![
        call(
            "grep",
            "Find where expressions are parsed",
            r#"{"pattern":"fn parse_expr"}"#,
            "src/parser.rs:12: pub fn parse_expr(tokens: &[Token])",
            true,
        ),
        call(
            "read_file",
            "Read the parser",
            r#"{"path":"src/parser.rs"}"#,
            "pub fn parse_expr(tokens: &[Token]) -> Expr { match tokens[0] { ... } }",
            true,
        ),
        call(
            "edit_file",
            "Add support for sums",
            r#"{"path":"src/parser.rs","old":"match tokens[0]","new":"match tokens.first()"}"#,
            "applied",
            true,
        ),
        shell("cargo test parser", FAILING_RUN, false),
        call(
            "edit_file",
            "Return Expr::Empty when there are no tokens instead of indexing tokens[0]",
            r#"{"path":"src/parser.rs","old":"tokens[0]","new":"tokens.first()"}"#,
            "applied",
            true,
        ),
        shell(
            "cargo test parser",
            "running 3 tests\n...\ntest result: ok. 3 passed; 0 failed",
            true,
        ),
    ];
    for (n, event) in events.iter_mut().enumerate() {
        event.captured_at += n as i64 * 20_000;
        event.tags = vec!["parser".into()];
    }
    events[3].duration_ms = 14_200;
    events
}

fn distill(events: &[CapturedEvent]) -> DistilledNote {
    let session = events
        .first()
        .map(CapturedEvent::session_key)
        .unwrap_or(SessionKey {
            tenant_id: "acme".into(),
            project_id: String::new(),
            session_id: String::new(),
        });
    DeterministicDistiller.distill_now(DistillInput {
        session: &session,
        events,
    })
}

#[test]
fn a_realistic_trajectory_names_the_failing_test_and_the_fix() {
    let note = distill(&realistic_session());
    assert_eq!(
        note.title,
        "Fix for failing test `parser::tests::parses_empty_input` in `src/parser.rs`"
    );

    let problem = note.problem.join("\n");
    assert!(problem.contains("`cargo test parser` failed"), "{problem}");
    assert!(
        problem.contains("`parser::tests::parses_empty_input`"),
        "{problem}"
    );
    assert!(problem.contains("index out of bounds"), "{problem}");

    let solution = &note.solution;
    assert_eq!(
        solution,
        &vec![
            "Edited `src/parser.rs`: Return Expr::Empty when there are no tokens instead of indexing tokens[0]".to_owned(),
            "`cargo test parser` passed; test `parser::tests::parses_empty_input` now passes.".to_owned(),
        ]
    );

    let context = note.context.join("\n");
    assert!(
        context.contains("Session `s-1` in project `parser`"),
        "{context}"
    );
    assert!(
        context.contains(
            "6 tool calls from 2025-06-15 15:06 UTC over 1 min 40 s: 5 succeeded, 1 failed."
        ),
        "{context}"
    );
    assert!(context.contains("Files: `src/parser.rs`."), "{context}");
    assert!(
        context.contains("Started with: Find where expressions are parsed"),
        "{context}"
    );

    assert!(
        note.patterns
            .contains(&"Workflow: search → read → (edit → test) ×2.".to_owned())
    );
    assert!(
        note.patterns
            .contains(&"`cargo test parser` fixed after 1 failed run and 1 edit.".to_owned())
    );
    assert!(
        note.patterns
            .contains(&"Slowest call: `cargo test parser` (14.2 s).".to_owned())
    );
    assert_eq!(note.tags, vec!["parser", "rust", "test-failure", "fixed"]);
    assert_eq!(
        note.keywords,
        vec![
            "parser::tests::parses_empty_input",
            "src/parser.rs",
            "parser",
            "rust"
        ]
    );
    assert_eq!(
        note.description,
        "`cargo test parser` failed: test `parser::tests::parses_empty_input` with `index out of \
         bounds: the len is 0 but the index is 0`. Fixed by editing `src/parser.rs`; `cargo test \
         parser` passed."
    );
    assert!(
        note.quality >= 0.9,
        "a specific, resolved, described session scores high: {}",
        note.quality
    );

    let markdown = note.to_markdown();
    for section in [
        "## Context",
        "## Problem",
        "## Solution",
        "## Patterns",
        "## Tags",
    ] {
        assert!(markdown.contains(section), "missing {section}:\n{markdown}");
    }
    assert!(markdown.contains("1. Edited `src/parser.rs`"), "{markdown}");
}

#[test]
fn distillation_is_deterministic() {
    let events = realistic_session();
    assert_eq!(distill(&events), distill(&events));
    assert_eq!(
        distill(&events).to_markdown(),
        distill(&events).to_markdown()
    );
}

#[test]
fn an_unresolved_failure_says_so() {
    let mut events = realistic_session();
    events.truncate(5);
    let note = distill(&events);
    assert_eq!(
        note.title,
        "Unresolved: failing test `parser::tests::parses_empty_input`"
    );
    assert_eq!(
        note.solution.last().map(String::as_str),
        Some("Not resolved in this session: `cargo test parser` was still failing.")
    );
    assert!(note.tags.contains(&"unresolved".to_owned()));
    assert!(note.quality < distill(&realistic_session()).quality);
}

#[test]
fn a_session_without_failures_records_what_was_done() {
    let events = vec![
        call(
            "edit_file",
            "Document the retry policy",
            r#"{"path":"docs/retry.md"}"#,
            "ok",
            true,
        ),
        shell("cargo build", "Finished", true),
    ];
    let note = distill(&events);
    assert_eq!(note.title, "Document the retry policy");
    assert_eq!(note.problem, vec!["No call failed in this session."]);
    assert_eq!(
        note.solution,
        vec![
            "Edited `docs/retry.md`: Document the retry policy",
            "`cargo build` passed."
        ]
    );
}

#[test]
fn sessions_that_only_looked_around_are_declined_and_others_are_not() {
    let judge = |events: &[CapturedEvent]| {
        let session = events[0].session_key();
        DeterministicDistiller.judge(DistillInput {
            session: &session,
            events,
        })
    };
    let looked = vec![
        call("grep", "", r#"{"pattern":"x"}"#, "a.rs:1", true),
        shell("cargo test", "test result: ok", true),
    ];
    assert!(matches!(judge(&looked), Distillation::Declined(_)));
    let mut failed = looked.clone();
    failed.push(shell("cargo test", "test a ... FAILED", false));
    assert!(matches!(judge(&failed), Distillation::Note(_)));
    let mut edited = looked;
    edited.push(call("edit_file", "", r#"{"path":"a.rs"}"#, "ok", true));
    assert!(matches!(judge(&edited), Distillation::Note(_)));
}

#[test]
fn an_empty_session_still_renders() {
    let note = distill(&[]);
    assert_eq!(note.quality, 0.0);
    assert!(note.to_markdown().contains("## Solution"));
}

#[test]
fn large_sessions_stay_bounded() {
    let mut events = Vec::new();
    for n in 0..100 {
        let file = format!(r#"{{"path":"src/module_{n}.rs"}}"#);
        events.push(call("edit_file", &"x".repeat(2000), &file, "ok", true));
        events.push(shell(
            &format!("cargo test m{n}"),
            &format!("test m{n}::t ... FAILED"),
            false,
        ));
    }
    let note = distill(&events);
    let markdown = note.to_markdown();
    assert!(markdown.len() < 16 * 1024, "{} bytes", markdown.len());
    assert!(note.tags.len() <= 16);
    assert!(note.solution.len() <= 13);
    assert!(
        note.patterns
            .contains(&"Workflow: (edit → test) ×100.".to_owned()),
        "{:?}",
        note.patterns
    );
}
