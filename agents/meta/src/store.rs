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

/// The most pages of rows [`LoopStore::list`] reads to fill one listing.
pub const LIST_SCAN_PAGES: usize = 20;

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

    /// Up to `limit` loops of `tenant` (in `state`, when given) whose identity `visible`
    /// accepts, newest first. Reads pages of `limit` rows until enough are accepted, at most
    /// [`LIST_SCAN_PAGES`] pages: a caller whose grants reach few of the tenant's loops may see
    /// fewer than exist.
    pub async fn list(
        &self,
        tenant: &str,
        state: Option<LoopState>,
        limit: usize,
        visible: impl Fn(&Identity) -> bool,
    ) -> Result<Vec<LoopRecord>> {
        let page = i64::try_from(limit).unwrap_or(i64::MAX);
        let state = state.map_or("", LoopState::as_str);
        let mut found = Vec::new();
        // Ids are UUID v7 text: ordering by id is creation order; "~" sorts after every id.
        let mut before = String::from("~");
        for _ in 0..LIST_SCAN_PAGES {
            let rows: Vec<LoopRow> = with_pool!(&self.db, |pool| {
                sqlx::query_as(
                    "SELECT identity, record FROM meta_loops \
                     WHERE tenant_id = $1 AND ($2 = '' OR state = $2) AND id < $3 \
                     ORDER BY id DESC LIMIT $4",
                )
                .bind(tenant)
                .bind(state)
                .bind(&before)
                .bind(page)
                .fetch_all(pool)
                .await
            })
            .map_err(failed("listing loops"))?;
            let exhausted = rows.len() < limit;
            for row in &rows {
                let stored = decode(row)?;
                before = stored.record.loop_id.to_string();
                if visible(&stored.identity) && found.len() < limit {
                    found.push(stored.record);
                }
            }
            if exhausted || found.len() >= limit {
                break;
            }
        }
        Ok(found)
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
