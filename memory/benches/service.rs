//! `MemoryService` end to end on the embedded profile: hybrid search over 100k memories in
//! 5 layers, and `add` throughput from one and from 8 concurrent clients.
//!
//! The 100k corpus is generated once (bulk `add_batch`) and kept in Cargo's target tmp dir;
//! later runs reopen it, which also measures the start-up rebuild of the vector index.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use aeterna_memory::{Layer, SearchRequest};
use common::corpus::{corpus, new_memory, open, runtime, who};
use common::{Rng, process_cpu_time, query_text, report};
use criterion::{Criterion, criterion_group, criterion_main};

/// Not shared with other crates' benches: a data dir is locked by the process using it.
const CORPUS_NAME: &str = "memory-bench-corpus";

fn search_request(query: String, layers: Option<Vec<Layer>>) -> SearchRequest {
    SearchRequest {
        query,
        layers,
        tags: vec![],
        kinds: vec![],
        limit: 10,
        min_score: 0.0,
        explain: false,
        as_of: None,
    }
}

fn search(c: &mut Criterion) {
    let rt = runtime();
    let service = rt.block_on(corpus(CORPUS_NAME));
    let mut rng = Rng::new(99);
    let queries: Vec<String> = (0..500).map(|_| query_text(&mut rng)).collect();

    rt.block_on(async {
        for (name, layers) in [
            ("all 5 layers", None),
            ("project layer", Some(vec![Layer::Project])),
        ] {
            let mut samples = Vec::new();
            let cpu_before = process_cpu_time();
            for query in queries.iter().cycle().take(1000) {
                let start = Instant::now();
                let hits = service
                    .search(&who(), search_request(query.clone(), layers.clone()))
                    .await
                    .unwrap();
                samples.push(start.elapsed());
                std::hint::black_box(hits);
            }
            if let (Some(before), Some(after)) = (cpu_before, process_cpu_time()) {
                let per_search = (after - before) / 1000;
                println!(
                    "MemoryService::search 100k, {name}: {per_search:?} CPU per search, all threads"
                );
            }
            report(
                &format!("MemoryService::search 100k, {name}, limit 10"),
                samples,
            );
        }
    });

    let mut group = c.benchmark_group("service_search_100k");
    group
        .sample_size(100)
        .measurement_time(Duration::from_secs(10));
    let i = AtomicUsize::new(0);
    group.bench_function("all_layers_limit_10", |b| {
        b.to_async(&rt).iter(|| {
            let query = queries[i.fetch_add(1, Ordering::Relaxed) % queries.len()].clone();
            let service = &service;
            async move {
                service
                    .search(&who(), search_request(query, None))
                    .await
                    .unwrap()
            }
        })
    });
    group.finish();
}

fn add(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let service = Arc::new(rt.block_on(open(dir.path())));
    let counter = Arc::new(AtomicUsize::new(0));

    rt.block_on(async {
        let mut rng = Rng::new(5);
        let started = Instant::now();
        let mut samples = Vec::new();
        for _ in 0..3000 {
            let new = new_memory(&mut rng, counter.fetch_add(1, Ordering::Relaxed));
            let start = Instant::now();
            service.add(&who(), new).await.unwrap();
            samples.push(start.elapsed());
        }
        let rate = samples.len() as f64 / started.elapsed().as_secs_f64();
        report(&format!("add, 1 client ({rate:.0} adds/s)"), samples);

        // What `memory_add` adds to each add: the conflicts of the new memory in its scope
        // (which holds the 3,000 memories above and grows by one each time).
        let mut samples = Vec::new();
        for _ in 0..1000 {
            let new = new_memory(&mut rng, counter.fetch_add(1, Ordering::Relaxed));
            let record = service.add(&who(), new).await.unwrap().record;
            let start = Instant::now();
            service.conflicts(&who(), &record).await.unwrap();
            samples.push(start.elapsed());
        }
        report(
            "conflicts of a new memory, scope of 3k-4k memories",
            samples,
        );

        let clients = 8;
        let per_client = 500;
        let started = Instant::now();
        let tasks: Vec<_> = (0..clients)
            .map(|client| {
                let (service, counter) = (service.clone(), counter.clone());
                tokio::spawn(async move {
                    let mut rng = Rng::new(100 + client);
                    let mut samples = Vec::new();
                    for _ in 0..per_client {
                        let new = new_memory(&mut rng, counter.fetch_add(1, Ordering::Relaxed));
                        let start = Instant::now();
                        service.add(&who(), new).await.unwrap();
                        samples.push(start.elapsed());
                    }
                    samples
                })
            })
            .collect();
        let mut samples = Vec::new();
        for task in tasks {
            samples.extend(task.await.unwrap());
        }
        let rate = samples.len() as f64 / started.elapsed().as_secs_f64();
        report(
            &format!("add, {clients} concurrent clients ({rate:.0} adds/s in total)"),
            samples,
        );
    });

    let mut group = c.benchmark_group("service_add");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("single_client", |b| {
        b.to_async(&rt).iter(|| {
            let (service, counter) = (service.clone(), counter.clone());
            async move {
                let i = counter.fetch_add(1, Ordering::Relaxed);
                let mut rng = Rng::new(i as u64);
                service.add(&who(), new_memory(&mut rng, i)).await.unwrap()
            }
        })
    });
    // Time per add with 8 clients adding at once (throughput = 1 / this).
    group.bench_function("8_concurrent_clients_per_add", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (service, counter) = (service.clone(), counter.clone());
            async move {
                let started = Instant::now();
                let tasks: Vec<_> = (0..8)
                    .map(|client| {
                        let (service, counter) = (service.clone(), counter.clone());
                        let count = iters as usize / 8 + usize::from((client as u64) < iters % 8);
                        tokio::spawn(async move {
                            for _ in 0..count {
                                let i = counter.fetch_add(1, Ordering::Relaxed);
                                let mut rng = Rng::new(i as u64);
                                service.add(&who(), new_memory(&mut rng, i)).await.unwrap();
                            }
                        })
                    })
                    .collect();
                for task in tasks {
                    task.await.unwrap();
                }
                started.elapsed()
            }
        })
    });
    group.finish();
}

criterion_group!(benches, search, add);
criterion_main!(benches);
