//! Integration tests of `MemoryService`, one suite for every record store: against real SQLite
//! databases in temporary dirs, and with `AETERNA_TEST_BACKEND=postgres` against the real
//! PostgreSQL, where each temporary dir stands for a schema of its own
//! ([`aeterna_testkit::profile`]; `scripts/test` runs both).

mod bundle;
mod concurrency;
mod conflicts;
mod crud;
mod embedder;
mod forget;
mod instances;
mod listing;
#[cfg(feature = "local-model")]
mod local_model;
mod migrate;
mod openai;
mod restart;
mod search;
mod tenancy;
mod vector_store;
mod versions;

use std::path::Path;
use std::sync::Arc;

use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Identity, Layer, MemoryConfig, MemoryService, NewMemory};

/// A service over a fresh data dir; keep the `TempDir` alive as long as the service.
pub async fn open_temp() -> (tempfile::TempDir, MemoryService) {
    let dir = tempfile::tempdir().expect("temp dir");
    let service = open(dir.path(), MemoryConfig::default()).await;
    (dir, service)
}

pub async fn open(path: &Path, config: MemoryConfig) -> MemoryService {
    open_with_embedder(path, config, Arc::new(HashingEmbedder::default()))
        .await
        .expect("open")
}

pub use aeterna_testkit::profile::{Backend, backend, test_schema};

/// The service for the data dir `path` on the backend the run selects
/// ([`aeterna_testkit::profile`]).
pub async fn open_with_embedder(
    path: &Path,
    config: MemoryConfig,
    embedder: Arc<dyn aeterna_memory::embed::Embedder>,
) -> aeterna_memory::Result<MemoryService> {
    aeterna_testkit::profile::open_memory(path, config, embedder).await
}

/// A caller with a scope in every layer.
pub fn alice() -> Identity {
    Identity {
        tenant_id: "acme".into(),
        agent_id: Some("agent-1".into()),
        user_id: Some("alice".into()),
        session_id: Some("s-1".into()),
        project_id: Some("aeterna".into()),
        team_id: Some("core".into()),
        org_id: Some("eng".into()),
        grants: Default::default(),
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
