//! Benchmarks of Hindsight (`cargo bench -p aeterna-hindsight`):
//!
//! * `extract/200_line_compiler_output`: signature extraction from 200+ lines of real rustc,
//!   gcc, javac and tsc output (from the fixture corpus), normalisation included;
//! * `query/10k_signatures`: `HindsightService::query` with raw error text (redaction,
//!   extraction, embedding with the default hashing embedder, candidate generation, exact
//!   scoring, resolution lookup in SQLite) against 10,000 stored signatures, embedded profile.
//!
//! After criterion's report, each prints p50/p95/p99 over individually timed runs, since the
//! quality bar is a percentile (`hindsight_query` p95 ≤ 10 ms).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aeterna_hindsight::{
    CaptureRequest, ErrorSignature, HindsightConfig, HindsightService, QueryRequest,
    ResolveRequest, extract,
};
use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Identity, MemoryConfig, MemoryService};
use criterion::{Criterion, criterion_group, criterion_main};

const STORED: usize = 10_000;

fn outputs() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/outputs");
    let mut all = Vec::new();
    for toolchain in std::fs::read_dir(&root).expect("outputs") {
        let toolchain = toolchain.expect("entry").path();
        if !toolchain.is_dir() {
            continue;
        }
        for class in std::fs::read_dir(&toolchain).expect("toolchain") {
            let class = class.expect("entry").path();
            for file in std::fs::read_dir(&class).expect("class") {
                let file = file.expect("entry").path();
                let name = file
                    .strip_prefix(&root)
                    .expect("inside")
                    .display()
                    .to_string();
                all.push((name, std::fs::read_to_string(&file).expect("output")));
            }
        }
    }
    all.sort();
    all
}

/// Real compiler diagnostics concatenated to at least 200 lines.
fn compiler_log() -> String {
    let mut log = String::new();
    let compilers = [
        "rust/",
        "gcc/",
        "gxx/",
        "java/cannot",
        "java/incompatible",
        "java/missing",
        "typescript/",
        "go/undefined",
        "go/declared",
    ];
    for (name, text) in outputs().iter().cycle().take(10_000) {
        if log.lines().count() >= 200 {
            break;
        }
        if compilers.iter().any(|c| name.starts_with(c)) {
            log.push_str(text);
        }
    }
    log
}

fn percentiles(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    println!(
        "{label}: n={} p50={:?} p95={:?} p99={:?} max={:?}",
        samples.len(),
        at(0.50),
        at(0.95),
        at(0.99),
        samples[samples.len() - 1]
    );
}

fn extraction(c: &mut Criterion) {
    let log = compiler_log();
    let lines = log.lines().count();
    let found = extract(&log).len();
    let mut group = c.benchmark_group("extract");
    group.bench_function("200_line_compiler_output", |b| {
        b.iter(|| extract(std::hint::black_box(&log)))
    });
    group.finish();
    let samples = (0..2_000)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(extract(&log));
            started.elapsed()
        })
        .collect();
    percentiles(
        &format!("extract ({lines} lines, {found} signatures)"),
        samples,
    );
}

/// 10k distinct signatures: the corpus's, and variants of them with other types and words,
/// as a tenant collects over time.
fn synthetic_signatures(base: &[ErrorSignature]) -> Vec<ErrorSignature> {
    let words: Vec<String> = base
        .iter()
        .flat_map(|s| {
            s.message_pattern
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|w| w.chars().all(char::is_alphabetic))
        .collect();
    (0..STORED)
        .map(|i| {
            let mut s = base[i % base.len()].clone();
            let round = i / base.len();
            if round > 0 {
                // A quarter keep their type (big buckets); the rest get types of their own.
                if !round.is_multiple_of(4) {
                    s.error_type = format!("{}-{round}", s.error_type);
                }
                let a = &words[(i * 7) % words.len()];
                let b = &words[(i * 13 + 5) % words.len()];
                s.message_pattern = format!("{} {a} {b} variant{i}", s.message_pattern);
            }
            s
        })
        .collect()
}

fn query(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let who = Identity {
        tenant_id: "acme".into(),
        project_id: Some("shop".into()),
        user_id: Some("dev".into()),
        ..Identity::default()
    };
    let corpus = outputs();
    let service = runtime.block_on(async {
        let memory = MemoryService::open_embedded(
            dir.path(),
            MemoryConfig::default(),
            Arc::new(HashingEmbedder::default()),
        )
        .await
        .expect("memory");
        let service =
            HindsightService::new(Arc::new(memory), HindsightConfig::default()).expect("hindsight");
        // The corpus's first variant of every class, with a resolution each.
        let mut base = Vec::new();
        for (name, text) in corpus.iter().filter(|(n, _)| !n.contains("/multi/")) {
            let captured = service
                .capture(
                    &who,
                    CaptureRequest {
                        error_text: text.clone(),
                        layer: None,
                    },
                )
                .await
                .expect("capture");
            for signature in captured.signatures {
                if signature.occurrence_count == 1 {
                    service
                        .resolve(
                            &who,
                            ResolveRequest {
                                signature_id: Some(signature.signature_id),
                                description: format!("fix for {name}"),
                                ..ResolveRequest::default()
                            },
                        )
                        .await
                        .expect("resolve");
                }
            }
            base.extend(extract(text));
        }
        let started = Instant::now();
        for batch in synthetic_signatures(&base).chunks(500) {
            service
                .capture_signatures(&who, None, batch.to_vec())
                .await
                .expect("store");
        }
        println!("stored {STORED} signatures in {:?}", started.elapsed());
        service
    });
    let queries: Vec<String> = corpus.iter().map(|(_, text)| text.clone()).collect();
    let mut next = 0usize;
    let mut group = c.benchmark_group("query");
    group.bench_function("10k_signatures", |b| {
        b.to_async(&runtime).iter(|| {
            next = (next + 1) % queries.len();
            let request = QueryRequest {
                error_text: Some(queries[next].clone()),
                ..QueryRequest::default()
            };
            let service = &service;
            let who = &who;
            async move { service.query(who, request).await.expect("query") }
        })
    });
    group.finish();
    let samples = runtime.block_on(async {
        let mut samples = Vec::new();
        for round in 0..1_000 {
            let text = queries[round % queries.len()].clone();
            let started = Instant::now();
            let outcome = service
                .query(
                    &who,
                    QueryRequest {
                        error_text: Some(text),
                        ..QueryRequest::default()
                    },
                )
                .await
                .expect("query");
            samples.push(started.elapsed());
            std::hint::black_box(outcome);
        }
        samples
    });
    percentiles(&format!("hindsight_query ({STORED} signatures)"), samples);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(Duration::from_secs(5));
    targets = extraction, query
}
criterion_main!(benches);
