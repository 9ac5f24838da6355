//! `hindsight_resolutions` and `hindsight_feedback`.

use aeterna_memory::storage::{Columns, Database, Transaction};
use aeterna_memory::{Scope, Timestamp, with_connection, with_pool};
use sqlx::QueryBuilder;
use uuid::Uuid;

use super::{count, examples, int, json, layer, opt_uuid, text, to_json, uuid};
use crate::error::{Result, failed};
use crate::model::Resolution;
use crate::rank::{success_rate, wilson_lower_bound};

const COLUMNS: &str = "id, signature_id, layer, scope_id, description, changes, origin_id, \
     promoted_from, success_count, application_count, baseline_applications, created_by, \
     created_at, updated_at, note_id";

fn from_row(row: &impl Columns) -> Result<Resolution> {
    let success_count = count(row, "success_count")?;
    let application_count = count(row, "application_count")?;
    Ok(Resolution {
        id: uuid(row, "id")?,
        signature_id: uuid(row, "signature_id")?,
        layer: layer(row, "layer")?,
        scope_id: text(row, "scope_id")?,
        description: text(row, "description")?,
        changes: json(row, "changes")?,
        success_count,
        application_count,
        success_rate: success_rate(success_count, application_count),
        confidence: wilson_lower_bound(success_count, application_count),
        examples: Vec::new(),
        origin_id: uuid(row, "origin_id")?,
        promoted_from: opt_uuid(row, "promoted_from")?,
        baseline_applications: count(row, "baseline_applications")?,
        created_by: text(row, "created_by")?,
        created_at: int(row, "created_at")?,
        updated_at: int(row, "updated_at")?,
        note_id: opt_uuid(row, "note_id")?,
    })
}

pub(crate) async fn insert(tx: &mut Transaction, tenant_id: &str, r: &Resolution) -> Result<()> {
    let sql = format!(
        "INSERT INTO hindsight_resolutions (tenant_id, {COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
    );
    with_connection!(tx, |conn| sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(tenant_id)
        .bind(r.id.to_string())
        .bind(r.signature_id.to_string())
        .bind(r.layer.as_str())
        .bind(&r.scope_id)
        .bind(&r.description)
        .bind(to_json(&r.changes))
        .bind(r.origin_id.to_string())
        .bind(r.promoted_from.map(|id| id.to_string()))
        .bind(r.success_count as i64)
        .bind(r.application_count as i64)
        .bind(r.baseline_applications as i64)
        .bind(&r.created_by)
        .bind(r.created_at)
        .bind(r.updated_at)
        .bind(r.note_id.map(|id| id.to_string()))
        .execute(conn)
        .await
        .map(drop))
    .map_err(failed("storing a resolution"))?;
    Ok(())
}

pub(crate) async fn get(
    tx: &mut Transaction,
    tenant_id: &str,
    id: Uuid,
) -> Result<Option<Resolution>> {
    let sql =
        format!("SELECT {COLUMNS} FROM hindsight_resolutions WHERE tenant_id = $1 AND id = $2");
    let found = with_connection!(&mut *tx, |conn| {
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(tenant_id)
            .bind(id.to_string())
            .fetch_optional(conn)
            .await
            .map_err(failed("reading a resolution"))?;
        row.as_ref().map(from_row).transpose()?
    });
    let Some(found) = found else { return Ok(None) };
    let mut resolution = [found];
    examples::fill(tx, tenant_id, &mut resolution).await?;
    let [resolution] = resolution;
    Ok(Some(resolution))
}

