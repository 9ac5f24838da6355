//! Integration tests of the Context Architect over a real `MemoryService` on real SQLite in
//! temporary data dirs.

mod assemble;
mod cache;
mod shared_cache;
mod summaries;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use aeterna_context::{ContextArchitect, ContextConfig};
use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Identity, Layer, MemoryConfig, NewMemory};

/// A memory service and a Context Architect over a fresh data dir; keep the `TempDir` alive.
pub async fn open_temp(config: ContextConfig) -> (tempfile::TempDir, Arc<ContextArchitect>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let architect = open(dir.path(), config).await;
    (dir, architect)
}

pub async fn open(path: &Path, config: ContextConfig) -> Arc<ContextArchitect> {
    let memory = aeterna_testkit::profile::open_memory(
        path,
        MemoryConfig::default(),
        Arc::new(HashingEmbedder::default()),
    )
    .await
    .expect("open memory");
    ContextArchitect::start(Arc::new(memory), config).expect("start context architect")
}

/// A caller with a scope in every layer.
pub fn alice() -> Identity {
    Identity {
        tenant_id: "acme".into(),
        agent_id: Some("agent-1".into()),
        user_id: Some("alice".into()),
        session_id: Some("s-1".into()),
        project_id: Some("payments".into()),
        team_id: Some("core".into()),
        org_id: Some("eng".into()),
        grants: Default::default(),
    }
}

/// Alice's identity in another tenant.
pub fn globex() -> Identity {
    Identity {
        tenant_id: "globex".into(),
        ..alice()
    }
}

pub fn memory(layer: Layer, content: &str) -> NewMemory {
    NewMemory {
        layer,
        content: content.into(),
        tags: Vec::new(),
        metadata: serde_json::Value::Null,
        kind: None,
    }
}

/// Adds `texts` to `layer` and returns their ids, in order.
pub async fn add(
    architect: &ContextArchitect,
    who: &Identity,
    layer: Layer,
    texts: &[&str],
) -> Vec<String> {
    let items = texts.iter().map(|text| memory(layer, text)).collect();
    let outcomes = architect.memory().add_batch(who, items).await.expect("add");
    outcomes
        .into_iter()
        .map(|outcome| outcome.record.id.to_string())
        .collect()
}

/// Waits (bounded) until `condition` holds; the condition is the assertion, not the time.
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A deterministic generator of varied text, so corpora differ by seed.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}
