//! [`LoopStore`]: loops in the shared SQLite database (`migrations/sqlite/0400_meta_loops.sql`),
//! one row per loop with the record as JSON. Every query filters by tenant in SQL, except the
//! recovery scan at start, which reads loops left active by state.

use aeterna_memory::Identity;
use aeterna_memory::storage::sqlite::SqliteDatabase;
use sqlx::Row;
use uuid::Uuid;

use crate::error::{MetaError, Result, failed};
use crate::model::{Driver, LoopRecord, LoopState};

/// A stored loop and whom it runs for.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredLoop {
    pub identity: Identity,
    pub record: LoopRecord,
}

#[derive(Clone)]
pub struct LoopStore {
    db: SqliteDatabase,
}

fn encode<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| MetaError::storage("encoding a loop", e))
}

fn decode(row: &sqlx::sqlite::SqliteRow) -> Result<StoredLoop> {
    let identity: String = row.get("identity");
    let record: String = row.get("record");
    Ok(StoredLoop {
        identity: serde_json::from_str(&identity)
            .map_err(|e| MetaError::storage("decoding a loop's identity", e))?,
        record: serde_json::from_str(&record)
            .map_err(|e| MetaError::storage("decoding a loop", e))?,
    })
}

fn driver_name(driver: Driver) -> &'static str {
    match driver {
        Driver::Client => "client",
        Driver::Command => "command",
    }
}

impl LoopStore {
    pub fn new(db: SqliteDatabase) -> Self {
        LoopStore { db }
    }

    pub async fn insert(&self, who: &Identity, record: &LoopRecord) -> Result<()> {
        sqlx::query(
            "INSERT INTO meta_loops \
             (tenant_id, id, state, driver, identity, record, created_at, updated_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&who.tenant_id)
        .bind(record.loop_id.to_string())
        .bind(record.state.as_str())
        .bind(driver_name(record.driver))
        .bind(encode(who)?)
        .bind(encode(record)?)
        .bind(record.created_at)
        .bind(record.updated_at)
        .execute(&self.db.pool)
        .await
        .map_err(failed("storing a new loop"))?;
        Ok(())
    }

    /// Writes `record` over the stored loop of `tenant`.
    pub async fn save(&self, tenant: &str, record: &LoopRecord) -> Result<()> {
        let done = sqlx::query(
            "UPDATE meta_loops SET state = ?, record = ?, updated_at = ? \
             WHERE tenant_id = ? AND id = ?",
        )
        .bind(record.state.as_str())
        .bind(encode(record)?)
        .bind(record.updated_at)
        .bind(tenant)
        .bind(record.loop_id.to_string())
        .execute(&self.db.pool)
        .await
        .map_err(failed("saving a loop"))?;
        if done.rows_affected() == 0 {
            return Err(MetaError::NotFound(record.loop_id.to_string()));
        }
        Ok(())
    }

    pub async fn get(&self, tenant: &str, id: Uuid) -> Result<Option<StoredLoop>> {
        let row =
            sqlx::query("SELECT identity, record FROM meta_loops WHERE tenant_id = ? AND id = ?")
                .bind(tenant)
                .bind(id.to_string())
                .fetch_optional(&self.db.pool)
                .await
                .map_err(failed("reading a loop"))?;
        row.as_ref().map(decode).transpose()
    }

    /// The tenant's loops, newest first, optionally in one state.
    pub async fn list(
        &self,
        tenant: &str,
        state: Option<LoopState>,
        limit: usize,
    ) -> Result<Vec<LoopRecord>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = match state {
            Some(state) => {
                sqlx::query(
                    "SELECT identity, record FROM meta_loops \
                     WHERE tenant_id = ? AND state = ? ORDER BY id DESC LIMIT ?",
                )
                .bind(tenant)
                .bind(state.as_str())
                .bind(limit)
                .fetch_all(&self.db.pool)
                .await
            }
            None => {
                sqlx::query(
                    "SELECT identity, record FROM meta_loops \
                     WHERE tenant_id = ? ORDER BY id DESC LIMIT ?",
                )
                .bind(tenant)
                .bind(limit)
                .fetch_all(&self.db.pool)
                .await
            }
        }
        .map_err(failed("listing loops"))?;
        rows.iter()
            .map(|row| decode(row).map(|stored| stored.record))
            .collect()
    }

    /// Loops an earlier run left queued or running, of every tenant (recovery at start).
    pub async fn unfinished(&self) -> Result<Vec<StoredLoop>> {
        let rows = sqlx::query(
            "SELECT identity, record FROM meta_loops WHERE state IN ('queued', 'running')",
        )
        .fetch_all(&self.db.pool)
        .await
        .map_err(failed("reading unfinished loops"))?;
        rows.iter().map(decode).collect()
    }
}
