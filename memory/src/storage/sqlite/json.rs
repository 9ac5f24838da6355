//! Many records in one SQLite row: sqlx hands each result row over from the connection's
//! thread on its own (a thread wake-up each), which cost more than reading the rows.

use crate::error::Result;
use crate::model::MemoryRecord;
use crate::storage::rows::{
    RECORD_COLUMNS, corrupt, parse_id, parse_layer, parse_tags, version_number,
};

/// One row holding every selected record as a JSON array of [`RECORD_COLUMNS`] arrays.
pub(super) fn records_as_json() -> String {
    format!("json_group_array(json_array({RECORD_COLUMNS}))")
}

type JsonRecord = (
    i64,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
    i64,
    i64,
);

/// Decodes what [`records_as_json`] selected.
pub(super) fn records_from_json(text: &str) -> Result<Vec<MemoryRecord>> {
    let rows: Vec<JsonRecord> =
        serde_json::from_str(text).map_err(|error| corrupt("records", error))?;
    rows.into_iter()
        .map(
            |(
                _seq,
                id,
                tenant_id,
                layer,
                scope_id,
                kind,
                content,
                tags,
                metadata,
                content_hash,
                embedder_id,
                created_at,
                updated_at,
                valid_from,
                version,
            )| {
                Ok(MemoryRecord {
                    id: parse_id(&id)?,
                    tenant_id,
                    layer: parse_layer(&layer)?,
                    scope_id,
                    kind,
                    content: Some(content),
                    tags: parse_tags(&tags)?,
                    metadata: serde_json::from_str(&metadata)
                        .map_err(|error| corrupt("metadata", error))?,
                    content_hash,
                    embedder_id,
                    created_at,
                    updated_at,
                    valid_from,
                    valid_to: None,
                    version: version_number(version)?,
                })
            },
        )
        .collect()
}
