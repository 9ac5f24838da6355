//! Which storage profile a storage-facing suite runs against, so one suite covers both:
//! SQLite in the test's temporary data dir (the default), or, with
//! `AETERNA_TEST_BACKEND=postgres`, the real PostgreSQL at `AETERNA_TEST_DATABASE_URL`
//! (default `postgres://postgres@127.0.0.1:5432/test`), in a schema named after the data dir:
//! the same dir opens the same schema, as a restart would. When `QDRANT_URL` is set too, the
//! vectors of the PostgreSQL runs live in Qdrant, in a collection named like the schema.
//! `scripts/test` runs the suites both ways, dropping the `aeterna_test_*` schemas of earlier
//! runs first.

use std::path::Path;
use std::sync::Arc;

use aeterna_memory::embed::Embedder;
use aeterna_memory::storage::Database;
use aeterna_memory::storage::postgres::PgDatabase;
use aeterna_memory::storage::sqlite::SqliteDatabase;
use aeterna_memory::{MemoryConfig, MemoryService};

/// The PostgreSQL of these machines (`.ci/run` starts it).
pub const DEFAULT_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/test";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The backend `AETERNA_TEST_BACKEND` names (`sqlite` when unset).
pub fn backend() -> Backend {
    match std::env::var("AETERNA_TEST_BACKEND").as_deref() {
        Ok("postgres") => Backend::Postgres,
        Ok("sqlite") | Err(_) => Backend::Sqlite,
        Ok(other) => panic!("AETERNA_TEST_BACKEND={other}: use sqlite or postgres"),
    }
}

/// True, after saying so on stderr, when the run is on PostgreSQL: for the few tests that
/// check what only the embedded profile does (`why`).
pub fn skip_on_postgres(why: &str) -> bool {
    let skip = backend() == Backend::Postgres;
    if skip {
        eprintln!("SKIPPED on PostgreSQL: {why}");
    }
    skip
}

/// The Qdrant named by `QDRANT_URL` (its gRPC address, such as `http://127.0.0.1:6334`), or
/// `None` after saying on stderr that the Qdrant tests are skipped: Qdrant cannot be
/// installed from the package registries these machines reach.
pub fn qdrant_url() -> Option<String> {
    match std::env::var("QDRANT_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            eprintln!("SKIPPED: QDRANT_URL is not set; the Qdrant tests need a running Qdrant");
            None
        }
    }
}

/// The PostgreSQL the suites use.
pub fn database_url() -> String {
    std::env::var("AETERNA_TEST_DATABASE_URL").unwrap_or_else(|_| DEFAULT_DATABASE_URL.into())
}

/// `aeterna_test_<hash of the dir>`: the dirs are unique temporary dirs.
pub fn test_schema(path: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    path.hash(&mut hasher);
    format!("aeterna_test_{:016x}", hasher.finish())
}

/// The memory service of the data dir `path` on the selected backend.
pub async fn open_memory(
    path: &Path,
    mut config: MemoryConfig,
    embedder: Arc<dyn Embedder>,
) -> aeterna_memory::Result<MemoryService> {
    match backend() {
        Backend::Sqlite => MemoryService::open_embedded(path, config, embedder).await,
        Backend::Postgres => {
            config.postgres.schema = test_schema(path);
            // With a Qdrant, the whole scale-out profile: the dir's collection beside its schema.
            if let Ok(url) = std::env::var("QDRANT_URL")
                && !url.is_empty()
            {
                config.qdrant.url = Some(url);
                config.qdrant.collection = test_schema(path);
            }
            let db = PgDatabase::connect(&database_url(), &config.postgres).await?;
            MemoryService::open_postgres(db, config, embedder).await
        }
    }
}

/// The database of the data dir `path` on the selected backend, without a memory service.
pub async fn open_database(path: &Path) -> aeterna_memory::Result<Database> {
    let config = MemoryConfig::default();
    Ok(match backend() {
        Backend::Sqlite => Database::Sqlite(SqliteDatabase::open(path, &config.sqlite).await?),
        Backend::Postgres => {
            let mut postgres = config.postgres;
            postgres.schema = test_schema(path);
            Database::Postgres(PgDatabase::connect(&database_url(), &postgres).await?)
        }
    })
}
