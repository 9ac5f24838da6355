//! Load over MCP Streamable HTTP against the real `aeterna serve` binary (a child process, so
//! its CPU and memory are its own): `memory_add` 30% / `memory_search` 50% /
//! `context_assemble` 20% on a store seeded with 10,000 memories, from 1, 8, 32 and 128
//! concurrent clients, each with its own MCP session.
//!
//! Prints, per level: throughput, p50/p95/p99 latency, errors, the server's CPU time per
//! operation (user + system, from /proc) and its resident memory.
//!
//! `cargo bench -p aeterna-server --bench mcp_load` (optional: `-- --ops 4000 --seed 10000`).
//! Bounded: a fixed number of operations per level, latencies kept in one preallocated vector.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const LEVELS: [usize; 4] = [1, 8, 32, 128];
const WORDS: [&str; 24] = [
    "cargo",
    "migration",
    "schema",
    "deploy",
    "cache",
    "token",
    "parser",
    "retry",
    "timeout",
    "index",
    "vector",
    "tenant",
    "session",
    "budget",
    "summary",
    "lock",
    "queue",
    "backoff",
    "redis",
    "postgres",
    "sqlite",
    "embedding",
    "release",
    "rollback",
];

struct Options {
    ops_per_level: usize,
    seed_memories: usize,
}

fn options() -> Options {
    let mut options = Options {
        ops_per_level: 4_000,
        seed_memories: 10_000,
    };
    let args: Vec<String> = std::env::args().collect();
    for pair in args.windows(2) {
        let value = || pair[1].parse().expect("a number");
        match pair[0].as_str() {
            "--ops" => options.ops_per_level = value(),
            "--seed" => options.seed_memories = value(),
            _ => {}
        }
    }
    options
}

/// The server under load, killed when dropped.
struct Server {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_aeterna"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .env("RUST_LOG", "warn")
        .env("AETERNA_HTTP__MAX_SESSIONS", "1000")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start aeterna serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("listen line");
    let url = line
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .expect("a URL on the listen line");
    Server {
        base: url.trim_end_matches("/mcp").to_owned(),
        child,
        _dir: dir,
    }
}

/// Server CPU seconds (user + system) and resident memory in MiB, from /proc.
fn server_usage(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let fields: Vec<&str> = stat.rsplit_once(") ").expect("stat").1.split(' ').collect();
    let ticks: f64 =
        fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let rss_kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.split_whitespace().next())
        .and_then(|value| value.parse().ok())
        .unwrap_or(0.0);
    (ticks / clock_ticks_per_second(), rss_kib / 1024.0)
}

/// `getconf CLK_TCK` (100 on every Linux this runs on).
fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}

/// One MCP session over plain HTTP.
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
}

impl Session {
    async fn open(http: reqwest::Client, base: &str) -> anyhow::Result<Session> {
        let url = format!("{base}/mcp");
        let response = http
            .post(&url)
            .header("Accept", "application/json, text/event-stream")
            .json(
                &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "mcp_load", "version": "1" } } }),
            )
            .send()
            .await?
            .error_for_status()?;
        let id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .ok_or_else(|| anyhow::anyhow!("no session id"))?
            .to_owned();
        response.bytes().await?;
        let session = Session { http, url, id };
        session
            .post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await?;
        Ok(session)
    }

    async fn post(&self, message: Value) -> anyhow::Result<String> {
        let response = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("Mcp-Session-Id", &self.id)
            .json(&message)
            .send()
            .await?
            .error_for_status()?;
        Ok(response.text().await?)
    }

    /// Calls a tool; an error result or a JSON-RPC error is an `Err`.
    async fn call(&self, id: usize, tool: &str, arguments: Value) -> anyhow::Result<()> {
        let body = self
            .post(json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": tool, "arguments": arguments } }))
            .await?;
        let data = body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .find(|data| data.contains("\"id\""))
            .unwrap_or(&body);
        let message: Value = serde_json::from_str(data.trim())?;
        if message.get("error").is_some() || message["result"]["isError"] == true {
            anyhow::bail!("{tool}: {message}");
        }
        Ok(())
    }
}

fn sentence(n: usize) -> String {
    let word = |k: usize| WORDS[(n / k + k * 7) % WORDS.len()];
    format!(
        "Note {n}: the {} step needs the {} before the {}; {} with {} fixed it.",
        word(1),
        word(3),
        word(5),
        word(11),
        word(17)
    )
}

