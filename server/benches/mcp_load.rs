//! Load over MCP Streamable HTTP against the real `aeterna serve` binary (a child process, so
//! its CPU and memory are its own): `memory_add` 30% / `memory_search` 50% /
//! `context_assemble` 20% on a store seeded with 10,000 memories, from 1, 8, 32 and 128
//! concurrent clients, each with its own MCP session (or stateless, `--stateless`).
//!
//! Prints, per level: throughput, p50/p95/p99 latency, errors, the server's CPU time per
//! operation (user + system, from /proc), its resident memory, and how busy the whole machine
//! was (when it is saturated, the database and the load generator share its cores).
//!
//! `cargo bench -p aeterna-server --bench mcp_load` (optional: `-- --ops 4000 --seed 10000
//! --only memory_search` to run one tool of the mix alone, for attribution;
//! `--database-url postgres://… --instances 2` to run several servers on one PostgreSQL, in a
//! fresh schema, with the clients spread over them and the CPU of all of them counted;
//! `--server-cpus 0.25` caps each server at a quarter of a core, as if each ran on a small
//! machine of its own while the database and this generator keep the rest; `--levels 1,8`
//! for other client counts; `--stateless` for requests of the 2026-07-28 protocol, which
//! carry their version instead of a session, as the newest SDKs send them).
//! To compare instance counts, compare throughput where neither grows with more clients
//! (`--levels 128,256`): at 32, two instances see 16 clients each, so their write groups are
//! half the size and each operation pays more round trips to the database (each costlier over
//! TLS, which sqlx's default `sslmode=prefer` negotiates even on loopback when the server
//! offers it; add `?sslmode=disable` to the URL to measure without).
//! Bounded: a fixed number of operations per level, latencies kept in one preallocated vector.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const LEVELS: [usize; 4] = [1, 8, 32, 128];
/// Syllables of the corpus vocabulary: 24^2 two-syllable and some three-syllable words.
const SYLLABLES: [&str; 24] = [
    "ka", "ro", "mi", "tel", "san", "vo", "dri", "pex", "lun", "gar", "bo", "sen", "qui", "tra",
    "nol", "fe", "zu", "mar", "dex", "ori", "pla", "hun", "cy", "wen",
];
/// Words every memory shares, as real notes share the project's vocabulary.
const COMMON: [&str; 12] = [
    "build", "test", "deploy", "cache", "config", "error", "service", "database", "release",
    "branch", "timeout", "retry",
];

struct Options {
    ops_per_level: usize,
    seed_memories: usize,
    only: Option<String>,
    database_url: Option<String>,
    instances: usize,
    /// CPU each server may use, in cores (a cgroup quota): one small machine per instance.
    server_cpus: Option<f64>,
    /// Numbers of concurrent clients, one level each.
    levels: Vec<usize>,
    /// Stateless requests of the newest protocol instead of one session per client.
    stateless: bool,
}

fn options() -> Options {
    let mut options = Options {
        ops_per_level: 4_000,
        seed_memories: 10_000,
        only: None,
        database_url: None,
        instances: 1,
        server_cpus: None,
        levels: LEVELS.to_vec(),
        stateless: false,
    };
    let args: Vec<String> = std::env::args().collect();
    options.stateless = args.iter().any(|arg| arg == "--stateless");
    for pair in args.windows(2) {
        let value = || pair[1].parse().expect("a number");
        match pair[0].as_str() {
            "--ops" => options.ops_per_level = value(),
            "--seed" => options.seed_memories = value(),
            "--only" => options.only = Some(pair[1].clone()),
            "--database-url" => options.database_url = Some(pair[1].clone()),
            "--instances" => options.instances = value(),
            "--server-cpus" => options.server_cpus = Some(pair[1].parse().expect("cores")),
            "--levels" => {
                options.levels = pair[1]
                    .split(',')
                    .map(|clients| clients.trim().parse().expect("client counts: 1,8,32"))
                    .collect()
            }
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
    /// The cgroup limiting its CPU (`--server-cpus`), removed after it.
    cgroup: Option<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(cgroup) = &self.cgroup {
            let _ = std::fs::remove_dir(cgroup);
        }
    }
}

/// A server on its own data dir, with `config` (TOML) if any.
fn start_server(config: Option<&str>) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut command = Command::new(env!("CARGO_BIN_EXE_aeterna"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path());
    if let Some(config) = config {
        let file = dir.path().join("aeterna.toml");
        std::fs::write(&file, config).expect("write the config");
        command.arg("--config").arg(file);
    }
    let mut child = command
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
        cgroup: None,
    }
}

