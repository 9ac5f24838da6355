//! SQLite storage of signatures, resolutions, feedback and promotions, in the database the
//! memory service shares (`migrations/sqlite/0300_hindsight.sql`, `0301_hindsight_examples.sql`). Every statement filters by
//! `tenant_id`; callers pass the tenant explicitly.

pub(crate) mod examples;
pub(crate) mod promotions;
pub(crate) mod resolutions;
pub(crate) mod signatures;

use aeterna_memory::Layer;
use sqlx::Row;
use sqlx::sqlite::SqliteRow;
use uuid::Uuid;

use crate::error::{HindsightError, Result};

pub(crate) fn corrupt(what: &str, error: impl std::fmt::Display) -> HindsightError {
    HindsightError::storage(
        format!("reading {what}"),
        anyhow::anyhow!("corrupt row: {error}"),
    )
}

pub(crate) fn text(row: &SqliteRow, column: &str) -> Result<String> {
    row.try_get::<String, _>(column)
        .map_err(|e| corrupt(column, e))
}

pub(crate) fn opt_text(row: &SqliteRow, column: &str) -> Result<Option<String>> {
    row.try_get::<Option<String>, _>(column)
        .map_err(|e| corrupt(column, e))
}

pub(crate) fn int(row: &SqliteRow, column: &str) -> Result<i64> {
    row.try_get::<i64, _>(column)
        .map_err(|e| corrupt(column, e))
}

pub(crate) fn count(row: &SqliteRow, column: &str) -> Result<u64> {
    Ok(int(row, column)?.max(0) as u64)
}

pub(crate) fn uuid(row: &SqliteRow, column: &str) -> Result<Uuid> {
    text(row, column)?.parse().map_err(|e| corrupt(column, e))
}

pub(crate) fn opt_uuid(row: &SqliteRow, column: &str) -> Result<Option<Uuid>> {
    opt_text(row, column)?
        .map(|id| id.parse().map_err(|e| corrupt(column, e)))
        .transpose()
}

pub(crate) fn layer(row: &SqliteRow, column: &str) -> Result<Layer> {
    text(row, column)?
        .parse()
        .map_err(|e: String| corrupt(column, e))
}

pub(crate) fn json<T: serde::de::DeserializeOwned>(row: &SqliteRow, column: &str) -> Result<T> {
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
