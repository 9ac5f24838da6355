//! `hindsight_promotions`: one row per (resolution, target layer), ever.

use aeterna_memory::{Scope, Timestamp};
use sqlx::QueryBuilder;
use sqlx::sqlite::{Sqlite, SqliteConnection, SqlitePool, SqliteRow};
use uuid::Uuid;

use super::{corrupt, count, int, layer, opt_text, opt_uuid, text, uuid};
use crate::error::{Result, failed};
use crate::model::{Promotion, PromotionStatus};

const COLUMNS: &str = "id, resolution_id, from_layer, from_scope, to_layer, to_scope, status, \
     success_rate, application_count, requested_by, requested_at, decided_by, decided_at, \
     promoted_resolution_id";

fn from_row(row: &SqliteRow) -> Result<Promotion> {
    let status = match text(row, "status")?.as_str() {
        "pending" => PromotionStatus::Pending,
        "promoted" => PromotionStatus::Promoted,
        "rejected" => PromotionStatus::Rejected,
        other => return Err(corrupt("status", other)),
    };
    Ok(Promotion {
        id: uuid(row, "id")?,
        resolution_id: uuid(row, "resolution_id")?,
        from_layer: layer(row, "from_layer")?,
        from_scope: text(row, "from_scope")?,
        to_layer: layer(row, "to_layer")?,
        to_scope: text(row, "to_scope")?,
        status,
        success_rate: sqlx::Row::try_get(row, "success_rate")
            .map_err(|e| corrupt("success_rate", e))?,
        application_count: count(row, "application_count")?,
        requested_by: text(row, "requested_by")?,
        requested_at: int(row, "requested_at")?,
        decided_by: opt_text(row, "decided_by")?,
        decided_at: sqlx::Row::try_get(row, "decided_at").map_err(|e| corrupt("decided_at", e))?,
        promoted_resolution_id: opt_uuid(row, "promoted_resolution_id")?,
    })
}

/// Inserts the promotion unless one from that resolution to that layer exists; returns the
/// stored one and whether it is new.
pub(crate) async fn insert_once(
    conn: &mut SqliteConnection,
    tenant_id: &str,
    p: &Promotion,
) -> Result<(Promotion, bool)> {
    let inserted = sqlx::query(
        "INSERT INTO hindsight_promotions (tenant_id, id, resolution_id, from_layer, from_scope, \
             to_layer, to_scope, status, success_rate, application_count, requested_by, \
             requested_at, decided_by, decided_at, promoted_resolution_id) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT (tenant_id, resolution_id, to_layer) DO NOTHING",
    )
    .bind(tenant_id)
    .bind(p.id.to_string())
    .bind(p.resolution_id.to_string())
    .bind(p.from_layer.as_str())
    .bind(&p.from_scope)
    .bind(p.to_layer.as_str())
    .bind(&p.to_scope)
    .bind(p.status.as_str())
    .bind(p.success_rate)
    .bind(p.application_count as i64)
    .bind(&p.requested_by)
    .bind(p.requested_at)
    .bind(p.decided_by.as_deref())
    .bind(p.decided_at)
    .bind(p.promoted_resolution_id.map(|id| id.to_string()))
    .execute(&mut *conn)
    .await
    .map_err(failed("recording a promotion"))?
    .rows_affected()
        == 1;
    let sql = format!(
        "SELECT {COLUMNS} FROM hindsight_promotions \
         WHERE tenant_id = ? AND resolution_id = ? AND to_layer = ?"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(tenant_id)
        .bind(p.resolution_id.to_string())
        .bind(p.to_layer.as_str())
        .fetch_one(conn)
        .await
        .map_err(failed("reading a promotion"))?;
    Ok((from_row(&row)?, inserted))
}

pub(crate) async fn get(
    conn: &mut SqliteConnection,
    tenant_id: &str,
    id: Uuid,
) -> Result<Option<Promotion>> {
    let sql = format!("SELECT {COLUMNS} FROM hindsight_promotions WHERE tenant_id = ? AND id = ?");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(tenant_id)
        .bind(id.to_string())
        .fetch_optional(conn)
        .await
        .map_err(failed("reading a promotion"))?;
    row.as_ref().map(from_row).transpose()
}

/// Records the decision on a pending promotion; returns false when it was no longer pending.
pub(crate) async fn decide(
    conn: &mut SqliteConnection,
    tenant_id: &str,
    id: Uuid,
    status: PromotionStatus,
    decided_by: &str,
    at: Timestamp,
    promoted_resolution_id: Option<Uuid>,
) -> Result<bool> {
    let changed = sqlx::query(
        "UPDATE hindsight_promotions SET status = ?, decided_by = ?, decided_at = ?, \
             promoted_resolution_id = ? \
         WHERE tenant_id = ? AND id = ? AND status = 'pending'",
    )
    .bind(status.as_str())
    .bind(decided_by)
    .bind(at)
    .bind(promoted_resolution_id.map(|id| id.to_string()))
    .bind(tenant_id)
    .bind(id.to_string())
    .execute(conn)
    .await
    .map_err(failed("deciding a promotion"))?
    .rows_affected();
    Ok(changed == 1)
}

/// Promotions into any of `scopes`, newest first, optionally only with `status`.
pub(crate) async fn list(
    pool: &SqlitePool,
    tenant_id: &str,
    status: Option<PromotionStatus>,
    scopes: &[Scope],
    limit: usize,
) -> Result<Vec<Promotion>> {
    if scopes.is_empty() {
        return Ok(Vec::new());
    }
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT {COLUMNS} FROM hindsight_promotions WHERE tenant_id = "
    ));
    query.push_bind(tenant_id);
    if let Some(status) = status {
        query.push(" AND status = ").push_bind(status.as_str());
    }
    query.push(" AND (");
    for (index, scope) in scopes.iter().enumerate() {
        if index > 0 {
            query.push(" OR ");
        }
        query
            .push("(to_layer = ")
            .push_bind(scope.layer.as_str())
            .push(" AND to_scope = ")
            .push_bind(scope.scope_id.clone())
            .push(")");
    }
    query
        .push(") ORDER BY requested_at DESC LIMIT ")
        .push_bind(limit as i64);
    let rows = query
        .build()
        .fetch_all(pool)
        .await
        .map_err(failed("listing promotions"))?;
    rows.iter().map(from_row).collect()
}