/// Caps process `pid` at `cores` of CPU time with a cgroup of its own (v2, or v1's `cpu`
/// controller), whose path it returns; needs root.
fn limit_cpu(pid: u32, cores: f64) -> String {
    let period = 100_000u64;
    let quota = (cores * period as f64).round().max(1_000.0) as u64;
    let v2 = std::path::Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    let dir = if v2 {
        format!("/sys/fs/cgroup/mcp_load_{pid}")
    } else {
        format!("/sys/fs/cgroup/cpu/mcp_load_{pid}")
    };
    let write = |file: &str, value: String| {
        std::fs::write(format!("{dir}/{file}"), value)
            .unwrap_or_else(|error| panic!("--server-cpus: writing {dir}/{file} (root?): {error}"))
    };
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|error| panic!("--server-cpus: creating {dir} (root?): {error}"));
    if v2 {
        write("cpu.max", format!("{quota} {period}"));
    } else {
        write("cpu.cfs_period_us", period.to_string());
        write("cpu.cfs_quota_us", quota.to_string());
    }
    write("cgroup.procs", pid.to_string());
    dir
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

/// Context switches of all the server's threads so far (voluntary and involuntary), from
/// /proc: each is a thread that went to sleep or was preempted — what handing a request
/// between tasks and threads costs beyond the work itself. Threads that exited are not counted.
fn server_switches(pid: u32) -> u64 {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    threads
        .flatten()
        .filter_map(|thread| std::fs::read_to_string(thread.path().join("status")).ok())
        .map(|status| {
            status
                .lines()
                .filter_map(|line| {
                    line.strip_prefix("voluntary_ctxt_switches:")
                        .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
                })
                .filter_map(|count| count.trim().parse::<u64>().ok())
                .sum::<u64>()
        })
        .sum()
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

/// The protocol revision whose requests stand alone: no `initialize`, no session.
const STATELESS_PROTOCOL: &str = "2026-07-28";

/// One MCP client over plain HTTP: a legacy session, or stateless requests.
struct Session {
    http: reqwest::Client,
    url: String,
    /// The session's id; `None` when each request carries its protocol version instead.
    id: Option<String>,
}

impl Session {
    async fn open(http: reqwest::Client, base: &str, stateless: bool) -> anyhow::Result<Session> {
        let url = format!("{base}/mcp");
        if stateless {
            return Ok(Session {
                http,
                url,
                id: None,
            });
        }
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
        let session = Session {
            http,
            url,
            id: Some(id),
        };
        session
            .post(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await?;
        Ok(session)
    }

    /// Posts `message`; a stateless request also names its method (and tool) in headers.
    async fn post(&self, message: Value) -> anyhow::Result<String> {
        let mut request = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream");
        request = match &self.id {
            Some(id) => request.header("Mcp-Session-Id", id),
            None => {
                let request = request
                    .header("MCP-Protocol-Version", STATELESS_PROTOCOL)
                    .header("Mcp-Method", message["method"].as_str().unwrap_or_default());
                match message["params"]["name"].as_str() {
                    Some(name) => request.header("Mcp-Name", name),
                    None => request,
                }
            }
        };
        let response = request.json(&message).send().await?.error_for_status()?;
        Ok(response.text().await?)
    }

    /// Calls a tool; an error result or a JSON-RPC error is an `Err`.
    async fn call(&self, id: usize, tool: &str, arguments: Value) -> anyhow::Result<()> {
        let mut params = json!({ "name": tool, "arguments": arguments });
        if self.id.is_none() {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": STATELESS_PROTOCOL,
                "io.modelcontextprotocol/clientInfo": { "name": "mcp_load", "version": "1" },
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        let body = self
            .post(json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params }))
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

/// A deterministic pseudo-random number for `n` (SplitMix64).
fn mix(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Word `k` of a vocabulary of ~14,000, drawn Zipf-like (a few words are frequent, most rare),
/// as in real text: seeded by `n`.
fn word(n: u64) -> String {
    let r = mix(n);
    let u = (r >> 11) as f64 / (1u64 << 53) as f64;
    let rank = (14_000.0 * u.powi(3)) as usize;
    let (a, b, c) = (rank % 24, (rank / 24) % 24, rank / 576);
    match c {
        0 => format!("{}{}", SYLLABLES[a], SYLLABLES[b]),
        c => format!("{}{}{}", SYLLABLES[a], SYLLABLES[b], SYLLABLES[c % 24]),
    }
}

/// Memory `n`: one or two words of the project vocabulary and 10 to 18 corpus words.
fn sentence(n: usize) -> String {
    let n = n as u64;
    let length = 10 + mix(n) % 9;
    let mut words: Vec<String> = (0..length).map(|i| word(n * 64 + i)).collect();
    words.insert(3, COMMON[(mix(n + 1) % 12) as usize].to_owned());
    format!("Note {n}: {}.", words.join(" "))
}

/// Operation `n` of the mix: 30% add, 50% search, 20% assemble; or always `only`.
fn operation(n: usize, only: Option<&str>) -> (&'static str, Value) {
    let seed = 1 << 40 | n as u64;
    let query = format!(
        "{} {} {}",
        COMMON[n % 12],
        word(seed * 64),
        word(seed * 64 + 1)
    );
    let slot = match only {
        None => n % 10,
        Some("memory_add") => 0,
        Some("memory_search") => 3,
        Some("context_assemble") => 8,
        Some(other) => panic!("--only {other}: use memory_add, memory_search or context_assemble"),
    };
    match slot {
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
            let session = Session::open(http, &base, false).await.expect("session");
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

/// The planner's statistics on the seeded schema, as autovacuum would gather them after a bulk
/// load (it may be off on a test server; without statistics PostgreSQL may pick, for the
/// duplicate check of every add, the scope's index over the content index).
async fn analyze(url: &str, schema: &str) {
    let pool = sqlx::PgPool::connect(url)
        .await
        .expect("connect to analyze the seeded schema");
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT tablename::TEXT FROM pg_tables WHERE schemaname = $1")
            .bind(schema)
            .fetch_all(&pool)
            .await
            .expect("list the seeded tables");
    for table in tables {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "ANALYZE \"{schema}\".\"{table}\""
        )))
        .execute(&pool)
        .await
        .expect("analyze a seeded table");
    }
    pool.close().await;
}

/// Waits (at most a minute) until the server's background work after seeding (summary
/// regeneration, index maintenance) is done, so the first level is not charged with it.
async fn settle(servers: &[Server]) {
    let (mut before, _) = usage(servers);
    for _ in 0..120 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (now, _) = usage(servers);
        if now - before < 0.01 {
            return;
        }
        before = now;
    }
}

struct LevelReport {
    clients: usize,
    ops: usize,
    errors: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
    cpu_per_op: Duration,
    /// Context switches of the servers' threads per operation.
    switches_per_op: f64,
    rss_mib: f64,
    /// Share of the machine's CPU time that was busy (every process: the servers, the
    /// database, this load generator), 0..1.
    machine_busy: f64,
}

/// The machine's busy and total CPU ticks so far, from the `cpu` line of /proc/stat.
fn machine_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").expect("/proc/stat");
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("cpu "))
        .expect("the cpu line")
        .split_whitespace()
        .map(|field| field.parse().expect("ticks"))
        .collect();
    let total: u64 = ticks.iter().sum();
    // idle and iowait
    (total - ticks[3] - ticks[4], total)
}

