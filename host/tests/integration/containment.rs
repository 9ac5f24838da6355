//! The containment gaps hostile components found, each closed and pinned by a hostile guest mode
//! (`tests/guests/hostile`): output records, guest faults told apart from host failures, the
//! run's output bound, state churn, oversized and slow-to-compile components, and the order in
//! which a whole LLM response meets redaction and tag handlers.
//!
//! Memory bounds are measured in `bounded_memory.rs` (its own binary, with a counting allocator).

use crate::common;

use std::time::Duration;

use aeterna_host::{
    ExtensionHost, FaultKind, HostConfig, HostError, LoadError, Message, Outcome, RunOutput,
};
use common::{ExtDir, ctx, load_all, test_config};

/// A host with `hostile` in `mode` (and extra manifest lines) as its only extension.
async fn hostile(mode: &str, extra: &str, config: HostConfig) -> (ExtensionHost, ExtDir) {
    let host = ExtensionHost::new(config).unwrap();
    let dir = ExtDir::new();
    dir.hostile("hostile", mode, extra);
    load_all(&host, &dir).await;
    (host, dir)
}

/// One plain-text run of `hostile` in `mode`. These tests count records and classify faults,
/// so the deadline is far away: a million host calls of an unoptimised test build on a busy
/// machine can take longer than `test_config`'s 2 s, which turned a chatty guest's `Ok` into
/// a timeout.
async fn plain_text(mode: &str) -> RunOutput<String> {
    let mut config = test_config();
    config.limits.timeout_ms = 60_000;
    let (host, _dir) = hostile(mode, "", config).await;
    host.run_plain_text(&ctx(), "in".into()).await.unwrap()
}

fn only_fault(run: &RunOutput<String>) -> (FaultKind, &str) {
    let fault = run.report.rows[0]
        .outcome
        .fault()
        .expect("the hostile callback faults");
    (fault.kind, &fault.message)
}

// ----- 1, 2: output records ----------------------------------------------------------------

#[tokio::test]
async fn empty_log_messages_count_against_the_record_cap() {
    let run = plain_text("log-empty").await;
    let row = &run.report.rows[0];
    assert_eq!(
        row.outcome,
        Outcome::Ok,
        "a chatty guest is not a faulty one"
    );
    assert_eq!(run.output, "in[logged]");
    assert_eq!(row.output_dropped_records, 1_000_000 - 1024);
    assert_eq!(row.output_dropped_bytes, 0);
}

#[tokio::test]
async fn one_byte_records_are_capped_by_count_not_only_by_bytes() {
    let run = plain_text("record-flood").await;
    let row = &run.report.rows[0];
    assert_eq!(row.outcome, Outcome::Ok);
    // 100 000 one-byte log calls and 70 000 two-byte lines: 1024 records get through.
    assert_eq!(row.output_dropped_records, 100_000 + 70_000 - 1024);
    assert_eq!(
        row.output_dropped_bytes,
        100_000 + 2 * 70_000 - 1024,
        "the bytes of every dropped record are counted"
    );
}

// ----- 6: guest faults are the guest's -----------------------------------------------------

#[tokio::test]
async fn exit_is_its_own_fault_kind() {
    let run = plain_text("exit").await;
    let (kind, message) = only_fault(&run);
    assert_eq!(kind, FaultKind::Exit, "{message}");
    // WASI 0.2's `exit` carries only success or failure, so `exit(3)` arrives as status 1.
    assert!(
        message.starts_with("the guest called exit with status 1"),
        "{message}"
    );
}

#[tokio::test]
async fn broken_results_and_import_arguments_are_invalid_output() {
    for (mode, expected) in [
        ("bad-utf8", "utf-8"),
        ("bad-pointer", "out of bounds"),
        ("big-random", "exceeds limit"),
        ("bad-log-pointer", "out of bounds"),
    ] {
        let run = plain_text(mode).await;
        let (kind, message) = only_fault(&run);
        assert_eq!(kind, FaultKind::InvalidOutput, "{mode}: {message}");
        assert!(
            message.to_lowercase().contains(expected),
            "{mode}: {message}"
        );
        assert_eq!(run.output, "in", "{mode}: fail-open keeps the input");
    }
}

#[tokio::test]
async fn a_panic_keeps_its_message() {
    let run = plain_text("panic").await;
    let (kind, message) = only_fault(&run);
    assert_eq!(kind, FaultKind::Trap);
    assert!(
        message.contains("hostile extension panics on purpose"),
        "the guest's stderr explains the trap: {message}"
    );
}

#[tokio::test]
async fn a_huge_ext_error_is_cut_before_the_report_holds_it() {
    let run = plain_text("huge-error").await;
    let fault = run.report.rows[0].outcome.fault().unwrap();
    assert_eq!(fault.kind, FaultKind::ExtError);
    assert!(fault.code.as_ref().unwrap().len() <= 128 + '…'.len_utf8());
    assert!(fault.message.len() <= 4096 + '…'.len_utf8());
    assert!(fault.message.starts_with("mmmm"));
}

// ----- 3: the run's output bound -----------------------------------------------------------

/// A tag handler returning 1 MiB for every `<big/>`.
async fn big_tag(config: HostConfig) -> (ExtensionHost, ExtDir) {
    let host = ExtensionHost::new(config).unwrap();
    let dir = ExtDir::new();
    dir.add(
        "hostile",
        "hostile",
        "id = \"hostile\"\n[config]\nmode = \"big-tag\"\nkib = 1024\n",
    );
    load_all(&host, &dir).await;
    (host, dir)
}

