//! The writer task behind [`crate::queue::CaptureQueue`]: gathers events into batches, redacts
//! them, and stores each batch, retrying with exponential backoff while the store fails.
//!
//! A batch is written when `batch_size` events wait, or when the oldest waiting event has
//! waited `flush_interval_ms`, whichever comes first. When a backlog has built up, up to
//! `max_batch` waiting events go into one write so the writer catches up.
//!
//! When shutdown gives up on a failing store, what is left goes to the spill file (redacted
//! first, like everything that reaches a disk) or, without one, is counted as lost.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::config::QueueConfig;
use crate::event::CapturedEvent;
use crate::queue::{CaptureStats, Message, RedactFn, Signals, TrajectorySink};
use crate::spill;

pub(crate) struct Writer {
    rx: mpsc::Receiver<Message>,
    sink: Arc<dyn TrajectorySink>,
    redact: RedactFn,
    stats: Arc<CaptureStats>,
    signals: Arc<Signals>,
    batch_size: usize,
    max_batch: usize,
    flush_interval: Duration,
    retry_initial: Duration,
    retry_max: Duration,
    spill_file: Option<PathBuf>,
    /// Events waiting for the next write.
    events: Vec<CapturedEvent>,
    /// Flush requests answered after the next write.
    waiters: Vec<oneshot::Sender<()>>,
    inbox: Vec<Message>,
    /// False once shutdown began: drain without waiting for the flush interval.
    open: bool,
}

impl Writer {
    pub(crate) fn new(
        config: &QueueConfig,
        rx: mpsc::Receiver<Message>,
        sink: Arc<dyn TrajectorySink>,
        redact: RedactFn,
        stats: Arc<CaptureStats>,
        signals: Arc<Signals>,
    ) -> Self {
        Writer {
            rx,
            sink,
            redact,
            stats,
            signals,
            batch_size: config.batch_size,
            max_batch: config.max_batch,
            flush_interval: Duration::from_millis(config.flush_interval_ms),
            retry_initial: Duration::from_millis(config.retry_initial_ms),
            retry_max: Duration::from_millis(config.retry_max_ms),
            spill_file: config.spill_file.clone(),
            events: Vec::with_capacity(config.max_batch),
            waiters: Vec::new(),
            inbox: Vec::with_capacity(config.max_batch),
            open: true,
        }
    }

    pub(crate) async fn run(mut self) {
        loop {
            if self.events.is_empty() && self.waiters.is_empty() && !self.wait_for_first().await {
                break;
            }
            self.gather_until_due().await;
            self.take_backlog();
            self.write_pending().await;
        }
        tracing::debug!("trajectory writer stopped");
    }

    /// Waits for the first message of a batch; false when the queue is closed and empty.
    async fn wait_for_first(&mut self) -> bool {
        let limit = self.max_batch;
        if !self.open {
            return self.rx.recv_many(&mut self.inbox, limit).await > 0 && self.absorb();
        }
        tokio::select! {
            received = self.rx.recv_many(&mut self.inbox, limit) => {
                received > 0 && self.absorb()
            }
            () = self.signals.shutdown.notified() => {
                self.close();
                true
            }
        }
    }

    /// Waits until `batch_size` events are here, the flush interval since the first one
    /// passes, a flush is requested or shutdown begins.
    async fn gather_until_due(&mut self) {
        let deadline = Instant::now() + self.flush_interval;
        while self.open && self.events.len() < self.batch_size && self.waiters.is_empty() {
            let limit = self.max_batch - self.events.len();
            tokio::select! {
                received = self.rx.recv_many(&mut self.inbox, limit) => {
                    if received == 0 {
                        self.open = false;
                    } else {
                        self.absorb();
                    }
                }
                () = tokio::time::sleep_until(deadline) => break,
                () = self.signals.shutdown.notified() => self.close(),
            }
        }
    }

    /// Takes what is already queued, up to `max_batch`, without waiting.
    fn take_backlog(&mut self) {
        while self.events.len() < self.max_batch {
            match self.rx.try_recv() {
                Ok(message) => {
                    self.inbox.push(message);
                    self.absorb();
                }
                Err(_) => break,
            }
        }
    }