/// Context switches of all the servers' threads together.
fn switches(servers: &[Server]) -> u64 {
    servers
        .iter()
        .map(|server| server_switches(server.child.id()))
        .sum()
}

/// CPU seconds and resident MiB of all the servers together.
fn usage(servers: &[Server]) -> (f64, f64) {
    servers
        .iter()
        .map(|server| server_usage(server.child.id()))
        .fold((0.0, 0.0), |(cpu, rss), (c, r)| (cpu + c, rss + r))
}

async fn run_level(
    servers: &[Server],
    clients: usize,
    ops: usize,
    offset: usize,
    only: Option<Arc<str>>,
    stateless: bool,
) -> LevelReport {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(clients)
        .build()
        .expect("client");
    let mut sessions = Vec::with_capacity(clients);
    for client in 0..clients {
        let server = &servers[client % servers.len()];
        sessions.push(
            Session::open(http.clone(), &server.base, stateless)
                .await
                .expect("session"),
        );
    }
    let next = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let (cpu_before, _) = usage(servers);
    let switches_before = switches(servers);
    let (busy_before, total_before) = machine_ticks();
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for session in sessions {
        let (next, errors, only) = (next.clone(), errors.clone(), only.clone());
        tasks.spawn(async move {
            let mut latencies = Vec::with_capacity(ops / clients + 1);
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= ops {
                    break;
                }
                let (tool, arguments) = operation(offset + n, only.as_deref());
                let sent = Instant::now();
                if let Err(error) = session.call(n, tool, arguments).await
                    && errors.fetch_add(1, Ordering::Relaxed) < 3
                {
                    eprintln!("error: {error:#}");
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
    let (cpu_after, rss_mib) = usage(servers);
    let switches_after = switches(servers);
    let (busy_after, total_after) = machine_ticks();
    latencies.sort_unstable();
    LevelReport {
        clients,
        ops,
        errors: errors.load(Ordering::Relaxed),
        elapsed,
        latencies,
        cpu_per_op: Duration::from_secs_f64((cpu_after - cpu_before) / ops as f64),
        switches_per_op: switches_after.saturating_sub(switches_before) as f64 / ops as f64,
        rss_mib,
        machine_busy: (busy_after - busy_before) as f64
            / (total_after - total_before).max(1) as f64,
    }
}

fn main() {
    let options = options();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let schema = format!("aeterna_bench_{}", std::process::id());
    let config = options
        .database_url
        .as_ref()
        .map(|url| format!("database_url = \"{url}\"\n[memory.postgres]\nschema = \"{schema}\"\n"));
    // One at a time: the first creates the schema and migrates it.
    let servers: Vec<Server> = (0..options.instances.max(1))
        .map(|_| start_server(config.as_deref()))
        .map(|mut server| {
            if let Some(cores) = options.server_cpus {
                server.cgroup = Some(limit_cpu(server.child.id(), cores));
            }
            server
        })
        .collect();
    runtime.block_on(async {
        let seeding = Instant::now();
        seed(&servers[0].base, options.seed_memories).await;
        if let Some(url) = &options.database_url {
            analyze(url, &schema).await;
        }
        settle(&servers).await;
        let (_, rss) = usage(&servers);
        println!(
            "mcp_load: {} server(s) on {}; seeded {} memories in {:.1?} (server RSS {rss:.0} \
             MiB); {}, {} operations per level, {}",
            servers.len(),
            if options.database_url.is_some() {
                "PostgreSQL"
            } else {
                "the embedded profile"
            },
            options.seed_memories,
            seeding.elapsed(),
            options
                .only
                .as_deref()
                .unwrap_or("mix add 30% / search 50% / assemble 20%"),
            options.ops_per_level,
            if options.stateless {
                "stateless requests (protocol 2026-07-28)"
            } else {
                "one session per client (protocol 2025-06-18)"
            }
        );
        for (index, &clients) in options.levels.iter().enumerate() {
            let report = run_level(
                &servers,
                clients,
                options.ops_per_level,
                index * options.ops_per_level,
                options.only.as_deref().map(Arc::from),
                options.stateless,
            )
            .await;
            let at =
                |q: f64| report.latencies[((report.latencies.len() as f64 - 1.0) * q) as usize];
            println!(
                "mcp_load/{:>3} clients: {:>7.0} ops/s  p50 {:>9.2?}  p95 {:>9.2?}  p99 {:>9.2?}  \
                 errors {}/{}  server CPU/op {:>8.2?}  switches/op {:.1}  RSS {:.0} MiB  machine busy {:.0}%",
                report.clients,
                report.ops as f64 / report.elapsed.as_secs_f64(),
                at(0.50),
                at(0.95),
                at(0.99),
                report.errors,
                report.ops,
                report.cpu_per_op,
                report.switches_per_op,
                report.rss_mib,
                report.machine_busy * 100.0
            );
        }
        drop(servers);
        if let Some(url) = &options.database_url {
            let pool = sqlx::PgPool::connect(url)
                .await
                .expect("connect to drop the schema");
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP SCHEMA \"{schema}\" CASCADE"
            )))
            .execute(&pool)
            .await
            .expect("drop the bench schema");
        }
    });
}
