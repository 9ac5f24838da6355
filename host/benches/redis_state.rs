//! The Redis state store over loopback (`cargo bench -p aeterna-host --features redis --bench
//! redis_state`; Redis at `AETERNA_TEST_REDIS_URL`, default `redis://127.0.0.1:6379`):
//!
//! | bench | bar |
//! |---|---|
//! | `redis_state/commit_4_extension_chain` (the four commits of a 4-extension chain) | p50 ≤ 1 ms |
//! | `redis_state/run_4_extension_chain` (the whole run: reads, quota checks, commits) | measured |
//!
//! A bench binary: prints p50/p95/p99 over individually timed runs, and deletes its keys.

mod common;

use std::sync::Arc;

use aeterna_host::state::{RedisStateConfig, RedisStateStore, StateBatch};
use aeterna_host::{CallContext, ExtensionHost, HostConfig, StateScope, StateStore};
use common::percentiles;

const SAMPLES: usize = 2_000;

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let url =
        std::env::var("AETERNA_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let prefix = format!("aeterna-bench:{}", std::process::id());
    let store = rt
        .block_on(RedisStateStore::connect(RedisStateConfig {
            url: url.clone(),
            key_prefix: prefix.clone(),
            ..RedisStateConfig::default()
        }))
        .expect("Redis runs (redis-server --daemonize yes)");
    let store = Arc::new(store);

    let extensions = ["first", "second", "third", "fourth"];
    let scopes: Vec<StateScope> = extensions
        .iter()
        .map(|ext| StateScope::new("tenant", "session", *ext))
        .collect();
    let mut counter = 0u64;
    percentiles("redis_state/commit_4_extension_chain", SAMPLES, || {
        counter += 1;
        rt.block_on(async {
            for scope in &scopes {
                let batch = StateBatch {
                    clear: false,
                    writes: vec![("calls".into(), Some(counter.to_string().into_bytes()))],
                };
                store.commit(scope, batch).await.expect("commit");
            }
        });
    });

    let dir = tempfile::tempdir().expect("temp dir");
    let wasm = aeterna_testkit::test_guest("probe").expect("the test guests build");
    for (priority, id) in extensions.iter().enumerate() {
        std::fs::copy(&wasm, dir.path().join(format!("{id}.wasm"))).expect("copy guest");
        std::fs::write(
            dir.path().join(format!("{id}.toml")),
            format!("id = \"{id}\"\npriority = {priority}\n[config]\nmark = \"{id}\"\n"),
        )
        .expect("write manifest");
    }
    let cache = tempfile::tempdir().expect("temp dir");
    let host = ExtensionHost::with_state_store(
        HostConfig {
            cache_dir: Some(cache.path().to_path_buf()),
            ..HostConfig::default()
        },
        store.clone(),
    )
    .expect("host");
    let report = rt.block_on(host.load_dir(dir.path())).expect("load");
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    let ctx = CallContext::new("tenant", "chain-session");
    percentiles("redis_state/run_4_extension_chain", SAMPLES, || {
        let run = rt
            .block_on(host.run_plain_text(&ctx, "x".into()))
            .expect("run");
        assert!(
            run.report
                .rows
                .iter()
                .all(|row| row.outcome.fault().is_none())
        );
    });

    let mut connection = redis::Client::open(url)
        .and_then(|client| client.get_connection())
        .expect("connect for cleanup");
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}:*"))
        .query(&mut connection)
        .expect("list bench keys");
    if !keys.is_empty() {
        let _: () = redis::cmd("DEL")
            .arg(&keys)
            .query(&mut connection)
            .expect("delete bench keys");
    }
}
