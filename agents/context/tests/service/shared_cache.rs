//! The shared context cache in a real Redis: two instances (each a Context Architect over its
//! own memory service) share entries, a write on one invalidates the other's, and Redis killed
//! mid-run means uncached assemblies, never errors. The shared Redis is
//! `AETERNA_TEST_REDIS_URL` (default `redis://127.0.0.1:6379`) under a key prefix per test,
//! deleted at the end; the Redis that gets killed is a `redis-server` this test starts on a
//! spare port.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use aeterna_context::{
    AssembleRequest, CacheHealth, ContextArchitect, ContextConfig, SharedCacheConfig,
    SharedResultCache,
};
use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Layer, MemoryConfig};

use crate::{add, alice, globex};

fn shared_redis() -> String {
    std::env::var("AETERNA_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

fn cache_config(url: &str, prefix: &str) -> SharedCacheConfig {
    SharedCacheConfig {
        key_prefix: prefix.into(),
        retry_after: Duration::from_millis(300),
        ..SharedCacheConfig::new(url, Duration::from_secs(60))
    }
}

/// One instance: its own data dir and memory service, the shared cache at `url`.
async fn instance(path: &Path, url: &str, prefix: &str) -> Arc<ContextArchitect> {
    let memory = aeterna_testkit::profile::open_memory(
        path,
        MemoryConfig::default(),
        Arc::new(HashingEmbedder::default()),
    )
    .await
    .expect("open memory");
    let cache = SharedResultCache::connect(cache_config(url, prefix))
        .await
        .expect("Redis answers (start it with `redis-server --daemonize yes`)");
    ContextArchitect::start_shared(
        Arc::new(memory),
        ContextConfig::default(),
        None,
        Some(Arc::new(cache)),
    )
    .expect("start context architect")
}

fn request() -> AssembleRequest {
    AssembleRequest {
        query: "payment retry backoff".into(),
        ..AssembleRequest::default()
    }
}

/// Deletes the test's keys when dropped.
struct Prefix(String);

impl Prefix {
    fn new(name: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        Prefix(format!(
            "aeterna-test:ctx:{name}:{}-{nanos}",
            std::process::id()
        ))
    }
}

impl Drop for Prefix {
    fn drop(&mut self) {
        let Ok(mut connection) =
            redis::Client::open(shared_redis()).and_then(|client| client.get_connection())
        else {
            return;
        };
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}:*", self.0))
            .query(&mut connection)
            .unwrap_or_default();
        if !keys.is_empty() {
            let _: redis::RedisResult<()> = redis::cmd("DEL").arg(&keys).query(&mut connection);
        }
    }
}

#[tokio::test]
async fn instances_share_entries_and_a_write_on_one_invalidates_the_other() {
    let prefix = Prefix::new("share");
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = instance(dir_a.path(), &shared_redis(), &prefix.0).await;
    let b = instance(dir_b.path(), &shared_redis(), &prefix.0).await;
    let who = alice();
    add(
        &a,
        &who,
        Layer::Project,
        &["Payment retry uses exponential backoff."],
    )
    .await;
    // Summaries first: generating them later would (rightly) invalidate the entry.
    a.refresh(&who, None).await.expect("refresh");
    a.writes_published().await;

    let first = a.assemble(&who, request()).await.expect("assemble on a");
    assert!(first.content.contains("exponential backoff"));
    let again = a.assemble(&who, request()).await.expect("assemble on a");
    assert_eq!(again, first);
    assert_eq!(
        (a.metrics().cache_hits(), a.metrics().cache_misses()),
        (1, 1)
    );

    // b's own store is empty: what it answers came from a, through Redis.
    let from_b = b.assemble(&who, request()).await.expect("assemble on b");
    assert_eq!(from_b, first);
    assert_eq!(b.metrics().cache_hits(), 1);

    // A write on b: once it returned (and was published), nobody is served the old entry.
    add(
        &b,
        &who,
        Layer::Session,
        &["Payment retry backoff is capped at 30 s."],
    )
    .await;
    b.writes_published().await;
    let after = a.assemble(&who, request()).await.expect("assemble on a");
    assert_eq!(
        a.metrics().cache_misses(),
        2,
        "the write on b invalidated a's entry"
    );
    assert!(after.content.contains("exponential backoff"));
    // … and what a computed after the write is b's answer too.
    assert_eq!(b.assemble(&who, request()).await.expect("on b"), after);

    // Another tenant's write leaves the entry alone.
    add(&b, &globex(), Layer::Project, &["Payment retry at globex."]).await;
    b.writes_published().await;
    a.assemble(&who, request()).await.expect("assemble on a");
    assert_eq!(a.metrics().cache_hits(), 2);

    // Writes nobody publishes explicitly (an agent's) reach the other instance through the
    // background publisher.
    add(
        &a,
        &who,
        Layer::Project,
        &["Payment retry logs each attempt."],
    )
    .await;
    let misses = b.metrics().cache_misses();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        b.assemble(&who, request()).await.expect("assemble on b");
        if b.metrics().cache_misses() > misses {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "a's write never invalidated b's entry"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Assemblies flush the publisher while it publishes writes, on a multi-threaded runtime. When
/// the publisher handed its subscription's lock to a flush, the task could take it back first
/// and wait for a change while holding it: the flush, and the assembly behind it, hung for good
/// (one run in a few of the Redis-kill test below).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flushes_never_wait_forever_while_the_publisher_runs() {
    let prefix = Prefix::new("flush-race");
    let dir = tempfile::tempdir().unwrap();
    let architect = instance(dir.path(), &shared_redis(), &prefix.0).await;
    let who = alice();
    for round in 0..300 {
        let note = format!("Payment retry note {round}.");
        tokio::time::timeout(Duration::from_secs(10), async {
            add(&architect, &who, Layer::Session, &[note.as_str()]).await;
            architect.assemble(&who, request()).await.expect("assemble");
        })
        .await
        .unwrap_or_else(|_| panic!("round {round}: an assembly waited 10 s for its flush"));
    }
}

/// A `redis-server` of this test's own, on a spare port.
struct OwnRedis {
    child: Child,
    port: u16,
}

impl OwnRedis {
    fn start_on(port: u16) -> Self {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server is installed");
        let server = OwnRedis { child, port };
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a spare port")
            .port();
        Self::start_on(port)
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.kill();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_mid_run_degrades_to_uncached_and_comes_back() {
    let mut redis = OwnRedis::start();
    let dir = tempfile::tempdir().unwrap();
    let architect = instance(dir.path(), &redis.url(), "aeterna:ctx").await;
    let cache = architect.shared_cache().expect("shared").clone();
    let who = alice();
    add(
        &architect,
        &who,
        Layer::Project,
        &["Payment retry uses exponential backoff."],
    )
    .await;
    architect.refresh(&who, None).await.expect("refresh");
    architect.assemble(&who, request()).await.expect("miss");
    architect.assemble(&who, request()).await.expect("hit");
    assert_eq!(architect.metrics().cache_hits(), 1);
    assert_eq!(cache.health().await, CacheHealth::Ok);

    redis.kill();
    for round in 0..3 {
        let context = architect
            .assemble(&who, request())
            .await
            .expect("Redis down is never an error");
        assert!(context.content.contains("exponential backoff"), "{round}");
    }
    // Writes go through, their bumps wait for Redis.
    add(
        &architect,
        &who,
        Layer::Session,
        &["Payment retry backoff is capped at 30 s."],
    )
    .await;
    architect.refresh(&who, None).await.expect("refresh");
    architect.writes_published().await;
    assert_eq!(architect.metrics().uncached(), 3);
    assert_eq!(cache.health().await, CacheHealth::Down);

    // Back on the same port (empty): once it answers and the pause is over, the cache is used
    // again, after the bumps that waited.
    let _restarted = OwnRedis::start_on(redis.port);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while cache.health().await == CacheHealth::Down {
        assert!(tokio::time::Instant::now() < deadline, "never reconnected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(cache.config().retry_after).await;
    let context = architect.assemble(&who, request()).await.expect("assemble");
    assert!(context.content.contains("capped at 30 s"));
    assert_eq!(cache.health().await, CacheHealth::Ok);
    architect.assemble(&who, request()).await.expect("assemble");
    assert_eq!(architect.metrics().cache_hits(), 2, "cached again");
}

#[tokio::test]
async fn an_unreachable_redis_at_start_is_an_error_naming_redis_url() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port();
    let url = format!("redis://:hunter2@127.0.0.1:{port}");
    let error = SharedResultCache::connect(SharedCacheConfig {
        timeout: Duration::from_millis(500),
        ..cache_config(&url, "aeterna:ctx")
    })
    .await
    .err()
    .expect("nothing listens there")
    .to_string();
    assert!(error.contains("redis_url"), "{error}");
    assert!(error.contains(&format!("127.0.0.1:{port}")), "{error}");
    assert!(!error.contains("hunter2"), "{error}");
}
