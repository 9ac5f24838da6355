//! The embedded profile's database: one SQLite file in the data dir, in WAL mode.
//!
//! [`SqliteDatabase`] is opened once per process (a lock file keeps a second process off the
//! same data dir, whose in-memory vector index would silently diverge) with every migration
//! of `migrations/sqlite` applied, and is shared: the memory service and the agents' own
//! tables use the same pool for reads, and the same write connection ([`writer`]) for write
//! transactions.

pub mod backup;
mod json;
mod record_cache;
mod records;
mod stored_contents;
mod writer;

pub use backup::backup_file;
pub use records::SqliteRecordStore;
pub use writer::{WriteTransaction, Writer};

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sqlx::ConnectOptions;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::error::{MemoryError, Result};

/// Every migration in `migrations/sqlite`: the memory tables (0001–0099) and the agents'
/// (0100 and up), applied in order by one migrator.
pub static MIGRATOR: Migrator = sqlx::migrate!("../migrations/sqlite");

/// Connection settings of the embedded database.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SqliteConfig {
    /// Connections in the pool (2), which serve reads and single writing statements; write
    /// transactions have a connection of their own besides. In WAL mode a connection drops its whole page cache when
    /// another connection has written since its last read, so every extra connection re-reads
    /// pages after writes (with 8, the MCP load mix made 55 `pread`s per operation at one
    /// client). Two keep one connection free to read while the other is in a write
    /// transaction, and each loses its cache only to the other's writes. Measured on 2 cores
    /// (`cargo bench -p aeterna-server --bench mcp_load -- --ops 12000`, runs interleaved):
    /// server CPU per operation 1.46–1.53 ms with 2 against 1.66 ms with 8 at one client,
    /// 1.15–1.25 against 1.20–1.33 ms at 8 clients, no clear difference at 32. One
    /// connection queues reads behind write transactions: fewer operations per second at 8
    /// clients, with the machine not saturated.
    pub max_connections: u32,
    /// How long a statement waits for a lock held by another connection (5 s).
    pub busy_timeout_ms: u64,
    /// Page cache per connection, in KiB (16 MiB): the pool's and the write connection's.
    pub cache_kib: u32,
    /// Bytes of the database file read through a memory map (0: none). Off by default:
    /// lexical search no longer reads the file (its index is in memory), and with writes
    /// growing the file every connection's map is remapped — under the MCP load mix a 1 GiB
    /// map cost ~20% more server CPU per operation (1.09 → 0.87 ms at 32 clients).
    pub mmap_bytes: u64,
    /// A lexical search uses query terms rarest first while their document frequencies add
    /// up to at most this (5 000): the work of a search stays bounded however common its words,
    /// and the common words it leaves out weigh little in BM25 and are still matched by the
    /// vector search.
    pub lexical_max_postings: usize,
    /// Bytes of recently read and inserted records kept in memory (32 MiB, estimated; 0:
    /// none), so that the records searches return again and again are not read from SQLite
    /// each time. Under the MCP load mix (10k memories, 1 to 32 clients) it took server CPU
    /// per operation down by a fifth and context switches by a quarter to a half.
    pub record_cache_bytes: usize,
    /// Copies of the database kept in `<data dir>/backups/`, each made just before a migration
    /// changed the existing database (3; 0 migrates without a copy).
    pub migration_backups: usize,
}

impl Default for SqliteConfig {
    fn default() -> Self {
        SqliteConfig {
            max_connections: 2,
            busy_timeout_ms: 5_000,
            cache_kib: 16 * 1024,
            mmap_bytes: 0,
            lexical_max_postings: 5_000,
            record_cache_bytes: 32 << 20,
            migration_backups: 3,
        }
    }
}

/// A shared handle on the data dir's SQLite database. Cloning is cheap; the lock on the data
/// dir is released when the last clone is dropped.
#[derive(Clone, Debug)]
pub struct SqliteDatabase {
    pub pool: SqlitePool,
    writer: Writer,
    path: PathBuf,
    _lock: Arc<File>,
}

impl SqliteDatabase {
    /// The database file inside the data dir.
    pub const FILE_NAME: &str = "aeterna.db";
    /// The lock file inside the data dir.
    pub const LOCK_FILE_NAME: &str = "aeterna.lock";

    /// Opens (creating if needed) `data_dir/aeterna.db` and applies every migration.
    pub async fn open(data_dir: &Path, config: &SqliteConfig) -> Result<Self> {
        std::fs::create_dir_all(data_dir).map_err(|error| {
            MemoryError::storage(format!("creating data dir {}", data_dir.display()), error)
        })?;
        let lock = lock_data_dir(data_dir)?;
        let path = data_dir.join(Self::FILE_NAME);
        let options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_millis(config.busy_timeout_ms))
            .foreign_keys(true)
            .pragma("cache_size", format!("-{}", config.cache_kib))
            .pragma("mmap_size", config.mmap_bytes.to_string())
            .pragma("temp_store", "memory");
        // No ping before handing out a connection: an embedded database cannot have hung up,
        // and the ping was a round trip to the connection's worker thread per statement.
        let opening = |error| MemoryError::storage(format!("opening {}", path.display()), error);
        let wait = Duration::from_millis(config.busy_timeout_ms.max(1_000) * 2);
        let pool = SqlitePoolOptions::new()
            .max_connections(config.max_connections.max(1))
            .min_connections(1)
            .test_before_acquire(false)
            .acquire_timeout(wait)
            .connect_with(options.clone())
            .await
            .map_err(opening)?;
        backup::before_migrations(&pool, data_dir, config.migration_backups).await?;
        MIGRATOR.run(&pool).await.map_err(|error| {
            MemoryError::storage(format!("applying migrations to {}", path.display()), error)
        })?;
        let writer = Writer::new(options.connect().await.map_err(opening)?, wait);
        Ok(SqliteDatabase {
            pool,
            writer,
            path,
            _lock: Arc::new(lock),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts a write transaction on the write connection with `BEGIN IMMEDIATE`, taking
    /// SQLite's write lock up front: a deferred transaction that reads and then writes can
    /// fail with `SQLITE_BUSY` without waiting for the busy timeout. Use this for every
    /// transaction that writes; it waits while another one is open.
    pub async fn begin_write(&self) -> sqlx::Result<WriteTransaction> {
        self.writer.begin().await
    }

    /// Checkpoints the WAL into the main file (on graceful shutdown; not needed for
    /// durability).
    pub async fn checkpoint(&self) -> Result<()> {
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&self.pool)
            .await
            .map_err(|error| MemoryError::storage("checkpointing the WAL", error))?;
        Ok(())
    }
}

/// Takes an exclusive lock on `data_dir/aeterna.lock`, released when the file is closed
/// (also when the process dies).
fn lock_data_dir(data_dir: &Path) -> Result<File> {
    let path = data_dir.join(SqliteDatabase::LOCK_FILE_NAME);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|error| MemoryError::storage(format!("opening {}", path.display()), error))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(MemoryError::storage(
            format!("locking data dir {}", data_dir.display()),
            anyhow::anyhow!(
                "another Aeterna process uses this data dir (it holds {}); stop it or configure a different data dir",
                path.display()
            ),
        )),
        Err(std::fs::TryLockError::Error(error)) => Err(MemoryError::storage(
            format!("locking {}", path.display()),
            error,
        )),
    }
}
