//! Automatic distillation: after each stored batch, sessions that reached the threshold of
//! uncovered events are scheduled, and one background task distils them, one at a time.
//!
//! Distillation never runs on the writer task (it embeds and writes memories), and a session
//! is scheduled at most once at a time. Whatever was not distilled before a shutdown is found
//! again at start ([`AutoDistiller::schedule_backlog`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use aeterna_memory::Identity;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::distillery::Distillery;
use crate::event::{CapturedEvent, SessionKey};
use crate::queue::TrajectorySink;
use crate::store::TrajectoryStore;

pub(crate) struct AutoDistiller {
    threshold: usize,
    store: TrajectoryStore,
    tx: mpsc::UnboundedSender<(SessionKey, Identity)>,
    scheduled: Arc<Mutex<HashSet<SessionKey>>>,
    stop: CancellationToken,
    worker: Mutex<Option<JoinHandle<()>>>,
}

impl AutoDistiller {
    /// Starts the background task. `threshold` is at least 1.
    pub fn start(distillery: Arc<Distillery>, threshold: usize) -> Arc<Self> {
        let (tx, mut rx) = mpsc::unbounded_channel::<(SessionKey, Identity)>();
        let scheduled: Arc<Mutex<HashSet<SessionKey>>> = Arc::default();
        let stop = CancellationToken::new();
        let worker = {
            let (scheduled, stop, distillery) =
                (scheduled.clone(), stop.clone(), distillery.clone());
            tokio::spawn(async move {
                loop {
                    let next = tokio::select! {
                        biased;
                        () = stop.cancelled() => break,
                        next = rx.recv() => next,
                    };
                    let Some((session, who)) = next else { break };
                    scheduled.lock().remove(&session);
                    // A session that has no scope for a note is never scheduled; errors are
                    // logged and the events stay pending for the next trigger.
                    if let Err(error) = distillery.distill(&who, threshold).await {
                        tracing::warn!(%session, %error, "automatic distillation failed; the events stay pending");
                    }
                }
            })
        };
        Arc::new(AutoDistiller {
            threshold,
            store: distillery.store().clone(),
            tx,
            scheduled,
            stop,
            worker: Mutex::new(Some(worker)),
        })
    }

    fn schedule(&self, session: SessionKey, who: Identity) {
        if session.project_id.is_empty() && session.session_id.is_empty() {
            return;
        }
        if self.scheduled.lock().insert(session.clone()) {
            let _ = self.tx.send((session, who));
        }
    }

    /// Schedules the sessions of a stored batch that reached the threshold.
    async fn after_write(&self, batch: &[CapturedEvent]) {
        let mut latest: HashMap<SessionKey, &Identity> = HashMap::new();
        for event in batch {
            latest.insert(event.session_key(), &event.identity);
        }
        for (session, who) in latest {
            if self.scheduled.lock().contains(&session) {
                continue;
            }
            match self.store.pending_count(&session).await {
                Ok(pending) if pending >= self.threshold as u64 => {
                    self.schedule(session, who.clone())
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(%session, %error, "cannot count pending events"),
            }
        }
    }

    /// Schedules every session left at or above the threshold by an earlier run.
    pub async fn schedule_backlog(&self) {
        match self.store.sessions_due(self.threshold).await {
            Ok(due) => {
                if !due.is_empty() {
                    tracing::info!(
                        sessions = due.len(),
                        "distilling sessions left pending by an earlier run"
                    );
                }
                for pending in due {
                    self.schedule(pending.session, pending.identity);
                }
            }
            Err(error) => tracing::warn!(%error, "cannot look for sessions due for distillation"),
        }
    }

    /// Stops after the distillation in progress (waiting at most `timeout`); scheduled
    /// sessions are picked up again at the next start.
    pub async fn stop(&self, timeout: Duration) {
        self.stop.cancel();
        let worker = self.worker.lock().take();
        if let Some(mut worker) = worker
            && tokio::time::timeout(timeout, &mut worker).await.is_err()
        {
            tracing::warn!(
                "a distillation was still running at shutdown; it will be redone at start"
            );
            worker.abort();
        }
    }
}

/// The writer's sink: stores batches, then lets automatic distillation look at them.
pub(crate) struct NotesSink {
    pub store: TrajectoryStore,
    pub auto: Option<Arc<AutoDistiller>>,
}

#[async_trait::async_trait]
impl TrajectorySink for NotesSink {
    async fn write_batch(&self, batch: &[CapturedEvent]) -> anyhow::Result<()> {
        self.store.insert(batch).await?;
        if let Some(auto) = &self.auto {
            auto.after_write(batch).await;
        }
        Ok(())
    }
}
