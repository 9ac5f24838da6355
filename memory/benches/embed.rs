//! The hashing embedder, per text.

mod common;

use std::time::{Duration, Instant};

use aeterna_memory::embed::HashingEmbedder;
use common::{Rng, memory_text, report};
use criterion::{Criterion, criterion_group, criterion_main};

fn hashing(c: &mut Criterion) {
    let embedder = HashingEmbedder::default();
    let mut rng = Rng::new(3);
    let texts: Vec<String> = (0..1000).map(|_| memory_text(&mut rng)).collect();
    let average = texts.iter().map(String::len).sum::<usize>() / texts.len();
    let paragraph = texts.iter().take(8).cloned().collect::<Vec<_>>().join(" ");
    let long: String = texts.iter().take(40).cloned().collect::<Vec<_>>().join(" ");

    let samples: Vec<Duration> = texts
        .iter()
        .cycle()
        .take(5000)
        .map(|text| {
            let start = Instant::now();
            std::hint::black_box(embedder.embed_one(text));
            start.elapsed()
        })
        .collect();
    report(
        &format!("hashing embedder, memory texts (avg {average} bytes)"),
        samples,
    );

    let mut group = c.benchmark_group("hashing_embedder");
    let mut i = 0;
    group.bench_function(format!("memory_text_avg_{average}B"), |b| {
        b.iter(|| {
            i += 1;
            embedder.embed_one(&texts[i % texts.len()])
        })
    });
    group.bench_function(format!("paragraph_{}B", paragraph.len()), |b| {
        b.iter(|| embedder.embed_one(&paragraph))
    });
    group.bench_function(format!("long_{}B", long.len()), |b| {
        b.iter(|| embedder.embed_one(&long))
    });
    group.finish();
}

criterion_group!(benches, hashing);
criterion_main!(benches);
