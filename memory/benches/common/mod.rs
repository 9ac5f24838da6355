//! Shared by the benchmarks: a deterministic generator of realistic memory text, and
//! percentile reporting (criterion reports means and medians; the quality bars are p95).

#![allow(dead_code)]

use std::time::Duration;

pub mod corpus;

/// splitmix64: small, fast and reproducible across runs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// An index in `0..n` where low indices are much more likely (Zipf-like, s ≈ 1), as word
    /// frequencies in real text are.
    pub fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (((n as f64 + 1.0).powf(u) - 1.0) as usize).min(n - 1)
    }

    pub fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        words[self.zipf(words.len())]
    }

    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
}

const NOUNS: &[&str] = &[
    "database",
    "cache",
    "queue",
    "worker",
    "scheduler",
    "pipeline",
    "build",
    "test",
    "deployment",
    "service",
    "endpoint",
    "request",
    "response",
    "token",
    "session",
    "connection",
    "pool",
    "thread",
    "lock",
    "transaction",
    "index",
    "query",
    "migration",
    "schema",
    "table",
    "column",
    "row",
    "batch",
    "job",
    "task",
    "config",
    "setting",
    "timeout",
    "retry",
    "backoff",
    "error",
    "panic",
    "crash",
    "leak",
    "allocation",
    "buffer",
    "stream",
    "socket",
    "certificate",
    "key",
    "secret",
    "vault",
    "cluster",
    "node",
    "pod",
    "container",
    "image",
    "registry",
    "release",
    "branch",
    "commit",
    "merge",
    "review",
    "changelog",
    "benchmark",
    "profile",
    "flamegraph",
    "trace",
    "span",
    "metric",
    "alert",
    "dashboard",
    "log",
    "logger",
    "parser",
    "lexer",
    "compiler",
    "linker",
    "crate",
    "module",
    "function",
    "closure",
    "trait",
    "struct",
    "enum",
    "macro",
    "lifetime",
    "borrow",
    "reference",
    "pointer",
    "iterator",
    "future",
    "runtime",
    "executor",
    "channel",
    "mutex",
    "semaphore",
    "heap",
    "stack",
    "frame",
    "user",
    "tenant",
    "account",
    "permission",
    "role",
    "policy",
    "quota",
    "limit",
    "rate",
    "budget",
    "window",
    "webhook",
    "callback",
    "handler",
    "router",
    "middleware",
    "proxy",
    "gateway",
    "balancer",
    "dns",
    "tls",
    "upload",
    "download",
    "file",
    "directory",
    "path",
    "volume",
    "disk",
    "snapshot",
    "backup",
    "restore",
    "frontend",
    "backend",
    "component",
    "widget",
    "layout",
    "style",
    "theme",
    "font",
    "page",
    "form",
    "button",
    "dependency",
    "version",
    "lockfile",
    "toolchain",
    "target",
    "feature",
    "flag",
    "experiment",
    "rollout",
    "embedding",
    "vector",
    "model",
    "prompt",
    "context",
    "summary",
    "note",
    "memory",
    "agent",
    "extension",
];
const VERBS: &[&str] = &[
    "fails",
    "times out",
    "hangs",
    "crashes",
    "leaks",
    "retries",
    "blocks",
    "deadlocks",
    "overflows",
    "drops",
    "returns",
    "caches",
    "invalidates",
    "serialises",
    "parses",
    "rejects",
    "accepts",
    "logs",
    "panics",
    "spins",
    "recovers",
    "restarts",
    "migrates",
    "compacts",
    "flushes",
    "rotates",
    "expires",
    "refreshes",
    "throttles",
    "batches",
    "streams",
    "buffers",
    "allocates",
    "frees",
    "clones",
    "borrows",
    "locks",
    "waits",
    "polls",
];
const ADJECTIVES: &[&str] = &[
    "slow",
    "flaky",
    "stale",
    "large",
    "empty",
    "invalid",
    "missing",
    "duplicate",
    "concurrent",
    "nested",
    "async",
    "blocking",
    "cold",
    "warm",
    "expired",
    "corrupt",
    "partial",
    "default",
    "custom",
    "shared",
    "global",
    "local",
    "remote",
    "internal",
    "public",
    "private",
    "legacy",
    "new",
    "unused",
    "optional",
];
const FIXES: &[&str] = &[
    "raising the limit",
    "adding a retry with exponential backoff",
    "pinning the version",
    "clearing the cache",
    "moving the work to a background task",
    "splitting the batch",
    "adding an index",
    "reusing the connection",
    "dropping the lock before awaiting",
    "validating the input first",
    "increasing the timeout",
    "switching to a bounded channel",
    "streaming instead of buffering",
    "running the migration manually",
];

