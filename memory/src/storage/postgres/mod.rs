//! The scale-out profile's database: PostgreSQL, shared by every `aeterna serve` instance.
//!
//! [`PgDatabase`] connects a pool and applies `migrations/postgres` under sqlx's migration
//! advisory lock, so instances starting at once migrate once. Unlike the embedded profile no
//! data-dir lock is taken: several processes share the database by design, and each one's
//! in-memory vector index follows the others' writes through `memory_changes`
//! (see [`PgRecordStore`]).

mod lexical;
mod nodelay;
mod records;

pub use records::PgRecordStore;

use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use crate::error::{MemoryError, Result};

/// Every migration in `migrations/postgres`, numbered like their SQLite counterparts.
pub static MIGRATOR: Migrator = sqlx::migrate!("../migrations/postgres");

/// Held while creating the schema.
const SCHEMA_LOCK: i64 = 0x6165_7465_726e_6100; // "aeterna" 0

/// Connection settings of the PostgreSQL profile (`[storage.postgres]`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PostgresConfig {
    /// Connections in this instance's pool (16).
    pub max_connections: u32,
    /// How long a request waits for a free connection, or for a new one to be established,
    /// before it fails with a storage error (5 s).
    pub acquire_timeout_ms: u64,
    /// Server-side limit on any one statement (10 s): a stuck query fails instead of holding
    /// a connection.
    pub statement_timeout_ms: u64,
    /// Schema holding Aeterna's tables (`public`); created if missing. Lets several
    /// deployments (or test runs) share one database.
    pub schema: String,
    /// A lexical search ranks at most this many matching records (2 000), so its work stays
    /// bounded however common its words: it uses the query's words rarest first while their
    /// record counts add up to this, and leaves commoner ones to the vector search. Lower than
    /// the embedded index's `lexical_max_postings` (5 000) because a match costs a heap visit
    /// here (~3 µs; 100k records: search p95 39 → 28 ms), and words in more records than this
    /// weigh little in BM25.
    pub lexical_max_rows: usize,
}

impl Default for PostgresConfig {
    fn default() -> Self {
        PostgresConfig {
            max_connections: 16,
            acquire_timeout_ms: 5_000,
            statement_timeout_ms: 10_000,
            schema: "public".into(),
            lexical_max_rows: 2_000,
        }
    }
}

/// A shared handle on the PostgreSQL database. Cloning is cheap.
#[derive(Clone, Debug)]
pub struct PgDatabase {
    pub pool: PgPool,
}

impl PgDatabase {
    /// Connects to `url`, creates the configured schema if needed and applies every
    /// migration. An unreachable server or a refused login is an error naming the URL
    /// (password redacted).
    pub async fn connect(url: &str, config: &PostgresConfig) -> Result<Self> {
        let display_url = aeterna_redact::redact_url_password(url);
        let context = |what: &str| format!("{what} PostgreSQL at {display_url} (database_url)");
        let options: PgConnectOptions = url
            .parse()
            .map_err(|error| MemoryError::storage(context("parsing the URL of"), error))?;
        let schema = config.schema.as_str();
        if schema.is_empty()
            || !schema
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return Err(MemoryError::invalid(format!(
                "storage.postgres.schema `{schema}`: use letters, digits and underscores"
            )));
        }
        let acquire_timeout = Duration::from_millis(config.acquire_timeout_ms.max(100));
        if schema != "public" {
            let admin = PgPoolOptions::new()
                .max_connections(1)
                .acquire_timeout(acquire_timeout)
                .connect_with(options.clone())
                .await
                .map_err(|error| MemoryError::storage(context("connecting to"), error))?;
            // Instances starting at once would race on the catalogue's unique name.
            let create = async {
                let mut tx = admin.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(SCHEMA_LOCK)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "CREATE SCHEMA IF NOT EXISTS \"{schema}\""
                )))
                .execute(&mut *tx)
                .await?;
                tx.commit().await
            };
            create
                .await
                .map_err(|error| MemoryError::storage(context("creating the schema in"), error))?;
            admin.close().await;
        }
        let options = options.options([
            ("search_path", schema.to_string()),
            (
                "statement_timeout",
                format!("{}ms", config.statement_timeout_ms),
            ),
        ]);
        let server_port = options.get_port();
        let pool = PgPoolOptions::new()
            .max_connections(config.max_connections.max(1))
            .acquire_timeout(acquire_timeout)
            .after_connect(move |conn, _| Box::pin(nodelay::disable_nagle(conn, server_port)))
            .connect_with(options)
            .await
            .map_err(|error| MemoryError::storage(context("connecting to"), error))?;
        MIGRATOR
            .run(&pool)
            .await
            .map_err(|error| MemoryError::storage(context("applying migrations to"), error))?;
        warn_without_autovacuum(&pool).await;
        Ok(PgDatabase { pool })
    }
}

/// The lookups of every write (a scope's content hash, a word's counters) are planned from the
/// tables' statistics; without them PostgreSQL may scan a whole scope for each add. Autovacuum
/// gathers them as the tables grow: say so when it is off.
async fn warn_without_autovacuum(pool: &PgPool) {
    let setting: std::result::Result<String, _> =
        sqlx::query_scalar("SELECT current_setting('autovacuum')")
            .fetch_one(pool)
            .await;
    if matches!(setting.as_deref(), Ok("off")) {
        tracing::warn!(
            "PostgreSQL runs with autovacuum = off: the planner has no fresh statistics on \
             Aeterna's tables, and writes and searches slow down as they grow; turn it on, or \
             run ANALYZE on the schema's tables after loading data"
        );
    }
}
