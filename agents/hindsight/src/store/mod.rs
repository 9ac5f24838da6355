//! Storage of signatures, resolutions, feedback and promotions, in the deployment's database
//! (migrations `0300_hindsight`, `0301_hindsight_examples`), written once for SQLite and
//! PostgreSQL ([`aeterna_memory::storage::Database`]). Every statement filters by `tenant_id`;
//! callers pass the tenant explicitly.

pub(crate) mod examples;
pub(crate) mod promotions;
pub(crate) mod resolutions;
pub(crate) mod signatures;

use aeterna_memory::storage::{Columns, Database, Transaction};
use aeterna_memory::{Layer, with_connection, with_pool};
use uuid::Uuid;

use crate::error::{HindsightError, Result, failed};

/// Counts one more write to what `tenant_id`'s index holds, inside the writing transaction
/// (`hindsight_versions`, migration `0302`). Returns the new version.
pub(crate) async fn bump_version(tx: &mut Transaction, tenant_id: &str) -> Result<i64> {
    with_connection!(tx, |conn| {
        sqlx::query_scalar(
            "INSERT INTO hindsight_versions (tenant_id, version) VALUES ($1, 1) \
             ON CONFLICT (tenant_id) DO UPDATE SET version = hindsight_versions.version + 1 \
             RETURNING version",
        )
        .bind(tenant_id)
        .fetch_one(conn)
        .await
    })
    .map_err(failed("counting a write"))
}

/// The version `tenant_id`'s tables are at (0 before the first write).
pub(crate) async fn version(db: &Database, tenant_id: &str) -> Result<i64> {
    let version: Option<i64> = with_pool!(db, |pool| {
        sqlx::query_scalar("SELECT version FROM hindsight_versions WHERE tenant_id = $1")
            .bind(tenant_id)
            .fetch_optional(pool)
            .await
    })
    .map_err(failed("reading the index version"))?;
    Ok(version.unwrap_or(0))
}

pub(crate) fn corrupt(what: &str, error: impl std::fmt::Display) -> HindsightError {
    HindsightError::storage(
        format!("reading {what}"),
        anyhow::anyhow!("corrupt row: {error}"),
    )
}

pub(crate) fn text(row: &impl Columns, column: &str) -> Result<String> {
    row.text(column).map_err(|e| corrupt(column, e))
}

pub(crate) fn opt_text(row: &impl Columns, column: &str) -> Result<Option<String>> {
    row.opt_text(column).map_err(|e| corrupt(column, e))
}

pub(crate) fn int(row: &impl Columns, column: &str) -> Result<i64> {
    row.int(column).map_err(|e| corrupt(column, e))
}

pub(crate) fn count(row: &impl Columns, column: &str) -> Result<u64> {
    Ok(int(row, column)?.max(0) as u64)
}

pub(crate) fn uuid(row: &impl Columns, column: &str) -> Result<Uuid> {
    text(row, column)?.parse().map_err(|e| corrupt(column, e))
}

pub(crate) fn opt_uuid(row: &impl Columns, column: &str) -> Result<Option<Uuid>> {
    opt_text(row, column)?
        .map(|id| id.parse().map_err(|e| corrupt(column, e)))
        .transpose()
}

pub(crate) fn layer(row: &impl Columns, column: &str) -> Result<Layer> {
    text(row, column)?
        .parse()
        .map_err(|e: String| corrupt(column, e))
}

pub(crate) fn json<T: serde::de::DeserializeOwned>(row: &impl Columns, column: &str) -> Result<T> {
    serde_json::from_str(&text(row, column)?).map_err(|e| corrupt(column, e))
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("hindsight values serialise to JSON")
}

/// A vector as little-endian f32 bytes.
pub(crate) fn encode_vector(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn decode_vector(bytes: &[u8]) -> Option<Vec<f32>> {
    bytes.len().is_multiple_of(4).then(|| {
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}
