//! Benchmarks of the Note-Taking agent, against a real SQLite data dir:
//!
//! * `enqueue`: one `NotesService::capture` of a realistic ~1 KB event (validation,
//!   truncation, capture mode, hand-off to the queue) while the writer stores events in the
//!   background. Bar: p99 ≤ 50 µs. Per-call latencies are collected and printed as
//!   percentiles, since criterion reports means.
//! * `sustained`: 50,000 events captured and stored (redaction and SQLite inserts included),
//!   from the first capture to the flush that sees them all. Bar: ≥ 20,000 events/s.
//! * `distill_100`: the deterministic distillation of a 100-event session, alone and end to
//!   end (read from SQLite, distil, store the note through `MemoryService::add`, mark).
//!
//! `cargo bench -p aeterna-notes --bench notes`

use std::sync::Arc;
use std::time::{Duration, Instant};

use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Identity, MemoryConfig, MemoryService};
use aeterna_notes::{
    CapturedEvent, DeterministicDistiller, DistillInput, EventLimits, NotesConfig, NotesService,
    TrajectoryEvent,
};
use criterion::{BatchSize, Criterion};
use serde_json::json;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn who(session: usize) -> Identity {
    Identity {
        tenant_id: "acme".into(),
        agent_id: Some("agent-1".into()),
        user_id: Some("alice".into()),
        session_id: Some(format!("s-{session}")),
        project_id: Some("parser".into()),
        team_id: None,
        org_id: None,
        grants: Default::default(),
    }
}

/// A tool call as an agent reports it: a shell command and ~1 KB of output.
fn realistic_event(n: usize) -> TrajectoryEvent {
    let output = format!(
        "running 24 tests\n{}test result: {}. 23 passed; {} failed; finished in 0.41s\n",
        (0..24)
            .map(|t| format!("test parser::tests::case_{t} ... ok\n"))
            .collect::<String>(),
        if n.is_multiple_of(5) { "FAILED" } else { "ok" },
        u8::from(n.is_multiple_of(5)),
    );
    TrajectoryEvent {
        tool_name: "bash".into(),
        description: format!("Run the parser tests after change {n}"),
        input: json!({ "command": "cargo test -p parser", "cwd": "/work/repo" }),
        output: output.into(),
        success: !n.is_multiple_of(5),
        duration_ms: 410,
        tags: vec!["rust".into(), "parser".into()],
        metadata: Some(serde_json::from_value(json!({ "files": ["src/parser.rs"] })).unwrap()),
    }
}

async fn open(
    dir: &std::path::Path,
    config: NotesConfig,
) -> (Arc<MemoryService>, Arc<NotesService>) {
    let memory = MemoryService::open_embedded(
        dir,
        MemoryConfig::default(),
        Arc::new(HashingEmbedder::default()),
    )
    .await
    .expect("open memory");
    let memory = Arc::new(memory);
    let notes = NotesService::start(config, memory.clone()).expect("start notes");
    (memory, notes)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// Per-call enqueue latency over 100,000 captures, with the writer draining to SQLite.
fn enqueue_percentiles() {
    let runtime = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = NotesConfig::default();
    config.distill.threshold = 0;
    // Room for every sample: this measures the hand-off, not drops on a full queue.
    config.queue.capacity = 120_000;
    let (_memory, notes) = runtime.block_on(open(dir.path(), config));
    let samples = 100_000;
    let events: Vec<Vec<(Identity, TrajectoryEvent)>> = (0..samples)
        .map(|n| vec![(who(n % 50), realistic_event(n))])
        .collect();
    let mut latencies = Vec::with_capacity(samples);
    runtime.block_on(async {
        for batch in events {
            let started = Instant::now();
            let receipt = notes.capture(batch).expect("valid event");
            latencies.push(started.elapsed());
            assert_eq!(receipt.accepted, 1);
        }
        notes.flush().await.expect("flush");
    });
    latencies.sort();
    println!(
        "notes/enqueue (capture of one ~1 KB event, {samples} calls): p50 {:?}  p95 {:?}  p99 {:?}  max {:?}",
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.95),
        percentile(&latencies, 0.99),
        latencies[latencies.len() - 1],
    );
    runtime.block_on(notes.shutdown());
}