/// A short technical note like those agents store: 15–60 words, Zipf-distributed vocabulary,
/// identifiers, numbers and paths.
pub fn memory_text(rng: &mut Rng) -> String {
    let mut parts = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let sentence = match rng.below(5) {
            0 => format!(
                "The {} {} {} when the {} {} under load.",
                rng.pick(ADJECTIVES),
                rng.pick(NOUNS),
                rng.pick(VERBS),
                rng.pick(NOUNS),
                rng.pick(VERBS)
            ),
            1 => format!(
                "Fixed the {} {} in `{}_{}.rs` by {}.",
                rng.pick(NOUNS),
                rng.pick(NOUNS),
                rng.pick(NOUNS),
                rng.pick(NOUNS),
                FIXES[rng.below(FIXES.len())]
            ),
            2 => format!(
                "Set `{}.{}_{}` to {} for the {} {}; the default {} the {}.",
                rng.pick(NOUNS),
                rng.pick(NOUNS),
                rng.pick(NOUNS),
                rng.below(10_000),
                rng.pick(ADJECTIVES),
                rng.pick(NOUNS),
                rng.pick(VERBS),
                rng.pick(NOUNS)
            ),
            3 => format!(
                "Error E{:04}: {} {} {} in {}::{} (see issue #{}).",
                rng.below(800),
                rng.pick(ADJECTIVES),
                rng.pick(NOUNS),
                rng.pick(VERBS),
                rng.pick(NOUNS),
                rng.pick(NOUNS),
                rng.below(5_000)
            ),
            _ => format!(
                "Prefer {} {} over {} {} for the {}; it {} less often and the {} stays {}.",
                rng.pick(ADJECTIVES),
                rng.pick(NOUNS),
                rng.pick(ADJECTIVES),
                rng.pick(NOUNS),
                rng.pick(NOUNS),
                rng.pick(VERBS),
                rng.pick(NOUNS),
                rng.pick(ADJECTIVES)
            ),
        };
        parts.push(sentence);
    }
    parts.join(" ")
}

/// A question an agent might ask: a few topic words, sometimes phrased as a question.
pub fn query_text(rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => format!(
            "{} {} {}",
            rng.pick(NOUNS),
            rng.pick(VERBS),
            rng.pick(NOUNS)
        ),
        1 => format!(
            "why does the {} {} {}",
            rng.pick(ADJECTIVES),
            rng.pick(NOUNS),
            rng.pick(VERBS)
        ),
        _ => format!(
            "how to fix {} {} {} errors",
            rng.pick(NOUNS),
            rng.pick(NOUNS),
            rng.pick(ADJECTIVES)
        ),
    }
}

/// CPU time this process has used so far (user + system, all threads), from
/// `/proc/self/stat`; `None` where that is unavailable. On a machine shared with other
/// builds, latency percentiles include waiting for a core; CPU time per operation does not.
pub fn process_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The load average over the last minute, to judge how busy the machine was.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// Prints p50/p95/p99 of `samples`.
pub fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    println!(
        "{name}: n={} p50={:?} p95={:?} p99={:?} max={:?} (load average {})",
        samples.len(),
        at(0.50),
        at(0.95),
        at(0.99),
        samples[samples.len() - 1],
        load_average()
    );
}
