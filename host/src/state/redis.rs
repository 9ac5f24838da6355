//! A [`StateStore`] in Redis, for hosts that share extension state (several servers, or bridges
//! on many machines): the scale-out profile's counterpart of [`super::MemoryStateStore`], with
//! the same quota, LRU eviction and error kinds.
//!
//! # Layout
//!
//! A scope is four Redis keys under one base, `<prefix>:{<len>:<tenant><len>:<session><len>:
//! <extension>}` — each part length-prefixed, so no two scopes share a base whatever their
//! names contain, and the braces make the base a cluster hash tag (one slot per scope):
//!
//! | key | type | holds |
//! |---|---|---|
//! | `<base>:v` | hash | key → value, zstd-compressed |
//! | `<base>:s` | hash | key → size counted against the quota (key + *uncompressed* value bytes) |
//! | `<base>:r` | sorted set | key → recency tick (reads and writes count as use) |
//! | `<base>:m` | hash | `used` (bytes), `tick` (the scope's recency clock) |
//!
//! # Atomicity
//!
//! Every change is one Lua script run by `EVALSHA`, which Redis executes without interleaving:
//! a commit applies the batch, evicts least-recently-used keys while the scope is over its quota
//! (or its key bound), updates `used` and the recency set, and refreshes the session TTL on all
//! four keys, all in one step. So however many hosts commit to one scope at once, after every
//! commit `used` equals the sum of the sizes and stays within the quota. A read that counts as
//! use (`get`) is a script too. A scope that becomes empty is deleted whole.
//!
//! # Bounds
//!
//! Keys are 1 to [`MAX_KEY_BYTES`] bytes; each tenant, session and extension name at most
//! [`MAX_SCOPE_PART_BYTES`]; an entry at most the quota (checked before anything is sent); a
//! value read back is decompressed into at most the quota; a scope holds at most
//! `max_keys_per_scope` keys (past it, least-recently-used keys are evicted, as past the quota).
//! Idle scopes expire after `session_ttl_secs` (refreshed on every commit).

use std::fmt;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde::{Deserialize, Serialize};

use super::{
    EntryMeta, MAX_KEY_BYTES, QuotaUsage, StateBatch, StateScope, StateStore, StateStoreError,
    entry_size,
};

/// Longest tenant, session or extension name a scope may have, in bytes.
pub const MAX_SCOPE_PART_BYTES: usize = 1024;

/// zstd level for stored values: the fastest; state values are small and commits are on the
/// callback's path.
const ZSTD_LEVEL: i32 = 1;

/// Keys fetched per `HMGET` when listing a scope (Lua's stack bounds `unpack`).
const LIST_CHUNK: usize = 1000;

/// Where and how the Redis state store keeps its data.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedisStateConfig {
    /// `redis://[user:password@]host:port[/db]` (or `rediss://`). Its password never appears in
    /// logs or errors.
    pub url: String,
    /// Prefix of every key the store writes; lets several deployments share one Redis.
    pub key_prefix: String,
    /// Key + value bytes per extension per (tenant, session), as for the in-memory store.
    pub quota_bytes: u64,
    /// Most keys one scope holds; past it the least-recently-used keys are evicted.
    pub max_keys_per_scope: u32,
    /// A scope not committed to for this long expires.
    pub session_ttl_secs: u64,
    /// Bound on connecting and on each request.
    pub timeout_ms: u64,
}

impl Default for RedisStateConfig {
    fn default() -> Self {
        Self {
            url: "redis://127.0.0.1:6379".into(),
            key_prefix: "aeterna:state".into(),
            quota_bytes: 1024 * 1024,
            max_keys_per_scope: 16 * 1024,
            session_ttl_secs: 24 * 60 * 60,
            timeout_ms: 2_000,
        }
    }
}

impl fmt::Debug for RedisStateConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStateConfig")
            .field("url", &redacted_url(&self.url))
            .field("key_prefix", &self.key_prefix)
            .field("quota_bytes", &self.quota_bytes)
            .field("max_keys_per_scope", &self.max_keys_per_scope)
            .field("session_ttl_secs", &self.session_ttl_secs)
            .field("timeout_ms", &self.timeout_ms)
            .finish()
    }
}

