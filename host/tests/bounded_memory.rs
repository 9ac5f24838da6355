//! Host memory stays bounded whatever a guest or an LLM output does: measured with a counting
//! global allocator (linear memories are mapped by wasmtime, not allocated, so what is counted is
//! the host's own heap). Each test measures the peak heap growth of one run.
//!
//! In its own test binary, and the tests take turns: the allocator's peak is process-wide.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use aeterna_host::{ExtensionHost, FaultKind, Outcome};
use common::{ExtDir, ctx, load_all, test_config};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { System.dealloc(pointer, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            if new_size > layout.size() {
                let grown = new_size - layout.size();
                let now = CURRENT.fetch_add(grown, Ordering::Relaxed) + grown;
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static TURNS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const MIB: usize = 1024 * 1024;

/// Runs `work` and returns its result with the peak heap growth it caused, in MiB.
async fn peak_growth<T>(work: impl std::future::Future<Output = T>) -> (T, f64) {
    let baseline = CURRENT.load(Ordering::Relaxed);
    PEAK.store(baseline, Ordering::Relaxed);
    let result = work.await;
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(baseline);
    (result, peak as f64 / MIB as f64)
}

#[tokio::test]
async fn tag_fan_out_holds_at_most_the_run_output_bound() {
    let _turn = TURNS.lock().await;
    let mut config = test_config();
    config.max_run_output_bytes = 8 * MIB;
    config.quarantine.threshold = 1000;
    let host = ExtensionHost::new(config).unwrap();
    let dir = ExtDir::new();
    dir.add(
        "big",
        "hostile",
        "id = \"big\"\n[config]\nmode = \"big-tag\"\nkib = 4096\n",
    );
    load_all(&host, &dir).await;
    // 256 blocks whose handler returns 4 MiB each: 1 GiB if nothing bounded the total.
    let text = "<big/>".repeat(256);
    let (run, peak) = peak_growth(host.run_llm_output(&ctx(), &text)).await;
    let run = run.unwrap();
    let ok = run.report.rows.iter().filter(|r| r.outcome.is_ok()).count();
    assert_eq!(ok, 2, "two 4 MiB replacements fit in 8 MiB");
    assert!(
        run.report
            .rows
            .iter()
            .skip(2)
            .all(|r| r.outcome.fault().map(|f| f.kind) == Some(FaultKind::OutputLimit))
    );
    assert!(peak < 40.0, "peak heap growth {peak:.1} MiB");
}

#[tokio::test]
async fn a_tag_header_with_millions_of_attributes_costs_no_more_than_the_text() {
    let _turn = TURNS.lock().await;
    let host = ExtensionHost::new(test_config()).unwrap();
    let dir = ExtDir::new();
    dir.probe("t", 0, "reg-hooks = \"tag\"\nreg-tags = \"t\"");
    load_all(&host, &dir).await;
    // 10 MiB of LLM output: one header with ~1.7 million attributes, then a normal block.
    let text = format!(
        "<t{}>x</t> <t a=\"1\">y</t>",
        " a=\"1\"".repeat(10 * MIB / 6)
    );
    let (run, peak) = peak_growth(host.run_llm_output(&ctx(), &text)).await;
    let run = run.unwrap();
    assert_eq!(
        run.report.rows.len(),
        1,
        "only the well-formed block is a tag"
    );
    assert_eq!(run.report.rows[0].outcome, Outcome::Ok);
    // The run copies the text once into its output; nothing grows with the attributes.
    assert!(peak < 3.0 * 10.0, "peak heap growth {peak:.1} MiB");
}

#[tokio::test]
async fn state_churn_keeps_the_overlay_within_the_quota() {
    let _turn = TURNS.lock().await;
    let mut config = test_config();
    config.limits.fuel = u64::MAX / 4;
    config.limits.timeout_ms = 60_000;
    let host = ExtensionHost::new(config).unwrap();
    let dir = ExtDir::new();
    dir.add(
        "churn",
        "hostile",
        "id = \"churn\"\n[config]\nmode = \"state-churn\"\niterations = 50000\n",
    );
    load_all(&host, &dir).await;
    // 50 000 distinct 1 KiB keys, each set and deleted: ~110 MiB if the overlay kept them.
    let (run, peak) = peak_growth(host.run_plain_text(&ctx(), "in".into())).await;
    let run = run.unwrap();
    assert_eq!(run.report.rows[0].outcome, Outcome::Ok);
    assert_eq!(run.output, "in[churned:50000]");
    assert!(peak < 8.0, "peak heap growth {peak:.1} MiB");
}
