//! Row decoding and the on-disk encoding of vectors, shared by the SQL backends (their
//! `memories` tables have the same columns, ids, tags and metadata as text).

use sqlx::{ColumnIndex, Database, Decode, Row, Type};
use uuid::Uuid;

use crate::error::{MemoryError, Result};
use crate::model::{Layer, MemoryRecord};
use crate::storage::ListPage;

/// The columns [`record`] decodes, in order, from `memories` (aliased `m` or not).
pub(crate) const RECORD_COLUMNS: &str = "seq, id, tenant_id, layer, scope_id, kind, content, tags, \
     metadata, content_hash, embedder_id, created_at, updated_at, valid_from, version";

/// [`RECORD_COLUMNS`] without the content, for metadata-only listings.
pub(crate) const RECORD_COLUMNS_NO_CONTENT: &str = "seq, id, tenant_id, layer, scope_id, kind, \
     CAST(NULL AS TEXT) AS content, tags, metadata, content_hash, embedder_id, created_at, updated_at, \
     valid_from, version";

/// The columns [`version`] decodes from `memory_versions`: [`RECORD_COLUMNS`]' shape (the
/// version number in place of the position), then `valid_to` and the vector.
pub(crate) const VERSION_COLUMNS: &str = "version, memory_id, tenant_id, layer, scope_id, kind, \
     content, tags, metadata, content_hash, embedder_id, created_at, updated_at, valid_from, \
     version, valid_to, vector";

pub(crate) fn corrupt(what: &str, error: impl std::fmt::Display) -> MemoryError {
    MemoryError::storage("reading a memory row", anyhow::anyhow!("{what}: {error}"))
}

fn column<'r, R, T>(row: &'r R, index: usize) -> Result<T>
where
    R: Row,
    usize: ColumnIndex<R>,
    T: Decode<'r, R::Database> + Type<R::Database>,
{
    row.try_get(index).map_err(|error| corrupt("column", error))
}

pub(crate) fn parse_id(text: &str) -> Result<Uuid> {
    Uuid::parse_str(text).map_err(|error| corrupt("id", error))
}

pub(crate) fn parse_layer(text: &str) -> Result<Layer> {
    text.parse().map_err(|error| corrupt("layer", error))
}

pub(crate) fn parse_tags(text: &str) -> Result<Vec<String>> {
    if text == "[]" {
        return Ok(Vec::new());
    }
    serde_json::from_str(text).map_err(|error| corrupt("tags", error))
}

/// Decodes a row selected with [`RECORD_COLUMNS`]: (position, record).
pub(crate) fn record<'r, R, DB>(row: &'r R) -> Result<(i64, MemoryRecord)>
where
    R: Row<Database = DB>,
    DB: Database,
    usize: ColumnIndex<R>,
    i64: Decode<'r, DB> + Type<DB>,
    String: Decode<'r, DB> + Type<DB>,
    Option<String>: Decode<'r, DB> + Type<DB>,
{
    let seq: i64 = column(row, 0)?;
    let id: String = column(row, 1)?;
    let layer: String = column(row, 3)?;
    let tags: String = column(row, 7)?;
    let metadata: String = column(row, 8)?;
    let record = MemoryRecord {
        id: parse_id(&id)?,
        tenant_id: column(row, 2)?,
        layer: parse_layer(&layer)?,
        scope_id: column(row, 4)?,
        kind: column(row, 5)?,
        content: column(row, 6)?,
        tags: parse_tags(&tags)?,
        metadata: serde_json::from_str(&metadata).map_err(|error| corrupt("metadata", error))?,
        content_hash: column(row, 9)?,
        embedder_id: column(row, 10)?,
        created_at: column(row, 11)?,
        updated_at: column(row, 12)?,
        valid_from: column(row, 13)?,
        valid_to: None,
        version: version_number(column(row, 14)?)?,
    };
    Ok((seq, record))
}

pub(crate) fn version_number(stored: i64) -> Result<u32> {
    u32::try_from(stored).map_err(|error| corrupt("version", error))
}

/// Decodes a row selected with [`VERSION_COLUMNS`]: a closed version and its vector.
pub(crate) fn version<'r, R, DB>(row: &'r R) -> Result<(MemoryRecord, Vec<f32>)>
where
    R: Row<Database = DB>,
    DB: Database,
    usize: ColumnIndex<R>,
    i64: Decode<'r, DB> + Type<DB>,
    String: Decode<'r, DB> + Type<DB>,
    Option<String>: Decode<'r, DB> + Type<DB>,
    &'r [u8]: Decode<'r, DB> + Type<DB>,
{
    let (_, mut record) = record(row)?;
    record.valid_to = Some(column(row, 15)?);
    let vector = blob_to_vector(column::<R, &[u8]>(row, 16)?)?;
    Ok((record, vector))
}

/// The page of a [`list_statement`](crate::storage::filter::list_statement) query: at most
/// `limit` records, and where the next page starts when the query found one row more.
pub(crate) fn list_page<'r, R, DB>(rows: &'r [R], limit: usize) -> Result<ListPage>
where
    R: Row<Database = DB>,
    DB: Database,
    usize: ColumnIndex<R>,
    i64: Decode<'r, DB> + Type<DB>,
    String: Decode<'r, DB> + Type<DB>,
    Option<String>: Decode<'r, DB> + Type<DB>,
{
    let mut items = Vec::with_capacity(rows.len().min(limit));
    let mut last = None;
    for row in rows.iter().take(limit) {
        let (seq, record) = record(row)?;
        last = Some(seq);
        items.push(record);
    }
    let next = if rows.len() > limit { last } else { None };
    Ok(ListPage { items, next })
}

/// Little-endian f32 components.
pub(crate) fn vector_to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn blob_to_vector(blob: &[u8]) -> Result<Vec<f32>> {
    if !blob.len().is_multiple_of(4) {
        return Err(corrupt(
            "vector",
            format!("{} bytes is not a whole number of f32s", blob.len()),
        ));
    }
    Ok(blob
        .chunks_exact(4)
        .map(|bytes| f32::from_le_bytes(bytes.try_into().expect("4 bytes")))
        .collect())
}

/// An insert that conflicted on content, yet whose duplicate was not found in the same
/// transaction: a bug or a concurrent change the unique index should have prevented.
pub(crate) fn conflict_without_duplicate() -> MemoryError {
    MemoryError::storage(
        "inserting a memory",
        anyhow::anyhow!("the insert conflicted, yet no duplicate content was found"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_through_blobs() {
        let vector = vec![0.25f32, -1.5, f32::MIN_POSITIVE, 0.0];
        assert_eq!(blob_to_vector(&vector_to_blob(&vector)).unwrap(), vector);
        assert!(blob_to_vector(&[0, 1, 2]).is_err());
    }
}

/// An [`crate::storage::Adjacent`] from a row of
/// [`crate::storage::filter::adjacent_statement`].
pub(crate) fn adjacent(
    (id, previous, next): (String, Option<String>, Option<String>),
) -> Result<crate::storage::Adjacent> {
    Ok(crate::storage::Adjacent {
        id: parse_id(&id)?,
        previous: previous.as_deref().map(parse_id).transpose()?,
        next: next.as_deref().map(parse_id).transpose()?,
    })
}