impl RedisStateConfig {
    fn validate(&self) -> Result<(), StateStoreError> {
        let invalid = |field: &str, why: &str| {
            Err(StateStoreError::Rejected(format!(
                "redis state store: `{field}` {why}"
            )))
        };
        if self.quota_bytes == 0 {
            return invalid("quota_bytes", "must be at least 1");
        }
        if self.max_keys_per_scope == 0 {
            return invalid("max_keys_per_scope", "must be at least 1");
        }
        if self.session_ttl_secs == 0 {
            return invalid("session_ttl_secs", "must be at least 1");
        }
        if self.timeout_ms == 0 {
            return invalid("timeout_ms", "must be at least 1");
        }
        if self.key_prefix.is_empty() || self.key_prefix.contains(['{', '}']) {
            return invalid(
                "key_prefix",
                "must be non-empty and contain no `{` or `}` (they delimit the scope)",
            );
        }
        Ok(())
    }
}

/// `url` with any password redacted, for logs and errors (by the one secret redactor).
fn redacted_url(url: &str) -> String {
    aeterna_redact::redact_url_password(url)
}

/// The Redis-backed [`StateStore`]; see the module docs.
pub struct RedisStateStore {
    config: RedisStateConfig,
    connection: ConnectionManager,
    scripts: Scripts,
}

struct Scripts {
    get: redis::Script,
    entries: redis::Script,
    commit: redis::Script,
}

impl RedisStateStore {
    /// Connects (within `timeout_ms`) and checks the configuration. An unreachable Redis is an
    /// error that names the (redacted) URL.
    pub async fn connect(config: RedisStateConfig) -> Result<Self, StateStoreError> {
        config.validate()?;
        let shown = redacted_url(&config.url);
        let client = redis::Client::open(config.url.as_str()).map_err(|err| {
            StateStoreError::Rejected(format!(
                "redis state store: invalid url `{shown}`: {}",
                strip_url(&err.to_string(), &config.url)
            ))
        })?;
        let timeout = Duration::from_millis(config.timeout_ms);
        let manager_config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(2)
            .set_max_delay(timeout);
        let connection = ConnectionManager::new_with_config(client, manager_config)
            .await
            .map_err(|err| {
                StateStoreError::Unavailable(format!(
                    "redis state store: cannot connect to `{shown}`: {}",
                    strip_url(&err.to_string(), &config.url)
                ))
            })?;
        Ok(Self {
            config,
            connection,
            scripts: Scripts {
                get: redis::Script::new(GET_SCRIPT),
                entries: redis::Script::new(ENTRIES_SCRIPT),
                commit: redis::Script::new(COMMIT_SCRIPT),
            },
        })
    }

    pub fn config(&self) -> &RedisStateConfig {
        &self.config
    }

    /// The four Redis keys of `scope`: values, sizes, recency, meta.
    fn keys(&self, scope: &StateScope) -> Result<[String; 4], StateStoreError> {
        for (part, name) in [
            ("tenant", &scope.tenant),
            ("session", &scope.session),
            ("extension", &scope.extension),
        ] {
            if name.len() > MAX_SCOPE_PART_BYTES {
                return Err(StateStoreError::Rejected(format!(
                    "the {part} name is {} bytes long; at most {MAX_SCOPE_PART_BYTES} are allowed",
                    name.len()
                )));
            }
        }
        let base = scope_base(&self.config.key_prefix, scope);
        Ok(["v", "s", "r", "m"].map(|suffix| format!("{base}:{suffix}")))
    }

    fn connection(&self) -> ConnectionManager {
        self.connection.clone()
    }

    fn decompress(&self, key: &str, stored: &[u8]) -> Result<Vec<u8>, StateStoreError> {
        let capacity = usize::try_from(self.config.quota_bytes).unwrap_or(usize::MAX);
        zstd::bulk::decompress(stored, capacity).map_err(|err| {
            StateStoreError::Unavailable(format!(
                "redis state store: the value of key `{key}` is not a zstd frame of at most {capacity} bytes: {err}"
            ))
        })
    }
}

/// `<prefix>:{<len>:<tenant><len>:<session><len>:<extension>}`.
fn scope_base(prefix: &str, scope: &StateScope) -> String {
    let parts = [&scope.tenant, &scope.session, &scope.extension];
    let mut base = String::with_capacity(
        prefix.len() + 16 + parts.iter().map(|part| part.len() + 5).sum::<usize>(),
    );
    base.push_str(prefix);
    base.push_str(":{");
    for part in parts {
        base.push_str(&part.len().to_string());
        base.push(':');
        base.push_str(part);
    }
    base.push('}');
    base
}

/// Removes the URL (with its password) from a client error message, should it quote it.
fn strip_url(message: &str, url: &str) -> String {
    message.replace(url, &redacted_url(url))
}

fn unavailable(what: &str, err: redis::RedisError) -> StateStoreError {
    StateStoreError::Unavailable(format!("redis state store: {what} failed: {err}"))
}

