//! What the benches that drive the real `aeterna` binary share.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `aeterna serve` on a free loopback port over `data`; the child and its MCP URL.
pub fn spawn_server(data: &Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_aeterna"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn aeterna serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("listen line");
    let url = line
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .expect("listen url")
        .to_owned();
    (child, url)
}

/// Prints `label: n=… p50=… p95=… p99=…` (milliseconds); returns the median.
pub fn report(label: &str, times: &mut [Duration]) -> Duration {
    times.sort();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!(
        "{label}: n={} p50={:.3} ms p95={:.3} ms p99={:.3} ms",
        times.len(),
        at(0.50).as_secs_f64() * 1e3,
        at(0.95).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3
    );
    at(0.50)
}
