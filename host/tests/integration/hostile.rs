//! Hostile components, built from source, run in the real host. In every case the host stays up,
//! the rest of the chain runs, and state written by the faulting callback is discarded.

use crate::common;

use std::time::{Duration, Instant};

use aeterna_host::{ExtensionHost, FaultKind, Outcome, RunOutput, StateScope};
use common::{ExtDir, ctx, load_all, test_config};

/// Loads `hostile` (in `mode`, with extra manifest lines) between two probes, runs the
/// plain-text chain once, and checks the invariants every hostile case shares.
async fn run_between_probes(mode: &str, extra: &str, host: &ExtensionHost) -> RunOutput<String> {
    let dir = ExtDir::new();
    dir.probe("before", 10, "");
    dir.hostile("hostile", mode, &format!("priority = 5\n{extra}"));
    dir.probe("after", 0, "");
    load_all(host, &dir).await;

    let run = host
        .run_plain_text(&ctx(), "in".into())
        .await
        .expect("fail-open chain completes");
    let rows: Vec<_> = run
        .report
        .rows
        .iter()
        .map(|row| row.extension.as_str())
        .collect();
    assert_eq!(rows, ["before", "hostile", "after"]);
    assert_eq!(run.report.rows[0].outcome, Outcome::Ok);
    assert_eq!(
        run.report.rows[2].outcome,
        Outcome::Ok,
        "the rest of the chain runs"
    );

    // The host is still healthy: the same chain runs again.
    let again = host
        .run_plain_text(&ctx(), "again".into())
        .await
        .expect("host stays up");
    assert!(again.output.ends_with("[after:2]"), "{}", again.output);
    run
}

async fn assert_discarded(host: &ExtensionHost) {
    let written = host
        .state_store()
        .get(
            &StateScope::new("tenant-a", "session-1", "hostile"),
            "before-fault",
        )
        .await
        .unwrap();
    assert_eq!(
        written, None,
        "state written by a faulting callback must be discarded"
    );
}

fn fault_of(run: &RunOutput<String>) -> (FaultKind, String) {
    let fault = run.report.rows[1]
        .outcome
        .fault()
        .expect("the hostile callback faults");
    (fault.kind, fault.message.clone())
}

#[tokio::test]
async fn infinite_loop_is_stopped_by_fuel() {
    let mut config = test_config();
    config.limits.fuel = 50_000_000;
    let host = ExtensionHost::new(config).unwrap();
    let run = run_between_probes("loop", "", &host).await;
    let (kind, _) = fault_of(&run);
    assert_eq!(kind, FaultKind::FuelExhausted);
    assert_eq!(
        run.output, "in[before:1][after:1]",
        "the chain continued with the previous value"
    );
    assert!(
        run.report.rows[1].fuel_used >= 50_000_000 - 1_000,
        "{:?}",
        run.report.rows[1]
    );
    assert_discarded(&host).await;
}

