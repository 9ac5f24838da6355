//! [`PgRecordStore`]: records, tags, versions and durable vectors in PostgreSQL, with the
//! change log that keeps every instance's vector index current; lexical search is in
//! [`super::lexical`].

use std::collections::HashMap;

use sqlx::{PgConnection, Postgres, Row};
use uuid::Uuid;

use super::{PgDatabase, PostgresConfig};
use crate::error::{MemoryError, Result};
use crate::model::{MemoryFilter, MemoryRecord, Scope, now_millis};
use crate::storage::filter::{
    adjacent_statement, delete_statement, expired_statement, list_statement, select_statement,
    update_statement,
};
use crate::storage::rows::{
    self as rows, RECORD_COLUMNS, blob_to_vector, conflict_without_duplicate, list_page, parse_id,
    parse_layer, parse_tags, record, vector_to_blob,
};
use crate::storage::versions;
use crate::storage::{
    Adjacent, ChangedRecord, Inserted, LexicalHit, ListPage, ListQuery, NewRecord, RecordChange,
    RecordCounts, RecordStore, Selection, StaleRecord, StoredVector, UpdateOutcome,
};
use crate::vector::VectorEntry;

pub(super) fn failed(context: &'static str) -> impl FnOnce(sqlx::Error) -> MemoryError {
    move |error| MemoryError::storage(context, error)
}

/// The transaction-scoped advisory lock every write takes just before appending to
/// `memory_changes`, and holds to commit: positions are then assigned and committed in one
/// order, so a reader that has seen position P has seen every change before it. Taken last,
/// so the writes of several instances run side by side up to there (migration 0005).
const CHANGE_LOG_LOCK: i64 = 0x6165_7465_726e_6101; // "aeterna" 1

/// Records of every tenant in PostgreSQL.
pub struct PgRecordStore {
    db: PgDatabase,
    lexical_max_rows: usize,
    /// Marks this store's rows in `memory_changes`, so following the log skips them.
    origin: String,
}

type Tx = sqlx::Transaction<'static, Postgres>;

impl PgRecordStore {
    pub fn new(db: PgDatabase, config: &PostgresConfig) -> Self {
        PgRecordStore {
            db,
            lexical_max_rows: config.lexical_max_rows.max(1),
            origin: Uuid::now_v7().to_string(),
        }
    }

    /// Starts a write; it ends with [`log_changes`](Self::log_changes) and a commit.
    async fn begin_write(&self) -> Result<Tx> {
        self.db
            .pool
            .begin()
            .await
            .map_err(failed("starting a write"))
    }

