//! The built-in state store: in process, bounded by a per-scope quota and a total size, with LRU
//! eviction at both levels (keys within a scope, whole scopes across the store).
//!
//! The total counts what the store really holds, not only what guests see: key and value bytes
//! plus a fixed overhead per key and per scope, so a guest filling its quota with tiny keys
//! cannot make the store outgrow `max_total_bytes`.

use lru::LruCache;
use parking_lot::Mutex;

use super::{
    EntryMeta, QuotaUsage, StateBatch, StateScope, StateStore, StateStoreError, entry_size,
};
use crate::config::StateConfig;

/// Host memory a stored key costs beyond its key and value bytes (the LRU node, the map entry,
/// two heap allocations), as counted against `max_total_bytes`.
pub const ENTRY_OVERHEAD_BYTES: u64 = 128;

/// Host memory a scope costs beyond its keys (its name, map entry and LRU list).
pub const SCOPE_OVERHEAD_BYTES: u64 = 256;

/// In-memory [`StateStore`].
///
/// * Per scope, key + value bytes stay within `quota_bytes`: a commit that goes past it evicts the
///   scope's least-recently-used keys.
/// * Across scopes, the total footprint (key and value bytes plus [`ENTRY_OVERHEAD_BYTES`] per key
///   and [`SCOPE_OVERHEAD_BYTES`] per scope) stays within `max_total_bytes`: past it, the
///   least-recently-used scopes are dropped whole (state is per session, and an idle session is
///   the cheapest loss). The scope just committed is never the one dropped.
pub struct MemoryStateStore {
    quota_bytes: u64,
    max_total_bytes: u64,
    inner: Mutex<Inner>,
}

struct Inner {
    scopes: LruCache<StateScope, Scope>,
    total_bytes: u64,
}

struct Scope {
    entries: LruCache<String, Vec<u8>>,
    used_bytes: u64,
}

impl Scope {
    fn new() -> Self {
        Self {
            entries: LruCache::unbounded(),
            used_bytes: 0,
        }
    }

    /// What the scope costs against the store's total.
    fn footprint(&self) -> u64 {
        self.used_bytes + self.entries.len() as u64 * ENTRY_OVERHEAD_BYTES + SCOPE_OVERHEAD_BYTES
    }

    fn usage(&self, quota_bytes: u64) -> QuotaUsage {
        QuotaUsage {
            used_bytes: self.used_bytes,
            quota_bytes,
            keys: u32::try_from(self.entries.len()).unwrap_or(u32::MAX),
        }
    }

    fn remove(&mut self, key: &str) -> u64 {
        match self.entries.pop(key) {
            Some(value) => {
                let size = entry_size(key, &value);
                self.used_bytes -= size;
                size
            }
            None => 0,
        }
    }
}

impl MemoryStateStore {
    pub fn new(config: StateConfig) -> Self {
        Self {
            quota_bytes: config.quota_bytes,
            max_total_bytes: config.max_total_bytes.max(config.quota_bytes),
            inner: Mutex::new(Inner {
                scopes: LruCache::unbounded(),
                total_bytes: 0,
            }),
        }
    }

    /// The footprint of all scopes: key and value bytes plus the per-key and per-scope overhead.
    pub fn total_bytes(&self) -> u64 {
        self.inner.lock().total_bytes
    }

    /// Number of scopes holding at least one key.
    pub fn scope_count(&self) -> usize {
        self.inner.lock().scopes.len()
    }
}

impl Default for MemoryStateStore {
    fn default() -> Self {
        Self::new(StateConfig::default())
    }
}

#[async_trait::async_trait]
impl StateStore for MemoryStateStore {
    fn quota_bytes(&self) -> u64 {
        self.quota_bytes
    }

    async fn get(&self, scope: &StateScope, key: &str) -> Result<Option<Vec<u8>>, StateStoreError> {
        let mut inner = self.inner.lock();
        Ok(inner
            .scopes
            .get_mut(scope)
            .and_then(|entries| entries.entries.get(key).cloned()))
    }