fn valid_key(key: &str) -> Result<(), StateStoreError> {
    if key.is_empty() || key.len() > MAX_KEY_BYTES {
        return Err(StateStoreError::Rejected(format!(
            "key of {} bytes: keys are 1 to {MAX_KEY_BYTES} bytes long",
            key.len()
        )));
    }
    Ok(())
}

#[async_trait::async_trait]
impl StateStore for RedisStateStore {
    fn quota_bytes(&self) -> u64 {
        self.config.quota_bytes
    }

    async fn get(&self, scope: &StateScope, key: &str) -> Result<Option<Vec<u8>>, StateStoreError> {
        if valid_key(key).is_err() {
            return Ok(None);
        }
        let keys = self.keys(scope)?;
        let stored: Option<Vec<u8>> = self
            .scripts
            .get
            .key(&keys[..])
            .arg(key)
            .invoke_async(&mut self.connection())
            .await
            .map_err(|err| unavailable("get", err))?;
        stored
            .map(|stored| self.decompress(key, &stored))
            .transpose()
    }

    async fn usage(&self, scope: &StateScope) -> Result<QuotaUsage, StateStoreError> {
        let [_, sizes, _, meta] = self.keys(scope)?;
        let (used, keys): (Option<u64>, u64) = redis::pipe()
            .atomic()
            .hget(&meta, "used")
            .hlen(&sizes)
            .query_async(&mut self.connection())
            .await
            .map_err(|err| unavailable("usage", err))?;
        Ok(QuotaUsage {
            used_bytes: used.unwrap_or(0),
            quota_bytes: self.config.quota_bytes,
            keys: u32::try_from(keys).unwrap_or(u32::MAX),
        })
    }

    async fn entry_size(
        &self,
        scope: &StateScope,
        key: &str,
    ) -> Result<Option<u64>, StateStoreError> {
        if valid_key(key).is_err() {
            return Ok(None);
        }
        let [_, sizes, _, _] = self.keys(scope)?;
        redis::cmd("HGET")
            .arg(&sizes)
            .arg(key)
            .query_async(&mut self.connection())
            .await
            .map_err(|err| unavailable("entry_size", err))
    }

    async fn entries(&self, scope: &StateScope) -> Result<Vec<EntryMeta>, StateStoreError> {
        let keys = self.keys(scope)?;
        let flat: Vec<String> = self
            .scripts
            .entries
            .key(&keys[..])
            .arg(LIST_CHUNK)
            .invoke_async(&mut self.connection())
            .await
            .map_err(|err| unavailable("entries", err))?;
        flat.chunks_exact(2)
            .map(|pair| {
                let size = pair[1].parse().map_err(|_| {
                    StateStoreError::Unavailable(format!(
                        "redis state store: key `{}` has a corrupt size `{}`",
                        pair[0], pair[1]
                    ))
                })?;
                Ok(EntryMeta {
                    key: pair[0].clone(),
                    size,
                })
            })
            .collect()
    }

    async fn commit(
        &self,
        scope: &StateScope,
        batch: StateBatch,
    ) -> Result<QuotaUsage, StateStoreError> {
        let quota_bytes = self.config.quota_bytes;
        for (key, value) in &batch.writes {
            valid_key(key)?;
            if let Some(value) = value {
                let size = entry_size(key, value);
                if size > quota_bytes {
                    return Err(StateStoreError::Rejected(format!(
                        "key `{key}` needs {size} bytes, over the quota of {quota_bytes} bytes"
                    )));
                }
            }
        }
        let keys = self.keys(scope)?;
        let mut invocation = self.scripts.commit.key(&keys[..]);
        invocation
            .arg(quota_bytes)
            .arg(self.config.session_ttl_secs.saturating_mul(1000))
            .arg(self.config.max_keys_per_scope)
            .arg(if batch.clear { "1" } else { "0" });
        for (key, value) in &batch.writes {
            match value {
                Some(value) => {
                    let compressed = zstd::bulk::compress(value, ZSTD_LEVEL).map_err(|err| {
                        StateStoreError::Unavailable(format!(
                            "redis state store: compressing the value of key `{key}`: {err}"
                        ))
                    })?;
                    invocation
                        .arg(key)
                        .arg(entry_size(key, value))
                        .arg(compressed);
                }
                None => {
                    invocation.arg(key).arg("").arg("");
                }
            }
        }
        let (used, keys): (u64, u64) = invocation
            .invoke_async(&mut self.connection())
            .await
            .map_err(|err| unavailable("commit", err))?;
        Ok(QuotaUsage {
            used_bytes: used,
            quota_bytes,
            keys: u32::try_from(keys).unwrap_or(u32::MAX),
        })
    }
}

