//! The state store suite against a real Redis (`AETERNA_TEST_REDIS_URL`, default
//! `redis://127.0.0.1:6379`), plus what only the Redis store does: the session TTL, zstd
//! values, the key bound, and clear errors. Every store here writes under a key prefix of its
//! own and deletes its keys when dropped.
#![cfg(feature = "redis")]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use aeterna_host::state::{
    MAX_SCOPE_PART_BYTES, RedisStateConfig, RedisStateStore, StateBatch, StateStoreError,
};
use aeterna_host::{StateScope, StateStore};

fn redis_url() -> String {
    std::env::var("AETERNA_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// A key prefix no other test (or test process) uses.
fn unique_prefix() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!(
        "aeterna-test:{}-{}-{nanos}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// A Redis store whose keys are deleted when it is dropped.
struct Cleaned(RedisStateStore);

impl Drop for Cleaned {
    fn drop(&mut self) {
        purge(&self.0.config().key_prefix);
    }
}

/// Deletes every key under `prefix`.
fn purge(prefix: &str) {
    let Ok(mut connection) =
        redis::Client::open(redis_url()).and_then(|client| client.get_connection())
    else {
        return;
    };
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query(&mut connection)
        .unwrap_or_default();
    if !keys.is_empty() {
        let _: redis::RedisResult<()> = redis::cmd("DEL").arg(&keys).query(&mut connection);
    }
}

#[async_trait::async_trait]
impl StateStore for Cleaned {
    fn quota_bytes(&self) -> u64 {
        self.0.quota_bytes()
    }
    async fn get(&self, scope: &StateScope, key: &str) -> Result<Option<Vec<u8>>, StateStoreError> {
        self.0.get(scope, key).await
    }
    async fn usage(&self, scope: &StateScope) -> Result<aeterna_host::QuotaUsage, StateStoreError> {
        self.0.usage(scope).await
    }
    async fn entry_size(
        &self,
        scope: &StateScope,
        key: &str,
    ) -> Result<Option<u64>, StateStoreError> {
        self.0.entry_size(scope, key).await
    }
    async fn entries(
        &self,
        scope: &StateScope,
    ) -> Result<Vec<aeterna_host::state::EntryMeta>, StateStoreError> {
        self.0.entries(scope).await
    }
    async fn commit(
        &self,
        scope: &StateScope,
        batch: StateBatch,
    ) -> Result<aeterna_host::QuotaUsage, StateStoreError> {
        self.0.commit(scope, batch).await
    }
}

fn config(prefix: &str, quota_bytes: u64) -> RedisStateConfig {
    RedisStateConfig {
        url: redis_url(),
        key_prefix: prefix.to_owned(),
        quota_bytes,
        session_ttl_secs: 600,
        ..RedisStateConfig::default()
    }
}

async fn store_with(config: RedisStateConfig) -> Cleaned {
    Cleaned(
        RedisStateStore::connect(config)
            .await
            .expect("Redis runs at 127.0.0.1:6379 (start it with `redis-server --daemonize yes`)"),
    )
}

async fn store(quota_bytes: u64) -> Cleaned {
    store_with(config(&unique_prefix(), quota_bytes)).await
}

aeterna_testkit::state_store_suite!(
    |quota_bytes| async move { store(quota_bytes).await },
    // Two hosts: two stores, each with its own connection, on one prefix.
    |quota_bytes| async move {
        let prefix = unique_prefix();
        let a: Arc<dyn StateStore> = Arc::new(store_with(config(&prefix, quota_bytes)).await);
        let b: Arc<dyn StateStore> = Arc::new(store_with(config(&prefix, quota_bytes)).await);
        (a, b)
    }
);

fn scope() -> StateScope {
    StateScope::new("tenant", "session", "ext")
}

fn set(key: &str, value: &[u8]) -> StateBatch {
    StateBatch {
        clear: false,
        writes: vec![(key.to_owned(), Some(value.to_vec()))],
    }
}

async fn raw_connection() -> redis::aio::MultiplexedConnection {
    redis::Client::open(redis_url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

async fn keys_under(prefix: &str) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query_async(&mut raw_connection().await)
        .await
        .unwrap();
    keys.sort();
    keys
}

#[tokio::test]
async fn a_commit_sets_and_refreshes_the_session_ttl_on_every_key_of_the_scope() {
    let store = store(1000).await;
    let prefix = store.0.config().key_prefix.clone();
    store.commit(&scope(), set("a", b"1")).await.unwrap();
    let keys = keys_under(&prefix).await;
    assert_eq!(keys.len(), 4, "{keys:?}");
    let mut raw = raw_connection().await;
    for key in &keys {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(key)
            .query_async(&mut raw)
            .await
            .unwrap();
        assert!((590_000..=600_000).contains(&ttl), "{key}: {ttl}");
        let _: () = redis::cmd("PEXPIRE")
            .arg(key)
            .arg(5_000)
            .query_async(&mut raw)
            .await
            .unwrap();
    }
    store.commit(&scope(), set("b", b"2")).await.unwrap();
    for key in &keys {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(key)
            .query_async(&mut raw)
            .await
            .unwrap();
        assert!(ttl > 5_000, "{key}: the commit refreshed the TTL ({ttl})");
    }
}

#[tokio::test]
async fn an_idle_session_expires() {
    let store = store_with(RedisStateConfig {
        session_ttl_secs: 1,
        ..config(&unique_prefix(), 1000)
    })
    .await;
    store.commit(&scope(), set("a", b"1")).await.unwrap();
    assert_eq!(store.get(&scope(), "a").await.unwrap(), Some(b"1".to_vec()));
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    assert_eq!(store.get(&scope(), "a").await.unwrap(), None);
    assert_eq!(store.usage(&scope()).await.unwrap().used_bytes, 0);
    assert!(keys_under(&store.0.config().key_prefix).await.is_empty());
}

#[tokio::test]
async fn values_are_stored_zstd_compressed_and_counted_uncompressed() {
    let store = store(1 << 20).await;
    let value = b"the same line again\n".repeat(1000);
    let usage = store.commit(&scope(), set("log", &value)).await.unwrap();
    assert_eq!(usage.used_bytes, 3 + value.len() as u64);
    let values_key = keys_under(&store.0.config().key_prefix)
        .await
        .into_iter()
        .find(|key| key.ends_with(":v"))
        .unwrap();
    let stored: Vec<u8> = redis::cmd("HGET")
        .arg(&values_key)
        .arg("log")
        .query_async(&mut raw_connection().await)
        .await
        .unwrap();
    assert_eq!(&stored[..4], &[0x28, 0xb5, 0x2f, 0xfd], "a zstd frame");
    assert!(stored.len() < value.len() / 10, "{} bytes", stored.len());
    assert_eq!(store.get(&scope(), "log").await.unwrap(), Some(value));
}

#[tokio::test]
async fn past_the_key_bound_least_recently_used_keys_are_evicted() {
    let store = store_with(RedisStateConfig {
        max_keys_per_scope: 3,
        ..config(&unique_prefix(), 1000)
    })
    .await;
    let batch = StateBatch {
        clear: false,
        writes: (0..5)
            .map(|i| (format!("k{i}"), Some(vec![i as u8])))
            .collect(),
    };
    let usage = store.commit(&scope(), batch).await.unwrap();
    assert_eq!((usage.keys, usage.used_bytes), (3, 9));
    let keys: Vec<String> = store
        .entries(&scope())
        .await
        .unwrap()
        .into_iter()
        .map(|entry| entry.key)
        .collect();
    assert_eq!(keys, ["k2", "k3", "k4"]);
}

#[tokio::test]
async fn over_long_names_and_bad_keys_are_rejected_with_what_to_fix() {
    let store = store(1000).await;
    let long = StateScope::new("t".repeat(MAX_SCOPE_PART_BYTES + 1), "s", "e");
    let err = store.commit(&long, set("a", b"1")).await.unwrap_err();
    assert!(
        matches!(&err, StateStoreError::Rejected(why) if why.contains("tenant name")),
        "{err}"
    );
    let err = store.commit(&scope(), set("", b"1")).await.unwrap_err();
    assert!(matches!(err, StateStoreError::Rejected(_)), "{err}");
    assert_eq!(store.get(&scope(), "").await.unwrap(), None);
    let err = store
        .commit(&scope(), set("big", &[0; 1000]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StateStoreError::Rejected(why) if why.contains("over the quota of 1000 bytes")),
        "{err}"
    );
}

#[tokio::test]
async fn an_unreachable_redis_is_a_clear_error_without_the_password() {
    let err = RedisStateStore::connect(RedisStateConfig {
        url: "redis://user:hunter2@127.0.0.1:1".into(),
        timeout_ms: 500,
        ..RedisStateConfig::default()
    })
    .await
    .err()
    .expect("nothing listens on port 1");
    let message = err.to_string();
    assert!(matches!(err, StateStoreError::Unavailable(_)), "{message}");
    assert!(
        message.contains("redis://user:[REDACTED:url-password]@127.0.0.1:1"),
        "{message}"
    );
    assert!(!message.contains("hunter2"), "{message}");

    let err = RedisStateStore::connect(RedisStateConfig {
        key_prefix: "a{b".into(),
        ..RedisStateConfig::default()
    })
    .await
    .err()
    .expect("braces delimit the scope");
    assert!(err.to_string().contains("key_prefix"), "{err}");
}
