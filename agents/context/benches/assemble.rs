//! `context_assemble` over the memory bench's 100k-memory corpus (5 layers, embedded profile,
//! budget 4000), with a cold and a warm result cache — in process, and in Redis
//! (`AETERNA_TEST_REDIS_URL`, default `redis://127.0.0.1:6379`; skipped with a message when it
//! does not answer) — and the summary refresh of a 1,000-item layer on the deterministic path.
//!
//! The corpus is the one `memory/benches/service.rs` measures, built by the same code
//! (`memory/benches/common/corpus.rs`, included by path), in this bench's own cached data dir.

#[path = "../../../memory/benches/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use aeterna_context::{
    AssembleRequest, CacheConfig, ContextArchitect, ContextConfig, SharedCacheConfig,
    SharedResultCache, SummaryConfig, TriggerConfig,
};
use aeterna_memory::{Layer, MemoryPatch, NewMemory};
use common::corpus::{LAYERS, corpus, new_memory, open, runtime, who};
use common::{Rng, query_text, report};
use criterion::{Criterion, criterion_group, criterion_main};

/// Its own copy of the corpus: a data dir is locked by the process using it, and this bench
/// adds summary rows.
const CORPUS_NAME: &str = "context-bench-corpus";

fn request(query: &str) -> AssembleRequest {
    AssembleRequest {
        query: query.into(),
        token_budget: Some(4000),
        ..AssembleRequest::default()
    }
}

fn assemble(c: &mut Criterion) {
    let rt = runtime();
    let memory = Arc::new(rt.block_on(corpus(CORPUS_NAME)));
    let mut rng = Rng::new(7);
    let queries: Vec<String> = (0..500).map(|_| query_text(&mut rng)).collect();
    // Cold: entries expire at once, so every call assembles. Warm: the default cache.
    let cold_config = ContextConfig {
        cache: CacheConfig {
            ttl_secs: 0,
            ..CacheConfig::default()
        },
        ..ContextConfig::default()
    };
    let (cold, warm, redis) = rt.block_on(async {
        let cold = ContextArchitect::start(memory.clone(), cold_config).unwrap();
        let warm = ContextArchitect::start(memory.clone(), ContextConfig::default()).unwrap();
        let started = Instant::now();
        let refreshed = cold.refresh(&who(), Some(&LAYERS)).await.unwrap();
        println!(
            "summaries of {} scopes (newest 1000 memories each) ready in {:?}",
            refreshed.len(),
            started.elapsed()
        );
        let shared = SharedCacheConfig {
            key_prefix: format!("aeterna-bench:ctx:{}", std::process::id()),
            ..SharedCacheConfig::new(
                std::env::var("AETERNA_TEST_REDIS_URL")
                    .unwrap_or_else(|_| "redis://127.0.0.1:6379".into()),
                Duration::from_secs(300),
            )
        };
        let redis = match SharedResultCache::connect(shared).await {
            Ok(cache) => Some(
                ContextArchitect::start_shared(
                    memory.clone(),
                    ContextConfig::default(),
                    None,
                    Some(Arc::new(cache)),
                )
                .unwrap(),
            ),
            Err(error) => {
                println!("SKIPPED warm Redis cache: {error}");
                None
            }
        };
        (cold, warm, redis)
    });

    rt.block_on(async {
        let mut utilisation = Vec::new();
        // Cold: every call assembles (the BPE and the token-count cache are warm after the
        // first 50). Warm: every query was assembled once before it is measured.
        let mut runs = vec![
            ("cold cache", &cold, 10, 100),
            ("warm cache", &warm, 500, 2000),
        ];
        if let Some(redis) = &redis {
            runs.push(("warm Redis cache", redis, 500, 2000));
        }
        for (name, architect, primed, measured) in runs {
            for query in queries.iter().take(primed) {
                architect.assemble(&who(), request(query)).await.unwrap();
            }
            let mut samples = Vec::new();
            for query in queries.iter().cycle().take(measured) {
                let start = Instant::now();
                let context = architect.assemble(&who(), request(query)).await.unwrap();
                samples.push(start.elapsed());
                utilisation.push(context.total_tokens as f64 / 4000.0);
                std::hint::black_box(context);
            }
            report(
                &format!("context_assemble 100k/5 layers, budget 4000, {name}"),
                samples,
            );
        }
        if let Some(cache) = redis.as_ref().and_then(|redis| redis.shared_cache()) {
            delete_keys(&cache.config().url, &cache.config().key_prefix);
        }
        // Attribution: the one hybrid search an assembly makes, alone (limit 100, 5 scopes).
        let mut samples = Vec::new();
        for query in queries.iter().take(100) {
            let search = aeterna_memory::SearchRequest {
                query: query.clone(),
                layers: Some(LAYERS.to_vec()),
                tags: vec![],
                kinds: vec![],
                limit: 100,
                min_score: 0.3,
                explain: false,
                as_of: None,
            };
            let start = Instant::now();
            std::hint::black_box(memory.search(&who(), search).await.unwrap());
            samples.push(start.elapsed());
        }
        report(
            "  of which MemoryService::search alone (limit 100, 5 layers)",
            samples,
        );
        utilisation.sort_by(f64::total_cmp);
        println!(
            "budget utilisation: p50 {:.2} p95 {:.2}",
            utilisation[utilisation.len() / 2],
            utilisation[utilisation.len() * 95 / 100]
        );
    });

    let mut group = c.benchmark_group("context_assemble_100k");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for (name, architect) in [("cold_cache", &cold), ("warm_cache", &warm)] {
        let i = AtomicUsize::new(0);
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| {
                let query = &queries[i.fetch_add(1, Ordering::Relaxed) % queries.len()];
                async move { architect.assemble(&who(), request(query)).await.unwrap() }
            })
        });
    }
    group.finish();
}

