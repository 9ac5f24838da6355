//! The capture queue: a bounded, non-blocking hand-off from tool calls to one writer task that
//! stores events in batches.
//!
//! Enqueueing never waits: when the queue is full the event is refused and counted as dropped.
//! An event the queue accepted ("acknowledged") is written by the writer, retried with backoff
//! while the store fails, and drained on [`CaptureQueue::shutdown`]. If the store still fails
//! when the drain times out, the events go to the spill file (when one is configured) and are
//! stored at the next start; see `spill.rs`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde::Serialize;
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::config::QueueConfig;
use crate::event::CapturedEvent;
use crate::spill;
use crate::writer::Writer;

/// Where the writer stores batches. Implementations write a batch atomically (all rows or
/// none) and return an error rather than partially writing it; the writer retries it.
#[async_trait::async_trait]
pub trait TrajectorySink: Send + Sync + 'static {
    async fn write_batch(&self, batch: &[CapturedEvent]) -> anyhow::Result<()>;
}

/// Rewrites secrets in an event before it is stored; returns how many it replaced.
pub type RedactFn = Arc<dyn Fn(&mut CapturedEvent) -> usize + Send + Sync>;

/// Why an event was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// The queue is full (the store is slow or down); the event is counted as dropped.
    QueueFull,
    /// The queue is shutting down.
    Closed,
}

// Nearly every message is an event: boxing it would add an allocation per capture.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Message {
    Event(CapturedEvent),
    /// Answered once every event enqueued before it is stored.
    Flush(oneshot::Sender<()>),
}

/// Signals from [`CaptureQueue`] to its writer.
#[derive(Default)]
pub(crate) struct Signals {
    /// Stop accepting, drain what is queued, then exit.
    pub shutdown: Notify,
    /// The drain timeout passed: stop retrying, count what is left as lost, exit.
    pub abandon: AtomicBool,
    pub abandon_wake: Notify,
}

/// Counters of the capture path, shared by the queue, its writer and the service.
#[derive(Debug, Default)]
pub struct CaptureStats {
    pub(crate) accepted: AtomicU64,
    pub(crate) filtered: AtomicU64,
    pub(crate) dropped_full: AtomicU64,
    pub(crate) written: AtomicU64,
    pub(crate) batches: AtomicU64,
    pub(crate) write_failures: AtomicU64,
    pub(crate) lost: AtomicU64,
    pub(crate) spilled: AtomicU64,
    pub(crate) redactions: AtomicU64,
    pub(crate) store_failing: AtomicBool,
    pub(crate) last_error: Mutex<Option<String>>,
}

impl CaptureStats {
    pub(crate) fn add(counter: &AtomicU64, n: usize) {
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Counts events left out by the capture mode.
    pub fn record_filtered(&self, n: usize) {
        Self::add(&self.filtered, n);
    }
}

/// A point-in-time copy of [`CaptureStats`] plus the queue's fill level, for `/metrics` and
/// tool responses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CaptureSnapshot {
    /// Events accepted into the queue since start.
    pub accepted: u64,
    /// Events left out by the capture mode.
    pub filtered: u64,
    /// Events refused because the queue was full.
    pub dropped_full: u64,
    /// Events stored.
    pub written: u64,
    /// Batches stored.
    pub batches: u64,
    /// Failed write attempts (each is retried).
    pub write_failures: u64,
    /// Accepted events that could not be stored before shutdown gave up on a failing store.
    pub lost: u64,
    /// Accepted events written to the spill file when shutdown gave up on a failing store;
    /// they are stored at the next start.
    pub spilled: u64,
    /// Secrets replaced before storage.
    pub redactions: u64,
    /// Accepted but not yet stored.
    pub pending: u64,
    /// Events in the queue now, and its capacity.
    pub depth: u64,
    pub capacity: u64,
    /// True while the last write attempt failed.
    pub store_failing: bool,
    pub last_error: Option<String>,
}

/// What a graceful shutdown achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DrainReport {
    /// Events stored during the drain.
    pub drained: u64,
    /// Events the store did not take before the drain timed out, kept in the spill file.
    pub spilled: u64,
    /// Events that could not be stored nor spilled.
    pub lost: u64,
}

