//! The per-callback state transaction behind the guest's `state` import.
//!
//! Reads see the callback's own writes; writes stay in the overlay until [`StateOverlay::commit`],
//! which the executor calls only when the callback returned `ok`. A faulting callback's overlay is
//! dropped, and with it every write.
//!
//! The quota is applied here, as the guest writes, so the guest observes exactly what will be
//! committed. The common case costs O(1) store requests: the overlay tracks the scope's usage
//! (fetched once) and asks the store for the size of a key only when it first touches it. Only
//! when a write would go past the quota (or the guest lists its keys) does it load the scope's
//! key sizes in LRU order and evict the least-recently-used keys, recorded as deletes in the
//! batch. The store enforces the quota again at commit time, which covers concurrent callbacks
//! racing on the same scope.
//!
//! # Memory
//!
//! The overlay holds only what the commit needs, so its memory is bounded by the quota, not by
//! how many keys the guest touches: a set whose value is live (their bytes fit in the quota), and
//! a delete only for a key the store holds (a key set and deleted within the callback leaves
//! nothing behind; absent keys are not remembered). A guest setting and deleting millions of
//! distinct keys in a loop keeps the overlay at the size of one.

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
    /// The keys this callback changed, least recently touched first.
    writes: LruCache<String, Pending>,
    /// What the scope looks like with the writes applied, once something needed it.
    view: Option<View>,
}

/// One key's change.
struct Pending {
    /// `Some` sets, `None` deletes.
    value: Option<Vec<u8>>,
    /// The key's size in the store before this callback (`None`: absent, or hidden by `clear`).
    /// A delete is kept only when this is `Some`: otherwise there is nothing to delete.
    stored: Option<u64>,
}

/// The scope as this callback sees it.
struct View {
    used_bytes: u64,
    keys: u64,
    /// Every key's size in LRU order, loaded when eviction or a listing needs it.
    all: Option<LruCache<String, u64>>,
}

impl StateOverlay {
    pub(crate) fn new(store: Arc<dyn StateStore>, scope: StateScope) -> Self {
        let quota_bytes = store.quota_bytes();
        Self {
            store,
            scope,
            quota_bytes,
            cleared: false,
            writes: LruCache::unbounded(),
            view: None,
        }
    }

