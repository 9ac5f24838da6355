//! Publishes this instance's memory writes to the shared cache as version bumps (see
//! [`crate::shared_cache`]), from a background task, so writes by any agent count.
//!
//! [`VersionPublisher::flush`] waits until every write notified so far is published: a write
//! path calls it before answering, so a client that saw its write succeed never gets an older
//! cached context from another instance; an assembly calls it first, so it sees this instance's
//! own writes. The background task holds the change subscription while it waits, and gives it up
//! when a flush asks (a [`Notify`]), so a flush never waits for a write that is not coming.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use aeterna_memory::MemoryChange;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{Mutex, Notify, broadcast};

use crate::shared_cache::SharedResultCache;

pub(crate) struct VersionPublisher {
    cache: Arc<SharedResultCache>,
    changes: Mutex<broadcast::Receiver<MemoryChange>>,
    flush_wanted: Notify,
}

impl VersionPublisher {
    /// Starts publishing the changes of `changes` (a fresh subscription) on the current runtime.
    pub(crate) fn start(
        cache: Arc<SharedResultCache>,
        changes: broadcast::Receiver<MemoryChange>,
    ) -> (Arc<Self>, tokio::task::AbortHandle) {
        let publisher = Arc::new(VersionPublisher {
            cache,
            changes: Mutex::new(changes),
            flush_wanted: Notify::new(),
        });
        let task = tokio::spawn(run(Arc::downgrade(&publisher)));
        (publisher, task.abort_handle())
    }

    pub(crate) fn cache(&self) -> &Arc<SharedResultCache> {
        &self.cache
    }

    /// Returns once every change notified before the call is published (or kept for when
    /// Redis is back).
    pub(crate) async fn flush(&self) {
        self.flush_wanted.notify_one();
        let mut changes = self.changes.lock().await;
        let mut tenants = HashSet::new();
        drain(&mut changes, &mut tenants, &self.cache).await;
        self.cache.bump(tenants).await;
    }
}

async fn run(publisher: Weak<VersionPublisher>) {
    loop {
        let Some(this) = publisher.upgrade() else {
            return;
        };
        let mut changes = this.changes.lock().await;
        let first = tokio::select! {
            change = changes.recv() => change,
            () = this.flush_wanted.notified() => {
                // A flush wants the subscription: let it have it, then wait again.
                drop(changes);
                drop(this);
                tokio::task::yield_now().await;
                continue;
            }
        };
        let mut tenants = HashSet::new();
        match first {
            Ok(change) => {
                tenants.insert(change.tenant_id);
            }
            Err(RecvError::Lagged(missed)) => lost(missed, &this.cache).await,
            Err(RecvError::Closed) => return,
        }
        drain(&mut changes, &mut tenants, &this.cache).await;
        this.cache.bump(tenants).await;
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
