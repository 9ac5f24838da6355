//! What the host's bench binaries share.

use std::time::{Duration, Instant};

/// Times `samples` single runs of `f` and prints their percentiles.
pub fn percentiles(name: &str, samples: usize, mut f: impl FnMut()) {
    for _ in 0..samples / 10 {
        f(); // warm-up
    }
    let mut times: Vec<Duration> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!(
        "{name}: p50 {:.1} µs, p95 {:.1} µs, p99 {:.1} µs ({samples} runs)",
        at(0.50).as_secs_f64() * 1e6,
        at(0.95).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6,
    );
}
