//! Consistent copies of the embedded database, made with `VACUUM INTO`: one read transaction,
//! so writers carry on and the copy is exactly the database as of one moment (compacted).
//!
//! * Before a migration changes an existing database, [`SqliteDatabase::open`] keeps a copy in
//!   `<data dir>/backups/` (the newest [`SqliteConfig::migration_backups`] are kept).
//! * [`backup_file`] copies a database on demand, from any process: `aeterna backup`.
//!
//! [`SqliteDatabase::open`]: super::SqliteDatabase::open
//! [`SqliteConfig::migration_backups`]: super::SqliteConfig::migration_backups

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};
use sqlx::{ConnectOptions, Connection, Executor, Row};

use super::MIGRATOR;
use crate::error::{MemoryError, Result};

/// Where migration backups go, inside the data dir.
pub const BACKUP_DIR: &str = "backups";
const BACKUP_PREFIX: &str = "aeterna-";
const BACKUP_INFIX: &str = "-before-";

/// Copies the database file `source` into `dest` (which must not exist) while any process may
/// be using it. Returns the copy's size in bytes.
pub async fn backup_file(source: &Path, dest: &Path) -> Result<u64> {
    if !source.is_file() {
        return Err(MemoryError::invalid(format!(
            "there is no database at {}; give the data dir of a server that has run",
            source.display()
        )));
    }
    let mut connection = SqliteConnectOptions::new()
        .filename(source)
        .read_only(true)
        .connect()
        .await
        .map_err(|error| MemoryError::storage(format!("opening {}", source.display()), error))?;
    let copied = vacuum_into(&mut connection, dest).await;
    let _ = connection.close().await;
    copied
}

/// `VACUUM INTO dest` on `executor`, refusing an existing `dest`.
async fn vacuum_into<'e, E>(executor: E, dest: &Path) -> Result<u64>
where
    E: Executor<'e, Database = sqlx::Sqlite>,
{
    if dest.exists() {
        return Err(MemoryError::invalid(format!(
            "{} already exists; choose a new file for the backup",
            dest.display()
        )));
    }
    let Some(dest_text) = dest.to_str() else {
        return Err(MemoryError::invalid(format!(
            "{} is not valid UTF-8; choose another path for the backup",
            dest.display()
        )));
    };
    if let Some(parent) = dest
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent).map_err(|error| {
            MemoryError::storage(format!("creating {}", parent.display()), error)
        })?;
    }
    executor
        .execute(sqlx::query("VACUUM INTO ?").bind(dest_text))
        .await
        .map_err(|error| {
            MemoryError::storage(
                format!("copying the database into {}", dest.display()),
                error,
            )
        })?;
    std::fs::metadata(dest)
        .map(|metadata| metadata.len())
        .map_err(|error| MemoryError::storage(format!("reading {}", dest.display()), error))
}

/// The first migration `pool`'s database has not applied, when it has applied others (a new,
/// empty database needs no backup).
async fn first_pending_migration(pool: &SqlitePool) -> Result<Option<i64>> {
    let known: Option<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
    )
    .fetch_optional(pool)
    .await
    .map_err(|error| MemoryError::storage("reading the migration history", error))?;
    if known.is_none() {
        return Ok(None);
    }
    let applied: HashSet<i64> = sqlx::query("SELECT version FROM _sqlx_migrations")
        .fetch_all(pool)
        .await
        .map_err(|error| MemoryError::storage("reading the migration history", error))?
        .iter()
        .map(|row| row.get::<i64, _>(0))
        .collect();
    if applied.is_empty() {
        return Ok(None);
    }
    Ok(MIGRATOR
        .iter()
        .map(|migration| migration.version)
        .find(|version| !applied.contains(version)))
}

/// Before migrations run on an existing database: copies it into `<data_dir>/backups/` and
/// keeps the newest `keep` copies. `None` when nothing is pending (or `keep` is 0).
pub(super) async fn before_migrations(
    pool: &SqlitePool,
    data_dir: &Path,
    keep: usize,
) -> Result<Option<PathBuf>> {
    let Some(version) = first_pending_migration(pool).await? else {
        return Ok(None);
    };
    if keep == 0 {
        tracing::warn!(
            version,
            "migrating the database without a backup (memory.sqlite.migration_backups = 0)"
        );
        return Ok(None);
    }
    let dir = data_dir.join(BACKUP_DIR);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    // Zero-padded, so names sort by age.
    let dest = dir.join(format!(
        "{BACKUP_PREFIX}{nanos:020}{BACKUP_INFIX}{version:04}.db"
    ));
    let bytes = vacuum_into(pool, &dest).await?;
    tracing::info!(
        backup = %dest.display(),
        bytes,
        version,
        "copied the database before migrating it"
    );
    prune(&dir, keep);
    Ok(Some(dest))
}