    /// Appends the changes of `records` to the log: the last step of a write, under the
    /// change-log lock, which the commit right after releases.
    async fn log_changes(&self, tx: &mut Tx, records: &[&MemoryRecord]) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(CHANGE_LOG_LOCK)
            .execute(&mut **tx)
            .await
            .map_err(failed("recording a change"))?;
        let column = |field: fn(&MemoryRecord) -> String| -> Vec<String> {
            records.iter().map(|record| field(record)).collect()
        };
        sqlx::query(
            "INSERT INTO memory_changes (tenant_id, memory_id, layer, scope_id, at, origin) \
             SELECT tenant_id, memory_id, layer, scope_id, $5, $6 \
             FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[]) \
                 AS c (tenant_id, memory_id, layer, scope_id)",
        )
        .bind(column(|record| record.tenant_id.clone()))
        .bind(column(|record| record.id.to_string()))
        .bind(column(|record| record.layer.as_str().to_owned()))
        .bind(column(|record| record.scope_id.clone()))
        .bind(now_millis())
        .bind(&self.origin)
        .execute(&mut **tx)
        .await
        .map_err(failed("recording a change"))?;
        Ok(())
    }

    async fn record_by_seq(conn: &mut PgConnection, seq: i64) -> Result<MemoryRecord> {
        let sql = format!("SELECT {RECORD_COLUMNS} FROM memories WHERE seq = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(seq)
            .fetch_one(conn)
            .await
            .map_err(failed("reading a memory"))?;
        Ok(record(&row)?.1)
    }

    async fn duplicate_in(
        conn: &mut PgConnection,
        tenant_id: &str,
        scope: &Scope,
        content_hash: &str,
    ) -> Result<Option<(i64, MemoryRecord)>> {
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM memories \
             WHERE tenant_id = $1 AND layer = $2 AND scope_id = $3 AND content_hash = $4"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(tenant_id)
            .bind(scope.layer.as_str())
            .bind(&scope.scope_id)
            .bind(content_hash)
            .fetch_optional(conn)
            .await
            .map_err(failed("looking up duplicate content"))?;
        row.map(|row| record(&row)).transpose()
    }

    /// Adds the tags of each record (its `seq`, tenant and tags) in one statement.
    async fn insert_tags(
        conn: &mut PgConnection,
        records: &[(i64, &str, &[String])],
    ) -> Result<()> {
        let count: usize = records.iter().map(|(_, _, tags)| tags.len()).sum();
        if count == 0 {
            return Ok(());
        }
        let (mut seqs, mut tenants, mut tags) = (
            Vec::with_capacity(count),
            Vec::with_capacity(count),
            Vec::with_capacity(count),
        );
        for (seq, tenant_id, record_tags) in records {
            for tag in *record_tags {
                seqs.push(*seq);
                tenants.push(*tenant_id);
                tags.push(tag.as_str());
            }
        }
        sqlx::query(
            "INSERT INTO memory_tags (memory_seq, tenant_id, tag) \
             SELECT * FROM unnest($1::BIGINT[], $2::TEXT[], $3::TEXT[]) ON CONFLICT DO NOTHING",
        )
        .bind(seqs)
        .bind(tenants)
        .bind(tags)
        .execute(conn)
        .await
        .map_err(failed("writing tags"))?;
        Ok(())
    }

    /// Replaces the tags of record `seq`.
    async fn replace_tags(
        conn: &mut PgConnection,
        seq: i64,
        tenant_id: &str,
        tags: &[String],
    ) -> Result<()> {
        sqlx::query("DELETE FROM memory_tags WHERE memory_seq = $1")
            .bind(seq)
            .execute(&mut *conn)
            .await
            .map_err(failed("writing tags"))?;
        Self::insert_tags(conn, &[(seq, tenant_id, tags)]).await
    }
}

