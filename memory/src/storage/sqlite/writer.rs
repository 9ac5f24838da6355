//! The database's one write connection, held outside the pool.
//!
//! SQLite lets one transaction write at a time, so write transactions queue somewhere; here
//! they queue on a mutex around a dedicated connection instead of on SQLite's write lock. Two
//! things make that cheaper than a pooled connection: every sqlx statement is a round trip to
//! the connection's worker thread, and a pooled connection pays one more when it is returned
//! (sqlx pings it, unconditionally, from a task of its own); and a connection that only this
//! process's writers use keeps its page cache, which WAL mode drops whenever another
//! connection has written.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;

use sqlx::SqlStr;
use sqlx::sqlite::{SqliteConnection, SqliteTransactionManager};
use sqlx_core::transaction::TransactionManager;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// The write connection; cloning shares it.
#[derive(Clone, Debug)]
pub struct Writer {
    connection: Arc<Mutex<SqliteConnection>>,
    /// How long [`begin`](Self::begin) waits for the connection before giving up.
    wait: Duration,
}

impl Writer {
    pub fn new(connection: SqliteConnection, wait: Duration) -> Self {
        Writer {
            connection: Arc::new(Mutex::new(connection)),
            wait,
        }
    }

    /// Waits for the connection (at most `wait`: the pool's acquire timeout) and starts a
    /// transaction on it with `BEGIN IMMEDIATE`.
    pub async fn begin(&self) -> sqlx::Result<WriteTransaction> {
        let mut connection = tokio::time::timeout(self.wait, self.connection.clone().lock_owned())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)?;
        // A transaction a cancelled caller left open (its `begin` or `commit` was dropped
        // mid-flight) is rolled back before the connection is used again.
        if SqliteTransactionManager::get_transaction_depth(&connection) > 0 {
            SqliteTransactionManager::rollback(&mut connection).await?;
        }
        SqliteTransactionManager::begin(
            &mut connection,
            Some(SqlStr::from_static("BEGIN IMMEDIATE")),
        )
        .await?;
        Ok(WriteTransaction {
            connection,
            open: true,
        })
    }
}

/// A transaction on the [`Writer`]'s connection, which it holds until it is committed, rolled
/// back or dropped (dropping it uncommitted rolls it back). Statements run on `&mut *tx`.
#[derive(Debug)]
pub struct WriteTransaction {
    connection: OwnedMutexGuard<SqliteConnection>,
    open: bool,
}

impl WriteTransaction {
    pub async fn commit(mut self) -> sqlx::Result<()> {
        SqliteTransactionManager::commit(&mut self.connection).await?;
        self.open = false;
        Ok(())
    }

    pub async fn rollback(mut self) -> sqlx::Result<()> {
        SqliteTransactionManager::rollback(&mut self.connection).await?;
        self.open = false;
        Ok(())
    }
}

impl Drop for WriteTransaction {
    fn drop(&mut self) {
        if self.open {
            // Queued on the connection's worker ahead of anything the next holder sends.
            SqliteTransactionManager::start_rollback(&mut self.connection);
        }
    }
}

impl Deref for WriteTransaction {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        &self.connection
    }
}

impl DerefMut for WriteTransaction {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.connection
    }
}

#[cfg(test)]
mod tests {
    use sqlx::ConnectOptions;
    use sqlx::sqlite::SqliteConnectOptions;

    use super::*;
    use crate::storage::sqlite::{SqliteConfig, SqliteDatabase};

    async fn temp_database() -> (tempfile::TempDir, SqliteDatabase) {
        let dir = tempfile::tempdir().unwrap();
        let db = SqliteDatabase::open(dir.path(), &SqliteConfig::default())
            .await
            .unwrap();
        (dir, db)
    }

    /// A connection of its own to `db`'s file.
    async fn connection(db: &SqliteDatabase) -> SqliteConnection {
        SqliteConnectOptions::new()
            .filename(db.path())
            .connect()
            .await
            .unwrap()
    }

    async fn setting(db: &SqliteDatabase, key: &str) -> Option<String> {
        sqlx::query_scalar("SELECT value FROM memory_meta WHERE key = ?")
            .bind(key)
            .fetch_optional(&db.pool)
            .await
            .unwrap()
    }

    async fn write_setting(tx: &mut WriteTransaction, key: &str) {
        sqlx::query("INSERT INTO memory_meta (key, value) VALUES (?, 'v')")
            .bind(key)
            .execute(&mut **tx)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn committed_writes_are_seen_by_the_pool_and_dropped_ones_are_rolled_back() {
        let (_dir, db) = temp_database().await;

        let mut tx = db.begin_write().await.unwrap();
        write_setting(&mut tx, "committed").await;
        tx.commit().await.unwrap();
        assert_eq!(setting(&db, "committed").await.as_deref(), Some("v"));

        let mut tx = db.begin_write().await.unwrap();
        write_setting(&mut tx, "dropped").await;
        drop(tx);
        let mut tx = db.begin_write().await.unwrap();
        write_setting(&mut tx, "after").await;
        tx.commit().await.unwrap();
        assert_eq!(setting(&db, "dropped").await, None, "rolled back on drop");
        assert_eq!(setting(&db, "after").await.as_deref(), Some("v"));

        let mut tx = db.begin_write().await.unwrap();
        write_setting(&mut tx, "rolled back").await;
        tx.rollback().await.unwrap();
        assert_eq!(setting(&db, "rolled back").await, None);
    }

    #[tokio::test]
    async fn a_transaction_waits_for_the_open_one_and_gives_up_after_the_wait() {
        let (_dir, db) = temp_database().await;
        // Long enough that the pause below never outlasts it, even on a busy machine.
        let writer = Writer::new(connection(&db).await, Duration::from_secs(1));

        let first = writer.begin().await.unwrap();
        let second = tokio::spawn({
            let writer = writer.clone();
            async move { writer.begin().await.map(drop) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !second.is_finished(),
            "the second waits while the first is open"
        );
        first.commit().await.unwrap();
        second
            .await
            .unwrap()
            .expect("begins once the first committed");

        let _held = writer.begin().await.unwrap();
        let error = writer.begin().await.expect_err("the connection stays held");
        assert!(matches!(error, sqlx::Error::PoolTimedOut), "{error}");
    }

    #[tokio::test]
    async fn a_transaction_left_open_by_a_cancelled_begin_is_rolled_back_first() {
        let (_dir, db) = temp_database().await;
        let mut connection = connection(&db).await;
        // What a `begin` dropped after sending `BEGIN` leaves: an open transaction nobody owns.
        SqliteTransactionManager::begin(&mut connection, None)
            .await
            .unwrap();
        sqlx::query("INSERT INTO memory_meta (key, value) VALUES ('orphan', 'v')")
            .execute(&mut connection)
            .await
            .unwrap();
        let writer = Writer::new(connection, Duration::from_secs(5));

        let mut tx = writer.begin().await.expect("not nested in the orphan");
        write_setting(&mut tx, "owned").await;
        tx.commit().await.unwrap();
        assert_eq!(setting(&db, "orphan").await, None);
        assert_eq!(setting(&db, "owned").await.as_deref(), Some("v"));
    }
}
