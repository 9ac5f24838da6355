//! The assembled-context cache: an LRU with a TTL, invalidated per scope.
//!
//! An entry remembers every scope its assembly read (not only those that made it into the
//! content: a write anywhere it looked may change the answer). A write to any of them removes
//! it. An assembly that was running while a write landed must not cache its possibly stale
//! result, so callers take a [`Ticket`] before reading and [`ResultCache::insert`] refuses the
//! result if one of its scopes was invalidated after the ticket was taken.

use std::collections::{HashMap, HashSet};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aeterna_memory::{Identity, Layer, Scope};
use lru::LruCache;
use parking_lot::Mutex;

use crate::model::AssembledContext;

/// Everything an assembly depends on besides the stored data.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct CacheKey {
    pub identity: Identity,
    pub query: String,
    pub token_budget: usize,
    /// Sorted, without repeats.
    pub layers: Vec<Layer>,
    /// `min_relevance` as bits, so the key can be hashed.
    pub min_relevance_bits: u32,
}

impl CacheKey {
    pub fn new(
        identity: &Identity,
        query: &str,
        token_budget: usize,
        layers: &[Layer],
        min_relevance: f32,
    ) -> Self {
        let mut layers = layers.to_vec();
        layers.sort_unstable();
        layers.dedup();
        CacheKey {
            identity: identity.clone(),
            query: query.to_owned(),
            token_budget,
            layers,
            min_relevance_bits: min_relevance.to_bits(),
        }
    }
}

/// Taken before an assembly reads anything; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

/// A (tenant, scope) pair.
type TenantScope = (String, Scope);

/// Scopes remembered as recently invalidated, at most; past that the memory is reset, which
/// only costs in-flight assemblies their chance to be cached.
const MAX_REMEMBERED_INVALIDATIONS: usize = 65_536;

pub struct ResultCache {
    ttl: Duration,
    inner: Mutex<Inner>,
}

struct Inner {
    entries: LruCache<CacheKey, Entry>,
    by_scope: HashMap<TenantScope, HashSet<CacheKey>>,
    /// Increases on every invalidation.
    epoch: u64,
    invalidated_at: HashMap<TenantScope, u64>,
    /// Everything was invalidated at this epoch.
    cleared_at: u64,
}

struct Entry {
    value: Arc<AssembledContext>,
    scopes: Vec<Scope>,
    expires: Instant,
}