/// Events per second from the first capture until all are stored.
fn sustained_throughput(label: &str, max_batch: usize) {
    let runtime = runtime();
    let mut rates = Vec::new();
    for _ in 0..3 {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = NotesConfig::default();
        config.distill.threshold = 0;
        config.queue.capacity = 60_000;
        config.queue.max_batch = max_batch;
        // The flush below waits for the whole backlog.
        config.distill.flush_timeout_ms = 600_000;
        let (_memory, notes) = runtime.block_on(open(dir.path(), config));
        let total = 50_000;
        let batches: Vec<Vec<(Identity, TrajectoryEvent)>> = (0..total / 100)
            .map(|b| {
                (0..100)
                    .map(|i| (who(b % 50), realistic_event(b * 100 + i)))
                    .collect()
            })
            .collect();
        let elapsed = runtime.block_on(async {
            let started = Instant::now();
            for batch in batches {
                assert_eq!(notes.capture(batch).expect("valid").accepted, 100);
            }
            notes.flush().await.expect("flush");
            started.elapsed()
        });
        let snapshot = notes.snapshot().capture;
        assert_eq!(snapshot.written, total as u64);
        rates.push(total as f64 / elapsed.as_secs_f64());
        runtime.block_on(notes.shutdown());
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "notes/sustained ({label}): 50,000 ~1 KB events stored; median {:.0} events/s (min {:.0}, max {:.0})",
        rates[1], rates[0], rates[2]
    );
}

/// A 100-event session: five rounds of search → read → edit → failing test → fix → passing
/// test, plus reads, as captured events.
fn session_of_100() -> Vec<CapturedEvent> {
    let limits = EventLimits::default();
    (0..100)
        .map(|n| {
            let file = format!("src/module_{}.rs", n / 20);
            let (tool, input, output, success) = match n % 6 {
                0 => ("grep", json!({ "pattern": "fn parse", "path": "src" }), format!("{file}:12: fn parse"), true),
                1 => ("read_file", json!({ "path": file }), "fn parse() {}".to_owned(), true),
                2 | 4 => ("edit_file", json!({ "path": file, "old": "a", "new": "b" }), "ok".to_owned(), true),
                3 => (
                    "bash",
                    json!({ "command": "cargo test" }),
                    format!("test module_{}::tests::case ... FAILED\nthread 'x' panicked at {file}:3:1:\nassertion failed", n / 20),
                    false,
                ),
                _ => ("bash", json!({ "command": "cargo test" }), "test result: ok".to_owned(), true),
            };
            let event = TrajectoryEvent {
                tool_name: tool.into(),
                description: format!("step {n} on {file}"),
                input,
                output: output.into(),
                success,
                duration_ms: 50,
                tags: vec!["rust".into()],
                metadata: None,
            };
            CapturedEvent::build(who(0), event, &limits).expect("valid")
        })
        .collect()
}

fn benches(c: &mut Criterion) {
    let limits = EventLimits::default();
    let captured = CapturedEvent::build(who(0), realistic_event(1), &limits).expect("valid");
    c.bench_function("notes/redact_event (~1 KB, no secret)", |b| {
        b.iter_batched_ref(
            || captured.clone(),
            |event| aeterna_notes::redact_event(aeterna_notes::redactor(), event),
            BatchSize::SmallInput,
        )
    });

    let events = session_of_100();
    let session = events[0].session_key();
    c.bench_function("notes/distill_100/deterministic", |b| {
        b.iter(|| {
            DeterministicDistiller.distill_now(DistillInput {
                session: &session,
                events: &events,
            })
        })
    });

    let runtime = runtime();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = NotesConfig::default();
    config.distill.threshold = 0;
    config.limits.max_batch_events = 100;
    let (_memory, notes) = runtime.block_on(open(dir.path(), config));
    let mut round = 0usize;
    c.bench_function("notes/distill_100/end_to_end", |b| {
        b.iter_batched(
            || {
                // A fresh session of 100 stored events per iteration (setup, not measured).
                round += 1;
                let raw: Vec<(Identity, TrajectoryEvent)> = (0..100)
                    .map(|n| (who(1000 + round), realistic_event(n)))
                    .collect();
                notes.capture(raw).expect("valid");
                runtime.block_on(notes.flush()).expect("flush");
                who(1000 + round)
            },
            |who| {
                let outcome = runtime.block_on(notes.distill(&who)).expect("distill");
                assert_eq!(outcome.distilled_events, 100);
            },
            BatchSize::PerIteration,
        )
    });
    runtime.block_on(notes.shutdown());
}

fn main() {
    enqueue_percentiles();
    sustained_throughput("default: batches of 10, up to 500 when backlogged", 500);
    sustained_throughput("strict: every write at most 10 events", 10);
    let mut criterion = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(5));
    benches(&mut criterion);
    criterion.final_summary();
}
