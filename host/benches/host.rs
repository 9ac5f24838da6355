//! Host benchmarks (`cargo bench -p aeterna-host`), against the quality bars of the design:
//!
//! | bench | bar |
//! |---|---|
//! | `callback/1kb_fresh_instance` | p50 ≤ 15 µs |
//! | `callback/64kb_fresh_instance` | measured |
//! | `chain/4_extensions_state_write` | p50 ≤ 60 µs |
//! | `load/from_compile_cache` | ≤ 1 ms |
//! | `any_language/{javascript,python}_1kb` | measured (skipped without the toolchains) |
//!
//! Besides criterion's estimates, each bench prints p50/p95/p99 over individually timed runs.

mod common;

use common::percentiles;
use std::path::Path;

use aeterna_host::{CallContext, ExtensionHost, HostConfig};
use criterion::{Criterion, criterion_group, criterion_main};
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// A temporary extensions directory with `guest` installed under each `(id, priority)`.
fn extensions(guest: &str, ids: &[(&str, i32)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (id, priority) in ids {
        let wasm = aeterna_testkit::test_guest(guest).expect("the test guests build");
        std::fs::copy(wasm, dir.path().join(format!("{id}.wasm"))).expect("copy guest");
        std::fs::write(
            dir.path().join(format!("{id}.toml")),
            format!("id = \"{id}\"\npriority = {priority}\n[config]\nmark = \"{id}\"\n"),
        )
        .expect("write manifest");
    }
    dir
}

fn host_for(rt: &Runtime, dir: &Path, cache: &Path) -> ExtensionHost {
    let config = HostConfig {
        cache_dir: Some(cache.to_path_buf()),
        ..HostConfig::default()
    };
    let host = ExtensionHost::new(config).expect("host");
    let report = rt.block_on(host.load_dir(dir)).expect("load");
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    host
}

fn callbacks(c: &mut Criterion) {
    let rt = runtime();
    let cache = tempfile::tempdir().unwrap();
    let dir = extensions("echo", &[("echo", 0)]);
    let host = host_for(&rt, dir.path(), cache.path());
    let ctx = CallContext::new("tenant", "session");

    let mut group = c.benchmark_group("callback");
    for (name, size) in [
        ("1kb_fresh_instance", 1024),
        ("64kb_fresh_instance", 64 * 1024),
    ] {
        let input = "x".repeat(size);
        let run = || {
            let output = rt
                .block_on(host.run_plain_text(&ctx, input.clone()))
                .unwrap();
            assert_eq!(output.output.len(), size);
        };
        group.bench_function(name, |b| b.iter(run));
        percentiles(&format!("callback/{name}"), 5_000, run);
    }
    group.finish();
}

fn chains(c: &mut Criterion) {
    let rt = runtime();
    let cache = tempfile::tempdir().unwrap();
    let dir = extensions("probe", &[("a", 4), ("b", 3), ("c", 2), ("d", 1)]);
    let host = host_for(&rt, dir.path(), cache.path());
    let ctx = CallContext::new("tenant", "session");
    let input = "y".repeat(1024);
    let run = || {
        let output = rt
            .block_on(host.run_plain_text(&ctx, input.clone()))
            .unwrap();
        assert_eq!(output.report.rows.len(), 4);
        debug_assert!(output.report.rows.iter().all(|row| row.outcome.is_ok()));
    };
    c.bench_function("chain/4_extensions_state_write", |b| b.iter(run));
    percentiles("chain/4_extensions_state_write", 5_000, run);
}

fn loading(c: &mut Criterion) {
    let rt = runtime();
    let cache = tempfile::tempdir().unwrap();
    let dir = extensions("probe", &[("p", 0)]);
    let host = host_for(&rt, dir.path(), cache.path()); // compiles once and fills the cache
    let wasm = dir.path().join("p.wasm");
    let compiles = host.cache_stats().compiles;
    // Unloading first, so the load cannot reuse the component already in memory: every load
    // reads the compile cache.
    let run = || {
        rt.block_on(async {
            host.unload("p").await.unwrap();
            host.load_file(&wasm).await.unwrap();
        })
    };
    c.bench_function("load/from_compile_cache", |b| b.iter(run));
    percentiles("load/from_compile_cache", 500, run);
    assert_eq!(
        host.cache_stats().compiles,
        compiles,
        "every load came from the cache"
    );
}

/// One 1 KB plain-text callback of the JavaScript and Python samples, beside the Rust echo above.
fn any_language(c: &mut Criterion) {
    let rt = runtime();
    // Compiling a JS or Python component takes seconds: keep them across bench runs.
    let cache = aeterna_testkit::target_dir().join("bench-compile-cache");
    let ctx = CallContext::new("tenant", "session");
    let input = "log line 1\n".repeat(93);
    for (label, sample) in [("javascript", "json-compactor"), ("python", "log-dedup")] {
        let dir = aeterna_testkit::ExtensionsDir::new().unwrap();
        if dir.add_script_sample(sample).unwrap().is_none() {
            continue;
        }
        let host = host_for(&rt, dir.path(), &cache);
        let name = format!("any_language/{label}_1kb");
        let run = || {
            let output = rt
                .block_on(host.run_plain_text(&ctx, input.clone()))
                .unwrap();
            assert!(output.report.rows[0].outcome.is_ok());
        };
        c.bench_function(&name, |b| b.iter(run));
        percentiles(&name, 500, run);
    }
}

criterion_group!(benches, callbacks, chains, loading, any_language);
criterion_main!(benches);
