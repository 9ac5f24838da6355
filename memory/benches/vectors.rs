//! The in-memory vector scan: 100k × 384 f32 (unfiltered and filtered to 10%), and 300k with
//! the int8 pre-scan and f32 rescoring.

mod common;

use std::time::{Duration, Instant};

use aeterna_memory::embed::normalize;
use aeterna_memory::vector::{InMemoryVectorIndex, VectorEntry, VectorIndexConfig};
use aeterna_memory::{Layer, MemoryFilter, Scope};
use common::{Rng, report};
use criterion::{Criterion, criterion_group, criterion_main};
use uuid::Uuid;

const DIMS: usize = 384;
const LIMIT: usize = 10;

/// Unit vectors clustered around 256 topics, like real embeddings. Every tenth row is in
/// scope `ten` (the others in `rest`); another tenth, spread through `rest`, is tagged `five`.
fn build(rows: usize, config: VectorIndexConfig) -> (InMemoryVectorIndex, Vec<Vec<f32>>) {
    let mut rng = Rng::new(7);
    let topics: Vec<Vec<f32>> = (0..256)
        .map(|_| (0..DIMS).map(|_| rng.unit()).collect())
        .collect();
    let mut vector = || {
        let mut v: Vec<f32> = (0..DIMS).map(|_| rng.unit() * 0.6).collect();
        for _ in 0..3 {
            let topic = &topics[rng.below(topics.len())];
            let weight = rng.unit().abs();
            v.iter_mut().zip(topic).for_each(|(x, t)| *x += weight * t);
        }
        normalize(&mut v);
        v
    };
    let index = InMemoryVectorIndex::new(DIMS, config);
    let mut batch = Vec::with_capacity(10_000);
    for row in 0..rows {
        batch.push(VectorEntry {
            id: Uuid::from_u128(row as u128),
            scope: Scope::new(Layer::Project, if row % 10 == 0 { "ten" } else { "rest" }),
            kind: "memory".into(),
            tags: if row % 10 == 5 {
                vec!["five".to_string()]
            } else {
                Vec::new()
            },
            vector: vector(),
        });
        if batch.len() == batch.capacity() {
            index.upsert_blocking("bench", &batch).unwrap();
            batch.clear();
        }
    }
    index.upsert_blocking("bench", &batch).unwrap();
    let queries = (0..200).map(|_| vector()).collect();
    (index, queries)
}

fn percentiles(
    name: &str,
    index: &InMemoryVectorIndex,
    queries: &[Vec<f32>],
    filter: &MemoryFilter,
) {
    let samples: Vec<Duration> = queries
        .iter()
        .cycle()
        .take(600)
        .map(|query| {
            let start = Instant::now();
            std::hint::black_box(index.search_blocking("bench", query, filter, LIMIT));
            start.elapsed()
        })
        .collect();
    report(name, samples);
}

fn recall(index: &InMemoryVectorIndex, exact: &InMemoryVectorIndex, queries: &[Vec<f32>]) -> f64 {
    let (mut found, mut total) = (0, 0);
    for query in queries {
        let truth: Vec<Uuid> = exact
            .search_blocking("bench", query, &MemoryFilter::default(), LIMIT)
            .iter()
            .map(|h| h.id)
            .collect();
        let got = index.search_blocking("bench", query, &MemoryFilter::default(), LIMIT);
        total += truth.len();
        found += got.iter().filter(|hit| truth.contains(&hit.id)).count();
    }
    found as f64 / total as f64
}

fn scans(c: &mut Criterion) {
    let f32_only = VectorIndexConfig {
        quantize_min_rows: usize::MAX,
        ..Default::default()
    };
    let unfiltered = MemoryFilter::default();
    let tenth = MemoryFilter {
        scopes: vec![Scope::new(Layer::Project, "ten")],
        ..Default::default()
    };
    let tagged = MemoryFilter {
        tags: vec!["five".into()],
        ..Default::default()
    };

    let (index, queries) = build(100_000, f32_only.clone());
    percentiles("scan f32 100k unfiltered", &index, &queries, &unfiltered);
    percentiles(
        "scan f32 100k filtered 10% (one scope)",
        &index,
        &queries,
        &tenth,
    );
    percentiles(
        "scan f32 100k filtered 10% (a tag, rows spread out)",
        &index,
        &queries,
        &tagged,
    );
    let mut group = c.benchmark_group("vector_scan");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(5));
    let mut i = 0;
    group.bench_function("f32_100k_unfiltered", |b| {
        b.iter(|| {
            i += 1;
            index.search_blocking("bench", &queries[i % queries.len()], &unfiltered, LIMIT)
        })
    });
    group.bench_function("f32_100k_filtered_10pct", |b| {
        b.iter(|| {
            i += 1;
            index.search_blocking("bench", &queries[i % queries.len()], &tenth, LIMIT)
        })
    });
    drop(index);

    let (exact, queries) = build(300_000, f32_only);
    let (quantized, _) = build(
        300_000,
        VectorIndexConfig {
            quantize_min_rows: 1,
            ..Default::default()
        },
    );
    assert!(quantized.is_quantized("bench"));
    percentiles("scan f32 300k unfiltered", &exact, &queries, &unfiltered);
    percentiles(
        "scan int8+rescore 300k unfiltered",
        &quantized,
        &queries,
        &unfiltered,
    );
    percentiles(
        "scan int8+rescore 300k filtered 10%",
        &quantized,
        &queries,
        &tenth,
    );
    println!(
        "int8+rescore 300k recall@{LIMIT} vs exact: {:.4}",
        recall(&quantized, &exact, &queries)
    );
    drop(exact);
    group.bench_function("int8_rescore_300k_unfiltered", |b| {
        b.iter(|| {
            i += 1;
            quantized.search_blocking("bench", &queries[i % queries.len()], &unfiltered, LIMIT)
        })
    });
    group.finish();
}

criterion_group!(benches, scans);
criterion_main!(benches);
