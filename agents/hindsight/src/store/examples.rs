//! `hindsight_resolution_examples`: the further signatures a resolution fixed (its lineage's
//! other wordings of the error).

use std::collections::HashMap;

use aeterna_memory::storage::{Database, Transaction};
use aeterna_memory::{Timestamp, with_connection};
use sqlx::QueryBuilder;
use uuid::Uuid;

use super::corrupt;
use crate::error::{Result, failed};
use crate::model::Resolution;

/// Links `signature_id` to `resolution_id` as another example; false when it already was.
pub(crate) async fn add(
    tx: &mut Transaction,
    tenant_id: &str,
    resolution_id: Uuid,
    signature_id: Uuid,
    added_by: &str,
    now: Timestamp,
) -> Result<bool> {
    let added = with_connection!(tx, |conn| {
        sqlx::query(
            "INSERT INTO hindsight_resolution_examples \
                 (tenant_id, resolution_id, signature_id, added_by, added_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        )
        .bind(tenant_id)
        .bind(resolution_id.to_string())
        .bind(signature_id.to_string())
        .bind(added_by)
        .bind(now)
        .execute(conn)
        .await
        .map(|done| done.rows_affected())
    })
    .map_err(failed("adding an example to a resolution"))?;
    Ok(added == 1)
}

/// The examples of each of `resolution_ids`, oldest first.
pub(crate) async fn of(
    tx: &mut Transaction,
    tenant_id: &str,
    resolution_ids: &[Uuid],
) -> Result<HashMap<Uuid, Vec<Uuid>>> {
    let mut out: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
    if resolution_ids.is_empty() {
        return Ok(out);
    }
    let rows: Vec<(String, String)> = with_connection!(tx, |conn| {
        let mut query = QueryBuilder::new(
            "SELECT resolution_id, signature_id FROM hindsight_resolution_examples \
             WHERE tenant_id = ",
        );
        query.push_bind(tenant_id).push(" AND resolution_id IN (");
        let mut ids = query.separated(", ");
        for id in resolution_ids {
            ids.push_bind(id.to_string());
        }
        query.push(") ORDER BY added_at, signature_id");
        query.build_query_as().fetch_all(conn).await
    })
    .map_err(failed("reading a resolution's examples"))?;
    let parse = |id: &str, column| id.parse::<Uuid>().map_err(|e| corrupt(column, e));
    for (resolution_id, signature_id) in &rows {
        out.entry(parse(resolution_id, "resolution_id")?)
            .or_default()
            .push(parse(signature_id, "signature_id")?);
    }
    Ok(out)
}

/// Fills in the `examples` of each resolution.
pub(crate) async fn fill(
    tx: &mut Transaction,
    tenant_id: &str,
    resolutions: &mut [Resolution],
) -> Result<()> {
    let ids: Vec<Uuid> = resolutions.iter().map(|r| r.id).collect();
    let mut examples = of(tx, tenant_id, &ids).await?;
    for resolution in resolutions {
        resolution.examples = examples.remove(&resolution.id).unwrap_or_default();
    }
    Ok(())
}

/// A fix's text as the index sees it, and the signatures it is recorded for.
pub(crate) struct FixText {
    pub signature_ids: Vec<Uuid>,
    pub text: String,
}

/// Every resolution of a tenant with the signatures it fixes (its own and its examples), for
/// the tenant's index.
pub(crate) async fn fix_texts(db: &Database, tenant_id: &str) -> Result<Vec<FixText>> {
    let mut tx = db
        .begin_read()
        .await
        .map_err(failed("loading resolutions"))?;
    let rows: Vec<(String, String, String, String)> = with_connection!(&mut tx, |conn| {
        sqlx::query_as(
            "SELECT id, signature_id, description, changes FROM hindsight_resolutions \
             WHERE tenant_id = $1",
        )
        .bind(tenant_id)
        .fetch_all(conn)
        .await
    })
    .map_err(failed("loading resolutions"))?;
    let parse = |id: &str, column| id.parse::<Uuid>().map_err(|e| corrupt(column, e));
    let ids: Vec<Uuid> = rows
        .iter()
        .map(|(id, ..)| parse(id, "id"))
        .collect::<Result<_>>()?;
    let mut examples = HashMap::new();
    for chunk in ids.chunks(500) {
        examples.extend(of(&mut tx, tenant_id, chunk).await?);
    }
    rows.iter()
        .zip(ids)
        .map(|((_, signature_id, description, changes), id)| {
            let changes: crate::model::Changes =
                serde_json::from_str(changes).map_err(|e| corrupt("changes", e))?;
            let mut signature_ids = vec![parse(signature_id, "signature_id")?];
            signature_ids.extend(examples.remove(&id).unwrap_or_default());
            Ok(FixText {
                signature_ids,
                text: fix_text(description, &changes),
            })
        })
        .collect()
}

/// The words of a fix the index knows it by: its description and the summaries of the files
/// it changed (a diff is code, whose identifiers describe nothing).
pub(crate) fn fix_text(description: &str, changes: &crate::model::Changes) -> String {
    let mut text = description.to_string();
    for file in &changes.files {
        text.push('\n');
        text.push_str(&file.summary);
    }
    text
}
