//! The deployment's one SQL database, shared by the memory service and the agents' own tables:
//! SQLite in the data dir (embedded profile) or PostgreSQL (scale-out profile).
//!
//! An agent writes each statement once, with `$1`-style placeholders (both sqlx drivers
//! accept them), and runs it through [`with_pool!`](crate::with_pool) or, in a
//! [`Transaction`], [`with_connection!`](crate::with_connection): their body is compiled once
//! per backend. Rows decode through `query_as` tuples, `sqlx::FromRow`, or [`Columns`]. The
//! tables are created by each backend's migrations (`migrations/sqlite`, `migrations/postgres`,
//! same numbers); where the column types differ (BLOB / BYTEA, REAL / DOUBLE PRECISION,
//! INTEGER / BIGINT) rows still decode to the same Rust types: `String`, `i64`, `f64`,
//! `Vec<u8>`.
//!
//! Invariant: every agent statement filters by `tenant_id`, on both backends.

use super::postgres::PgDatabase;
use super::sqlite::SqliteDatabase;
use crate::error::{MemoryError, Result};

/// The SQL database of this deployment.
#[derive(Clone, Debug)]
pub enum Database {
    Sqlite(SqliteDatabase),
    Postgres(PgDatabase),
}

impl Database {
    /// `sqlite` or `postgres`, for health reports and logs.
    pub fn backend(&self) -> &'static str {
        match self {
            Database::Sqlite(_) => "sqlite",
            Database::Postgres(_) => "postgres",
        }
    }

    /// True when other processes may write the same tables (PostgreSQL): caches of its rows
    /// in this process can go stale.
    pub fn shared(&self) -> bool {
        matches!(self, Database::Postgres(_))
    }

    /// Ok when the database answers a query.
    pub async fn ping(&self) -> Result<()> {
        crate::with_pool!(self, |pool| sqlx::query("SELECT 1")
            .execute(pool)
            .await
            .map(drop))
        .map_err(|error| MemoryError::storage("checking the database", error))
    }
}

/// Evaluates `$body` with `$pool` bound to the pool of whichever backend `$database` is. The
/// body is compiled once per backend, so the same `sqlx::query(..)` code runs on both:
///
/// ```ignore
/// let rows: Vec<(String, i64)> = with_pool!(&self.db, |pool| {
///     sqlx::query_as("SELECT id, hour FROM t WHERE tenant_id = $1")
///         .bind(tenant)
///         .fetch_all(pool)
///         .await
/// })?;
/// ```
#[macro_export]
macro_rules! with_pool {
    ($database:expr, |$pool:ident| $body:expr) => {
        match $database {
            $crate::storage::Database::Sqlite(database) => {
                let $pool = &database.pool;
                $body
            }
            $crate::storage::Database::Postgres(database) => {
                let $pool = &database.pool;
                $body
            }
        }
    };
}

/// A write transaction on either backend ([`Database::begin_write`]); rolled back when dropped
/// uncommitted. Run statements in it with [`with_connection!`](crate::with_connection).
pub enum Transaction {
    /// On the write connection ([`SqliteDatabase::begin_write`]).
    SqliteWrite(crate::storage::sqlite::WriteTransaction),
    /// On a pooled connection ([`Database::begin_read`]).
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
}

impl Database {
    /// Starts a write transaction; on SQLite it takes the write lock up front
    /// ([`SqliteDatabase::begin_write`]). Use it for every transaction that writes.
    pub async fn begin_write(&self) -> sqlx::Result<Transaction> {
        Ok(match self {
            Database::Sqlite(db) => Transaction::SqliteWrite(db.begin_write().await?),
            Database::Postgres(db) => Transaction::Postgres(db.pool.begin().await?),
        })
    }
}

impl Database {
    /// Starts a transaction for consistent reads: deferred on SQLite (no lock until it
    /// reads; WAL readers never wait for writers).
    pub async fn begin_read(&self) -> sqlx::Result<Transaction> {
        Ok(match self {
            Database::Sqlite(db) => Transaction::Sqlite(db.pool.begin().await?),
            Database::Postgres(db) => Transaction::Postgres(db.pool.begin().await?),
        })
    }
}

impl Transaction {
    pub async fn commit(self) -> sqlx::Result<()> {
        match self {
            Transaction::SqliteWrite(tx) => tx.commit().await,
            Transaction::Sqlite(tx) => tx.commit().await,
            Transaction::Postgres(tx) => tx.commit().await,
        }
    }

    pub async fn rollback(self) -> sqlx::Result<()> {
        match self {
            Transaction::SqliteWrite(tx) => tx.rollback().await,
            Transaction::Sqlite(tx) => tx.rollback().await,
            Transaction::Postgres(tx) => tx.rollback().await,
        }
    }
}

/// Evaluates `$body` with `$conn` bound to the connection (`&mut SqliteConnection` or
/// `&mut PgConnection`) of the [`Transaction`] `$tx` (a `&mut Transaction`), compiled once per
/// backend like [`with_pool!`](crate::with_pool).
#[macro_export]
macro_rules! with_connection {
    ($tx:expr, |$conn:ident| $body:expr) => {
        match $tx {
            $crate::storage::Transaction::SqliteWrite(tx) => {
                let $conn = &mut **tx;
                $body
            }
            $crate::storage::Transaction::Sqlite(tx) => {
                let $conn = &mut **tx;
                $body
            }
            $crate::storage::Transaction::Postgres(tx) => {
                let $conn = &mut **tx;
                $body
            }
        }
    };
}

/// Reading a column by name from a row of either backend, for decoders written once over
/// `&impl Columns`.
pub trait Columns {
    fn text(&self, column: &str) -> sqlx::Result<String>;
    fn opt_text(&self, column: &str) -> sqlx::Result<Option<String>>;
    fn int(&self, column: &str) -> sqlx::Result<i64>;
    fn opt_int(&self, column: &str) -> sqlx::Result<Option<i64>>;
    fn real(&self, column: &str) -> sqlx::Result<f64>;
    fn opt_bytes(&self, column: &str) -> sqlx::Result<Option<Vec<u8>>>;
}

macro_rules! columns_of {
    ($($row:ty),*) => {$(
        impl Columns for $row {
            fn text(&self, column: &str) -> sqlx::Result<String> {
                sqlx::Row::try_get(self, column)
            }
            fn opt_text(&self, column: &str) -> sqlx::Result<Option<String>> {
                sqlx::Row::try_get(self, column)
            }
            fn int(&self, column: &str) -> sqlx::Result<i64> {
                sqlx::Row::try_get(self, column)
            }
            fn opt_int(&self, column: &str) -> sqlx::Result<Option<i64>> {
                sqlx::Row::try_get(self, column)
            }
            fn real(&self, column: &str) -> sqlx::Result<f64> {
                sqlx::Row::try_get(self, column)
            }
            fn opt_bytes(&self, column: &str) -> sqlx::Result<Option<Vec<u8>>> {
                sqlx::Row::try_get(self, column)
            }
        }
    )*};
}

columns_of!(sqlx::sqlite::SqliteRow, sqlx::postgres::PgRow);
