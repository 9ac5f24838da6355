//! The shared hot cache of assembled contexts, in Redis, for several server instances over one
//! set of stores (the scale-out profile). It replaces the in-process [`crate::cache`] when the
//! server has a `redis_url`.
//!
//! # Invalidation across instances: keyspace versioning
//!
//! Every tenant has a version in Redis, `<prefix>:{<len>:<tenant>}:ver`, bumped after every
//! memory write of that tenant on any instance; an entry's key contains the version it was
//! computed under (and a global epoch), `<prefix>:{<len>:<tenant>}:e:<epoch>:<version>:<hash>`.
//! A lookup reads the version and the entry in one script, so after a write's bump no instance
//! can find an entry computed before it. An assembly reads the version *before* it reads the
//! stores, so a result that raced with a write is filed under the old version, never served
//! again. Versions never repeat: a missing version key (expired, evicted) is recreated from
//! Redis's clock in microseconds, past any value it had. Version keys outlive entries.
//!
//! # Redis lost at run time
//!
//! Any failed request turns the cache off for [`SharedCacheConfig::retry_after`]: assemblies run
//! uncached (never an error for the caller), one warning is logged per outage, and version bumps
//! that could not be sent are kept (bounded; past the bound the global epoch is bumped instead)
//! and sent first when Redis answers again, before any lookup is served from it.
//!
//! Values are zstd-compressed JSON, at most [`MAX_ENTRY_BYTES`] stored; larger results are not
//! cached. Reads decompress into at most [`MAX_DECOMPRESSED_BYTES`].

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::cache::CacheKey;
use crate::model::AssembledContext;

/// Largest compressed entry stored.
pub const MAX_ENTRY_BYTES: usize = 1024 * 1024;
/// Largest entry a read decompresses.
pub const MAX_DECOMPRESSED_BYTES: usize = 16 * 1024 * 1024;
/// Tenants whose bump waits for Redis, at most; past it the global epoch is bumped instead.
const MAX_PENDING_BUMPS: usize = 10_000;
/// zstd level for entries: fast, and contexts are text that compresses well anyway.
const ZSTD_LEVEL: i32 = 3;

/// Where the shared cache lives and how it behaves.
#[derive(Clone)]
pub struct SharedCacheConfig {
    /// `redis://…` or `rediss://…`; its password never reaches logs or errors.
    pub url: String,
    /// Prefix of every key, so deployments can share a Redis.
    pub key_prefix: String,
    /// How long an entry lives when nothing invalidates it.
    pub ttl: Duration,
    /// Bound on connecting and on each request.
    pub timeout: Duration,
    /// After a failure, how long the cache stays off before Redis is tried again.
    pub retry_after: Duration,
}

impl SharedCacheConfig {
    pub fn new(url: impl Into<String>, ttl: Duration) -> Self {
        SharedCacheConfig {
            url: url.into(),
            key_prefix: "aeterna:ctx".into(),
            ttl,
            timeout: Duration::from_secs(1),
            retry_after: Duration::from_secs(5),
        }
    }
}

impl fmt::Debug for SharedCacheConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedCacheConfig")
            .field("url", &redacted_url(&self.url))
            .field("key_prefix", &self.key_prefix)
            .field("ttl", &self.ttl)
            .field("timeout", &self.timeout)
            .field("retry_after", &self.retry_after)
            .finish()
    }
}

/// `url` with any password redacted, for logs and errors (by the one secret redactor).
pub fn redacted_url(url: &str) -> String {
    aeterna_redact::redact_url_password(url)
}

/// The cache store as `/readyz` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheHealth {
    /// Reachable and in use.
    Ok,
    /// Reachable, but a recent failure keeps the cache off until its retry pause ends.
    Degraded,
    /// Not reachable: assemblies run uncached.
    Down,
}

/// What a lookup found.
pub(crate) enum Lookup {
    Hit(Arc<AssembledContext>),
    /// Not cached: store the result under this key.
    Miss(String),
    /// Redis is off: run uncached.
    Unavailable,
}

