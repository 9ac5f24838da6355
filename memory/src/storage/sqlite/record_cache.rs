//! [`RecordCache`]: recently read and written records, so that the records a search or an
//! assembly returns again and again are not read and decoded by SQLite every time.
//!
//! Every search ends by fetching its hits' records; on the embedded profile that was a round
//! trip to a connection's worker thread (plus the pool's check of the connection on its
//! return) and SQLite encoding the records as JSON for us to decode, for records that rarely
//! change. The cache holds records by id, least recently used first out, bounded in bytes
//! (`sqlite.record_cache_bytes`; an estimate of each record's heap footprint, counted before it
//! is kept). A hit is only a hit for the tenant that owns the record; any other tenant's
//! lookup of that id misses and goes to SQLite, whose query filters by tenant.
//!
//! Coherence: this process is the database's only writer (the data dir's lock), and every
//! write to a record goes through [`super::SqliteRecordStore`], which calls
//! [`invalidate`](RecordCache::invalidate) after committing an update, a delete or a
//! re-embedding. A read that missed fills the cache with what it read only if no invalidation
//! happened since it looked ([`Lookup::epoch`]): a read that raced a write may have read the
//! old version, and must not keep it after the write's invalidation. Like the lexical index,
//! this relies on a write's future running on once its commit is sent; MCP tool calls do, in
//! tasks of their own (rmcp spawns each), which a client hanging up does not cancel.

use std::sync::Arc;

use foldhash::HashSet;
use lru::LruCache;
use parking_lot::Mutex;
use uuid::Uuid;

use crate::model::MemoryRecord;

/// Estimated bytes a cached record holds besides its strings: the record, the `Arc`, the
/// map's entry and list node.
const RECORD_OVERHEAD: usize = 320;
/// Estimated bytes of one JSON value or string besides its text.
const VALUE_OVERHEAD: usize = 32;

#[derive(Debug)]
pub(super) struct RecordCache {
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    records: LruCache<Uuid, Cached>,
    bytes: usize,
    /// Counts invalidations; see the module docs.
    epoch: u64,
}

#[derive(Debug)]
struct Cached {
    record: Arc<MemoryRecord>,
    bytes: usize,
}

/// What a lookup found, what it did not, and the epoch to fill the cache with what is read
/// for the missing ids.
#[derive(Debug)]
pub(super) struct Lookup {
    pub found: Vec<Arc<MemoryRecord>>,
    pub missing: Vec<Uuid>,
    pub epoch: u64,
}

impl RecordCache {
    /// A cache of at most `max_bytes` (estimated); 0 caches nothing.
    pub fn new(max_bytes: usize) -> Self {
        RecordCache {
            max_bytes,
            inner: Mutex::new(Inner {
                records: LruCache::unbounded(),
                bytes: 0,
                epoch: 0,
            }),
        }
    }

    /// The cached records of `tenant_id` among `ids`, and the ids to read from the database;
    /// each id once.
    pub fn lookup(&self, tenant_id: &str, ids: &[Uuid]) -> Lookup {
        let mut distinct = HashSet::with_capacity_and_hasher(ids.len(), Default::default());
        let count = ids.len();
        let ids = ids.iter().filter(|id| distinct.insert(**id));
        if self.max_bytes == 0 {
            return Lookup {
                found: Vec::new(),
                missing: ids.copied().collect(),
                epoch: 0,
            };
        }
        let mut found = Vec::with_capacity(count);
        let mut missing = Vec::new();
        let mut inner = self.inner.lock();
        for id in ids {
            match inner.records.get(id) {
                Some(cached) if cached.record.tenant_id == tenant_id => {
                    found.push(cached.record.clone())
                }
                _ => missing.push(*id),
            }
        }
        Lookup {
            found,
            missing,
            epoch: inner.epoch,
        }
    }

    /// Keeps `records`, read from the database after a lookup that returned `epoch`, unless
    /// a write invalidated records since.
    pub fn fill(&self, records: &[MemoryRecord], epoch: u64) {
        if self.max_bytes == 0 || records.is_empty() {
            return;
        }
        // Copied before taking the lock, which other requests' lookups wait for.
        let copies: Vec<Cached> = records.iter().filter_map(|r| self.copy(r)).collect();
        let mut inner = self.inner.lock();
        if inner.epoch != epoch {
            return;
        }
        for cached in copies {
            self.keep(&mut inner, cached);
        }
    }

    /// Keeps a record this process has just inserted.
    pub fn insert_new(&self, record: &MemoryRecord) {
        if let Some(cached) = self.copy(record) {
            self.keep(&mut self.inner.lock(), cached);
        }
    }

    /// Forgets `ids`, after a committed write changed or removed them.
    pub fn invalidate(&self, ids: impl IntoIterator<Item = Uuid>) {
        if self.max_bytes == 0 {
            return;
        }
        let mut inner = self.inner.lock();
        inner.epoch += 1;
        for id in ids {
            if let Some(cached) = inner.records.pop(&id) {
                inner.bytes -= cached.bytes;
            }
        }
    }

    /// A copy of `record` to keep, if it fits in the cache at all.
    fn copy(&self, record: &MemoryRecord) -> Option<Cached> {
        let bytes = footprint(record);
        (bytes <= self.max_bytes).then(|| Cached {
            record: Arc::new(record.clone()),
            bytes,
        })
    }