/// Operation `n` of the mix: 30% add, 50% search, 20% assemble.
fn operation(n: usize) -> (&'static str, Value) {
    let query = format!(
        "{} {} {}",
        WORDS[n % 24],
        WORDS[(n / 3) % 24],
        WORDS[(n / 7) % 24]
    );
    match n % 10 {
        0..=2 => (
            "memory_add",
            json!({ "content": sentence(1_000_000 + n), "layer": "project", "project_id": "load" }),
        ),
        3..=7 => (
            "memory_search",
            json!({ "query": query, "limit": 10, "project_id": "load" }),
        ),
        _ => (
            "context_assemble",
            json!({ "query": query, "token_budget": 2000, "project_id": "load" }),
        ),
    }
}

async fn seed(base: &str, memories: usize) {
    let http = reqwest::Client::new();
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (http, next, base) = (http.clone(), next.clone(), base.to_owned());
        tasks.spawn(async move {
            let session = Session::open(http, &base).await.expect("session");
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= memories {
                    break;
                }
                let arguments =
                    json!({ "content": sentence(n), "layer": "project", "project_id": "load" });
                session
                    .call(n, "memory_add", arguments)
                    .await
                    .expect("seed memory_add");
            }
        });
    }
    while tasks.join_next().await.is_some() {}
}

struct LevelReport {
    clients: usize,
    ops: usize,
    errors: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
    cpu_per_op: Duration,
    rss_mib: f64,
}

async fn run_level(server: &Server, clients: usize, ops: usize, offset: usize) -> LevelReport {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .build()
        .expect("client");
    let mut sessions = Vec::with_capacity(clients);
    for _ in 0..clients {
        sessions.push(
            Session::open(http.clone(), &server.base)
                .await
                .expect("session"),
        );
    }
    let next = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let (cpu_before, _) = server_usage(server.child.id());
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for session in sessions {
        let (next, errors) = (next.clone(), errors.clone());
        tasks.spawn(async move {
            let mut latencies = Vec::with_capacity(ops / clients + 1);
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= ops {
                    break;
                }
                let (tool, arguments) = operation(offset + n);
                let sent = Instant::now();
                if let Err(error) = session.call(n, tool, arguments).await {
                    if errors.fetch_add(1, Ordering::Relaxed) < 3 {
                        eprintln!("error: {error:#}");
                    }
                }
                latencies.push(sent.elapsed());
            }
            latencies
        });
    }
    let mut latencies = Vec::with_capacity(ops);
    while let Some(done) = tasks.join_next().await {
        latencies.extend(done.expect("client task"));
    }
    let elapsed = started.elapsed();
    let (cpu_after, rss_mib) = server_usage(server.child.id());
    latencies.sort_unstable();
    LevelReport {
        clients,
        ops,
        errors: errors.load(Ordering::Relaxed),
        elapsed,
        latencies,
        cpu_per_op: Duration::from_secs_f64((cpu_after - cpu_before) / ops as f64),
        rss_mib,
    }
}

fn main() {
    let options = options();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = start_server();
    runtime.block_on(async {
        let seeding = Instant::now();
        seed(&server.base, options.seed_memories).await;
        let (_, rss) = server_usage(server.child.id());
        println!(
            "mcp_load: seeded {} memories in {:.1?} (server RSS {rss:.0} MiB); mix add 30% / \
             search 50% / assemble 20%, {} operations per level",
            options.seed_memories,
            seeding.elapsed(),
            options.ops_per_level
        );
        for (index, clients) in LEVELS.into_iter().enumerate() {
            let report = run_level(
                &server,
                clients,
                options.ops_per_level,
                index * options.ops_per_level,
            )
            .await;
            let at =
                |q: f64| report.latencies[((report.latencies.len() as f64 - 1.0) * q) as usize];
            println!(
                "mcp_load/{:>3} clients: {:>7.0} ops/s  p50 {:>9.2?}  p95 {:>9.2?}  p99 {:>9.2?}  \
                 errors {}/{}  server CPU/op {:>8.2?}  RSS {:.0} MiB",
                report.clients,
                report.ops as f64 / report.elapsed.as_secs_f64(),
                at(0.50),
                at(0.95),
                at(0.99),
                report.errors,
                report.ops,
                report.cpu_per_op,
                report.rss_mib
            );
        }
    });
}
