//! Following the writes of other instances that share the record store.
//!
//! Each `aeterna serve` of the scale-out profile holds its own in-memory vector index, loaded
//! from the durable vectors at start. Writes made through other instances reach it through the
//! store's change log: before every search, and on an interval, the service reads the changes
//! after the last position it applied and upserts (or removes) the vectors of those records
//! as they are now, then announces them to its subscribers (cache invalidation). Applying a
//! change is idempotent. The service's own writes appear in the log too, marked as its own,
//! and are skipped: it applied and announced them as it made them. A vector store every
//! instance shares (Qdrant) already holds the others' writes: their changes are then only
//! announced. See [`crate::storage::postgres`] for why positions are seen in order.

use std::collections::HashMap;

use crate::error::Result;
use crate::model::MemoryChange;
use crate::storage::RecordStore;
use crate::vector::{VectorEntry, VectorStore};
use crate::writes::Writes;

/// How often and how far back instances follow each other (`[memory.follow]`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FollowConfig {
    /// Catch up at least this often without a search asking (1 s): bounds how long another
    /// instance's write takes to invalidate this one's caches.
    pub interval_ms: u64,
    /// Changes older than this are pruned from the log (1 day). An instance that cannot reach
    /// the database for longer reloads its index on restart.
    pub retention_secs: u64,
    /// Changes read per query (1 024).
    pub page: usize,
}

impl Default for FollowConfig {
    fn default() -> Self {
        FollowConfig {
            interval_ms: 1_000,
            retention_secs: 24 * 3600,
            page: 1024,
        }
    }
}

/// The position this instance has applied the change log up to.
pub(crate) struct Follower {
    position: tokio::sync::Mutex<i64>,
    page: usize,
}

impl Follower {
    pub(crate) fn new(position: i64, config: &FollowConfig) -> Self {
        Follower {
            position: tokio::sync::Mutex::new(position),
            page: config.page.max(1),
        }
    }

    /// Applies every change after the current position; returns what changed, for
    /// notification. Holds the service's write lock while applying, so a change read from
    /// the log can never overwrite a newer local write in the index.
    pub(crate) async fn catch_up(
        &self,
        records: &dyn RecordStore,
        vectors: &dyn VectorStore,
        writes: &Writes,
    ) -> Result<Vec<MemoryChange>> {
        let mut position = self.position.lock().await;
        let mut announced = Vec::new();
        loop {
            let apply = !vectors.shared();
            let changes = records.changes_after(*position, self.page, apply).await?;
            let Some(last) = changes.last() else { break };
            let last = last.position;
            let full = changes.len() >= self.page;
            let _write = writes.lock().await;
            let mut upserts: HashMap<String, Vec<VectorEntry>> = HashMap::new();
            let mut removals: HashMap<String, Vec<uuid::Uuid>> = HashMap::new();
            for change in changes.into_iter().filter(|change| !change.own) {
                announced.push(MemoryChange {
                    tenant_id: change.tenant_id.clone(),
                    scope: change.scope,
                });
                match change.current {
                    _ if !apply => {}
                    Some(entry) => upserts.entry(change.tenant_id).or_default().push(entry),
                    None => removals
                        .entry(change.tenant_id)
                        .or_default()
                        .push(change.id),
                }
            }
            for (tenant_id, entries) in upserts {
                vectors.upsert(&tenant_id, entries).await?;
            }
            for (tenant_id, ids) in removals {
                vectors.remove(&tenant_id, &ids).await?;
            }
            *position = last;
            if !full {
                break;
            }
        }
        announced.dedup();
        Ok(announced)
    }
}
