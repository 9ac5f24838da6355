//! Benchmarks of Hindsight (`cargo bench -p aeterna-hindsight`):
//!
//! * `extract/200_line_compiler_output`: signature extraction from 200+ lines of real rustc,
//!   gcc, javac and tsc output (from the fixture corpus), normalisation included;
//! * `query_hashing/10k_signatures_raw`: `HindsightService::query` with raw error text
//!   (redaction, extraction, embedding with the default hashing embedder, candidate generation
//!   from four sources, exact scoring, rank fusion, resolution lookup in SQLite) against 10,000
//!   stored signatures, embedded profile; p50/p95/p99 are printed for raw output, bare
//!   messages and descriptions;
//! * `query_static/…`: the same with the product's default embedder, the static token table
//!   distilled from all-MiniLM-L6-v2 (`StaticEmbedder`);
//! * with `--features local-model` and `AETERNA_TEST_MODEL_DIR` set, the same with the local
//!   sentence-transformers model (`query_local_model`), whose embedding of the query dominates.
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
use aeterna_memory::embed::{Embedder, HashingEmbedder, StaticEmbedder};
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

/// The three forms a query takes, for every output of the corpus: the raw output, its first
/// error's message alone (placeholders filled with plain words, no code) and the class's
/// hand-written description.
fn queries() -> Vec<(&'static str, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/descriptions.toml");
    let described: toml::Table =
        toml::from_str(&std::fs::read_to_string(root).expect("descriptions")).expect("toml");
    let mut all = Vec::new();
    for (name, text) in outputs() {
        all.push(("raw", text.clone()));
        if let Some(first) = extract(&text).into_iter().next() {
            let mut message = first.message_pattern.clone();
            for placeholder in aeterna_hindsight::signature::PLACEHOLDERS {
                message = message.replace(placeholder, "value");
            }
            // Some classes are only a code (`E0601` with no message): nothing to ask with.
            if !message.trim().is_empty() {
                all.push(("message", message));
            }
        }
        let class = name
            .rsplit_once('/')
            .map_or(name.as_str(), |(class, _)| class);
        if let Some(description) = described
            .get(class)
            .and_then(|d| d.get("description"))
            .and_then(|d| d.as_str())
        {
            all.push(("description", description.to_string()));
        }
    }
    all
}

/// A service holding the corpus (one resolved signature per class) and 10k more signatures.
fn stored_service(
    runtime: &tokio::runtime::Runtime,
    dir: &Path,
    who: &Identity,
    embedder: Arc<dyn Embedder>,
) -> HindsightService {
    let corpus = outputs();
    runtime.block_on(async {
        let memory = MemoryService::open_embedded(dir, MemoryConfig::default(), embedder)
            .await
            .expect("memory");
        let service =
            HindsightService::new(Arc::new(memory), HindsightConfig::default()).expect("hindsight");
        // The corpus's first variant of every class, with a resolution each.
        let mut base = Vec::new();
        for (name, text) in corpus.iter().filter(|(n, _)| !n.contains("/multi/")) {
            let captured = service
                .capture(
                    who,
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
                            who,
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
                .capture_signatures(who, None, batch.to_vec())
                .await
                .expect("store");
        }
        println!("stored {STORED} signatures in {:?}", started.elapsed());
        service
    })
}

/// Times `hindsight_query` per form against 10k stored signatures with `embedder`.
fn query_with(c: &mut Criterion, label: &str, embedder: Arc<dyn Embedder>) {
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
    let service = stored_service(&runtime, dir.path(), &who, embedder);
    let all = queries();
    let raw: Vec<String> = all
        .iter()
        .filter(|(form, _)| *form == "raw")
        .map(|(_, text)| text.clone())
        .collect();
    let mut next = 0usize;
    let mut group = c.benchmark_group(format!("query_{label}"));
    group.bench_function("10k_signatures_raw", |b| {
        b.to_async(&runtime).iter(|| {
            next = (next + 1) % raw.len();
            let request = QueryRequest {
                error_text: Some(raw[next].clone()),
                ..QueryRequest::default()
            };
            let service = &service;
            let who = &who;
            async move { service.query(who, request).await.expect("query") }
        })
    });
    group.finish();
    for form in ["raw", "message", "description"] {
        let texts: Vec<&String> = all
            .iter()
            .filter(|(f, _)| *f == form)
            .map(|(_, text)| text)
            .collect();
        let samples = runtime.block_on(async {
            let mut samples = Vec::new();
            for round in 0..1_000 {
                let started = Instant::now();
                let outcome = service
                    .query(
                        &who,
                        QueryRequest {
                            error_text: Some(texts[round % texts.len()].clone()),
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
        percentiles(
            &format!("hindsight_query {label} {form} ({STORED} signatures)"),
            samples,
        );
    }
}

fn query(c: &mut Criterion) {
    query_with(c, "hashing", Arc::new(HashingEmbedder::default()));
    query_with(c, "static", Arc::new(StaticEmbedder::new()));
    #[cfg(feature = "local-model")]
    match std::env::var_os("AETERNA_TEST_MODEL_DIR") {
        Some(dir) => {
            let model = aeterna_memory::embed::LocalModelEmbedder::load(Path::new(&dir))
                .expect("the model loads");
            query_with(c, "local_model", Arc::new(model));
        }
        None => println!("AETERNA_TEST_MODEL_DIR is not set: the local model is not measured"),
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(Duration::from_secs(5));
    targets = extraction, query
}
criterion_main!(benches);