    /// Moves received messages into the batch; true (for `wait_for_first`).
    fn absorb(&mut self) -> bool {
        for message in self.inbox.drain(..) {
            match message {
                Message::Event(event) => self.events.push(event),
                Message::Flush(waiter) => self.waiters.push(waiter),
            }
        }
        true
    }

    fn close(&mut self) {
        self.open = false;
        self.rx.close();
    }

    /// Redacts and stores the batch, then answers flush requests. Retries until it succeeds,
    /// unless shutdown abandons it.
    async fn write_pending(&mut self) {
        let mut stored = true;
        if !self.events.is_empty() {
            redact_all(&self.redact, &self.stats, &mut self.events);
            stored = self.store_with_retry().await;
            self.events.clear();
        }
        if stored {
            for waiter in self.waiters.drain(..) {
                let _ = waiter.send(());
            }
        } else {
            // Dropping the senders tells the waiters their events were not stored.
            self.waiters.clear();
        }
    }

    /// True when the batch is stored, false when shutdown gave up on it.
    async fn store_with_retry(&mut self) -> bool {
        let mut delay = self.retry_initial;
        let mut attempt = 1u32;
        loop {
            let error = match self.sink.write_batch(&self.events).await {
                Ok(()) => {
                    self.stored(attempt);
                    return true;
                }
                Err(error) => error,
            };
            CaptureStats::add(&self.stats.write_failures, 1);
            self.stats.store_failing.store(true, Ordering::Relaxed);
            *self.stats.last_error.lock() = Some(format!("{error:#}"));
            if self.signals.abandon.load(Ordering::Acquire) {
                self.give_up();
                return false;
            }
            tracing::warn!(
                attempt,
                events = self.events.len(),
                retry_in_ms = delay.as_millis() as u64,
                error = format!("{error:#}"),
                "cannot store a trajectory batch; keeping it and retrying"
            );
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.signals.abandon_wake.notified() => {}
                // A shutdown wakes the writer to retry at once rather than after the backoff.
                () = self.signals.shutdown.notified(), if self.open => self.close(),
            }
            delay = (delay * 2).min(self.retry_max);
            attempt += 1;
        }
    }

    fn stored(&mut self, attempt: u32) {
        CaptureStats::add(&self.stats.written, self.events.len());
        CaptureStats::add(&self.stats.batches, 1);
        if attempt > 1 {
            tracing::info!(
                attempts = attempt,
                events = self.events.len(),
                "trajectory store recovered; the retried batch is stored"
            );
        }
        self.stats.store_failing.store(false, Ordering::Relaxed);
    }

    /// Shutdown gave up on a failing store: spill this batch and everything still queued, or
    /// count them as lost when there is no spill file or it cannot be written.
    fn give_up(&mut self) {
        self.close();
        let mut unstored = std::mem::take(&mut self.events); // already redacted
        let mut queued = Vec::new();
        while let Ok(message) = self.rx.try_recv() {
            if let Message::Event(event) = message {
                queued.push(event);
            }
        }
        redact_all(&self.redact, &self.stats, &mut queued);
        unstored.append(&mut queued);
        if unstored.is_empty() {
            return;
        }
        let last_error = self.stats.last_error.lock().clone().unwrap_or_default();
        if let Some(file) = &self.spill_file {
            match spill::append(file, &unstored) {
                Ok(()) => {
                    CaptureStats::add(&self.stats.spilled, unstored.len());
                    tracing::warn!(
                        events = unstored.len(),
                        file = %file.display(),
                        last_error,
                        "the trajectory store kept failing until the shutdown drain timed out; \
                         the events are in the spill file and will be stored at the next start"
                    );
                    return;
                }
                Err(error) => tracing::error!(
                    file = %file.display(),
                    %error,
                    "cannot write the trajectory spill file"
                ),
            }
        }
        CaptureStats::add(&self.stats.lost, unstored.len());
        tracing::error!(
            lost = unstored.len(),
            last_error,
            "trajectory events lost: the store kept failing until the shutdown drain timed out"
        );
    }
}

/// Rewrites the secrets in `events` (before anything reaches a disk) and counts them.
fn redact_all(redact: &RedactFn, stats: &CaptureStats, events: &mut [CapturedEvent]) {
    let redacted: usize = events.iter_mut().map(|event| redact(event)).sum();
    CaptureStats::add(&stats.redactions, redacted);
}