#[async_trait::async_trait]
impl RecordStore for PgRecordStore {
    /// One statement per table for the whole group. Rows go in in (tenant, scope, content)
    /// order, so two instances inserting the same contents wait for each other on the unique
    /// index in one order instead of deadlocking.
    async fn insert(&self, records: Vec<NewRecord>) -> Result<Vec<Inserted>> {
        let mut order: Vec<usize> = (0..records.len()).collect();
        order.sort_by(|&a, &b| {
            let key = |i: usize| {
                let record = &records[i].record;
                (
                    &record.tenant_id,
                    record.layer.as_str(),
                    &record.scope_id,
                    &record.content_hash,
                )
            };
            key(a).cmp(&key(b))
        });
        let column = |field: fn(&MemoryRecord) -> String| -> Vec<String> {
            order.iter().map(|&i| field(&records[i].record)).collect()
        };
        let timestamps = |field: fn(&MemoryRecord) -> i64| -> Vec<i64> {
            order.iter().map(|&i| field(&records[i].record)).collect()
        };
        let mut tx = self.begin_write().await?;
        let rows = sqlx::query(
            "INSERT INTO memories (id, tenant_id, layer, scope_id, kind, content, tags, metadata, \
             content_hash, embedder_id, created_at, updated_at, valid_from, version) \
             SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[], \
                 $6::TEXT[], $7::TEXT[], $8::TEXT[], $9::TEXT[], $10::TEXT[], $11::BIGINT[], \
                 $12::BIGINT[], $13::BIGINT[], $14::BIGINT[]) \
             ON CONFLICT (tenant_id, layer, scope_id, content_hash) DO NOTHING RETURNING id, seq",
        )
        .bind(column(|record| record.id.to_string()))
        .bind(column(|record| record.tenant_id.clone()))
        .bind(column(|record| record.layer.as_str().to_owned()))
        .bind(column(|record| record.scope_id.clone()))
        .bind(column(|record| record.kind.clone()))
        .bind(column(|record| record.content.clone().unwrap_or_default()))
        .bind(column(|record| {
            serde_json::to_string(&record.tags).expect("tags serialise")
        }))
        .bind(column(|record| record.metadata.to_string()))
        .bind(column(|record| record.content_hash.clone()))
        .bind(column(|record| record.embedder_id.clone()))
        .bind(timestamps(|record| record.created_at))
        .bind(timestamps(|record| record.updated_at))
        .bind(timestamps(|record| record.valid_from))
        .bind(timestamps(|record| i64::from(record.version)))
        .fetch_all(&mut *tx)
        .await
        .map_err(failed("inserting memories"))?;
        let mut seqs: HashMap<Uuid, i64> = HashMap::with_capacity(rows.len());
        for row in &rows {
            seqs.insert(parse_id(row.get::<&str, _>(0))?, row.get(1));
        }

        let fresh: Vec<(i64, &NewRecord)> = records
            .iter()
            .filter_map(|new| Some((*seqs.get(&new.record.id)?, new)))
            .collect();
        let tags: Vec<(i64, &str, &[String])> = fresh
            .iter()
            .map(|(seq, new)| {
                (
                    *seq,
                    new.record.tenant_id.as_str(),
                    new.record.tags.as_slice(),
                )
            })
            .collect();
        Self::insert_tags(&mut tx, &tags).await?;
        if !fresh.is_empty() {
            sqlx::query(
                "INSERT INTO memory_vectors (memory_seq, tenant_id, vector) \
                 SELECT * FROM unnest($1::BIGINT[], $2::TEXT[], $3::BYTEA[])",
            )
            .bind(fresh.iter().map(|(seq, _)| *seq).collect::<Vec<i64>>())
            .bind(
                fresh
                    .iter()
                    .map(|(_, new)| new.record.tenant_id.as_str())
                    .collect::<Vec<&str>>(),
            )
            .bind(
                fresh
                    .iter()
                    .map(|(_, new)| vector_to_blob(&new.vector))
                    .collect::<Vec<Vec<u8>>>(),
            )
            .execute(&mut *tx)
            .await
            .map_err(failed("inserting vectors"))?;
        }

        let mut outcomes = Vec::with_capacity(records.len());
        for NewRecord { record, .. } in records {
            if seqs.contains_key(&record.id) {
                outcomes.push(Inserted::New(record));
                continue;
            }
            let scope = record.scope();
            let duplicate =
                Self::duplicate_in(&mut tx, &record.tenant_id, &scope, &record.content_hash);
            let (_, existing) = duplicate.await?.ok_or_else(conflict_without_duplicate)?;
            outcomes.push(Inserted::Existing(existing));
        }
        let logged: Vec<&MemoryRecord> = outcomes
            .iter()
            .filter_map(|outcome| match outcome {
                Inserted::New(record) => Some(record),
                Inserted::Existing(_) => None,
            })
            .collect();
        self.log_changes(&mut tx, &logged).await?;
        tx.commit().await.map_err(failed("committing memories"))?;
        Ok(outcomes)
    }

    async fn find_duplicate(
        &self,
        tenant_id: &str,
        scope: &Scope,
        content_hash: &str,
    ) -> Result<Option<MemoryRecord>> {
        let mut conn = self.db.pool.acquire().await.map_err(failed("connecting"))?;
        Ok(
            Self::duplicate_in(&mut conn, tenant_id, scope, content_hash)
                .await?
                .map(|(_, record)| record),
        )
    }

