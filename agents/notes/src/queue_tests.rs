//! Behaviour of the capture queue and its writer, under Tokio's paused clock: batching and
//! flush timing are asserted by counting batches and reading the virtual clock, never by
//! wall-clock thresholds.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use aeterna_memory::Identity;
use parking_lot::Mutex;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use uuid::Uuid;

use super::*;
use crate::config::{EventLimits, QueueConfig};
use crate::event::{CapturedEvent, TrajectoryEvent};

/// A real in-memory sink that records each batch and when it arrived; it can be told to fail
/// a number of times, or to hold writes until released.
#[derive(Default)]
struct RecordingSink {
    batches: Mutex<Vec<(Instant, Vec<Uuid>)>>,
    failures_left: AtomicUsize,
    gate: Option<Arc<Semaphore>>,
}

impl RecordingSink {
    fn failing(times: usize) -> Self {
        RecordingSink {
            failures_left: AtomicUsize::new(times),
            ..Default::default()
        }
    }

    fn gated(gate: Arc<Semaphore>) -> Self {
        RecordingSink {
            gate: Some(gate),
            ..Default::default()
        }
    }

    fn sizes(&self) -> Vec<usize> {
        self.batches
            .lock()
            .iter()
            .map(|(_, ids)| ids.len())
            .collect()
    }

    fn ids(&self) -> Vec<Uuid> {
        self.batches
            .lock()
            .iter()
            .flat_map(|(_, ids)| ids.clone())
            .collect()
    }

    fn times(&self) -> Vec<Instant> {
        self.batches.lock().iter().map(|(at, _)| *at).collect()
    }
}

#[async_trait::async_trait]
impl TrajectorySink for RecordingSink {
    async fn write_batch(&self, batch: &[CapturedEvent]) -> anyhow::Result<()> {
        if let Some(gate) = &self.gate {
            gate.acquire().await?.forget();
        }
        let failed = self
            .failures_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok();
        if failed {
            anyhow::bail!("database is locked");
        }
        self.batches
            .lock()
            .push((Instant::now(), batch.iter().map(|e| e.id).collect()));
        Ok(())
    }
}

fn config() -> QueueConfig {
    QueueConfig {
        max_batch: 10,
        ..QueueConfig::default()
    }
}

fn no_redaction() -> RedactFn {
    Arc::new(|_| 0)
}

fn event(n: usize) -> CapturedEvent {
    let raw = TrajectoryEvent {
        tool_name: format!("tool-{n}"),
        description: String::new(),
        input: serde_json::Value::Null,
        output: serde_json::Value::Null,
        success: true,
        duration_ms: 1,
        tags: vec![],
        metadata: None,
    };
    CapturedEvent::build(Identity::new("t"), raw, &EventLimits::default()).expect("valid event")
}

fn start(config: &QueueConfig, sink: &Arc<RecordingSink>) -> CaptureQueue {
    CaptureQueue::start(config, sink.clone(), no_redaction())
}

/// Lets the writer task run until it blocks, without moving the paused clock.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_full_batch_is_written_at_once_and_the_rest_after_the_interval() {
    let sink = Arc::new(RecordingSink::default());
    let queue = start(&config(), &sink);
    let start = Instant::now();
    let ids: Vec<Uuid> = (0..25)
        .map(|n| {
            let event = event(n);
            let id = event.id;
            queue.try_enqueue(event).expect("room in the queue");
            id
        })
        .collect();
    settle().await;
    assert_eq!(
        sink.sizes(),
        vec![10, 10],
        "two full batches go out without waiting"
    );
    assert!(sink.times().iter().all(|at| *at == start));

    tokio::time::sleep(Duration::from_millis(99)).await;
    settle().await;
    assert_eq!(
        sink.sizes(),
        vec![10, 10],
        "the partial batch waits for the interval"
    );

    tokio::time::sleep(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(sink.sizes(), vec![10, 10, 5]);
    assert_eq!(sink.times()[2] - start, Duration::from_millis(100));
    assert_eq!(sink.ids(), ids, "stored once each, in capture order");

    let snapshot = queue.snapshot();
    assert_eq!(
        (snapshot.accepted, snapshot.written, snapshot.batches),
        (25, 25, 3)
    );
    assert_eq!(snapshot.pending, 0);
}

#[tokio::test(start_paused = true)]
async fn the_interval_counts_from_the_first_waiting_event() {
    let sink = Arc::new(RecordingSink::default());
    let queue = start(&config(), &sink);
    let start = Instant::now();
    queue.try_enqueue(event(0)).unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    queue.try_enqueue(event(1)).unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    settle().await;
    assert_eq!(sink.sizes(), vec![2]);
    assert_eq!(sink.times()[0] - start, Duration::from_millis(100));
}