/// The Redis-backed result cache; see the module docs.
pub struct SharedResultCache {
    config: SharedCacheConfig,
    connection: ConnectionManager,
    lookup: redis::Script,
    bump: redis::Script,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Set while the cache is off after a failure.
    off_until: Option<Instant>,
    /// Tenants whose version bump did not reach Redis.
    pending: HashSet<String>,
    /// Too many pending tenants: bump the global epoch instead.
    pending_epoch: bool,
}

impl SharedResultCache {
    /// Connects within `timeout`. An unreachable Redis is an error naming `redis_url` (with the
    /// password redacted).
    pub async fn connect(config: SharedCacheConfig) -> anyhow::Result<Self> {
        let shown = redacted_url(&config.url);
        let scrub = |message: String| message.replace(&config.url, &shown);
        if config.key_prefix.is_empty() || config.key_prefix.contains(['{', '}']) {
            anyhow::bail!(
                "the context cache key prefix must be non-empty and contain no `{{` or `}}`"
            );
        }
        let client = redis::Client::open(config.url.as_str()).map_err(|err| {
            anyhow::anyhow!(
                "redis_url `{shown}` is not a Redis URL ({}); use redis://[:password@]host:port[/db]",
                scrub(err.to_string())
            )
        })?;
        let manager = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(config.timeout))
            .set_response_timeout(Some(config.timeout))
            .set_number_of_retries(1)
            .set_max_delay(config.timeout);
        let mut connection = ConnectionManager::new_with_config(client, manager)
            .await
            .map_err(|err| {
                anyhow::anyhow!(
                    "cannot connect to redis_url `{shown}`: {}; start Redis or remove redis_url",
                    scrub(err.to_string())
                )
            })?;
        let _: String = redis::cmd("PING")
            .query_async(&mut connection)
            .await
            .map_err(|err| {
                anyhow::anyhow!(
                    "redis_url `{shown}` does not answer PING: {}",
                    scrub(err.to_string())
                )
            })?;
        Ok(SharedResultCache {
            config,
            connection,
            lookup: redis::Script::new(LOOKUP_SCRIPT),
            bump: redis::Script::new(BUMP_SCRIPT),
            state: Mutex::new(State::default()),
        })
    }

    pub fn config(&self) -> &SharedCacheConfig {
        &self.config
    }

    /// The cached context for `key`, if one was stored under the tenant's current version.
    pub(crate) async fn lookup(&self, key: &CacheKey) -> Lookup {
        if !self.usable().await {
            return Lookup::Unavailable;
        }
        let tenant = self.tenant_base(&key.identity.tenant_id);
        let found: redis::RedisResult<(String, Option<Vec<u8>>)> = self
            .lookup
            .key(self.epoch_key())
            .key(format!("{tenant}:ver"))
            .arg(format!("{tenant}:e:"))
            .arg(entry_hash(key))
            .arg(self.version_ttl_ms())
            .invoke_async(&mut self.connection.clone())
            .await;
        match found {
            Ok((entry_key, Some(stored))) => match decode(&stored) {
                Ok(context) => Lookup::Hit(Arc::new(context)),
                Err(error) => {
                    tracing::warn!(%error, "dropping an unreadable context cache entry");
                    Lookup::Miss(entry_key)
                }
            },
            Ok((entry_key, None)) => Lookup::Miss(entry_key),
            Err(error) => {
                self.failed("lookup", &error);
                Lookup::Unavailable
            }
        }
    }

    /// Stores `context` under `entry_key` (from a [`Lookup::Miss`]) for the TTL.
    pub(crate) async fn store(&self, entry_key: String, context: &AssembledContext) {
        let stored = match encode(context) {
            Ok(stored) if stored.len() <= MAX_ENTRY_BYTES => stored,
            Ok(stored) => {
                tracing::debug!(
                    bytes = stored.len(),
                    "assembled context too large for the shared cache"
                );
                return;
            }
            Err(error) => {
                tracing::warn!(%error, "cannot encode an assembled context for the shared cache");
                return;
            }
        };
        let ttl_ms = u64::try_from(self.config.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let result: redis::RedisResult<()> = redis::cmd("SET")
            .arg(&entry_key)
            .arg(stored)
            .arg("PX")
            .arg(ttl_ms)
            .query_async(&mut self.connection.clone())
            .await;
        if let Err(error) = result {
            self.failed("store", &error);
        }
    }

    /// Bumps the version of every tenant in `tenants` (they were written), or remembers them
    /// for when Redis is back.
    pub(crate) async fn bump(&self, tenants: impl IntoIterator<Item = String>) {
        {
            let mut state = self.state.lock();
            for tenant in tenants {
                if state.pending.len() >= MAX_PENDING_BUMPS {
                    state.pending.clear();
                    state.pending_epoch = true;
                }
                if !state.pending_epoch {
                    state.pending.insert(tenant);
                }
            }
        }
        if self.usable().await {
            self.send_pending().await;
        }
    }

    /// Bumps the global epoch: every tenant's entries are invalidated (change notifications
    /// were lost).
    pub(crate) async fn bump_epoch(&self) {
        self.state.lock().pending_epoch = true;
        if self.usable().await {
            self.send_pending().await;
        }
    }

    /// Whether Redis answers a `PING` now, and whether the cache is in use.
    pub async fn health(&self) -> CacheHealth {
        let ping: redis::RedisResult<String> = redis::cmd("PING")
            .query_async(&mut self.connection.clone())
            .await;
        match ping {
            Err(_) => CacheHealth::Down,
            Ok(_) if self.state.lock().off_until.is_some() => CacheHealth::Degraded,
            Ok(_) => CacheHealth::Ok,
        }
    }

    /// Whether to use Redis now: not during a retry pause; after one, only once the bumps that
    /// waited for Redis went out.
    async fn usable(&self) -> bool {
        let waiting = {
            let state = self.state.lock();
            match state.off_until {
                Some(until) if Instant::now() < until => return false,
                Some(_) => true,
                None => false,
            }
        };
        if waiting && !self.send_pending().await {
            return false;
        }
        if waiting {
            let mut state = self.state.lock();
            if state.off_until.is_some_and(|until| Instant::now() >= until) {
                state.off_until = None;
                tracing::info!(
                    redis_url = %redacted_url(&self.config.url),
                    "the shared context cache is back in use"
                );
            }
        }
        true
    }

    /// Sends every pending bump; false (and the cache off) when Redis failed.
    async fn send_pending(&self) -> bool {
        let (tenants, epoch) = {
            let mut state = self.state.lock();
            let epoch = std::mem::take(&mut state.pending_epoch);
            (std::mem::take(&mut state.pending), epoch)
        };
        let mut keys: Vec<String> = tenants
            .iter()
            .map(|tenant| format!("{}:ver", self.tenant_base(tenant)))
            .collect();
        if epoch {
            keys.push(self.epoch_key());
        }
        let ttl = self.version_ttl_ms();
        for key in &keys {
            let result: redis::RedisResult<i64> = self
                .bump
                .key(key)
                .arg(ttl)
                .invoke_async(&mut self.connection.clone())
                .await;
            if let Err(error) = result {
                let mut state = self.state.lock();
                state.pending_epoch |= epoch;
                for tenant in tenants {
                    if state.pending.len() < MAX_PENDING_BUMPS {
                        state.pending.insert(tenant);
                    } else {
                        state.pending_epoch = true;
                    }
                }
                drop(state);
                self.failed("version bump", &error);
                return false;
            }
        }
        true
    }

    /// Turns the cache off for the retry pause; warns once per outage.
    fn failed(&self, what: &str, error: &redis::RedisError) {
        let mut state = self.state.lock();
        let first = state.off_until.is_none();
        state.off_until = Some(Instant::now() + self.config.retry_after);
        if first {
            let shown = redacted_url(&self.config.url);
            tracing::warn!(
                redis_url = %shown,
                error = %error.to_string().replace(&self.config.url, &shown),
                retry_after_secs = self.config.retry_after.as_secs_f64(),
                "shared context cache {what} failed; assembling uncached until Redis answers again"
            );
        }
    }

    fn tenant_base(&self, tenant: &str) -> String {
        tenant_base(&self.config.key_prefix, tenant)
    }

    fn epoch_key(&self) -> String {
        format!("{}:epoch", self.config.key_prefix)
    }

    /// Versions outlive every entry filed under them (so an expired version cannot be reused
    /// while entries of it live; see the module docs), and at least a day.
    fn version_ttl_ms(&self) -> u64 {
        let ttl = self.config.ttl.max(Duration::from_secs(24 * 60 * 60)) * 2;
        u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)
    }
}