#[tokio::test]
async fn tag_fan_out_stops_at_the_run_output_bound() {
    let mut config = test_config();
    config.max_run_output_bytes = 8 * 1024 * 1024;
    config.quarantine.threshold = 100;
    let (host, _dir) = big_tag(config).await;
    let text = "<big/>".repeat(64);
    let run = host.run_llm_output(&ctx(), &text).await.unwrap();
    let kinds: Vec<Option<FaultKind>> = run
        .report
        .rows
        .iter()
        .map(|row| row.outcome.fault().map(|fault| fault.kind))
        .collect();
    assert_eq!(kinds.len(), 64);
    assert!(
        kinds[..8].iter().all(Option::is_none),
        "8 MiB of replacements fit: {kinds:?}"
    );
    assert!(
        kinds[8..]
            .iter()
            .all(|kind| *kind == Some(FaultKind::OutputLimit)),
        "{kinds:?}"
    );
    assert_eq!(
        run.output.len(),
        8 * 1024 * 1024 + 56 * "<big/>".len(),
        "the blocks over the bound stay as they were"
    );
    let message = &run.report.rows[8].outcome.fault().unwrap().message;
    assert!(message.contains("max_run_output_bytes"), "{message}");
}

#[tokio::test]
async fn a_chain_result_over_the_bound_is_refused() {
    let mut config = test_config();
    config.max_run_output_bytes = 512 * 1024;
    let (host, _dir) = big_tag(config).await;
    let run = host.run_tags(&ctx(), "<big/>").await.unwrap();
    assert_eq!(only_fault(&run).0, FaultKind::OutputLimit);
    assert_eq!(run.output, "<big/>");
}

#[tokio::test]
async fn millions_of_empty_messages_are_refused_before_they_are_copied() {
    let (host, _dir) = hostile("message-flood", "", test_config()).await;
    let messages = vec![Message::new("user", "hi")];
    let run = host
        .run_input_messages(&ctx(), messages.clone())
        .await
        .unwrap();
    let fault = run.report.rows[0].outcome.fault().unwrap();
    assert_eq!(fault.kind, FaultKind::OutputLimit, "{}", fault.message);
    assert_eq!(run.output, messages);
}

// ----- 5: state churn ----------------------------------------------------------------------

#[tokio::test]
async fn state_churn_until_the_deadline_reports_a_duration_within_it() {
    let mut config = test_config();
    config.limits.fuel = u64::MAX / 4;
    let (host, _dir) = hostile("state-churn", "timeout_ms = 1000", config).await;
    let run = host.run_plain_text(&ctx(), "in".into()).await.unwrap();
    let row = &run.report.rows[0];
    assert_eq!(
        row.outcome.fault().map(|fault| fault.kind),
        Some(FaultKind::Timeout)
    );
    assert!(
        row.duration < Duration::from_millis(1000 + 300),
        "freeing the callback's state is not the callback's time: {:?}",
        row.duration
    );
}

// ----- 7: component size and compile budget ------------------------------------------------

#[tokio::test]
async fn a_component_over_the_size_limit_is_rejected_before_it_is_read() {
    let mut config = test_config();
    config.max_component_bytes = 1000;
    let host = ExtensionHost::new(config).unwrap();
    let dir = ExtDir::new();
    let wasm = dir.add("probe", "probe", "");
    let error = host.load_file(&wasm).await.unwrap_err();
    let HostError::Load { reason, .. } = &error else {
        panic!("{error}")
    };
    assert!(
        matches!(reason, LoadError::TooLarge { max: 1000, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("max_component_bytes"), "{error}");
}

#[tokio::test]
async fn compilation_over_its_budget_is_rejected_and_lands_in_the_cache_later() {
    let cache = tempfile::tempdir().unwrap();
    let mut config = test_config();
    config.cache_dir = Some(cache.path().to_path_buf());
    config.compile_timeout_ms = 1;
    let host = ExtensionHost::new(config).unwrap();
    let dir = ExtDir::new();
    let wasm = dir.add("probe", "probe", "");
    let error = host.load_file(&wasm).await.unwrap_err();
    let HostError::Load { reason, .. } = &error else {
        panic!("{error}")
    };
    assert!(
        matches!(reason, LoadError::CompileTimeout { budget_ms: 1 }),
        "{error}"
    );
    assert!(error.to_string().contains("compile_timeout_ms"), "{error}");
    assert!(host.extensions().is_empty());

    // The compiler thread finishes in the background; its result makes the next load quick.
    let entry = || {
        std::fs::read_dir(cache.path())
            .unwrap()
            .flatten()
            .any(|e| e.path().extension().is_some_and(|ext| ext == "cwasm"))
    };
    for _ in 0..600 {
        if entry() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(entry(), "the background compilation reached the cache");
    host.load_file(&wasm).await.unwrap();
    assert_eq!(host.cache_stats().hits, 1);
}

#[tokio::test]
async fn reloading_unchanged_bytes_compiles_nothing() {
    let mut config = test_config();
    config.cache_dir = None;
    let host = ExtensionHost::new(config).unwrap();
    let dir = ExtDir::new();
    dir.probe("a", 1, "");
    dir.probe("b", 2, "");
    load_all(&host, &dir).await;
    assert_eq!(
        host.cache_stats().compiles,
        1,
        "two files with the same bytes share one compilation"
    );
    std::fs::write(
        dir.path().join("a.toml"),
        "id = \"a\"\npriority = 7\n[config]\nmark = \"a7\"\n",
    )
    .unwrap();
    let info = host.load_file(dir.path().join("a.wasm")).await.unwrap();
    assert_eq!(info.unwrap().registration.priority, 7);
    assert_eq!(
        host.cache_stats().compiles,
        1,
        "a manifest edit recompiles nothing"
    );
    let run = host.run_plain_text(&ctx(), "x".into()).await.unwrap();
    assert_eq!(run.output, "x[a7:1][b:1]");
}
