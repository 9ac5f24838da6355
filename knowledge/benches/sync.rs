//! Re-indexing after a pull: a branch of 10,000 items synced into memory (the default static
//! embedder, embedded SQLite), then five rounds of 1,000 changed files committed with the real
//! `git` CLI, each read and synced. Prints each phase and the rounds' p50 and max.
//!
//! The bar (issue 40): re-index after a pull of 1,000 changed files ≤ 5 s.
//!
//! `cargo bench -p aeterna-knowledge --bench sync`

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aeterna_knowledge::sync::{SyncTarget, sync_into_memory};
use aeterna_knowledge::{Author, Change, ItemType, KnowledgeItem, KnowledgeRepo, Limits};
use aeterna_memory::embed::StaticEmbedder;
use aeterna_memory::{Layer, MemoryConfig, MemoryService};

const ITEMS: usize = 10_000;
const CHANGED: usize = 1_000;
const ROUNDS: usize = 5;

fn item(n: usize, round: usize) -> KnowledgeItem {
    KnowledgeItem::new(
        format!("lesson-{n:05}"),
        ItemType::Lesson,
        format!("Lesson {n} about module {}", n % 97),
        Layer::Team,
        Some("core".into()),
        format!(
            "When the build of module {} fails with error E{:04}, revision {round} says: check \
             the feature flags of crate {} and rebuild with a clean target directory.\n",
            n % 97,
            n % 700,
            n % 31
        ),
    )
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=Bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(args)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let memory = MemoryService::open_embedded(
        &dir.path().join("data"),
        MemoryConfig::default(),
        Arc::new(StaticEmbedder::new()),
    )
    .await
    .unwrap();
    let checkout = dir.path().join("knowledge");
    let limits = Limits {
        max_items: 20_000,
        ..Limits::default()
    };
    let repo = KnowledgeRepo::open_or_init(&checkout, "main", limits).unwrap();
    let target = SyncTarget {
        tenant_id: "bench".into(),
        layer: Layer::Team,
        scope: Some("core".into()),
    };

    let started = Instant::now();
    let seed = Change {
        put: (0..ITEMS).map(|n| item(n, 0)).collect(),
        remove: Vec::new(),
    };
    repo.commit("main", &seed, &Author::aeterna(), "seed")
        .unwrap();
    println!("commit {ITEMS} items: {:?}", started.elapsed());
    let started = Instant::now();
    let snapshot = repo.snapshot().unwrap();
    let report = sync_into_memory(&memory, &target, &snapshot, 20_000)
        .await
        .unwrap();
    assert_eq!(report.added, ITEMS);
    println!("first sync of {ITEMS} items: {:?}", started.elapsed());

    let mut rounds: Vec<(Duration, Duration)> = Vec::new();
    for round in 1..=ROUNDS {
        // A pull: 1,000 files changed by someone else, committed with git.
        for n in (0..CHANGED).map(|k| (k * 7 + round * 13) % ITEMS) {
            let path = checkout.join(format!("lessons/lesson-{n:05}.md"));
            std::fs::write(path, item(n, round).render().unwrap()).unwrap();
        }
        git(
            &checkout,
            &["commit", "-qam", "a pull of 1,000 changed lessons"],
        );
        let started = Instant::now();
        let snapshot = repo.snapshot().unwrap();
        let read = started.elapsed();
        let report = sync_into_memory(&memory, &target, &snapshot, 20_000)
            .await
            .unwrap();
        let total = started.elapsed();
        assert_eq!(report.updated, CHANGED, "{report:?}");
        println!(
            "round {round}: read the branch {read:?}, re-index {CHANGED} changed in {total:?} \
             ({} unchanged)",
            report.unchanged
        );
        rounds.push((read, total));
    }
    let mut totals: Vec<Duration> = rounds.iter().map(|(_, total)| *total).collect();
    totals.sort();
    println!(
        "re-index after a pull of {CHANGED} changed files ({ITEMS} items): p50 {:?}, max {:?} \
         (bar: 5 s)",
        totals[ROUNDS / 2],
        totals[ROUNDS - 1]
    );
}