/// The bounded capture queue and the handle of its writer task.
pub struct CaptureQueue {
    tx: mpsc::Sender<Message>,
    stats: Arc<CaptureStats>,
    signals: Arc<Signals>,
    closing: AtomicBool,
    drain_timeout: Duration,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl CaptureQueue {
    /// Starts the writer on the current Tokio runtime.
    pub fn start(config: &QueueConfig, sink: Arc<dyn TrajectorySink>, redact: RedactFn) -> Self {
        let (tx, rx) = mpsc::channel(config.capacity);
        let stats = Arc::new(CaptureStats::default());
        let signals = Arc::new(Signals::default());
        let writer = Writer::new(config, rx, sink, redact, stats.clone(), signals.clone());
        let handle = tokio::spawn(writer.run());
        let queue = CaptureQueue {
            tx,
            stats,
            signals,
            closing: AtomicBool::new(false),
            drain_timeout: Duration::from_millis(config.drain_timeout_ms),
            writer: Mutex::new(Some(handle)),
        };
        if let Some(path) = &config.spill_file {
            queue.replay_spilled(path);
        }
        queue
    }

    /// Stores what an earlier run spilled: the events go through the queue like new ones,
    /// waiting for room rather than being dropped, and the claimed file is removed once they
    /// are stored. If this run stops first, the file stays for the next start.
    fn replay_spilled(&self, path: &Path) {
        let mut claimed = match spill::claim(path) {
            Ok(Some(claimed)) => claimed,
            Ok(None) => return,
            Err(error) => {
                tracing::error!(
                    file = %path.display(),
                    %error,
                    "cannot read the trajectory spill file; its events stay there for the next start"
                );
                return;
            }
        };
        let tx = self.tx.clone();
        let stats = self.stats.clone();
        tokio::spawn(async move {
            let events = std::mem::take(&mut claimed.events);
            let count = events.len();
            for event in events {
                if tx.send(Message::Event(event)).await.is_err() {
                    return;
                }
                CaptureStats::add(&stats.accepted, 1);
            }
            if flush_through(&tx).await.is_err() {
                return;
            }
            match claimed.done() {
                Ok(()) => tracing::info!(
                    events = count,
                    "stored the trajectory events spilled at the last shutdown"
                ),
                Err(error) => tracing::warn!(
                    %error,
                    "the spilled trajectory events are stored, but the spill file cannot be \
                     removed; they will be replayed (harmlessly) at the next start"
                ),
            }
        });
    }

    /// Hands `event` to the writer without waiting. On refusal the event is returned to no one:
    /// it is counted (as dropped when the queue is full) and the caller reports it.
    pub fn try_enqueue(&self, event: CapturedEvent) -> Result<(), Refusal> {
        if self.closing.load(Ordering::Acquire) {
            return Err(Refusal::Closed);
        }
        match self.tx.try_send(Message::Event(event)) {
            Ok(()) => {
                CaptureStats::add(&self.stats.accepted, 1);
                Ok(())
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                CaptureStats::add(&self.stats.dropped_full, 1);
                Err(Refusal::QueueFull)
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err(Refusal::Closed),
        }
    }

    /// Waits until every event accepted before this call is stored. Waits for as long as the
    /// store keeps failing: bound it with a timeout.
    pub async fn flush(&self) -> Result<(), Refusal> {
        flush_through(&self.tx).await
    }

    /// Stops accepting events and waits until the queued ones are stored. If the store still
    /// fails after the drain timeout, the writer stops retrying and logs (and counts) what it
    /// could not store. Calling it again returns at once.
    pub async fn shutdown(&self) -> DrainReport {
        let written_before = self.stats.written.load(Ordering::Relaxed);
        let lost_before = self.stats.lost.load(Ordering::Relaxed);
        let spilled_before = self.stats.spilled.load(Ordering::Relaxed);
        self.closing.store(true, Ordering::Release);
        self.signals.shutdown.notify_one();
        let handle = self.writer.lock().take();
        if let Some(mut handle) = handle
            && tokio::time::timeout(self.drain_timeout, &mut handle)
                .await
                .is_err()
        {
            tracing::error!(
                timeout_ms = self.drain_timeout.as_millis() as u64,
                pending = self.snapshot().pending,
                "trajectory store still failing at the end of the shutdown drain; giving up"
            );
            self.signals.abandon.store(true, Ordering::Release);
            self.signals.abandon_wake.notify_one();
            let _ = handle.await;
        }
        DrainReport {
            drained: self.stats.written.load(Ordering::Relaxed) - written_before,
            spilled: self.stats.spilled.load(Ordering::Relaxed) - spilled_before,
            lost: self.stats.lost.load(Ordering::Relaxed) - lost_before,
        }
    }

    /// The shared counters (the service counts filtered events into them).
    pub fn stats(&self) -> &Arc<CaptureStats> {
        &self.stats
    }

    pub fn snapshot(&self) -> CaptureSnapshot {
        let s = &self.stats;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let (accepted, written) = (load(&s.accepted), load(&s.written));
        let (lost, spilled) = (load(&s.lost), load(&s.spilled));
        let capacity = self.tx.max_capacity() as u64;
        CaptureSnapshot {
            accepted,
            filtered: load(&s.filtered),
            dropped_full: load(&s.dropped_full),
            written,
            batches: load(&s.batches),
            write_failures: load(&s.write_failures),
            lost,
            spilled,
            redactions: load(&s.redactions),
            pending: accepted.saturating_sub(written + lost + spilled),
            depth: capacity - self.tx.capacity() as u64,
            capacity,
            store_failing: s.store_failing.load(Ordering::Relaxed),
            last_error: s.last_error.lock().clone(),
        }
    }
}

/// Waits until every event sent through `tx` before the flush request is stored.
async fn flush_through(tx: &mpsc::Sender<Message>) -> Result<(), Refusal> {
    let (done, stored) = oneshot::channel();
    tx.send(Message::Flush(done))
        .await
        .map_err(|_| Refusal::Closed)?;
    stored.await.map_err(|_| Refusal::Closed)
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