/// The resolutions that fix one of `signature_ids` (as their own signature or as an example)
/// and live in one of `scopes`, with their examples.
pub(crate) async fn for_signatures(
    db: &Database,
    tenant_id: &str,
    signature_ids: &[Uuid],
    scopes: &[Scope],
) -> Result<Vec<Resolution>> {
    if signature_ids.is_empty() || scopes.is_empty() {
        return Ok(Vec::new());
    }
    let mut tx = db
        .begin_read()
        .await
        .map_err(failed("reading resolutions"))?;
    let mut found: Vec<Resolution> = with_connection!(&mut tx, |conn| {
        let mut query = QueryBuilder::new(format!(
            "SELECT {COLUMNS} FROM hindsight_resolutions WHERE tenant_id = "
        ));
        query.push_bind(tenant_id).push(" AND (signature_id IN (");
        let mut ids = query.separated(", ");
        for id in signature_ids {
            ids.push_bind(id.to_string());
        }
        query
            .push(
                ") OR id IN (SELECT resolution_id FROM hindsight_resolution_examples \
                 WHERE tenant_id = ",
            )
            .push_bind(tenant_id)
            .push(" AND signature_id IN (");
        let mut ids = query.separated(", ");
        for id in signature_ids {
            ids.push_bind(id.to_string());
        }
        query.push("))) AND (");
        for (index, scope) in scopes.iter().enumerate() {
            if index > 0 {
                query.push(" OR ");
            }
            query
                .push("(layer = ")
                .push_bind(scope.layer.as_str())
                .push(" AND scope_id = ")
                .push_bind(scope.scope_id.clone())
                .push(")");
        }
        query.push(")");
        let rows = query
            .build()
            .fetch_all(conn)
            .await
            .map_err(failed("reading resolutions"))?;
        rows.iter().map(from_row).collect::<Result<_>>()?
    });
    examples::fill(&mut tx, tenant_id, &mut found).await?;
    Ok(found)
}

/// Whether a copy of the lineage `origin_id` already lives in `scope`.
pub(crate) async fn in_scope_of_lineage(
    tx: &mut Transaction,
    tenant_id: &str,
    origin_id: Uuid,
    scope: &Scope,
) -> Result<Option<Resolution>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM hindsight_resolutions \
         WHERE tenant_id = $1 AND origin_id = $2 AND layer = $3 AND scope_id = $4"
    );
    let found = with_connection!(&mut *tx, |conn| {
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(tenant_id)
            .bind(origin_id.to_string())
            .bind(scope.layer.as_str())
            .bind(&scope.scope_id)
            .fetch_optional(conn)
            .await
            .map_err(failed("reading a resolution"))?;
        row.as_ref().map(from_row).transpose()?
    });
    let Some(found) = found else { return Ok(None) };
    let mut resolution = [found];
    examples::fill(tx, tenant_id, &mut resolution).await?;
    let [resolution] = resolution;
    Ok(Some(resolution))
}

/// Records one application and updates the counters in the same transaction.
pub(crate) async fn record_feedback(
    tx: &mut Transaction,
    tenant_id: &str,
    resolution_id: Uuid,
    success: bool,
    applied_by: &str,
    comment: Option<&str>,
    now: Timestamp,
) -> Result<Resolution> {
    let sql = format!(
        "UPDATE hindsight_resolutions SET application_count = application_count + 1, \
             success_count = success_count + $1, updated_at = $2 \
         WHERE tenant_id = $3 AND id = $4 RETURNING {COLUMNS}"
    );
    let updated = with_connection!(&mut *tx, |conn| {
        sqlx::query(
            "INSERT INTO hindsight_feedback \
                 (tenant_id, id, resolution_id, success, applied_by, comment, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(tenant_id)
        .bind(Uuid::now_v7().to_string())
        .bind(resolution_id.to_string())
        .bind(i64::from(success))
        .bind(applied_by)
        .bind(comment)
        .bind(now)
        .execute(&mut *conn)
        .await
        .map_err(failed("recording feedback"))?;
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(i64::from(success))
            .bind(now)
            .bind(tenant_id)
            .bind(resolution_id.to_string())
            .fetch_one(conn)
            .await
            .map_err(failed("recording feedback"))?;
        from_row(&row)?
    });
    let mut resolution = [updated];
    examples::fill(tx, tenant_id, &mut resolution).await?;
    let [resolution] = resolution;
    Ok(resolution)
}

pub(crate) async fn set_note(
    db: &Database,
    tenant_id: &str,
    id: Uuid,
    note_id: Uuid,
) -> Result<()> {
    with_pool!(db, |pool| {
        sqlx::query(
            "UPDATE hindsight_resolutions SET note_id = $1 WHERE tenant_id = $2 AND id = $3",
        )
        .bind(note_id.to_string())
        .bind(tenant_id)
        .bind(id.to_string())
        .execute(pool)
        .await
        .map(drop)
    })
    .map_err(failed("linking a note"))?;
    Ok(())
}