/// `<prefix>:{<len>:<tenant>}`: length-prefixed, and a cluster hash tag per tenant.
fn tenant_base(prefix: &str, tenant: &str) -> String {
    format!("{prefix}:{{{}:{tenant}}}", tenant.len())
}

/// Hex SHA-256 of everything the assembly depends on besides the data.
fn entry_hash(key: &CacheKey) -> String {
    let canonical = serde_json::to_vec(key).unwrap_or_default();
    hex::encode(Sha256::digest(canonical))
}

fn encode(context: &AssembledContext) -> anyhow::Result<Vec<u8>> {
    let json = serde_json::to_vec(context)?;
    Ok(zstd::bulk::compress(&json, ZSTD_LEVEL)?)
}

fn decode(stored: &[u8]) -> anyhow::Result<AssembledContext> {
    let json = zstd::bulk::decompress(stored, MAX_DECOMPRESSED_BYTES)?;
    Ok(serde_json::from_slice(&json)?)
}

/// KEYS: the global epoch, the tenant's version. ARGV: the tenant's entry key prefix, the entry
/// hash, the version TTL in ms. Returns the entry's key and its value (nil when absent).
/// A missing version or epoch is created from the clock (see the module docs).
const LOOKUP_SCRIPT: &str = r"
local function current(key)
  local value = redis.call('GET', key)
  if not value then
    local now = redis.call('TIME')
    value = string.format('%.0f', tonumber(now[1]) * 1000000 + tonumber(now[2]))
    redis.call('SET', key, value, 'PX', ARGV[3], 'NX')
    value = redis.call('GET', key)
  end
  return value
