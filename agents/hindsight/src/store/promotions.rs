//! `hindsight_promotions`: one row per (resolution, target layer), ever.

use aeterna_memory::storage::{Columns, Database, Transaction};
use aeterna_memory::{Scope, Timestamp, with_connection, with_pool};
use sqlx::QueryBuilder;
use uuid::Uuid;

use super::{corrupt, count, int, layer, opt_text, opt_uuid, text, uuid};
use crate::error::{Result, failed};
use crate::model::{Promotion, PromotionStatus};

const COLUMNS: &str = "id, resolution_id, from_layer, from_scope, to_layer, to_scope, status, \
     success_rate, application_count, requested_by, requested_at, decided_by, decided_at, \
     promoted_resolution_id";

fn from_row(row: &impl Columns) -> Result<Promotion> {
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
        success_rate: row
            .real("success_rate")
            .map_err(|e| corrupt("success_rate", e))?,
        application_count: count(row, "application_count")?,
        requested_by: text(row, "requested_by")?,
        requested_at: int(row, "requested_at")?,
        decided_by: opt_text(row, "decided_by")?,
        decided_at: row
            .opt_int("decided_at")
            .map_err(|e| corrupt("decided_at", e))?,
        promoted_resolution_id: opt_uuid(row, "promoted_resolution_id")?,
    })
}

/// Inserts the promotion unless one from that resolution to that layer exists; returns the
/// stored one and whether it is new.
pub(crate) async fn insert_once(
    tx: &mut Transaction,
    tenant_id: &str,
    p: &Promotion,
) -> Result<(Promotion, bool)> {
    let sql = format!(
        "SELECT {COLUMNS} FROM hindsight_promotions \
         WHERE tenant_id = $1 AND resolution_id = $2 AND to_layer = $3"
    );
    with_connection!(tx, |conn| {
        let inserted = sqlx::query(
            "INSERT INTO hindsight_promotions (tenant_id, id, resolution_id, from_layer, \
                 from_scope, to_layer, to_scope, status, success_rate, application_count, \
                 requested_by, requested_at, decided_by, decided_at, promoted_resolution_id) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
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
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(tenant_id)
            .bind(p.resolution_id.to_string())
            .bind(p.to_layer.as_str())
            .fetch_one(conn)
            .await
            .map_err(failed("reading a promotion"))?;
        Ok((from_row(&row)?, inserted))
    })
}

pub(crate) async fn get(
    tx: &mut Transaction,
    tenant_id: &str,
    id: Uuid,
) -> Result<Option<Promotion>> {
    let sql =
        format!("SELECT {COLUMNS} FROM hindsight_promotions WHERE tenant_id = $1 AND id = $2");
    with_connection!(tx, |conn| {
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(tenant_id)
            .bind(id.to_string())
            .fetch_optional(conn)
            .await
            .map_err(failed("reading a promotion"))?;
        row.as_ref().map(from_row).transpose()
    })
}

/// Records the decision on a pending promotion; returns false when it was no longer pending.
pub(crate) async fn decide(
    tx: &mut Transaction,
    tenant_id: &str,
    id: Uuid,
    status: PromotionStatus,
    decided_by: &str,
    at: Timestamp,
    promoted_resolution_id: Option<Uuid>,
) -> Result<bool> {
    let changed = with_connection!(tx, |conn| {
        sqlx::query(
            "UPDATE hindsight_promotions SET status = $1, decided_by = $2, decided_at = $3, \
                 promoted_resolution_id = $4 \
             WHERE tenant_id = $5 AND id = $6 AND status = 'pending'",
        )
        .bind(status.as_str())
        .bind(decided_by)
        .bind(at)
        .bind(promoted_resolution_id.map(|id| id.to_string()))
        .bind(tenant_id)
        .bind(id.to_string())
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })
    .map_err(failed("deciding a promotion"))?;
    Ok(changed == 1)
}

/// Promotions into any of `scopes`, newest first, optionally only with `status`.
pub(crate) async fn list(
    db: &Database,
    tenant_id: &str,
    status: Option<PromotionStatus>,
    scopes: &[Scope],
    limit: usize,
) -> Result<Vec<Promotion>> {
    if scopes.is_empty() {
        return Ok(Vec::new());
    }
    with_pool!(db, |pool| {
        let mut query = QueryBuilder::new(format!(
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
    })
}