#[tokio::test(start_paused = true)]
async fn a_backlog_is_written_in_larger_batches_up_to_max_batch() {
    let gate = Arc::new(Semaphore::new(0));
    let sink = Arc::new(RecordingSink::gated(gate.clone()));
    let config = QueueConfig {
        max_batch: 50,
        ..QueueConfig::default()
    };
    let queue = start(&config, &sink);
    // The first batch is held at the store while 120 more events queue up behind it.
    for n in 0..10 {
        queue.try_enqueue(event(n)).unwrap();
    }
    settle().await;
    for n in 10..130 {
        queue.try_enqueue(event(n)).unwrap();
    }
    gate.add_permits(100);
    settle().await;
    assert_eq!(sink.sizes(), vec![10, 50, 50, 20]);
}

#[tokio::test(start_paused = true)]
async fn a_full_queue_drops_and_counts_without_blocking() {
    let gate = Arc::new(Semaphore::new(0));
    let sink = Arc::new(RecordingSink::gated(gate.clone()));
    let config = QueueConfig {
        capacity: 5,
        batch_size: 1,
        max_batch: 1,
        ..QueueConfig::default()
    };
    let queue = start(&config, &sink);
    // The writer takes one event and blocks on the store; five more fill the queue.
    queue.try_enqueue(event(0)).unwrap();
    settle().await;
    let started = Instant::now();
    let outcomes: Vec<Result<(), Refusal>> = (1..21).map(|n| queue.try_enqueue(event(n))).collect();
    assert_eq!(Instant::now(), started, "enqueueing never waits");
    let accepted = outcomes.iter().filter(|outcome| outcome.is_ok()).count();
    assert_eq!(accepted, 5);
    assert!(
        outcomes[5..]
            .iter()
            .all(|outcome| *outcome == Err(Refusal::QueueFull))
    );

    let snapshot = queue.snapshot();
    assert_eq!(snapshot.dropped_full, 15);
    assert_eq!(snapshot.accepted, 6);
    assert_eq!(snapshot.depth, 5);

    gate.add_permits(100);
    let report = queue.shutdown().await;
    assert_eq!(report.lost, 0);
    assert_eq!(sink.ids().len(), 6, "every accepted event is stored");
    assert_eq!(queue.snapshot().pending, 0);
}

