//! `hindsight_signatures`: one row per (tenant, scope, fingerprint).

use aeterna_memory::storage::{Columns, Database, Transaction};
use aeterna_memory::{Scope, Timestamp, with_connection, with_pool};
use uuid::Uuid;

use super::{
    corrupt, count, decode_vector, encode_vector, int, json, layer, opt_text, text, to_json, uuid,
};
use crate::error::{Result, failed};
use crate::model::StoredSignature;
use crate::signature::ErrorSignature;

const COLUMNS: &str = "id, layer, scope_id, language, error_type, message_pattern, \
     stack_patterns, context_patterns, fingerprint, embedding, embedder_id, sample, \
     occurrence_count, first_seen_at, last_seen_at";

/// A stored signature with its embedding and the embedder that made it.
pub(crate) struct SignatureRow {
    pub stored: StoredSignature,
    pub embedder_id: Option<String>,
}

fn from_row(row: &impl Columns) -> Result<SignatureRow> {
    let embedding = row
        .opt_bytes("embedding")
        .map_err(|e| corrupt("embedding", e))?;
    let signature = ErrorSignature {
        error_type: text(row, "error_type")?,
        message_pattern: text(row, "message_pattern")?,
        stack_patterns: json(row, "stack_patterns")?,
        context_patterns: json(row, "context_patterns")?,
        language: text(row, "language")?
            .parse()
            .map_err(|e: String| corrupt("language", e))?,
        embedding: embedding.as_deref().and_then(decode_vector),
    };
    Ok(SignatureRow {
        stored: StoredSignature {
            id: uuid(row, "id")?,
            layer: layer(row, "layer")?,
            scope_id: text(row, "scope_id")?,
            signature,
            fingerprint: text(row, "fingerprint")?,
            occurrence_count: count(row, "occurrence_count")?,
            sample: text(row, "sample")?,
            first_seen_at: int(row, "first_seen_at")?,
            last_seen_at: int(row, "last_seen_at")?,
        },
        embedder_id: opt_text(row, "embedder_id")?,
    })
}

/// Every signature of a tenant, for its in-memory index.
pub(crate) async fn load_tenant(db: &Database, tenant_id: &str) -> Result<Vec<SignatureRow>> {
    let sql = format!("SELECT {COLUMNS} FROM hindsight_signatures WHERE tenant_id = $1");
    with_pool!(db, |pool| {
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(tenant_id)
            .fetch_all(pool)
            .await
            .map_err(failed("loading signatures"))?;
        rows.iter().map(from_row).collect()
    })
}

pub(crate) async fn get(
    tx: &mut Transaction,
    tenant_id: &str,
    id: Uuid,
) -> Result<Option<SignatureRow>> {
    let sql =
        format!("SELECT {COLUMNS} FROM hindsight_signatures WHERE tenant_id = $1 AND id = $2");
    with_connection!(tx, |conn| {
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(tenant_id)
            .bind(id.to_string())
            .fetch_optional(conn)
            .await
            .map_err(failed("reading a signature"))?;
        row.as_ref().map(from_row).transpose()
    })
}

/// A new signature to store.
pub(crate) struct NewSignature<'a> {
    pub id: Uuid,
    pub scope: &'a Scope,
    pub signature: &'a ErrorSignature,
    pub fingerprint: &'a str,
    pub embedder_id: Option<&'a str>,
    pub sample: &'a str,
    pub now: Timestamp,
}

/// Inserts the signature, or counts one more occurrence of the row with the same fingerprint
/// in that scope. Returns the stored row.
pub(crate) async fn insert_or_count(
    tx: &mut Transaction,
    tenant_id: &str,
    new: NewSignature<'_>,
) -> Result<SignatureRow> {
    let sql = format!(
        "INSERT INTO hindsight_signatures (tenant_id, {COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 1, $14, $15) \
         ON CONFLICT (tenant_id, layer, scope_id, fingerprint) DO UPDATE SET \
             occurrence_count = hindsight_signatures.occurrence_count + 1, \
             last_seen_at = excluded.last_seen_at \
         RETURNING {COLUMNS}"
    );
    let signature = new.signature;
    with_connection!(tx, |conn| {
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(tenant_id)
            .bind(new.id.to_string())
            .bind(new.scope.layer.as_str())
            .bind(&new.scope.scope_id)
            .bind(signature.language.as_str())
            .bind(&signature.error_type)
            .bind(&signature.message_pattern)
            .bind(to_json(&signature.stack_patterns))
            .bind(to_json(&signature.context_patterns))
            .bind(new.fingerprint)
            .bind(signature.embedding.as_deref().map(encode_vector))
            .bind(new.embedder_id)
            .bind(new.sample)
            .bind(new.now)
            .bind(new.now)
            .fetch_one(conn)
            .await
            .map_err(failed("storing a signature"))?;
        from_row(&row)
    })
}

/// Counts one more occurrence of an existing signature and widens its context.
pub(crate) async fn count_occurrence(
    tx: &mut Transaction,
    tenant_id: &str,
    id: Uuid,
    stack_patterns: &[String],
    context_patterns: &[String],
    now: Timestamp,
) -> Result<SignatureRow> {
    let sql = format!(
        "UPDATE hindsight_signatures SET occurrence_count = occurrence_count + 1, \
             last_seen_at = $1, stack_patterns = $2, context_patterns = $3 \
         WHERE tenant_id = $4 AND id = $5 RETURNING {COLUMNS}"
    );
    with_connection!(tx, |conn| {
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(now)
            .bind(to_json(&stack_patterns))
            .bind(to_json(&context_patterns))
            .bind(tenant_id)
            .bind(id.to_string())
            .fetch_one(conn)
            .await
            .map_err(failed("counting an occurrence"))?;
        from_row(&row)
    })
}

/// Copies `signature` into `scope` with its occurrence count (a promotion or a resolution in a
/// broader layer), or returns the row already there with the same fingerprint.
pub(crate) async fn copy_to_scope(
    tx: &mut Transaction,
    tenant_id: &str,
    signature: &StoredSignature,
    scope: &Scope,
) -> Result<SignatureRow> {
    // `CASE` rather than SQLite's two-argument `max` / PostgreSQL's `GREATEST`: both run it.
    let sql = format!(
        "INSERT INTO hindsight_signatures (tenant_id, {COLUMNS}) \
         SELECT tenant_id, $1, $2, $3, language, error_type, message_pattern, stack_patterns, \
             context_patterns, fingerprint, embedding, embedder_id, sample, occurrence_count, \
             first_seen_at, last_seen_at \
         FROM hindsight_signatures WHERE tenant_id = $4 AND id = $5 \
         ON CONFLICT (tenant_id, layer, scope_id, fingerprint) DO UPDATE SET \
             occurrence_count = CASE \
                 WHEN excluded.occurrence_count > hindsight_signatures.occurrence_count \
                 THEN excluded.occurrence_count ELSE hindsight_signatures.occurrence_count END \
         RETURNING {COLUMNS}"
    );
    with_connection!(tx, |conn| {
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(Uuid::now_v7().to_string())
            .bind(scope.layer.as_str())
            .bind(&scope.scope_id)
            .bind(tenant_id)
            .bind(signature.id.to_string())
            .fetch_one(conn)
            .await
            .map_err(failed("copying a signature"))?;
        from_row(&row)
    })
}
