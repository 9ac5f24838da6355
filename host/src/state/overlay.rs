//! The per-callback state transaction behind the guest's `state` import.
//!
//! Reads see the callback's own writes; writes stay in the overlay until [`StateOverlay::commit`],
//! which the executor calls only when the callback returned `ok`. A faulting callback's overlay is
//! dropped, and with it every write.
//!
//! The quota is applied here, as the guest writes, against a model of the scope's keys (sizes in
//! LRU order) loaded from the store on the first call that needs it. A `set` that would go past
//! the quota evicts the least-recently-used keys (recorded as deletes in the batch), so the guest
//! observes exactly what will be committed. The store enforces the quota again at commit time,
//! which covers concurrent callbacks racing on the same scope.

use std::collections::HashMap;
use std::sync::Arc;

use lru::LruCache;

use super::{
    MAX_KEY_BYTES, QuotaUsage, StateBatch, StateScope, StateStore, StateStoreError, entry_size,
};

/// Why a guest `set` was refused (mirrors the WIT `state-error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SetError {
    QuotaExceeded(QuotaUsage),
    InvalidKey(String),
}

pub(crate) struct StateOverlay {
    store: Arc<dyn StateStore>,
    scope: StateScope,
    quota_bytes: u64,
    cleared: bool,
    /// The callback's writes: `Some` sets, `None` deletes (including evictions).
    writes: HashMap<String, Option<Vec<u8>>>,
    /// Sizes of the scope's keys as this callback sees them, least recently used first. Loaded
    /// before the first write, so `writes` is never non-empty without it.
    model: Option<Model>,
}

struct Model {
    sizes: LruCache<String, u64>,
    used_bytes: u64,
}

impl StateOverlay {
    pub(crate) fn new(store: Arc<dyn StateStore>, scope: StateScope) -> Self {
        let quota_bytes = store.quota_bytes();
        Self {
            store,
            scope,
            quota_bytes,
            cleared: false,
            writes: HashMap::new(),
            model: None,
        }
    }

    pub(crate) async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, StateStoreError> {
        if let Some(model) = &mut self.model {
            model.sizes.promote(key);
        }
        if let Some(written) = self.writes.get(key) {
            return Ok(written.clone());
        }
        if self.cleared || !valid_key(key) {
            return Ok(None);
        }
        self.store.get(&self.scope, key).await
    }

    pub(crate) async fn set(
        &mut self,
        key: String,
        value: Vec<u8>,
    ) -> Result<Result<(), SetError>, StateStoreError> {
        if key.is_empty() {
            return Ok(Err(SetError::InvalidKey("the key is empty".into())));
        }
        if key.len() > MAX_KEY_BYTES {
            return Ok(Err(SetError::InvalidKey(format!(
                "the key is {} bytes long; at most {MAX_KEY_BYTES} are allowed",
                key.len()
            ))));
        }
        let size = entry_size(&key, &value);
        let quota_bytes = self.quota_bytes;
        let model = self.model().await?;
        if size > quota_bytes {
            return Ok(Err(SetError::QuotaExceeded(model.usage(quota_bytes))));
        }
        if let Some(previous) = model.sizes.pop(&key) {
            model.used_bytes -= previous;
        }
        let mut evicted = Vec::new();
        while model.used_bytes + size > quota_bytes {
            let Some((old_key, old_size)) = model.sizes.pop_lru() else {
                break;
            };
            model.used_bytes -= old_size;
            evicted.push(old_key);
        }
        model.sizes.push(key.clone(), size);
        model.used_bytes += size;
        for old_key in evicted {
            self.writes.insert(old_key, None);
        }
        self.writes.insert(key, Some(value));
        Ok(Ok(()))
    }

    pub(crate) async fn delete(&mut self, key: &str) -> Result<bool, StateStoreError> {
        let model = self.model().await?;
        let Some(size) = model.sizes.pop(key) else {
            return Ok(false);
        };
        model.used_bytes -= size;
        self.writes.insert(key.to_owned(), None);
        Ok(true)
    }

