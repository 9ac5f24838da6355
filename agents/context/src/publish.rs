//! Publishes this instance's memory writes to the shared cache as version bumps (see
//! [`crate::shared_cache`]), from a background task, so writes by any agent count.
//!
//! [`VersionPublisher::flush`] waits until every write notified so far is published: a write
//! path calls it before answering, so a client that saw its write succeed never gets an older
//! cached context from another instance; an assembly calls it first, so it sees this instance's
//! own writes.
//!
//! The task alone owns the change subscription. A flush is a request to it (a bounded queue of
//! one-shot acknowledgements): it takes every change already notified, bumps, then acknowledges
//! every flush that was waiting. An earlier design handed the subscription's lock to the flusher
//! instead; on a multi-threaded runtime the task could take the lock back before the flusher
//! queued for it, and then wait for a change while holding it — a flush, and the assembly or
//! write behind it, could hang for good.

use std::collections::HashSet;
use std::sync::Arc;

use aeterna_memory::MemoryChange;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::shared_cache::SharedResultCache;

/// Flushes waiting for the task at once, at most; more callers wait to queue.
const MAX_QUEUED_FLUSHES: usize = 256;

pub(crate) struct VersionPublisher {
    cache: Arc<SharedResultCache>,
    flushes: mpsc::Sender<oneshot::Sender<()>>,
}

impl VersionPublisher {
    /// Starts publishing the changes of `changes` (a fresh subscription) on the current runtime.
    /// The task ends when the publisher is dropped or the memory service goes away.
    pub(crate) fn start(
        cache: Arc<SharedResultCache>,
        changes: broadcast::Receiver<MemoryChange>,
    ) -> (Arc<Self>, tokio::task::AbortHandle) {
        let (flushes, requests) = mpsc::channel(MAX_QUEUED_FLUSHES);
        let task = tokio::spawn(run(cache.clone(), changes, requests));
        let publisher = Arc::new(VersionPublisher { cache, flushes });
        (publisher, task.abort_handle())
    }

    pub(crate) fn cache(&self) -> &Arc<SharedResultCache> {
        &self.cache
    }

    /// Returns once every change notified before the call is published (or kept for when
    /// Redis is back). At once when the task has ended: nothing is left to publish.
    pub(crate) async fn flush(&self) {
        let (done, published) = oneshot::channel();
        if self.flushes.send(done).await.is_ok() {
            let _ = published.await;
        }
    }
}

async fn run(
    cache: Arc<SharedResultCache>,
    mut changes: broadcast::Receiver<MemoryChange>,
    mut flushes: mpsc::Receiver<oneshot::Sender<()>>,
) {
    loop {
        let mut tenants = HashSet::new();
        let mut waiting = Vec::new();
        tokio::select! {
            change = changes.recv() => match change {
                Ok(change) => {
                    tenants.insert(change.tenant_id);
                }
                Err(RecvError::Lagged(missed)) => lost(missed, &cache).await,
                Err(RecvError::Closed) => return,
            },
            flush = flushes.recv() => match flush {
                Some(done) => waiting.push(done),
                None => return,
            },
        }
        // Every flush already asked for is answered by this round.
        while let Ok(done) = flushes.try_recv() {
            waiting.push(done);
        }
        drain(&mut changes, &mut tenants, &cache).await;
        cache.bump(tenants).await;
        for done in waiting {
            let _ = done.send(());
        }
    }
}

/// Collects the tenants of every queued change.
async fn drain(
    changes: &mut broadcast::Receiver<MemoryChange>,
    tenants: &mut HashSet<String>,
    cache: &SharedResultCache,
) {
    loop {
        match changes.try_recv() {
            Ok(change) => {
                tenants.insert(change.tenant_id);
            }
            Err(TryRecvError::Lagged(missed)) => lost(missed, cache).await,
            Err(TryRecvError::Empty | TryRecvError::Closed) => return,
        }
    }
}

/// Notifications were dropped, so some written tenant is unknown: invalidate everything.
async fn lost(missed: u64, cache: &SharedResultCache) {
    tracing::warn!(
        missed,
        "the shared context cache missed change notifications; invalidating every tenant"
    );
    cache.bump_epoch().await;
}