    async fn usage(&self, scope: &StateScope) -> Result<QuotaUsage, StateStoreError> {
        let inner = self.inner.lock();
        Ok(match inner.scopes.peek(scope) {
            Some(entries) => entries.usage(self.quota_bytes),
            None => QuotaUsage {
                used_bytes: 0,
                quota_bytes: self.quota_bytes,
                keys: 0,
            },
        })
    }

    async fn entry_size(
        &self,
        scope: &StateScope,
        key: &str,
    ) -> Result<Option<u64>, StateStoreError> {
        let inner = self.inner.lock();
        Ok(inner.scopes.peek(scope).and_then(|entries| {
            entries
                .entries
                .peek(key)
                .map(|value| entry_size(key, value))
        }))
    }

    async fn entries(&self, scope: &StateScope) -> Result<Vec<EntryMeta>, StateStoreError> {
        let mut inner = self.inner.lock();
        let Some(entries) = inner.scopes.get(scope) else {
            return Ok(Vec::new());
        };
        // `iter` walks most recent first; the contract is least recent first.
        Ok(entries
            .entries
            .iter()
            .rev()
            .map(|(key, value)| EntryMeta {
                key: key.clone(),
                size: entry_size(key, value),
            })
            .collect())
    }

    async fn commit(
        &self,
        scope: &StateScope,
        batch: StateBatch,
    ) -> Result<QuotaUsage, StateStoreError> {
        if let Some((key, size)) = batch.writes.iter().find_map(|(key, value)| {
            let size = entry_size(key, value.as_deref()?);
            (size > self.quota_bytes).then_some((key, size))
        }) {
            return Err(StateStoreError::Rejected(format!(
                "key `{key}` needs {size} bytes, over the quota of {} bytes",
                self.quota_bytes
            )));
        }

        let mut inner = self.inner.lock();
        let inner = &mut *inner;
        if inner.scopes.get_mut(scope).is_none() {
            inner.scopes.push(scope.clone(), Scope::new());
            inner.total_bytes += SCOPE_OVERHEAD_BYTES;
        }
        let entries = inner.scopes.get_mut(scope).expect("just inserted");
        let before = entries.footprint();
        if batch.clear {
            entries.entries.clear();
            entries.used_bytes = 0;
        }
        for (key, value) in batch.writes {
            entries.remove(&key);
            if let Some(value) = value {
                entries.used_bytes += entry_size(&key, &value);
                entries.entries.push(key, value);
            }
        }
        while entries.used_bytes > self.quota_bytes {
            let Some((key, value)) = entries.entries.pop_lru() else {
                break;
            };
            entries.used_bytes -= entry_size(&key, &value);
        }
        let usage = entries.usage(self.quota_bytes);
        let empty = entries.entries.is_empty();
        inner.total_bytes = inner.total_bytes - before + entries.footprint();
        if empty {
            inner.scopes.pop(scope);
            inner.total_bytes -= SCOPE_OVERHEAD_BYTES;
        }

        // The committed scope is the most recently used, so it is dropped last, and never:
        // it alone may exceed the total only by the overhead of its keys.
        while inner.total_bytes > self.max_total_bytes && inner.scopes.len() > 1 {
            let Some((_, dropped)) = inner.scopes.pop_lru() else {
                break;
            };
            inner.total_bytes -= dropped.footprint();
        }
        Ok(usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(quota_bytes: u64, max_total_bytes: u64) -> MemoryStateStore {
        MemoryStateStore::new(StateConfig {
            quota_bytes,
            max_total_bytes,
        })
    }

    fn scope(session: &str) -> StateScope {
        StateScope::new("tenant", session, "ext")
    }

    fn set(key: &str, value: &[u8]) -> StateBatch {
        StateBatch {
            clear: false,
            writes: vec![(key.to_owned(), Some(value.to_vec()))],
        }
    }

    // The contract every store shares is the suite in `aeterna_testkit::state_store`, run in
    // `tests/integration/state_store.rs`; these cases are about what only this store does: its total bound.

    #[tokio::test]
    async fn the_total_counts_bytes_and_overhead() {
        let store = store(1000, 10_000);
        let usage = store
            .commit(&scope("s"), set("key", b"value"))
            .await
            .unwrap();
        assert_eq!(
            usage,
            QuotaUsage {
                used_bytes: 8,
                quota_bytes: 1000,
                keys: 1
            }
        );
        assert_eq!(
            store.get(&scope("s"), "key").await.unwrap(),
            Some(b"value".to_vec())
        );
        assert_eq!(store.get(&scope("other"), "key").await.unwrap(), None);
        assert_eq!(
            store.total_bytes(),
            8 + ENTRY_OVERHEAD_BYTES + SCOPE_OVERHEAD_BYTES
        );
    }

    #[tokio::test]
    async fn clear_and_delete_release_their_share_of_the_total() {
        let store = store(1000, 10_000);
        let s = scope("s");
        store.commit(&s, set("a", b"123")).await.unwrap();
        store.commit(&s, set("b", b"123")).await.unwrap();
        let usage = store
            .commit(
                &s,
                StateBatch {
                    clear: false,
                    writes: vec![("a".into(), None)],
                },
            )
            .await
            .unwrap();
        assert_eq!(usage.used_bytes, 4);
        let usage = store
            .commit(
                &s,
                StateBatch {
                    clear: true,
                    writes: vec![("c".into(), Some(vec![1]))],
                },
            )
            .await
            .unwrap();
        assert_eq!(
            usage,
            QuotaUsage {
                used_bytes: 2,
                quota_bytes: 1000,
                keys: 1
            }
        );
        assert_eq!(
            store.total_bytes(),
            2 + ENTRY_OVERHEAD_BYTES + SCOPE_OVERHEAD_BYTES
        );
    }

    #[tokio::test]
    async fn the_total_bound_drops_least_recently_used_scopes() {
        let footprint = 100 + ENTRY_OVERHEAD_BYTES + SCOPE_OVERHEAD_BYTES;
        let store = store(100, 2 * footprint + footprint / 2);
        for session in ["s1", "s2"] {
            store
                .commit(&scope(session), set("k", &[0; 99]))
                .await
                .unwrap();
        }
        // Touch s1, so s2 is the least recently used scope.
        store.get(&scope("s1"), "k").await.unwrap();
        store
            .commit(&scope("s3"), set("k", &[0; 99]))
            .await
            .unwrap();
        assert_eq!(store.total_bytes(), 2 * footprint);
        assert_eq!(store.scope_count(), 2);
        assert!(store.get(&scope("s2"), "k").await.unwrap().is_none());
        assert!(store.get(&scope("s1"), "k").await.unwrap().is_some());
        assert!(store.get(&scope("s3"), "k").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn overwriting_a_key_replaces_its_share_of_the_total() {
        let store = store(1000, 10_000);
        let s = scope("s");
        store.commit(&s, set("k", &[0; 100])).await.unwrap();
        let usage = store.commit(&s, set("k", &[0; 10])).await.unwrap();
        assert_eq!(usage.used_bytes, 11);
        assert_eq!(
            store.total_bytes(),
            11 + ENTRY_OVERHEAD_BYTES + SCOPE_OVERHEAD_BYTES
        );
    }

    #[tokio::test]
    async fn tiny_keys_count_their_overhead_against_the_total() {
        // 1,000 one-byte entries are 2 KB of quota but 130 KB of host memory.
        let store = store(4096, 64 * 1024);
        let batch = StateBatch {
            clear: false,
            writes: (0..1_000)
                .map(|i| (format!("{i:03}"), Some(Vec::new())))
                .collect(),
        };
        store.commit(&scope("big"), batch).await.unwrap();
        store.commit(&scope("next"), set("k", b"v")).await.unwrap();
        assert_eq!(
            store.scope_count(),
            1,
            "the big scope was dropped for the total"
        );
        assert!(store.total_bytes() <= 64 * 1024);
    }

    #[tokio::test]
    async fn emptying_a_scope_releases_its_overhead() {
        let store = store(1000, 10_000);
        let s = scope("s");
        store.commit(&s, set("a", b"1")).await.unwrap();
        let batch = StateBatch {
            clear: true,
            writes: vec![],
        };
        store.commit(&s, batch).await.unwrap();
        assert_eq!(store.total_bytes(), 0);
        assert_eq!(store.scope_count(), 0);
    }
}