/// Deletes the bench's keys from the shared Redis.
fn delete_keys(url: &str, prefix: &str) {
    let Ok(mut connection) = redis::Client::open(url).and_then(|client| client.get_connection())
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

/// Refresh of a 1,000-item layer: listing, hashing, extractive summaries at three depths and
/// the SQL write. Each measured refresh follows an update, so it always regenerates.
fn refresh(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (architect, ids) = rt.block_on(async {
        let memory = Arc::new(open(dir.path()).await);
        let mut rng = Rng::new(3);
        let batch = (0..1000)
            .map(|i| NewMemory {
                layer: Layer::Project,
                ..new_memory(&mut rng, i)
            })
            .collect();
        let added = memory.add_batch(&who(), batch).await.unwrap();
        let ids: Vec<_> = added.into_iter().map(|outcome| outcome.record.id).collect();
        // No background triggers: every measured refresh must be the one that regenerates.
        let manual = ContextConfig {
            summaries: SummaryConfig {
                triggers: TriggerConfig {
                    interval_secs: 0,
                    after_changes: 0,
                    min_gap_secs: 0,
                },
                ..SummaryConfig::default()
            },
            ..ContextConfig::default()
        };
        (ContextArchitect::start(memory, manual).unwrap(), ids)
    });
    let edits = AtomicUsize::new(0);
    let touch = || {
        let n = edits.fetch_add(1, Ordering::Relaxed);
        let patch = MemoryPatch {
            content: Some(format!(
                "Edited note {n}: the refresh bench changed this memory."
            )),
            ..MemoryPatch::default()
        };
        let (architect, id) = (&architect, ids[n % ids.len()]);
        async move { architect.memory().update(&who(), id, patch).await }
    };

    rt.block_on(async {
        let mut regenerate = Vec::new();
        let mut skip = Vec::new();
        for _ in 0..50 {
            touch().await.unwrap();
            let start = Instant::now();
            let outcome = architect
                .refresh(&who(), Some(&[Layer::Project]))
                .await
                .unwrap();
            regenerate.push(start.elapsed());
            assert!(outcome[0].regenerated);
            let start = Instant::now();
            let outcome = architect
                .refresh(&who(), Some(&[Layer::Project]))
                .await
                .unwrap();
            skip.push(start.elapsed());
            assert!(!outcome[0].regenerated);
        }
        report(
            "summary refresh, 1,000-item layer, regenerated (extractive)",
            regenerate,
        );
        report(
            "summary refresh, 1,000-item layer, unchanged (hash skip)",
            skip,
        );
    });

    let mut group = c.benchmark_group("summary_refresh_1000");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("regenerate", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (architect, touch) = (&architect, &touch);
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    touch().await.unwrap();
                    let start = Instant::now();
                    architect
                        .refresh(&who(), Some(&[Layer::Project]))
                        .await
                        .unwrap();
                    total += start.elapsed();
                }
                total
            }
        })
    });
    group.finish();
}

criterion_group!(benches, assemble, refresh);
criterion_main!(benches);