#[tokio::test(start_paused = true)]
async fn a_failing_store_is_retried_with_backoff_and_nothing_is_lost() {
    let sink = Arc::new(RecordingSink::failing(3));
    let queue = start(&config(), &sink);
    let start = Instant::now();
    for n in 0..10 {
        queue.try_enqueue(event(n)).unwrap();
    }
    settle().await;
    assert!(sink.sizes().is_empty());
    let snapshot = queue.snapshot();
    assert_eq!(snapshot.write_failures, 1);
    assert!(snapshot.store_failing);
    assert_eq!(snapshot.last_error.as_deref(), Some("database is locked"));
    assert_eq!(snapshot.pending, 10);

    // Retries after 100, 200 and 400 ms: the fourth attempt, at 700 ms, succeeds.
    tokio::time::sleep(Duration::from_millis(699)).await;
    settle().await;
    assert!(sink.sizes().is_empty());
    assert_eq!(queue.snapshot().write_failures, 3);
    tokio::time::sleep(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(sink.sizes(), vec![10]);
    assert_eq!(sink.times()[0] - start, Duration::from_millis(700));
    let snapshot = queue.snapshot();
    assert!(!snapshot.store_failing);
    assert_eq!(
        (snapshot.written, snapshot.pending, snapshot.lost),
        (10, 0, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn shutdown_drains_everything_acknowledged() {
    let sink = Arc::new(RecordingSink::default());
    let queue = start(&config(), &sink);
    let ids: Vec<Uuid> = (0..37)
        .map(|n| {
            let event = event(n);
            let id = event.id;
            queue.try_enqueue(event).unwrap();
            id
        })
        .collect();
    let start = Instant::now();
    let report = queue.shutdown().await;
    assert_eq!(
        report,
        DrainReport {
            drained: 37,
            spilled: 0,
            lost: 0
        }
    );
    assert_eq!(sink.ids(), ids);
    assert!(
        Instant::now() - start < Duration::from_millis(100),
        "no flush-interval wait"
    );
    assert_eq!(queue.try_enqueue(event(99)), Err(Refusal::Closed));
    assert_eq!(
        queue.shutdown().await,
        DrainReport {
            drained: 0,
            spilled: 0,
            lost: 0
        }
    );
}

#[tokio::test(start_paused = true)]
async fn shutdown_retries_a_failing_store_until_it_recovers() {
    let sink = Arc::new(RecordingSink::failing(2));
    let queue = start(&config(), &sink);
    for n in 0..4 {
        queue.try_enqueue(event(n)).unwrap();
    }
    let report = queue.shutdown().await;
    assert_eq!(
        report,
        DrainReport {
            drained: 4,
            spilled: 0,
            lost: 0
        }
    );
    assert_eq!(queue.snapshot().write_failures, 2);
}

#[tokio::test(start_paused = true)]
async fn shutdown_gives_up_on_a_dead_store_after_the_timeout_and_counts_the_loss() {
    let sink = Arc::new(RecordingSink::failing(usize::MAX));
    let config = QueueConfig {
        drain_timeout_ms: 2_000,
        ..config()
    };
    let queue = start(&config, &sink);
    for n in 0..25 {
        queue.try_enqueue(event(n)).unwrap();
    }
    settle().await;
    let start = Instant::now();
    let report = queue.shutdown().await;
    assert_eq!(
        report,
        DrainReport {
            drained: 0,
            spilled: 0,
            lost: 25
        }
    );
    assert!(Instant::now() - start >= Duration::from_millis(2_000));
    let snapshot = queue.snapshot();
    assert_eq!((snapshot.lost, snapshot.pending), (25, 0));
}

#[tokio::test(start_paused = true)]
async fn a_dead_store_at_shutdown_spills_redacted_events_that_the_next_start_stores() {
    let dir = tempfile::tempdir().unwrap();
    let spill_file = dir.path().join("spill.jsonl");
    let config = QueueConfig {
        drain_timeout_ms: 2_000,
        spill_file: Some(spill_file.clone()),
        ..config()
    };
    let redact: RedactFn = Arc::new(|event: &mut CapturedEvent| {
        let secret = event.output.contains("hunter2");
        event.output = event.output.replace("hunter2", "[redacted]");
        usize::from(secret)
    });
    let dead = Arc::new(RecordingSink::failing(usize::MAX));
    let queue = CaptureQueue::start(&config, dead, redact.clone());
    let mut ids = Vec::new();
    for n in 0..25 {
        let mut event = event(n);
        event.output = "password=hunter2".into();
        ids.push(event.id);
        queue.try_enqueue(event).unwrap();
    }
    settle().await;
    // One batch of 10 is being retried; 15 events are still queued, not yet redacted.
    let report = queue.shutdown().await;
    assert_eq!(
        report,
        DrainReport {
            drained: 0,
            spilled: 25,
            lost: 0
        }
    );
    assert_eq!(queue.snapshot().pending, 0);
    let spilled = std::fs::read_to_string(&spill_file).unwrap();
    assert_eq!(spilled.lines().count(), 25);
    assert!(
        !spilled.contains("hunter2"),
        "nothing unredacted reaches the disk"
    );

    // The next start stores them all, then forgets the file.
    let sink = Arc::new(RecordingSink::default());
    let queue = start(&config, &sink);
    for _ in 0..50 {
        if sink.ids().len() == ids.len() && !dir.path().join("spill.jsonl.replaying").exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut stored = sink.ids();
    stored.sort();
    ids.sort();
    assert_eq!(stored, ids);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "the spill is gone"
    );
    assert_eq!(queue.snapshot().pending, 0);
}

#[tokio::test(start_paused = true)]
async fn flush_waits_only_for_what_is_queued() {
    let sink = Arc::new(RecordingSink::default());
    let queue = start(&config(), &sink);
    let start = Instant::now();
    for n in 0..3 {
        queue.try_enqueue(event(n)).unwrap();
    }
    queue.flush().await.expect("flushed");
    assert_eq!(sink.sizes(), vec![3]);
    assert_eq!(
        Instant::now(),
        start,
        "a flush does not wait for the interval"
    );
    // An empty queue flushes immediately and writes nothing.
    queue.flush().await.expect("flushed");
    assert_eq!(sink.sizes(), vec![3]);
}

#[tokio::test(start_paused = true)]
async fn events_are_redacted_before_the_sink_sees_them() {
    #[derive(Default)]
    struct Capturing(Mutex<Vec<String>>);
    #[async_trait::async_trait]
    impl TrajectorySink for Capturing {
        async fn write_batch(&self, batch: &[CapturedEvent]) -> anyhow::Result<()> {
            self.0
                .lock()
                .extend(batch.iter().map(|event| event.output.clone()));
            Ok(())
        }
    }
    let sink = Arc::new(Capturing::default());
    let redact: RedactFn = Arc::new(|event: &mut CapturedEvent| {
        event.output = "[redacted]".into();
        1
    });
    let queue = CaptureQueue::start(&config(), sink.clone(), redact);
    let mut secret = event(0);
    secret.output = "password=hunter2".into();
    queue.try_enqueue(secret).unwrap();
    queue.flush().await.unwrap();
    assert_eq!(*sink.0.lock(), vec!["[redacted]".to_owned()]);
    assert_eq!(queue.snapshot().redactions, 1);
}