#[tokio::test]
async fn infinite_loop_with_huge_fuel_is_stopped_by_the_epoch_deadline() {
    let mut config = test_config();
    config.limits.fuel = u64::MAX / 2;
    config.limits.timeout_ms = 5_000;
    let host = ExtensionHost::new(config).unwrap();
    let started = Instant::now();
    let run = run_between_probes("loop", "timeout_ms = 300", &host).await;
    let (kind, message) = fault_of(&run);
    assert_eq!(kind, FaultKind::Timeout, "{message}");
    let took = run.report.rows[1].duration;
    assert!(
        took >= Duration::from_millis(300),
        "stopped before its deadline: {took:?}"
    );
    assert!(
        took < Duration::from_secs(3),
        "not stopped in bounded time: {took:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_discarded(&host).await;
}

#[tokio::test]
async fn memory_bomb_hits_the_memory_cap_cleanly() {
    let host = ExtensionHost::new(test_config()).unwrap();
    let run = run_between_probes("memory-bomb", "memory_mb = 16", &host).await;
    let (kind, message) = fault_of(&run);
    assert_eq!(kind, FaultKind::MemoryLimit, "{message}");
    assert_discarded(&host).await;
}

#[tokio::test]
async fn deep_recursion_is_a_stack_overflow_fault() {
    let host = ExtensionHost::new(test_config()).unwrap();
    let run = run_between_probes("recursion", "", &host).await;
    let (kind, message) = fault_of(&run);
    assert_eq!(kind, FaultKind::StackOverflow, "{message}");
    assert_discarded(&host).await;
}

#[tokio::test]
async fn a_panicking_guest_is_a_trap() {
    let host = ExtensionHost::new(test_config()).unwrap();
    let run = run_between_probes("panic", "", &host).await;
    let (kind, _) = fault_of(&run);
    assert_eq!(kind, FaultKind::Trap);
    assert_discarded(&host).await;
}

#[tokio::test]
async fn an_ext_error_keeps_its_code_and_message() {
    let host = ExtensionHost::new(test_config()).unwrap();
    let run = run_between_probes("ext-error", "", &host).await;
    let fault = run.report.rows[1].outcome.fault().unwrap();
    assert_eq!(fault.kind, FaultKind::ExtError);
    assert_eq!(fault.code.as_deref(), Some("hostile"));
    assert_eq!(fault.message, "refusing on purpose");
    assert_discarded(&host).await;
}

#[tokio::test]
async fn stdout_and_stderr_floods_are_capped_and_counted() {
    let host = ExtensionHost::new(test_config()).unwrap();
    let run = run_between_probes("stdout-flood", "", &host).await;
    let row = &run.report.rows[1];
    assert_eq!(
        row.outcome,
        Outcome::Ok,
        "a chatty guest is not a faulty one"
    );
    assert_eq!(run.output, "in[before:1][flooded][after:1]");
    // 1024 lines of 1 KiB on each of stdout and stderr; 64 KiB are forwarded.
    assert_eq!(row.output_dropped_bytes, 2 * 1024 * 1024 - 64 * 1024);
}

#[tokio::test]
async fn log_floods_share_the_same_cap() {
    let host = ExtensionHost::new(test_config()).unwrap();
    let run = run_between_probes("log-flood", "", &host).await;
    let row = &run.report.rows[1];
    assert_eq!(row.outcome, Outcome::Ok);
    assert_eq!(row.output_dropped_bytes, 1024 * 1024 - 64 * 1024);
}

#[tokio::test]
async fn state_quota_abuse_is_refused_and_evicted_within_the_quota() {
    let host = ExtensionHost::new(test_config()).unwrap();
    let run = run_between_probes("state-abuse", "", &host).await;
    let row = &run.report.rows[1];
    assert_eq!(row.outcome, Outcome::Ok);
    // The guest's own summary of what the host told it, carried through the chain.
    let summary = run.output.strip_suffix("[after:1]").unwrap();
    assert!(
        summary.contains("oversized=quota-exceeded(0/1048576)"),
        "{summary}"
    );
    assert!(summary.contains("empty-key=invalid-key"), "{summary}");
    assert!(summary.contains("long-key=invalid-key"), "{summary}");
    assert!(
        summary.contains("set-failures=0"),
        "smaller writes evict instead of failing: {summary}"
    );
    // 20 chunks of 100 KiB + key bytes: only the 10 most recent fit in 1 MiB.
    assert!(summary.contains("keys=10"), "{summary}");
    assert!(summary.contains("oldest-chunk=10"), "{summary}");

    let scope = StateScope::new("tenant-a", "session-1", "hostile");
    let entries = host.state_store().entries(&scope).await.unwrap();
    let used: u64 = entries.iter().map(|entry| entry.size).sum();
    assert!(
        used <= 1024 * 1024,
        "committed state stays within the quota: {used}"
    );
    assert_eq!(entries.len(), 10);
    assert!(
        host.state_store()
            .get(&scope, "chunk-09")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        host.state_store()
            .get(&scope, "chunk-19")
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn a_hostile_register_is_rejected_at_load_and_the_others_load() {
    let dir = ExtDir::new();
    dir.probe("fine", 0, "");
    dir.hostile("bad", "register-panic", "");
    let host = ExtensionHost::new(test_config()).unwrap();
    let report = host.load_dir(dir.path()).await.unwrap();
    assert_eq!(report.loaded.len(), 1);
    assert_eq!(report.rejected.len(), 1);
    let (file, error) = &report.rejected[0];
    assert!(file.ends_with("bad.wasm"));
    assert!(
        error.to_string().starts_with("register() faulted: trap"),
        "{error}"
    );
    let run = host.run_plain_text(&ctx(), "x".into()).await.unwrap();
    assert_eq!(run.output, "x[fine:1]");
}

#[tokio::test]
async fn every_hostile_mode_at_once_in_one_chain() {
    let mut config = test_config();
    config.limits.fuel = 200_000_000;
    let host = ExtensionHost::new(config).unwrap();
    let dir = ExtDir::new();
    let modes = [
        "loop",
        "memory-bomb",
        "recursion",
        "panic",
        "ext-error",
        "stdout-flood",
    ];
    for (index, mode) in modes.iter().enumerate() {
        dir.hostile(
            mode,
            mode,
            &format!("priority = {}\nmemory_mb = 16", 100 - index),
        );
    }
    dir.probe("survivor", 0, "");
    load_all(&host, &dir).await;
    let run = host.run_plain_text(&ctx(), "in".into()).await.unwrap();
    assert_eq!(run.output, "in[flooded][survivor:1]");
    let kinds: Vec<_> = run
        .report
        .rows
        .iter()
        .map(|row| row.outcome.fault().map(|fault| fault.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            Some(FaultKind::FuelExhausted),
            Some(FaultKind::MemoryLimit),
            Some(FaultKind::StackOverflow),
            Some(FaultKind::Trap),
            Some(FaultKind::ExtError),
            None,
            None,
        ]
    );
}