    pub(crate) async fn get(&mut self, key: &str) -> Result<Option<Vec<u8>>, StateStoreError> {
        if let Some(all) = self.view.as_mut().and_then(|view| view.all.as_mut()) {
            all.promote(key);
        }
        if let Some(pending) = self.writes.peek(key) {
            return Ok(pending.value.clone());
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
        if size > self.quota_bytes {
            return Ok(Err(SetError::QuotaExceeded(self.usage().await?)));
        }
        let previous = self.size_of(&key).await?;
        let stored = self.stored_size(&key, previous);
        let quota_bytes = self.quota_bytes;
        let view = view_mut(&mut self.view);
        let fits = view.used_bytes - previous.unwrap_or(0) + size <= quota_bytes;
        if fits && view.all.is_none() {
            view.used_bytes = view.used_bytes - previous.unwrap_or(0) + size;
            view.keys += u64::from(previous.is_none());
        } else {
            self.load_all().await?;
            let view = view_mut(&mut self.view);
            let all = view.all.as_mut().expect("just loaded");
            if let Some(previous) = all.pop(&key) {
                view.used_bytes -= previous;
            }
            let mut evicted = Vec::new();
            while view.used_bytes + size > quota_bytes {
                let Some((old_key, old_size)) = all.pop_lru() else {
                    break;
                };
                view.used_bytes -= old_size;
                evicted.push((old_key, old_size));
            }
            all.push(key.clone(), size);
            view.used_bytes += size;
            view.keys = all.len() as u64;
            for (old_key, old_size) in evicted {
                self.record_delete(old_key, old_size);
            }
        }
        self.writes.push(
            key,
            Pending {
                value: Some(value),
                stored,
            },
        );
        Ok(Ok(()))
    }

    pub(crate) async fn delete(&mut self, key: &str) -> Result<bool, StateStoreError> {
        if !valid_key(key) {
            return Ok(false);
        }
        let Some(size) = self.size_of(key).await? else {
            return Ok(false);
        };
        let view = view_mut(&mut self.view);
        view.used_bytes -= size;
        view.keys -= 1;
        if let Some(all) = &mut view.all {
            all.pop(key);
        }
        self.record_delete(key.to_owned(), size);
        Ok(true)
    }

    pub(crate) async fn keys(&mut self) -> Result<Vec<String>, StateStoreError> {
        Ok(self
            .load_all()
            .await?
            .iter()
            .map(|(key, _)| key.clone())
            .collect())
    }

    pub(crate) fn clear(&mut self) {
        self.cleared = true;
        self.writes.clear();
        self.view = Some(View {
            used_bytes: 0,
            keys: 0,
            all: Some(LruCache::unbounded()),
        });
    }

    pub(crate) async fn usage(&mut self) -> Result<QuotaUsage, StateStoreError> {
        let quota_bytes = self.quota_bytes;
        let view = self.view().await?;
        Ok(QuotaUsage {
            used_bytes: view.used_bytes,
            quota_bytes,
            keys: u32::try_from(view.keys).unwrap_or(u32::MAX),
        })
    }

    /// Whether the callback wrote anything.
    pub(crate) fn is_dirty(&self) -> bool {
        self.cleared || !self.writes.is_empty()
    }

    /// Commits the callback's writes as one batch, in the order they were made. A no-op when
    /// nothing was written.
    pub(crate) async fn commit(self) -> Result<(), StateStoreError> {
        if !self.is_dirty() {
            return Ok(());
        }
        let Self {
            store,
            scope,
            cleared,
            mut writes,
            ..
        } = self;
        let mut batch = StateBatch {
            clear: cleared,
            writes: Vec::with_capacity(writes.len()),
        };
        while let Some((key, pending)) = writes.pop_lru() {
            batch.writes.push((key, pending.value));
        }
        store.commit(&scope, batch).await.map(drop)
    }

    /// Records that `key` (of `size` bytes, as this callback saw it) is gone: a delete for the
    /// store if the store holds the key, otherwise nothing at all.
    fn record_delete(&mut self, key: String, size: u64) {
        let stored = match self.writes.pop(&key) {
            Some(pending) => pending.stored,
            None => self.stored_size(&key, Some(size)),
        };
        if stored.is_some() {
            self.writes.push(
                key,
                Pending {
                    value: None,
                    stored,
                },
            );
        }
    }

    /// The key's size in the store before this callback, given its `current` size as the
    /// callback sees it: the same unless this callback already changed (or cleared) it.
    fn stored_size(&self, key: &str, current: Option<u64>) -> Option<u64> {
        match self.writes.peek(key) {
            Some(pending) => pending.stored,
            None if self.cleared => None,
            None => current,
        }
    }

    /// The scope's usage as this callback sees it, fetched on first need.
    async fn view(&mut self) -> Result<&mut View, StateStoreError> {
        if self.view.is_none() {
            let usage = self.store.usage(&self.scope).await?;
            self.view = Some(View {
                used_bytes: usage.used_bytes,
                keys: u64::from(usage.keys),
                all: None,
            });
        }
        Ok(view_mut(&mut self.view))
    }

    /// The current size of `key` (key + value bytes), if it exists for this callback. Loads the
    /// view.
    async fn size_of(&mut self, key: &str) -> Result<Option<u64>, StateStoreError> {
        let cleared = self.cleared;
        let view = self.view().await?;
        if let Some(all) = &view.all {
            return Ok(all.peek(key).copied());
        }
        if let Some(pending) = self.writes.peek(key) {
            return Ok(pending.value.as_ref().map(|value| entry_size(key, value)));
        }
        if cleared {
            return Ok(None);
        }
        self.store.entry_size(&self.scope, key).await
    }

    /// Loads every key's size in LRU order, with this callback's writes applied.
    async fn load_all(&mut self) -> Result<&mut LruCache<String, u64>, StateStoreError> {
        self.view().await?;
        if view_mut(&mut self.view).all.is_none() {
            let mut all = LruCache::unbounded();
            if !self.cleared {
                for entry in self.store.entries(&self.scope).await? {
                    all.push(entry.key, entry.size);
                }
            }
            for (key, pending) in self.writes.iter().rev() {
                match &pending.value {
                    Some(value) => {
                        all.push(key.clone(), entry_size(key, value));
                    }
                    None => {
                        all.pop(key);
                    }
                }
            }
            let view = view_mut(&mut self.view);
            view.used_bytes = all.iter().map(|(_, size)| size).sum();
            view.keys = all.len() as u64;
            view.all = Some(all);
        }
        Ok(view_mut(&mut self.view).all.as_mut().expect("just loaded"))
    }

    /// Keys this overlay holds a change for (for tests of its memory bound).
    #[cfg(test)]
    fn pending_keys(&self) -> usize {
        self.writes.len()
    }
}

fn view_mut(view: &mut Option<View>) -> &mut View {
    view.as_mut().expect("the view is loaded before use")
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
    async fn usage_tracks_overwrites_and_deletes_and_matches_the_store_after_commit() {
        let (store, scope) = setup(1000);
        let mut tx = overlay(&store, &scope);
        tx.set("a".into(), vec![0; 9]).await.unwrap().unwrap();
        tx.set("b".into(), vec![0; 19]).await.unwrap().unwrap();
        tx.commit().await.unwrap();

        let mut tx = overlay(&store, &scope);
        let usage = |used_bytes, keys| QuotaUsage {
            used_bytes,
            quota_bytes: 1000,
            keys,
        };
        assert_eq!(tx.usage().await.unwrap(), usage(30, 2));
        tx.set("a".into(), vec![0; 3]).await.unwrap().unwrap();
        assert_eq!(tx.usage().await.unwrap(), usage(24, 2));
        tx.set("c".into(), vec![0; 4]).await.unwrap().unwrap();
        assert_eq!(tx.usage().await.unwrap(), usage(29, 3));
        assert!(tx.delete("b").await.unwrap());
        assert!(!tx.delete("b").await.unwrap());
        assert_eq!(tx.usage().await.unwrap(), usage(9, 2));
        tx.commit().await.unwrap();
        assert_eq!(store.usage(&scope).await.unwrap(), usage(9, 2));
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

    #[tokio::test]
    async fn setting_and_deleting_distinct_keys_leaves_nothing_behind() {
        let (store, scope) = setup(1 << 20);
        let mut tx = overlay(&store, &scope);
        tx.set("kept".into(), b"1".to_vec()).await.unwrap().unwrap();
        tx.commit().await.unwrap();

        let mut tx = overlay(&store, &scope);
        for i in 0..10_000 {
            let key = format!("churn-{i:05}");
            tx.set(key.clone(), vec![0; 1024]).await.unwrap().unwrap();
            assert!(tx.delete(&key).await.unwrap());
            assert!(!tx.delete(&format!("absent-{i}")).await.unwrap());
        }
        assert_eq!(
            tx.pending_keys(),
            0,
            "no tombstones for keys the store never had"
        );
        assert!(tx.delete("kept").await.unwrap());
        assert_eq!(tx.pending_keys(), 1, "a delete of a stored key is kept");
        tx.set("kept".into(), b"2".to_vec()).await.unwrap().unwrap();
        assert!(tx.delete("kept").await.unwrap());
        assert_eq!(
            tx.pending_keys(),
            1,
            "and stays a delete after a set in between"
        );
        tx.commit().await.unwrap();
        assert!(store.entries(&scope).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn evictions_of_keys_set_in_this_callback_leave_nothing_behind() {
        let (store, scope) = setup(100);
        let mut tx = overlay(&store, &scope);
        for i in 0..1_000 {
            tx.set(format!("k{i:04}"), vec![0; 45])
                .await
                .unwrap()
                .unwrap();
        }
        // Two 50-byte entries fit; every older one was evicted within the callback.
        assert_eq!(tx.pending_keys(), 2);
        assert_eq!(tx.usage().await.unwrap().keys, 2);
        tx.commit().await.unwrap();
        let mut keys: Vec<_> = store
            .entries(&scope)
            .await
            .unwrap()
            .into_iter()
            .map(|e| e.key)
            .collect();
        keys.sort();
        assert_eq!(keys, ["k0998", "k0999"]);
    }
}
