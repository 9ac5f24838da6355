//! Integration tests of `MemoryService`, one suite for every record store: against real SQLite
//! databases in temporary dirs, and with `AETERNA_TEST_BACKEND=postgres` against the real
//! PostgreSQL at `AETERNA_TEST_DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/test`),
//! where each temporary dir stands for a schema of its own (`scripts/test` runs both).

mod concurrency;
mod crud;
mod embedder;
mod instances;
mod listing;
#[cfg(feature = "local-model")]
mod local_model;
mod openai;
mod restart;
mod search;
mod tenancy;

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

/// Which record store the suite runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub fn backend() -> Backend {
    match std::env::var("AETERNA_TEST_BACKEND").as_deref() {
        Ok("postgres") => Backend::Postgres,
        Ok("sqlite") | Err(_) => Backend::Sqlite,
        Ok(other) => panic!("AETERNA_TEST_BACKEND={other}: use sqlite or postgres"),
    }
}

/// The service for the data dir `path`: its SQLite database, or on PostgreSQL the schema
/// named after the dir (the same dir opens the same schema, as a restart would).
pub async fn open_with_embedder(
    path: &Path,
    config: MemoryConfig,
    embedder: Arc<dyn aeterna_memory::embed::Embedder>,
) -> aeterna_memory::Result<MemoryService> {
    match backend() {
        Backend::Sqlite => MemoryService::open_embedded(path, config, embedder).await,
        Backend::Postgres => {
            let url = std::env::var("AETERNA_TEST_DATABASE_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
            let mut postgres = config.postgres.clone();
            postgres.schema = test_schema(path);
            let db =
                aeterna_memory::storage::postgres::PgDatabase::connect(&url, &postgres).await?;
            MemoryService::open_postgres(db, None, config, embedder).await
        }
    }
}

/// `aeterna_test_<hash of the dir>`: the dirs are unique temporary dirs, removed by the test;
/// the schemas are dropped by `scripts/test` before each run.
pub fn test_schema(path: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    path.hash(&mut hasher);
    format!("aeterna_test_{:016x}", hasher.finish())
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
