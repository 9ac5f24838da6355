//! [`LoopStore`]: loops in the deployment's database (migration `0400_meta_loops`), one row per
//! loop with the record as JSON. Every query filters by tenant in SQL, except the
//! recovery scan at start, which reads loops left active by state.

use aeterna_memory::storage::Database;
use aeterna_memory::{Identity, with_pool};
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
    db: Database,
}

/// The `identity` and `record` columns of a loop.
type LoopRow = (String, String);

fn encode<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| MetaError::storage("encoding a loop", e))
}

fn decode((identity, record): &LoopRow) -> Result<StoredLoop> {
    Ok(StoredLoop {
        identity: serde_json::from_str(identity)
            .map_err(|e| MetaError::storage("decoding a loop's identity", e))?,
        record: serde_json::from_str(record)
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
    pub fn new(db: Database) -> Self {
        LoopStore { db }
    }

    pub async fn insert(&self, who: &Identity, record: &LoopRecord) -> Result<()> {
        let (identity, encoded) = (encode(who)?, encode(record)?);
        with_pool!(&self.db, |pool| {
            sqlx::query(
                "INSERT INTO meta_loops \
                 (tenant_id, id, state, driver, identity, record, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&who.tenant_id)
            .bind(record.loop_id.to_string())
            .bind(record.state.as_str())
            .bind(driver_name(record.driver))
            .bind(&identity)
            .bind(&encoded)
            .bind(record.created_at)
            .bind(record.updated_at)
            .execute(pool)
            .await
            .map(drop)
        })
        .map_err(failed("storing a new loop"))?;
        Ok(())
    }

    /// Writes `record` over the stored loop of `tenant`.
    pub async fn save(&self, tenant: &str, record: &LoopRecord) -> Result<()> {
        let encoded = encode(record)?;
        let updated = with_pool!(&self.db, |pool| {
            sqlx::query(
                "UPDATE meta_loops SET state = $1, record = $2, updated_at = $3 \
                 WHERE tenant_id = $4 AND id = $5",
            )
            .bind(record.state.as_str())
            .bind(&encoded)
            .bind(record.updated_at)
            .bind(tenant)
            .bind(record.loop_id.to_string())
            .execute(pool)
            .await
            .map(|done| done.rows_affected())
        })
        .map_err(failed("saving a loop"))?;
        if updated == 0 {
            return Err(MetaError::NotFound(record.loop_id.to_string()));
        }
        Ok(())
    }

    pub async fn get(&self, tenant: &str, id: Uuid) -> Result<Option<StoredLoop>> {
        let row: Option<LoopRow> = with_pool!(&self.db, |pool| {
            sqlx::query_as(
                "SELECT identity, record FROM meta_loops WHERE tenant_id = $1 AND id = $2",
            )
            .bind(tenant)
            .bind(id.to_string())
            .fetch_optional(pool)
            .await
        })
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
        let rows: Vec<LoopRow> = with_pool!(&self.db, |pool| match state {
            Some(state) => {
                sqlx::query_as(
                    "SELECT identity, record FROM meta_loops \
                     WHERE tenant_id = $1 AND state = $2 ORDER BY id DESC LIMIT $3",
                )
                .bind(tenant)
                .bind(state.as_str())
                .bind(limit)
                .fetch_all(pool)
                .await
            }
            None => {
                sqlx::query_as(
                    "SELECT identity, record FROM meta_loops \
                     WHERE tenant_id = $1 ORDER BY id DESC LIMIT $2",
                )
                .bind(tenant)
                .bind(limit)
                .fetch_all(pool)
                .await
            }
        })
        .map_err(failed("listing loops"))?;
        rows.iter()
            .map(|row| decode(row).map(|stored| stored.record))
            .collect()
    }

    /// Loops an earlier run left queued or running, of every tenant (recovery at start).
    pub async fn unfinished(&self) -> Result<Vec<StoredLoop>> {
        let rows: Vec<LoopRow> = with_pool!(&self.db, |pool| {
            sqlx::query_as(
                "SELECT identity, record FROM meta_loops WHERE state IN ('queued', 'running')",
            )
            .fetch_all(pool)
            .await
        })
        .map_err(failed("reading unfinished loops"))?;
        rows.iter().map(decode).collect()
    }
}