    pub(crate) async fn keys(&mut self) -> Result<Vec<String>, StateStoreError> {
        let model = self.model().await?;
        Ok(model.sizes.iter().map(|(key, _)| key.clone()).collect())
    }

    pub(crate) fn clear(&mut self) {
        self.cleared = true;
        self.writes.clear();
        self.model = Some(Model {
            sizes: LruCache::unbounded(),
            used_bytes: 0,
        });
    }

    pub(crate) async fn usage(&mut self) -> Result<QuotaUsage, StateStoreError> {
        let quota_bytes = self.quota_bytes;
        Ok(self.model().await?.usage(quota_bytes))
    }

    /// Whether the callback wrote anything.
    pub(crate) fn is_dirty(&self) -> bool {
        self.cleared || !self.writes.is_empty()
    }

    /// Commits the callback's writes as one batch. A no-op when nothing was written.
    pub(crate) async fn commit(self) -> Result<(), StateStoreError> {
        if !self.is_dirty() {
            return Ok(());
        }
        let Self {
            store,
            scope,
            cleared,
            mut writes,
            model,
            ..
        } = self;
        let mut batch = StateBatch {
            clear: cleared,
            writes: Vec::with_capacity(writes.len()),
        };
        // Deletes first, then sets from least to most recently used, so the store's recency
        // order matches what the callback saw.
        batch.writes.extend(
            writes
                .iter()
                .filter(|(_, value)| value.is_none())
                .map(|(key, _)| (key.clone(), None)),
        );
        if let Some(model) = model {
            for (key, _) in model.sizes.iter().rev() {
                if let Some(Some(value)) = writes.remove(key) {
                    batch.writes.push((key.clone(), Some(value)));
                }
            }
        }
        store.commit(&scope, batch).await.map(drop)
    }

    async fn model(&mut self) -> Result<&mut Model, StateStoreError> {
        if self.model.is_none() {
            let mut model = Model {
                sizes: LruCache::unbounded(),
                used_bytes: 0,
            };
            if !self.cleared {
                for entry in self.store.entries(&self.scope).await? {
                    model.used_bytes += entry.size;
                    model.sizes.push(entry.key, entry.size);
                }
            }
            self.model = Some(model);
        }
        Ok(self.model.as_mut().expect("the model was just loaded"))
    }
}

impl Model {
    fn usage(&self, quota_bytes: u64) -> QuotaUsage {
        QuotaUsage {
            used_bytes: self.used_bytes,
            quota_bytes,
            keys: u32::try_from(self.sizes.len()).unwrap_or(u32::MAX),
        }
    }
}

fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= MAX_KEY_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::StateConfig;
    use crate::state::MemoryStateStore;

    fn setup(quota_bytes: u64) -> (Arc<MemoryStateStore>, StateScope) {
        let store = Arc::new(MemoryStateStore::new(StateConfig {
            quota_bytes,
            max_total_bytes: 1 << 20,
        }));
        (store, StateScope::new("t", "s", "ext"))
    }

    fn overlay(store: &Arc<MemoryStateStore>, scope: &StateScope) -> StateOverlay {
        StateOverlay::new(store.clone(), scope.clone())
    }

    #[tokio::test]
    async fn reads_see_own_writes_before_commit_and_others_see_them_after() {
        let (store, scope) = setup(1000);
        let mut tx = overlay(&store, &scope);
        tx.set("k".into(), b"v".to_vec()).await.unwrap().unwrap();
        assert_eq!(tx.get("k").await.unwrap(), Some(b"v".to_vec()));
        assert_eq!(
            store.get(&scope, "k").await.unwrap(),
            None,
            "not committed yet"
        );
        tx.commit().await.unwrap();
        assert_eq!(store.get(&scope, "k").await.unwrap(), Some(b"v".to_vec()));
    }

    #[tokio::test]
    async fn dropping_the_overlay_discards_every_write() {
        let (store, scope) = setup(1000);
        let mut tx = overlay(&store, &scope);
        tx.set("keep".into(), b"1".to_vec()).await.unwrap().unwrap();
        tx.commit().await.unwrap();

        let mut tx = overlay(&store, &scope);
        tx.set("new".into(), b"2".to_vec()).await.unwrap().unwrap();
        assert!(tx.delete("keep").await.unwrap());
        tx.clear();
        drop(tx); // the callback faulted

        assert_eq!(
            store.get(&scope, "keep").await.unwrap(),
            Some(b"1".to_vec())
        );
        assert_eq!(store.get(&scope, "new").await.unwrap(), None);
    }

    #[tokio::test]
    async fn set_rejects_invalid_keys_and_oversized_entries() {
        let (store, scope) = setup(100);
        let mut tx = overlay(&store, &scope);
        assert!(matches!(
            tx.set(String::new(), vec![1]).await.unwrap(),
            Err(SetError::InvalidKey(_))
        ));
        let long = "k".repeat(MAX_KEY_BYTES + 1);
        assert!(matches!(
            tx.set(long, vec![1]).await.unwrap(),
            Err(SetError::InvalidKey(_))
        ));
        tx.set("a".into(), vec![0; 9]).await.unwrap().unwrap();
        let refused = tx.set("big".into(), vec![0; 98]).await.unwrap();
        assert_eq!(
            refused,
            Err(SetError::QuotaExceeded(QuotaUsage {
                used_bytes: 10,
                quota_bytes: 100,
                keys: 1
            }))
        );
        // The refused write left everything else in place.
        assert_eq!(tx.keys().await.unwrap(), ["a"]);
    }

    #[tokio::test]
    async fn set_past_the_quota_evicts_lru_keys_visibly_and_on_commit() {
        let (store, scope) = setup(30);
        let mut tx = overlay(&store, &scope);
        for key in ["k1", "k2", "k3"] {
            tx.set(key.into(), vec![0; 8]).await.unwrap().unwrap();
        }
        tx.commit().await.unwrap();

        let mut tx = overlay(&store, &scope);
        tx.usage().await.unwrap();
        assert!(tx.get("k1").await.unwrap().is_some()); // k2 is now least recently used
        tx.set("k4".into(), vec![0; 8]).await.unwrap().unwrap();
        assert_eq!(
            tx.get("k2").await.unwrap(),
            None,
            "the evicted key is gone for the guest"
        );
        let mut keys = tx.keys().await.unwrap();
        keys.sort();
        assert_eq!(keys, ["k1", "k3", "k4"]);
        assert_eq!(tx.usage().await.unwrap().used_bytes, 30);
        tx.commit().await.unwrap();

        let mut stored: Vec<_> = store
            .entries(&scope)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.key)
            .collect();
        stored.sort();
        assert_eq!(stored, ["k1", "k3", "k4"]);
    }

    #[tokio::test]
    async fn clear_hides_stored_keys_and_commits_as_clear() {
        let (store, scope) = setup(1000);
        let mut tx = overlay(&store, &scope);
        tx.set("a".into(), b"1".to_vec()).await.unwrap().unwrap();
        tx.commit().await.unwrap();

        let mut tx = overlay(&store, &scope);
        tx.clear();
        assert_eq!(tx.get("a").await.unwrap(), None);
        assert!(tx.keys().await.unwrap().is_empty());
        tx.set("b".into(), b"2".to_vec()).await.unwrap().unwrap();
        tx.commit().await.unwrap();
        assert_eq!(store.get(&scope, "a").await.unwrap(), None);
        assert_eq!(store.get(&scope, "b").await.unwrap(), Some(b"2".to_vec()));
    }

    #[tokio::test]
    async fn delete_reports_whether_the_key_existed() {
        let (store, scope) = setup(1000);
        let mut tx = overlay(&store, &scope);
        assert!(!tx.delete("missing").await.unwrap());
        tx.set("a".into(), b"1".to_vec()).await.unwrap().unwrap();
        assert!(tx.delete("a").await.unwrap());
        assert_eq!(tx.get("a").await.unwrap(), None);
        tx.commit().await.unwrap();
        assert!(store.entries(&scope).await.unwrap().is_empty());
    }
}