/// KEYS: values, sizes, recency, meta. ARGV[1]: the key. Returns the stored (compressed) value
/// and marks the key as used.
const GET_SCRIPT: &str = r"
local value = redis.call('HGET', KEYS[1], ARGV[1])
if value and redis.call('EXISTS', KEYS[4]) == 1 then
  local tick = redis.call('HINCRBY', KEYS[4], 'tick', 1)
  redis.call('ZADD', KEYS[3], 'XX', tick, ARGV[1])
end
return value
";

/// KEYS: values, sizes, recency, meta. ARGV[1]: keys per HMGET. Returns key, size, key, size …
/// least recently used first.
const ENTRIES_SCRIPT: &str = r"
local keys = redis.call('ZRANGE', KEYS[3], 0, -1)
local chunk = tonumber(ARGV[1])
local out = {}
for first = 1, #keys, chunk do
  local last = math.min(first + chunk - 1, #keys)
  local sizes = redis.call('HMGET', KEYS[2], unpack(keys, first, last))
  for i = first, last do
    out[#out + 1] = keys[i]
    out[#out + 1] = sizes[i - first + 1] or '0'
  end
end
return out
";

/// KEYS: values, sizes, recency, meta. ARGV: quota, ttl in ms, max keys, clear (`1`/`0`), then
/// per write `key, size, compressed value` (a delete has an empty size). Applies the batch in
/// order, evicts least-recently-used keys while over the quota or the key bound, refreshes the
/// TTL, and returns `{used, keys}`. Runs atomically: this is the store's only writer.
const COMMIT_SCRIPT: &str = r"
local values, sizes, recency, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local quota, ttl, max_keys = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if ARGV[4] == '1' then
  redis.call('DEL', values, sizes, recency)
  redis.call('HSET', meta, 'used', 0)
end
local used
if redis.call('HEXISTS', meta, 'used') == 1 then
  used = tonumber(redis.call('HGET', meta, 'used'))
else
  used = 0
  for _, size in ipairs(redis.call('HVALS', sizes)) do used = used + tonumber(size) end
end
local tick = tonumber(redis.call('HGET', meta, 'tick') or '0')
for i = 5, #ARGV, 3 do
  local key, size = ARGV[i], ARGV[i + 1]
  local old = redis.call('HGET', sizes, key)
  if old then
    used = used - tonumber(old)
    redis.call('HDEL', values, key)
    redis.call('HDEL', sizes, key)
    redis.call('ZREM', recency, key)
  end
  if size ~= '' then
    tick = tick + 1
    redis.call('HSET', values, key, ARGV[i + 2])
    redis.call('HSET', sizes, key, size)
    redis.call('ZADD', recency, tick, key)
    used = used + tonumber(size)
  end
end
local count = redis.call('HLEN', sizes)
while used > quota or count > max_keys do
  local lru = redis.call('ZPOPMIN', recency)
  if #lru == 0 then break end
  local key = lru[1]
  used = used - tonumber(redis.call('HGET', sizes, key) or '0')
  redis.call('HDEL', values, key)
  redis.call('HDEL', sizes, key)
  count = count - 1
end
if count == 0 then
  redis.call('DEL', values, sizes, recency, meta)
  return {0, 0}
end
redis.call('HSET', meta, 'used', used, 'tick', tick)
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ttl) end
return {used, count}
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_bases_cannot_collide() {
        let a = scope_base("p", &StateScope::new("a:1", "b", "c"));
        let b = scope_base("p", &StateScope::new("a", "1b", "c"));
        let c = scope_base("p", &StateScope::new("a", ":1b", "c"));
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(b, c);
        assert_eq!(
            scope_base("aeterna:state", &StateScope::new("t", "sess", "ext")),
            "aeterna:state:{1:t4:sess3:ext}"
        );
    }

    #[test]
    fn urls_lose_their_password() {
        assert_eq!(
            redacted_url("redis://user:hunter2@host:6379/0"),
            "redis://user:[REDACTED:url-password]@host:6379/0"
        );
        assert_eq!(
            redacted_url("redis://:hunter2@host:6379"),
            "redis://:[REDACTED:url-password]@host:6379"
        );
        assert_eq!(
            redacted_url("redis://127.0.0.1:6379"),
            "redis://127.0.0.1:6379"
        );
        let config = RedisStateConfig {
            url: "redis://u:hunter2@h".into(),
            ..RedisStateConfig::default()
        };
        assert!(!format!("{config:?}").contains("hunter2"));
    }
}