impl ResultCache {
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        ResultCache {
            ttl,
            inner: Mutex::new(Inner {
                entries: LruCache::new(capacity),
                by_scope: HashMap::new(),
                epoch: 0,
                invalidated_at: HashMap::new(),
                cleared_at: 0,
            }),
        }
    }

    /// Call before reading the stores for an assembly.
    pub fn ticket(&self) -> Ticket {
        Ticket(self.inner.lock().epoch)
    }

    pub fn get(&self, key: &CacheKey) -> Option<Arc<AssembledContext>> {
        self.get_at(key, Instant::now())
    }

    /// [`ResultCache::get`] at a given time.
    pub fn get_at(&self, key: &CacheKey, now: Instant) -> Option<Arc<AssembledContext>> {
        let mut inner = self.inner.lock();
        let expired = match inner.entries.get(key) {
            None => return None,
            Some(entry) if entry.expires > now => return Some(entry.value.clone()),
            Some(_) => true,
        };
        if expired && let Some(entry) = inner.entries.pop(key) {
            inner.unindex(key, &entry);
        }
        None
    }

    /// Caches `value`, which read `scopes`, unless one of them was written since `ticket`.
    /// Returns whether it was cached.
    pub fn insert(
        &self,
        key: CacheKey,
        value: Arc<AssembledContext>,
        scopes: Vec<Scope>,
        ticket: Ticket,
    ) -> bool {
        self.insert_at(key, value, scopes, ticket, Instant::now())
    }

    /// [`ResultCache::insert`] at a given time.
    pub fn insert_at(
        &self,
        key: CacheKey,
        value: Arc<AssembledContext>,
        scopes: Vec<Scope>,
        ticket: Ticket,
        now: Instant,
    ) -> bool {
        let mut inner = self.inner.lock();
        let tenant = key.identity.tenant_id.clone();
        let stale = ticket.0 < inner.cleared_at
            || scopes.iter().any(|scope| {
                inner
                    .invalidated_at
                    .get(&(tenant.clone(), scope.clone()))
                    .is_some_and(|at| *at > ticket.0)
            });
        if stale {
            return false;
        }
        if let Some(old) = inner.entries.pop(&key) {
            inner.unindex(&key, &old);
        }
        for scope in &scopes {
            inner
                .by_scope
                .entry((tenant.clone(), scope.clone()))
                .or_default()
                .insert(key.clone());
        }
        let entry = Entry {
            value,
            scopes,
            expires: now + self.ttl,
        };
        if let Some((evicted_key, evicted)) = inner.entries.push(key, entry) {
            inner.unindex(&evicted_key, &evicted);
        }
        true
    }

    /// Drops every entry that read `scope` of `tenant_id`.
    pub fn invalidate(&self, tenant_id: &str, scope: &Scope) {
        let mut inner = self.inner.lock();
        inner.epoch += 1;
        let epoch = inner.epoch;
        if inner.invalidated_at.len() >= MAX_REMEMBERED_INVALIDATIONS {
            inner.invalidated_at.clear();
            inner.cleared_at = epoch;
        }
        let tenant_scope = (tenant_id.to_owned(), scope.clone());
        inner.invalidated_at.insert(tenant_scope.clone(), epoch);
        if let Some(keys) = inner.by_scope.remove(&tenant_scope) {
            for key in keys {
                if let Some(entry) = inner.entries.pop(&key) {
                    inner.unindex(&key, &entry);
                }
            }
        }
    }

    /// Drops everything (used when change notifications were lost).
    pub fn clear(&self) {
        let mut inner = self.inner.lock();
        inner.epoch += 1;
        inner.cleared_at = inner.epoch;
        inner.entries.clear();
        inner.by_scope.clear();
        inner.invalidated_at.clear();
    }

    pub fn len(&self) -> usize {
        self.inner.lock().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Inner {
    fn unindex(&mut self, key: &CacheKey, entry: &Entry) {
        for scope in &entry.scopes {
            let tenant_scope = (key.identity.tenant_id.clone(), scope.clone());
            if let Some(keys) = self.by_scope.get_mut(&tenant_scope) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_scope.remove(&tenant_scope);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tenant: &str, query: &str) -> CacheKey {
        let mut who = Identity::new(tenant);
        who.session_id = Some("s1".into());
        CacheKey::new(&who, query, 4000, &[Layer::Session, Layer::Company], 0.3)
    }

    fn value(tokens: usize) -> Arc<AssembledContext> {
        Arc::new(AssembledContext {
            total_tokens: tokens,
            ..AssembledContext::empty(4000)
        })
    }

    fn scopes() -> Vec<Scope> {
        vec![
            Scope::new(Layer::Session, "s1"),
            Scope::new(Layer::Company, "company"),
        ]
    }

    #[test]
    fn hit_until_the_ttl_ends() {
        let cache = ResultCache::new(8, Duration::from_secs(300));
        let now = Instant::now();
        let ticket = cache.ticket();
        assert!(cache.insert_at(key("t", "q"), value(7), scopes(), ticket, now));
        assert_eq!(
            cache.get_at(&key("t", "q"), now).map(|v| v.total_tokens),
            Some(7)
        );
        assert!(
            cache
                .get_at(&key("t", "q"), now + Duration::from_secs(299))
                .is_some()
        );
        assert!(
            cache
                .get_at(&key("t", "q"), now + Duration::from_secs(300))
                .is_none()
        );
        assert!(cache.is_empty(), "expired entries are removed");
    }

    #[test]
    fn a_write_to_a_read_scope_invalidates_only_that_tenant() {
        let cache = ResultCache::new(8, Duration::from_secs(300));
        let ticket = cache.ticket();
        cache.insert(key("a", "q"), value(1), scopes(), ticket);
        cache.insert(key("b", "q"), value(2), scopes(), ticket);
        cache.invalidate("a", &Scope::new(Layer::Project, "p"));
        assert!(cache.get(&key("a", "q")).is_some(), "unrelated scope");
        cache.invalidate("a", &Scope::new(Layer::Company, "company"));
        assert!(cache.get(&key("a", "q")).is_none());
        assert!(
            cache.get(&key("b", "q")).is_some(),
            "other tenant untouched"
        );
    }

    #[test]
    fn results_read_before_a_write_are_not_cached() {
        let cache = ResultCache::new(8, Duration::from_secs(300));
        let ticket = cache.ticket();
        cache.invalidate("t", &Scope::new(Layer::Session, "s1"));
        assert!(!cache.insert(key("t", "q"), value(1), scopes(), ticket));
        assert!(cache.get(&key("t", "q")).is_none());
        // A write elsewhere does not block it.
        let ticket = cache.ticket();
        cache.invalidate("t", &Scope::new(Layer::Project, "p"));
        assert!(cache.insert(key("t", "q"), value(1), scopes(), ticket));
    }

    #[test]
    fn clear_drops_everything_and_blocks_in_flight_results() {
        let cache = ResultCache::new(8, Duration::from_secs(300));
        let before = cache.ticket();
        cache.insert(key("t", "q"), value(1), scopes(), before);
        cache.clear();
        assert!(cache.get(&key("t", "q")).is_none());
        assert!(!cache.insert(key("t", "q2"), value(1), scopes(), before));
    }

    #[test]
    fn eviction_keeps_the_scope_index_consistent() {
        let cache = ResultCache::new(2, Duration::from_secs(300));
        let ticket = cache.ticket();
        for query in ["a", "b", "c"] {
            cache.insert(key("t", query), value(1), scopes(), ticket);
        }
        assert_eq!(cache.len(), 2);
        assert!(cache.get(&key("t", "a")).is_none());
        cache.invalidate("t", &Scope::new(Layer::Session, "s1"));
        assert!(cache.is_empty());
        assert!(cache.inner.lock().by_scope.is_empty());
    }

    #[test]
    fn keys_differ_by_every_option() {
        let base = key("t", "q");
        let who = base.identity.clone();
        assert_eq!(
            base,
            CacheKey::new(&who, "q", 4000, &[Layer::Company, Layer::Session], 0.3)
        );
        assert_ne!(
            base,
            CacheKey::new(&who, "q", 4001, &[Layer::Session, Layer::Company], 0.3)
        );
        assert_ne!(base, CacheKey::new(&who, "q", 4000, &[Layer::Session], 0.3));
        assert_ne!(
            base,
            CacheKey::new(&who, "q", 4000, &[Layer::Session, Layer::Company], 0.4)
        );
        let mut other = who.clone();
        other.user_id = Some("u".into());
        assert_ne!(
            base,
            CacheKey::new(&other, "q", 4000, &[Layer::Session, Layer::Company], 0.3)
        );
    }
}
