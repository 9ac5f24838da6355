//! Write serialisation with group commit.
//!
//! Every write holds one lock across its database transaction and its vector-index update, so
//! the index applies writes in commit order. Adds queue their records first, then take the
//! lock; whoever holds it commits everything queued so far in one transaction (leader-based
//! group commit) and hands each waiting add its own outcome. Concurrent clients thus share
//! transactions — one commit and one FTS segment for many adds — while a lone client pays no
//! extra wait. A queued add always gets committed: each adder waits, after queueing, for its
//! answer or the lock, whichever comes first, so the queue is drained at the latest by its own
//! turn; an add answered by another's group leaves the lock's queue at once, so later adds do
//! not wait behind a wake-up of every task whose add is already done.
//!
//! The record store commits first; the vector store is updated after. When that second step
//! fails the write still stands (the record store holds its vector): the vector store has
//! drifted, which is logged and signalled so it gets repaired ([`Writes::apply_to_vectors`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{Mutex, MutexGuard, Notify, oneshot};

use crate::error::{MemoryError, Result};
use crate::storage::{Inserted, NewRecord, RecordStore};
use crate::vector::{VectorEntry, VectorStore};

/// Records committed together at most; the rest wait for the next turn.
const GROUP_RECORDS: usize = 2048;

struct PendingInsert {
    records: Vec<NewRecord>,
    reply: oneshot::Sender<Result<Vec<Inserted>>>,
}

pub(crate) struct Writes {
    lock: Mutex<()>,
    pending: parking_lot::Mutex<Vec<PendingInsert>>,
    drift: Arc<Notify>,
    /// The vector store is repaired while the service runs ([`VectorStore::shared`]), so writes
    /// may skip it after a failure.
    repaired: bool,
    vectors_behind: AtomicBool,
}

impl Writes {
    pub fn new(vectors: &dyn VectorStore) -> Self {
        Writes {
            lock: Mutex::new(()),
            pending: parking_lot::Mutex::new(Vec::new()),
            drift: Arc::new(Notify::new()),
            repaired: vectors.shared(),
            vectors_behind: AtomicBool::new(false),
        }
    }

    /// Notified when a committed write could not be applied to the vector store.
    pub fn drift(&self) -> Arc<Notify> {
        self.drift.clone()
    }

    /// Applies a committed write to the vector store. A failure is drift — logged and
    /// signalled, never the write's error. On a store repaired while the service runs, later
    /// writes then skip it until the repair starts (the repair writes them too), so an
    /// unreachable Qdrant does not hold every write for its timeout; an in-process index is
    /// rebuilt from the records at the next start.
    pub async fn apply_to_vectors(&self, apply: impl Future<Output = Result<()>>) {
        if self.vectors_behind.load(Ordering::Acquire) {
            return;
        }
        if let Err(error) = apply.await {
            tracing::warn!(
                %error,
                "a committed write did not reach the vector store; it is repaired from the records"
            );
            if self.repaired {
                self.vectors_behind.store(true, Ordering::Release);
                self.drift.notify_one();
            }
        }
    }

    /// Called as a repair starts: writes go to the vector store again, and whatever was
    /// committed before is the repair's.
    pub fn resume_vectors(&self) {
        self.vectors_behind.store(false, Ordering::Release);
    }

    /// Exclusive access for a write that is not an add (update, delete, flush).
    pub async fn lock(&self) -> MutexGuard<'_, ()> {
        self.lock.lock().await
    }

    /// Commits `records` (possibly together with other adds) and indexes the new ones.
    pub async fn insert(
        &self,
        records: &dyn RecordStore,
        vectors: &dyn VectorStore,
        new: Vec<NewRecord>,
    ) -> Result<Vec<Inserted>> {
        let (reply, mut outcome) = oneshot::channel();
        self.pending.lock().push(PendingInsert {
            records: new,
            reply,
        });
        // Answered by another's group, or committing a group on its own turn (module doc).
        let answered = tokio::select! {
            biased;
            answer = &mut outcome => Some(answer),
            turn = self.lock.lock() => {
                let group = self.take_group();
                if !group.is_empty() {
                    self.commit(records, vectors, group).await;
                }
                drop(turn);
                None
            }
        };
        let answer = match answered {
            Some(answer) => answer,
            None => outcome.await,
        };
        answer.map_err(|_| {
            MemoryError::storage(
                "committing memories",
                anyhow::anyhow!("the write was abandoned"),
            )
        })?
    }

    /// One transaction for the whole group; every add gets its own outcomes, or a copy of the
    /// shared error.
    async fn commit(
        &self,
        records: &dyn RecordStore,
        vectors: &dyn VectorStore,
        group: Vec<PendingInsert>,
    ) {
        let sizes: Vec<usize> = group.iter().map(|insert| insert.records.len()).collect();
        let mut replies = Vec::with_capacity(group.len());
        let mut all = Vec::with_capacity(sizes.iter().sum());
        let mut entries: HashMap<uuid::Uuid, (String, VectorEntry)> = HashMap::new();
        for insert in group {
            for new in &insert.records {
                let record = &new.record;
                let entry = VectorEntry {
                    id: record.id,
                    scope: record.scope(),
                    kind: record.kind.clone(),
                    tags: record.tags.clone(),
                    vector: new.vector.clone(),
                };
                entries.insert(record.id, (record.tenant_id.clone(), entry));
            }
            all.extend(insert.records);
            replies.push(insert.reply);
        }

        let result = async {
            let outcomes = records.insert(all).await?;
            let mut fresh: HashMap<String, Vec<VectorEntry>> = HashMap::new();
            for outcome in &outcomes {
                if let Inserted::New(record) = outcome
                    && let Some((tenant_id, entry)) = entries.remove(&record.id)
                {
                    fresh.entry(tenant_id).or_default().push(entry);
                }
            }
            for (tenant_id, entries) in fresh {
                self.apply_to_vectors(vectors.upsert(&tenant_id, entries))
                    .await;
            }
            Ok::<_, MemoryError>(outcomes)
        }
        .await;

        match result {
            Ok(outcomes) => {
                let mut outcomes = outcomes.into_iter();
                for (reply, size) in replies.into_iter().zip(sizes) {
                    // A caller that went away still had its write committed.
                    let _ = reply.send(Ok(outcomes.by_ref().take(size).collect()));
                }
            }
            Err(error) => {
                for reply in replies {
                    let _ = reply.send(Err(copy_of(&error)));
                }
            }
        }
    }

    fn take_group(&self) -> Vec<PendingInsert> {
        let mut pending = self.pending.lock();
        let mut size = 0;
        let mut take = 0;
        for insert in pending.iter() {
            if take > 0 && size + insert.records.len() > GROUP_RECORDS {
                break;
            }
            size += insert.records.len();
            take += 1;
        }
        pending.drain(..take).collect()
    }
}

fn copy_of(error: &MemoryError) -> MemoryError {
    match error {
        MemoryError::Storage { context, source } => MemoryError::Storage {
            context: context.clone(),
            source: anyhow::anyhow!("{source:#}"),
        },
        other => MemoryError::storage("committing memories", anyhow::anyhow!("{other}")),
    }
}