    fn keep(&self, inner: &mut Inner, cached: Cached) {
        if let Some(replaced) = inner.records.pop(&cached.record.id) {
            inner.bytes -= replaced.bytes;
        }
        while inner.bytes + cached.bytes > self.max_bytes {
            let Some((_, evicted)) = inner.records.pop_lru() else {
                break;
            };
            inner.bytes -= evicted.bytes;
        }
        inner.bytes += cached.bytes;
        inner.records.put(cached.record.id, cached);
    }

    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.inner.lock().bytes
    }
}

/// The heap bytes `record` holds, estimated.
fn footprint(record: &MemoryRecord) -> usize {
    RECORD_OVERHEAD
        + record.tenant_id.len()
        + record.scope_id.len()
        + record.kind.len()
        + record.content.as_ref().map_or(0, String::len)
        + record
            .tags
            .iter()
            .map(|tag| VALUE_OVERHEAD + tag.len())
            .sum::<usize>()
        + json_footprint(&record.metadata)
        + record.content_hash.len()
        + record.embedder_id.len()
}

/// Recursion is bounded: stored metadata was parsed by `serde_json`, which refuses nesting
/// deeper than 128.
fn json_footprint(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    VALUE_OVERHEAD
        + match value {
            Value::String(text) => text.len(),
            Value::Array(items) => items.iter().map(json_footprint).sum(),
            Value::Object(map) => map
                .iter()
                .map(|(key, value)| VALUE_OVERHEAD + key.len() + json_footprint(value))
                .sum(),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Layer;

    fn record(tenant_id: &str, n: u128, content: &str) -> MemoryRecord {
        MemoryRecord {
            id: Uuid::from_u128(n),
            tenant_id: tenant_id.into(),
            layer: Layer::Project,
            scope_id: "aeterna".into(),
            kind: "memory".into(),
            content: Some(content.into()),
            tags: vec!["rust".into()],
            metadata: serde_json::json!({ "source": "test" }),
            content_hash: format!("hash-{n}"),
            embedder_id: "hash-v1-384".into(),
            created_at: 1,
            updated_at: 1,
            valid_from: 1,
            valid_to: None,
            version: 1,
        }
    }

    fn ids(records: &[Arc<MemoryRecord>]) -> Vec<u128> {
        records.iter().map(|record| record.id.as_u128()).collect()
    }

    #[test]
    fn a_record_is_found_only_by_its_own_tenant() {
        let cache = RecordCache::new(1 << 20);
        cache.insert_new(&record("acme", 1, "one"));

        let (one, two) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let lookup = cache.lookup("acme", &[one, two, one, two]);
        assert_eq!(ids(&lookup.found), [1], "each id once");
        assert_eq!(lookup.missing, [two]);

        let other = cache.lookup("globex", &[Uuid::from_u128(1)]);
        assert!(other.found.is_empty());
        assert_eq!(other.missing, [Uuid::from_u128(1)]);
    }

    #[test]
    fn a_read_that_raced_an_invalidation_is_not_kept() {
        let cache = RecordCache::new(1 << 20);
        let id = Uuid::from_u128(1);
        let before = cache.lookup("acme", &[id]);
        // A write changes record 1 and invalidates it while the read is in flight.
        cache.invalidate([id]);
        cache.fill(&[record("acme", 1, "old version")], before.epoch);
        assert!(cache.lookup("acme", &[id]).found.is_empty());

        let after = cache.lookup("acme", &[id]);
        cache.fill(&[record("acme", 1, "new version")], after.epoch);
        let found = cache.lookup("acme", &[id]).found;
        assert_eq!(found[0].content.as_deref(), Some("new version"));

        cache.invalidate([id]);
        assert!(cache.lookup("acme", &[id]).found.is_empty());
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn the_byte_bound_evicts_the_least_recently_used() {
        let one = footprint(&record("acme", 1, "x"));
        let cache = RecordCache::new(3 * one);
        for n in 1..=3 {
            cache.insert_new(&record("acme", n, "x"));
        }
        // Record 1 is used, so record 2 is the least recently used when 4 arrives.
        cache.lookup("acme", &[Uuid::from_u128(1)]);
        cache.insert_new(&record("acme", 4, "x"));
        let all: Vec<Uuid> = (1..=4).map(Uuid::from_u128).collect();
        assert_eq!(ids(&cache.lookup("acme", &all).found), [1, 3, 4]);
        assert!(cache.bytes() <= 3 * one);

        // A record larger than the whole cache is not kept, and evicts nothing.
        cache.insert_new(&record("acme", 5, &"x".repeat(3 * one)));
        assert_eq!(ids(&cache.lookup("acme", &all).found), [1, 3, 4]);
    }

    #[test]
    fn replacing_a_record_counts_its_bytes_once() {
        let cache = RecordCache::new(1 << 20);
        cache.insert_new(&record("acme", 1, "short"));
        let lookup = cache.lookup("acme", &[]);
        cache.fill(&[record("acme", 1, "a longer version")], lookup.epoch);
        assert_eq!(
            cache.bytes(),
            footprint(&record("acme", 1, "a longer version"))
        );
    }

    #[test]
    fn a_zero_bound_caches_nothing() {
        let cache = RecordCache::new(0);
        cache.insert_new(&record("acme", 1, "one"));
        let lookup = cache.lookup("acme", &[Uuid::from_u128(1)]);
        cache.fill(&[record("acme", 1, "one")], lookup.epoch);
        assert!(cache.lookup("acme", &[Uuid::from_u128(1)]).found.is_empty());
    }
}