/// Deletes all but the newest `keep` migration backups (only files this module names).
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut backups: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| {
                    name.starts_with(BACKUP_PREFIX)
                        && name.contains(BACKUP_INFIX)
                        && name.ends_with(".db")
                })
        })
        .collect();
    backups.sort();
    let excess = backups.len().saturating_sub(keep);
    for old in &backups[..excess] {
        if let Err(error) = std::fs::remove_file(old) {
            tracing::warn!(backup = %old.display(), %error, "cannot delete an old backup");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::sqlite::{SqliteConfig, SqliteDatabase};

    /// Makes the newest migration pending again, as a release that adds one would find it:
    /// its table dropped and its row forgotten.
    async fn forget_newest_migration(db: &SqliteDatabase) -> i64 {
        let newest = MIGRATOR
            .iter()
            .map(|m| m.version)
            .max()
            .expect("migrations");
        assert_eq!(newest, 600, "update this test for the newest migration");
        sqlx::query("DROP TABLE ingest_jobs")
            .execute(&db.pool)
            .await
            .unwrap();
        sqlx::query("DELETE FROM _sqlx_migrations WHERE version = ?")
            .bind(newest)
            .execute(&db.pool)
            .await
            .unwrap();
        newest
    }

    async fn tables(path: &Path) -> Vec<String> {
        let mut connection = SqliteConnectOptions::new()
            .filename(path)
            .read_only(true)
            .connect()
            .await
            .unwrap();
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .fetch_all(&mut connection)
            .await
            .unwrap()
    }

    fn backups(data_dir: &Path) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(data_dir.join(BACKUP_DIR))
            .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        found.sort();
        found
    }

    #[tokio::test]
    async fn a_pending_migration_on_an_existing_database_is_preceded_by_a_copy() {
        let dir = tempfile::tempdir().unwrap();
        let config = SqliteConfig::default();
        let db = SqliteDatabase::open(dir.path(), &config).await.unwrap();
        assert!(
            backups(dir.path()).is_empty(),
            "a new database needs no copy"
        );
        let version = forget_newest_migration(&db).await;
        drop(db);

        let db = SqliteDatabase::open(dir.path(), &config).await.unwrap();
        let copies = backups(dir.path());
        assert_eq!(copies.len(), 1, "{copies:?}");
        let name = copies[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            name.ends_with(&format!("-before-{version:04}.db")),
            "{name}"
        );
        // The copy is the database as it was before the migration; the live one is migrated.
        let copied = tables(&copies[0]).await;
        assert!(copied.contains(&"memories".to_owned()), "{copied:?}");
        assert!(!copied.contains(&"ingest_jobs".to_owned()), "{copied:?}");
        assert!(tables(db.path()).await.contains(&"ingest_jobs".to_owned()));

        // Opening with nothing pending makes no copy.
        drop(db);
        let db = SqliteDatabase::open(dir.path(), &config).await.unwrap();
        assert_eq!(backups(dir.path()).len(), 1);
        drop(db);
    }

    #[tokio::test]
    async fn only_the_newest_copies_are_kept_and_zero_keeps_none() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = SqliteConfig {
            migration_backups: 2,
            ..SqliteConfig::default()
        };
        let stray = dir.path().join(BACKUP_DIR).join("mine.db");
        std::fs::create_dir_all(stray.parent().unwrap()).unwrap();
        std::fs::write(&stray, b"not ours").unwrap();
        for _ in 0..3 {
            let db = SqliteDatabase::open(dir.path(), &config).await.unwrap();
            forget_newest_migration(&db).await;
            drop(db);
        }
        let db = SqliteDatabase::open(dir.path(), &config).await.unwrap();
        let copies = backups(dir.path());
        assert_eq!(
            copies.len(),
            3,
            "two copies and the file that is not ours: {copies:?}"
        );
        assert!(stray.exists());

        forget_newest_migration(&db).await;
        drop(db);
        config.migration_backups = 0;
        SqliteDatabase::open(dir.path(), &config).await.unwrap();
        assert_eq!(backups(dir.path()).len(), 3, "0 makes no copy");
    }

    #[tokio::test]
    async fn backup_file_copies_a_database_in_use_and_refuses_to_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let db = SqliteDatabase::open(dir.path(), &SqliteConfig::default())
            .await
            .unwrap();
        let dest = dir.path().join("copies").join("a.db");
        let bytes = backup_file(db.path(), &dest).await.unwrap();
        assert!(bytes > 0 && dest.is_file());
        assert!(tables(&dest).await.contains(&"memories".to_owned()));

        let again = backup_file(db.path(), &dest).await.unwrap_err().to_string();
        assert!(again.contains("already exists"), "{again}");
        let missing = backup_file(&dir.path().join("nothing.db"), &dir.path().join("b.db"))
            .await
            .unwrap_err()
            .to_string();
        assert!(missing.contains("there is no database at"), "{missing}");
    }
}
