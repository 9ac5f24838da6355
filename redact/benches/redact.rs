//! Redaction throughput: clean text (the common case) and text with secrets.

use aeterna_redact::{Options, Redactor};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

/// Realistic tool output: a cargo build log, code and config, with no secrets.
fn clean_corpus(bytes: usize) -> String {
    let sample = r#"   Compiling serde v1.0.219
   Compiling aeterna-host v0.1.0 (/work/main/host)
warning: unused variable: `token_count`
  --> host/src/executor.rs:42:9
   |
42 |     let token_count = tokens.len();
   |         ^^^^^^^^^^^ help: if this is intentional, prefix it with an underscore
fn authenticate(user: &str, password: &str) -> Result<Session, Error> {
    let password_hash = hash(password);
    let token = next_token();
    verify(user, &password_hash, token)
}
[server]
listen = "127.0.0.1:8080"
max_tokens = 2000
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 12.34s
"#;
    sample.repeat(bytes / sample.len() + 1)[..bytes].to_owned()
}

/// Test-runner output without any credential word: what the pre-check settles alone.
fn log_corpus(bytes: usize) -> String {
    let sample = "test executor::tests::chain_runs_in_priority_order ... ok\n\
                  test loader::tests::rejects_a_core_module ... ok\n\
                  test state::overlay::tests::evicts_least_recently_used ... ok\n\
                     Compiling aeterna-host v0.1.0 (/work/main/host)\n\
                  warning: unused variable: `count` --> host/src/executor.rs:42:9\n";
    sample.repeat(bytes / sample.len() + 1)[..bytes].to_owned()
}

/// The same corpus with a secret every ~1 KiB.
fn dirty_corpus(bytes: usize) -> String {
    let secrets = [
        "export GITHUB_TOKEN=ghp_Tk9sY2FsRGV2VG9rZW5Gb3JUZXN0czEyMzQ1Ng\n",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
        "DATABASE_URL=postgres://app:s3cr3t-pass@db:5432/app\n",
        "{\"password\": \"correct horse battery staple\"}\n",
    ];
    let clean = clean_corpus(bytes);
    let mut out = String::with_capacity(bytes + 256);
    for (i, line) in clean.split_inclusive('\n').enumerate() {
        out.push_str(line);
        if i % 20 == 19 {
            out.push_str(secrets[(i / 20) % secrets.len()]);
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let redactor = Redactor::new(Options::default());
    let mut group = c.benchmark_group("redact");
    for size in [1024, 64 * 1024] {
        let clean = clean_corpus(size);
        let dirty = dirty_corpus(size);
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::new("clean", size), &clean, |b, text| {
            b.iter(|| redactor.redact(text).total())
        });
        group.bench_with_input(BenchmarkId::new("with-secrets", size), &dirty, |b, text| {
            b.iter(|| redactor.redact(text).total())
        });
        // The compile-free pre-check alone, as a fresh wasm instance runs it on clean text.
        let log = log_corpus(size);
        assert!(!aeterna_redact::may_contain_secrets(
            &log,
            Options::default()
        ));
        group.bench_with_input(BenchmarkId::new("pre-check-log", size), &log, |b, text| {
            b.iter(|| aeterna_redact::may_contain_secrets(text, Options::default()))
        });
    }
    group.finish();
    c.bench_function("compile-detectors", |b| {
        b.iter(|| Redactor::new(Options::default()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