end
local entry_key = ARGV[1] .. current(KEYS[1]) .. ':' .. current(KEYS[2]) .. ':' .. ARGV[2]
return {entry_key, redis.call('GET', entry_key)}
";

/// KEYS: a version (or the epoch). ARGV: its TTL in ms. Increments it, or creates it from the
/// clock in microseconds when missing.
const BUMP_SCRIPT: &str = r"
local value
if redis.call('EXISTS', KEYS[1]) == 1 then
  value = redis.call('INCR', KEYS[1])
else
  local now = redis.call('TIME')
  value = tonumber(now[1]) * 1000000 + tonumber(now[2])
  redis.call('SET', KEYS[1], string.format('%.0f', value))
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return value
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_compressed() {
        let context = AssembledContext {
            content: "## Project\n- the same fact\n".repeat(200),
            ..AssembledContext::empty(4000)
        };
        let stored = encode(&context).unwrap();
        assert!(stored.len() < context.content.len() / 10);
        assert_eq!(decode(&stored).unwrap(), context);
        assert!(decode(b"not zstd").is_err());
    }

    #[test]
    fn tenants_with_any_name_get_their_own_keys() {
        assert_eq!(tenant_base("p", "acme"), "p:{4:acme}");
        // A tenant named like another's key cannot reach it.
        assert_ne!(
            format!("{}:ver", tenant_base("p", "a")),
            tenant_base("p", "a}:ver")
        );
        assert_ne!(tenant_base("p", "a:1"), tenant_base("p", "a"));
    }
}
