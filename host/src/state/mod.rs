//! Extension state: a key-value store per (tenant, session, extension) with a byte quota.
//!
//! [`StateStore`] is the storage backend: [`MemoryStateStore`] in process, or (feature `redis`)
//! `RedisStateStore`, shared by many hosts: reads are single round trips and each callback's
//! writes arrive as one batch, applied by one Lua script.
//! [`overlay::StateOverlay`] is the per-callback transaction the guest's `state` import talks to:
//! it buffers writes, applies the quota with LRU eviction, and is committed only when the
//! callback returns `ok`.

mod memory;
pub(crate) mod overlay;
#[cfg(feature = "redis")]
mod redis;

#[cfg(feature = "redis")]
pub use self::redis::{MAX_SCOPE_PART_BYTES, RedisStateConfig, RedisStateStore};
pub use memory::MemoryStateStore;

use serde::Serialize;

/// Longest key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 1024;

/// Whose state: one extension's private key space within one tenant's session.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct StateScope {
    pub tenant: String,
    pub session: String,
    pub extension: String,
}

impl StateScope {
    pub fn new(
        tenant: impl Into<String>,
        session: impl Into<String>,
        extension: impl Into<String>,
    ) -> Self {
        Self {
            tenant: tenant.into(),
            session: session.into(),
            extension: extension.into(),
        }
    }
}

/// How much of its quota a scope uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QuotaUsage {
    /// Bytes of keys plus values stored.
    pub used_bytes: u64,
    pub quota_bytes: u64,
    pub keys: u32,
}

/// A stored key and the bytes it counts against the quota (key + value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryMeta {
    pub key: String,
    pub size: u64,
}

/// The writes of one callback, applied atomically by [`StateStore::commit`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateBatch {
    /// Remove every key of the scope before applying `writes`.
    pub clear: bool,
    /// In order: `Some(value)` sets, `None` deletes. Later entries are more recently used.
    pub writes: Vec<(String, Option<Vec<u8>>)>,
}

impl StateBatch {
    pub fn is_empty(&self) -> bool {
        !self.clear && self.writes.is_empty()
    }
}

/// Why the state store could not serve a request. The callback that needed it faults (kind
/// `host`) and its writes are discarded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateStoreError {
    #[error("state store unavailable: {0}")]
    Unavailable(String),
    #[error("state write rejected: {0}")]
    Rejected(String),
}

/// Storage backend for extension state. Object safe, so hosts hold an `Arc<dyn StateStore>`.
///
/// Every method is about one scope; scopes never see each other's keys. Implementations track
/// recency per key (reads and writes count as use) so that quota eviction drops the
/// least-recently-used keys.
#[async_trait::async_trait]
pub trait StateStore: Send + Sync + 'static {
    /// Key + value bytes allowed per scope.
    fn quota_bytes(&self) -> u64;

    /// The value under `key`; marks the key as recently used.
    async fn get(&self, scope: &StateScope, key: &str) -> Result<Option<Vec<u8>>, StateStoreError>;

    /// Bytes and keys the scope holds.
    async fn usage(&self, scope: &StateScope) -> Result<QuotaUsage, StateStoreError>;

    /// The size (key + value bytes) of `key`, if stored. Does not count as use.
    async fn entry_size(
        &self,
        scope: &StateScope,
        key: &str,
    ) -> Result<Option<u64>, StateStoreError>;

    /// Every key of the scope with its size, least recently used first.
    async fn entries(&self, scope: &StateScope) -> Result<Vec<EntryMeta>, StateStoreError>;

    /// Applies one callback's writes atomically, then evicts least-recently-used keys while the
    /// scope is over its quota. Returns the usage afterwards. A single entry larger than the quota
    /// rejects the whole batch.
    async fn commit(
        &self,
        scope: &StateScope,
        batch: StateBatch,
    ) -> Result<QuotaUsage, StateStoreError>;
}

/// Bytes an entry counts against the quota.
pub(crate) fn entry_size(key: &str, value: &[u8]) -> u64 {
    (key.len() + value.len()) as u64
}
