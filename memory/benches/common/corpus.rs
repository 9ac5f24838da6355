//! The 100k-memory corpus the service-level benches share (this crate's `service` bench and
//! `aeterna-context`'s `assemble` bench): 5 layers of one bench identity, generated once with
//! bulk `add_batch` and cached under Cargo's target tmp dir; later runs reopen it, which also
//! measures the start-up rebuild of the vector index. On the embedded profile by default; with
//! `AETERNA_TEST_BACKEND=postgres`, on PostgreSQL (`aeterna_testkit::profile`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Identity, Layer, MemoryConfig, MemoryService, NewMemory};

use super::{Rng, memory_text};

pub const CORPUS_SIZE: usize = 100_000;
/// Bump when the generator changes, so a stale cached corpus is rebuilt.
const CORPUS_VERSION: u32 = 1;
pub const LAYERS: [Layer; 5] = [
    Layer::Agent,
    Layer::User,
    Layer::Session,
    Layer::Project,
    Layer::Team,
];

/// The identity every bench memory belongs to: one scope in each of the five layers.
pub fn who() -> Identity {
    Identity {
        tenant_id: "bench".into(),
        agent_id: Some("agent".into()),
        user_id: Some("user".into()),
        session_id: Some("session".into()),
        project_id: Some("project".into()),
        team_id: Some("team".into()),
        org_id: None,
        grants: Default::default(),
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime for the bench")
}

/// The selected profile (embedded by default) with the default embedder and limits.
pub async fn open(dir: &Path) -> MemoryService {
    aeterna_testkit::profile::open_memory(
        dir,
        MemoryConfig::default(),
        Arc::new(HashingEmbedder::default()),
    )
    .await
    .expect("open the bench data dir")
}

/// The `i`-th memory of the corpus: layers in rotation, one of five tags.
pub fn new_memory(rng: &mut Rng, i: usize) -> NewMemory {
    NewMemory {
        layer: LAYERS[i % LAYERS.len()],
        content: format!("{} ({i})", memory_text(rng)),
        tags: vec![["db", "ci", "net", "ui", "infra"][rng.below(5)].to_string()],
        metadata: serde_json::json!({"source": "bench"}),
        kind: None,
    }
}

/// The planner's statistics on PostgreSQL, as autovacuum would gather them after a bulk load
/// or a migration that adds statistics (it may be off on a test server).
async fn analyze(service: &MemoryService) {
    if let aeterna_memory::storage::Database::Postgres(db) = service.database() {
        sqlx::query("ANALYZE memories, memory_tags, memory_vectors")
            .execute(&db.pool)
            .await
            .expect("analyze the corpus tables");
    }
}

/// The cached corpus in its own data dir `name` (a data dir is locked by the process using
/// it, so benches that may run at once use different names), generated on first use.
pub async fn corpus(name: &str) -> MemoryService {
    let backend = match aeterna_testkit::profile::backend() {
        aeterna_testkit::profile::Backend::Sqlite => "",
        aeterna_testkit::profile::Backend::Postgres => "-postgres",
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{name}-{CORPUS_SIZE}-v{CORPUS_VERSION}{backend}"));
    let complete = dir.join("complete");
    if complete.exists() {
        let started = Instant::now();
        let service = open(&dir).await;
        println!(
            "opened {CORPUS_SIZE} memories (vector index rebuilt from the database) in {:?}",
            started.elapsed()
        );
        // A PostgreSQL schema may have been dropped since (`scripts/test` drops test schemas).
        if service.stats().await.expect("corpus stats").vectors == CORPUS_SIZE as u64 {
            analyze(&service).await;
            return service;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    // On PostgreSQL the dir only names the schema; it still holds the completion mark.
    std::fs::create_dir_all(&dir).expect("create the corpus dir");
    let service = open(&dir).await;
    let leftover = service.stats().await.expect("corpus stats").records;
    assert_eq!(
        leftover,
        0,
        "the corpus store of {} holds {leftover} records of an interrupted run; drop its \
         schema ({}) and run again",
        dir.display(),
        aeterna_testkit::profile::test_schema(&dir)
    );
    let started = Instant::now();
    let mut rng = Rng::new(1);
    for start in (0..CORPUS_SIZE).step_by(1000) {
        let batch = (start..start + 1000)
            .map(|i| new_memory(&mut rng, i))
            .collect();
        service
            .add_batch(&who(), batch)
            .await
            .expect("add a corpus batch");
    }
    service.flush().await.expect("flush the corpus");
    analyze(&service).await;
    println!(
        "generated {CORPUS_SIZE} memories in {:?} (bulk add_batch of 1000)",
        started.elapsed()
    );
    std::fs::write(&complete, b"").expect("mark the corpus complete");
    assert_eq!(
        service.stats().await.expect("corpus stats").vectors,
        CORPUS_SIZE as u64
    );
    service
}