    async fn get(&self, tenant_id: &str, id: Uuid) -> Result<Option<MemoryRecord>> {
        let sql = format!("SELECT {RECORD_COLUMNS} FROM memories WHERE id = $1 AND tenant_id = $2");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.to_string())
            .bind(tenant_id)
            .fetch_optional(&self.db.pool)
            .await
            .map_err(failed("reading a memory"))?;
        Ok(row
            .map(|row| record(&row))
            .transpose()?
            .map(|(_, record)| record))
    }

    async fn get_many(&self, tenant_id: &str, ids: &[Uuid]) -> Result<Vec<MemoryRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        let sql =
            format!("SELECT {RECORD_COLUMNS} FROM memories WHERE id = ANY($1) AND tenant_id = $2");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&ids)
            .bind(tenant_id)
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("reading memories"))?;
        rows.iter()
            .map(|row| record(row).map(|(_, record)| record))
            .collect()
    }

    async fn update(
        &self,
        tenant_id: &str,
        id: Uuid,
        change: RecordChange,
    ) -> Result<UpdateOutcome> {
        let mut tx = self.begin_write().await?;
        let found = sqlx::query(
            "SELECT seq, layer, scope_id FROM memories WHERE id = $1 AND tenant_id = $2 FOR UPDATE",
        )
        .bind(id.to_string())
        .bind(tenant_id)
        .fetch_optional(&mut *tx)
        .await
        .map_err(failed("reading a memory"))?;
        let Some(found) = found else {
            return Ok(UpdateOutcome::NotFound);
        };
        let seq: i64 = found.get(0);
        let scope = Scope::new(parse_layer(found.get(1))?, found.get::<String, _>(2));

        if let Some(content) = &change.content
            && let Some((other, existing)) =
                Self::duplicate_in(&mut tx, tenant_id, &scope, &content.content_hash).await?
            && other != seq
        {
            return Ok(UpdateOutcome::Duplicate {
                existing: existing.id,
            });
        }
        if let Some(next) = &change.new_version {
            versions::close_statement::<Postgres>(seq, next.valid_from)
                .build()
                .execute(&mut *tx)
                .await
                .map_err(failed("keeping a memory's version"))?;
        }
        update_statement::<Postgres>(&change, seq)
            .build()
            .execute(&mut *tx)
            .await
            .map_err(failed("updating a memory"))?;
        if let Some(tags) = &change.tags {
            Self::replace_tags(&mut tx, seq, tenant_id, tags).await?;
        }
        if let Some(content) = &change.content {
            sqlx::query("UPDATE memory_vectors SET vector = $1 WHERE memory_seq = $2")
                .bind(vector_to_blob(&content.vector))
                .bind(seq)
                .execute(&mut *tx)
                .await
                .map_err(failed("updating a vector"))?;
        }
        let updated = Self::record_by_seq(&mut tx, seq).await?;
        if let Some(next) = &change.new_version {
            let below = i64::from(updated.version) - next.keep as i64;
            versions::prune_statement::<Postgres>(tenant_id, id, below)
                .build()
                .execute(&mut *tx)
                .await
                .map_err(failed("pruning a memory's versions"))?;
        }
        self.log_changes(&mut tx, &[&updated]).await?;
        tx.commit().await.map_err(failed("committing an update"))?;
        Ok(UpdateOutcome::Updated(Box::new(updated)))
    }

    async fn delete_many(&self, tenant_id: &str, ids: &[Uuid]) -> Result<Vec<MemoryRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut tx = self.begin_write().await?;
        let rows = delete_statement::<Postgres>("tenant_id", tenant_id, ids)
            .build()
            .fetch_all(&mut *tx)
            .await
            .map_err(failed("deleting memories"))?;
        let deleted = rows
            .iter()
            .map(|row| record(row).map(|(_, record)| record))
            .collect::<Result<Vec<_>>>()?;
        if !deleted.is_empty() {
            let gone: Vec<Uuid> = deleted.iter().map(|record| record.id).collect();
            versions::forget_many_statement::<Postgres>(tenant_id, &gone)
                .build()
                .execute(&mut *tx)
                .await
                .map_err(failed("deleting memories' versions"))?;
            let logged: Vec<&MemoryRecord> = deleted.iter().collect();
            self.log_changes(&mut tx, &logged).await?;
        }
        tx.commit().await.map_err(failed("committing a delete"))?;
        Ok(deleted)
    }

    async fn expired(
        &self,
        layer: crate::model::Layer,
        before: crate::model::Timestamp,
        limit: usize,
    ) -> Result<Vec<(String, Uuid)>> {
        let rows: Vec<(String, String)> = expired_statement::<Postgres>(layer, before, limit)
            .build_query_as()
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("selecting expired memories"))?;
        rows.into_iter()
            .map(|(tenant_id, id)| Ok((tenant_id, parse_id(&id)?)))
            .collect()
    }

    async fn select(
        &self,
        tenant_id: &str,
        selection: &Selection,
        limit: usize,
    ) -> Result<Vec<Uuid>> {
        let ids: Vec<String> = select_statement::<Postgres>(tenant_id, selection, limit)
            .build_query_scalar()
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("selecting memories"))?;
        ids.iter().map(|id| parse_id(id)).collect()
    }

    async fn versions(&self, tenant_id: &str, id: Uuid, limit: usize) -> Result<Vec<MemoryRecord>> {
        let rows = versions::history_statement::<Postgres>(tenant_id, id, limit)
            .build()
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("reading a memory's versions"))?;
        rows.iter()
            .map(|row| rows::version(row).map(|(record, _)| record))
            .collect()
    }

    async fn versions_at(
        &self,
        tenant_id: &str,
        filter: &MemoryFilter,
        at: crate::model::Timestamp,
        limit: usize,
    ) -> Result<Vec<(MemoryRecord, Vec<f32>)>> {
        let rows = versions::valid_at_statement::<Postgres>(tenant_id, filter, at, limit)
            .build()
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("reading past versions"))?;
        rows.iter().map(rows::version).collect()
    }

    async fn list(&self, tenant_id: &str, query: &ListQuery) -> Result<ListPage> {
        let rows = list_statement::<Postgres>(tenant_id, query)
            .build()
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("listing memories"))?;
        list_page(&rows, query.limit)
    }

    async fn adjacent(&self, tenant_id: &str, ids: &[Uuid]) -> Result<Vec<Adjacent>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows: Vec<(String, Option<String>, Option<String>)> =
            adjacent_statement::<Postgres>(tenant_id, ids)
                .build_query_as()
                .fetch_all(&self.db.pool)
                .await
                .map_err(failed("reading neighbouring memories"))?;
        rows.into_iter().map(rows::adjacent).collect()
    }

    async fn lexical_search(
        &self,
        tenant_id: &str,
        terms: &[String],
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<LexicalHit>> {
        super::lexical::search(
            &self.db,
            self.lexical_max_rows,
            tenant_id,
            terms,
            filter,
            limit,
        )
        .await
    }

    async fn vectors_after(&self, position: i64, limit: usize) -> Result<Vec<StoredVector>> {
        let rows = sqlx::query(
            "SELECT m.seq, m.tenant_id, m.id, m.layer, m.scope_id, m.kind, m.tags, v.vector \
             FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq \
             WHERE m.seq > $1 ORDER BY m.seq LIMIT $2",
        )
        .bind(position)
        .bind(limit as i64)
        .fetch_all(&self.db.pool)
        .await
        .map_err(failed("loading vectors"))?;
        rows.iter()
            .map(|row| {
                let layer = parse_layer(row.get::<&str, _>(3))?;
                Ok(StoredVector {
                    position: row.get(0),
                    tenant_id: row.get(1),
                    entry: VectorEntry {
                        id: parse_id(row.get::<&str, _>(2))?,
                        scope: Scope::new(layer, row.get::<String, _>(4)),
                        kind: row.get(5),
                        tags: parse_tags(row.get::<&str, _>(6))?,
                        vector: blob_to_vector(row.get::<&[u8], _>(7))?,
                    },
                })
            })
            .collect()
    }

    async fn stale_records(
        &self,
        embedder_id: &str,
        position: i64,
        limit: usize,
    ) -> Result<Vec<StaleRecord>> {
        let rows = sqlx::query(
            "SELECT seq, tenant_id, id, content FROM memories \
             WHERE seq > $1 AND embedder_id <> $2 ORDER BY seq LIMIT $3",
        )
        .bind(position)
        .bind(embedder_id)
        .bind(limit as i64)
        .fetch_all(&self.db.pool)
        .await
        .map_err(failed("finding memories to re-embed"))?;
        rows.iter()
            .map(|row| {
                Ok(StaleRecord {
                    position: row.get(0),
                    tenant_id: row.get(1),
                    id: parse_id(row.get(2))?,
                    content: row.get(3),
                })
            })
            .collect()
    }

    /// Records are updated in (tenant, id) order, as any other write taking several of
    /// their row locks would, so concurrent re-embeddings cannot deadlock.
    async fn replace_vectors(
        &self,
        embedder_id: &str,
        mut vectors: Vec<(String, Uuid, Vec<f32>)>,
    ) -> Result<()> {
        vectors.sort_by(|(tenant_a, id_a, _), (tenant_b, id_b, _)| {
            (tenant_a, id_a).cmp(&(tenant_b, id_b))
        });
        let mut tx = self.begin_write().await?;
        let mut changed = Vec::with_capacity(vectors.len());
        for (tenant_id, id, vector) in vectors {
            let seq: Option<i64> = sqlx::query_scalar(
                "UPDATE memories SET embedder_id = $1 WHERE id = $2 AND tenant_id = $3 RETURNING seq",
            )
            .bind(embedder_id)
            .bind(id.to_string())
            .bind(&tenant_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(failed("re-embedding"))?;
            if let Some(seq) = seq {
                sqlx::query("UPDATE memory_vectors SET vector = $1 WHERE memory_seq = $2")
                    .bind(vector_to_blob(&vector))
                    .bind(seq)
                    .execute(&mut *tx)
                    .await
                    .map_err(failed("re-embedding"))?;
                changed.push(Self::record_by_seq(&mut tx, seq).await?);
            }
        }
        self.log_changes(&mut tx, &changed.iter().collect::<Vec<_>>())
            .await?;
        tx.commit()
            .await
            .map_err(failed("committing re-embedded vectors"))
    }

    async fn meta(&self, key: &str) -> Result<Option<String>> {
        sqlx::query_scalar("SELECT value FROM memory_meta WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.db.pool)
            .await
            .map_err(failed("reading settings"))
    }

    async fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO memory_meta (key, value) VALUES ($1, $2) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(key)
        .bind(value)
        .execute(&self.db.pool)
        .await
        .map_err(failed("writing settings"))?;
        Ok(())
    }

    async fn counts(&self) -> Result<RecordCounts> {
        let row = sqlx::query(
            "SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM memory_vectors)",
        )
        .fetch_one(&self.db.pool)
        .await
        .map_err(failed("counting memories"))?;
        Ok(RecordCounts {
            records: row.get::<i64, _>(0) as u64,
            vectors: row.get::<i64, _>(1) as u64,
        })
    }

    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1")
            .execute(&self.db.pool)
            .await
            .map_err(failed("checking the database"))?;
        Ok(())
    }

    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn shared(&self) -> bool {
        true
    }

    async fn change_position(&self) -> Result<i64> {
        sqlx::query_scalar("SELECT COALESCE(max(position), 0) FROM memory_changes")
            .fetch_one(&self.db.pool)
            .await
            .map_err(failed("reading the change log"))
    }

    async fn changes_after(
        &self,
        position: i64,
        limit: usize,
        with_vectors: bool,
    ) -> Result<Vec<ChangedRecord>> {
        let rows = sqlx::query(
            "SELECT c.position, c.tenant_id, c.memory_id, c.layer, c.scope_id, m.kind, m.tags, \
             v.vector, c.origin IS NOT DISTINCT FROM $3 FROM memory_changes c \
             LEFT JOIN memories m ON m.id = c.memory_id AND m.tenant_id = c.tenant_id \
                 AND c.origin IS DISTINCT FROM $3 AND $4 \
             LEFT JOIN memory_vectors v ON v.memory_seq = m.seq \
             WHERE c.position > $1 ORDER BY c.position LIMIT $2",
        )
        .bind(position)
        .bind(limit as i64)
        .bind(&self.origin)
        .bind(with_vectors)
        .fetch_all(&self.db.pool)
        .await
        .map_err(failed("reading the change log"))?;
        rows.iter()
            .map(|row| {
                let id = parse_id(row.get::<&str, _>(2))?;
                let scope =
                    Scope::new(parse_layer(row.get::<&str, _>(3))?, row.get::<String, _>(4));
                let kind: Option<String> = row.get(5);
                let tags: Option<&str> = row.get(6);
                let vector: Option<&[u8]> = row.get(7);
                let current = match (kind, tags, vector) {
                    (Some(kind), Some(tags), Some(vector)) => Some(VectorEntry {
                        id,
                        scope: scope.clone(),
                        kind,
                        tags: parse_tags(tags)?,
                        vector: blob_to_vector(vector)?,
                    }),
                    _ => None,
                };
                Ok(ChangedRecord {
                    position: row.get(0),
                    tenant_id: row.get(1),
                    id,
                    scope,
                    current,
                    own: row.get(8),
                })
            })
            .collect()
    }

    async fn prune_changes(&self, older_than: i64) -> Result<u64> {
        let done = sqlx::query("DELETE FROM memory_changes WHERE at < $1")
            .bind(older_than)
            .execute(&self.db.pool)
            .await
            .map_err(failed("pruning the change log"))?;
        Ok(done.rows_affected())
    }
}
