//! [`SqliteRecordStore`]: records, tags, FTS5 and durable vectors in SQLite.

use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};
use uuid::Uuid;

use super::json::{records_as_json, records_from_json};
use super::record_cache::RecordCache;
use super::stored_contents::StoredContents;
use super::{SqliteConfig, SqliteDatabase};
use crate::error::{MemoryError, Result};
use crate::model::{MemoryFilter, MemoryRecord, Scope};
use crate::storage::filter::{
    adjacent_statement, delete_statement, expired_statement, list_statement, select_statement,
    update_statement,
};
use crate::storage::lexical_index::{IndexedText, LexicalIndex};
use crate::storage::rows::{
    self as rows, RECORD_COLUMNS, blob_to_vector, conflict_without_duplicate, list_page, parse_id,
    parse_layer, parse_tags, record, vector_to_blob,
};
use crate::storage::versions;
use crate::storage::{
    Adjacent, Inserted, LexicalHit, ListPage, ListQuery, NewRecord, RecordChange, RecordCounts,
    RecordStore, Selection, StaleRecord, StoredVector, UpdateOutcome,
};
use crate::vector::VectorEntry;

fn failed(context: &'static str) -> impl FnOnce(sqlx::Error) -> MemoryError {
    move |error| MemoryError::storage(context, error)
}

/// Records loaded per page while building the lexical index.
const LOAD_PAGE: i64 = 4096;

/// Records of every tenant in the shared [`SqliteDatabase`], with their lexical index and the
/// fingerprints of their contents held in memory ([`LexicalIndex`], [`StoredContents`]; loaded
/// here at open and updated after each committed write), and the records read recently
/// ([`RecordCache`]; invalidated after each committed change).
pub struct SqliteRecordStore {
    db: SqliteDatabase,
    lexical: LexicalIndex,
    contents: StoredContents,
    cache: RecordCache,
    max_postings: usize,
}

impl SqliteRecordStore {
    pub async fn new(db: SqliteDatabase, config: &SqliteConfig) -> Result<Self> {
        let store = SqliteRecordStore {
            db,
            lexical: LexicalIndex::new(),
            contents: StoredContents::default(),
            cache: RecordCache::new(config.record_cache_bytes),
            max_postings: config.lexical_max_postings,
        };
        store.load_indexes().await?;
        Ok(store)
    }

    /// Indexes every record, page by page: its text in the lexical index, its content in
    /// [`StoredContents`].
    async fn load_indexes(&self) -> Result<()> {
        let started = std::time::Instant::now();
        let mut after = 0i64;
        loop {
            let rows = sqlx::query(
                "SELECT seq, tenant_id, id, layer, scope_id, kind, tags, content, content_hash \
                 FROM memories \
                 WHERE seq > ? ORDER BY seq LIMIT ?",
            )
            .bind(after)
            .bind(LOAD_PAGE)
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("loading the lexical index"))?;
            let Some(last) = rows.last() else { break };
            after = last.get(0);
            for row in &rows {
                let scope = Scope::new(parse_layer(row.get(3))?, row.get::<String, _>(4));
                let tags = parse_tags(row.get(6))?;
                self.contents.insert(row.get(1), &scope, row.get(8));
                self.lexical.upsert(IndexedText {
                    tenant_id: row.get(1),
                    id: parse_id(row.get(2))?,
                    scope: &scope,
                    kind: row.get(5),
                    tags: &tags,
                    content: row.get(7),
                });
            }
        }
        tracing::info!(
            records = self.lexical.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "lexical index loaded"
        );
        Ok(())
    }

    fn index(&self, record: &MemoryRecord) {
        let scope = record.scope();
        self.contents
            .insert(&record.tenant_id, &scope, &record.content_hash);
        self.lexical.upsert(IndexedText::of(record, &scope));
    }

    pub fn database(&self) -> &SqliteDatabase {
        &self.db
    }

    async fn record_by_seq(conn: &mut SqliteConnection, seq: i64) -> Result<MemoryRecord> {
        let sql = format!("SELECT {RECORD_COLUMNS} FROM memories WHERE seq = ?");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(seq)
            .fetch_one(conn)
            .await
            .map_err(failed("reading a memory"))?;
        Ok(record(&row)?.1)
    }

    async fn duplicate_in(
        conn: &mut SqliteConnection,
        tenant_id: &str,
        scope: &Scope,
        content_hash: &str,
    ) -> Result<Option<(i64, MemoryRecord)>> {
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM memories \
             WHERE tenant_id = ? AND layer = ? AND scope_id = ? AND content_hash = ?"
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
}

/// Writes a new memory, its tags and its vector in one command, since every statement is a
/// round trip to the connection's thread and an add is mostly those. The tags and the vector
/// select the row just inserted by its id, so after a duplicate (`DO NOTHING`) they insert
/// nothing and no `seq` comes back. Binds: the 12 columns, id, vector, id.
const INSERT_MEMORY: &str = "INSERT INTO memories (id, tenant_id, layer, scope_id, kind, content, \
     tags, metadata, content_hash, embedder_id, created_at, updated_at, valid_from, version) \
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) \
     ON CONFLICT (tenant_id, layer, scope_id, content_hash) DO NOTHING; \
     INSERT OR IGNORE INTO memory_tags (memory_seq, tenant_id, tag) \
     SELECT seq, tenant_id, tags.value FROM memories, json_each(memories.tags) AS tags \
     WHERE memories.id = ?; \
     INSERT INTO memory_vectors (memory_seq, tenant_id, vector) \
     SELECT seq, tenant_id, ? FROM memories WHERE id = ? RETURNING memory_seq";

/// Rebuilds the tag rows of record `seq` from its `tags` column, as [`INSERT_MEMORY`] writes
/// them. Binds: seq, seq.
const REPLACE_TAGS: &str = "DELETE FROM memory_tags WHERE memory_seq = ?; \
     INSERT OR IGNORE INTO memory_tags (memory_seq, tenant_id, tag) \
     SELECT seq, tenant_id, tags.value FROM memories, json_each(memories.tags) AS tags \
     WHERE memories.seq = ?";

/// `prefix SELECT <every record as one JSON array> … WHERE id IN (ids) AND tenant_id = tenant`.
/// The unary `+` keeps SQLite from answering it through `memories_by_tenant` (a scan of the
/// whole tenant): with bound parameters the planner cannot tell which index is more selective,
/// and picked that one.
fn select_by_ids(prefix: &str, tenant_id: &str, ids: &[Uuid]) -> QueryBuilder<Sqlite> {
    let mut builder = QueryBuilder::<Sqlite>::new(format!(
        "{prefix}SELECT {} FROM memories WHERE +tenant_id = ",
        records_as_json()
    ));
    builder.push_bind(tenant_id.to_string());
    builder.push(" AND id IN (");
    let mut list = builder.separated(", ");
    for id in ids {
        list.push_bind(id.to_string());
    }
    builder.push(")");
    builder
}

#[async_trait::async_trait]
impl RecordStore for SqliteRecordStore {
    async fn insert(&self, records: Vec<NewRecord>) -> Result<Vec<Inserted>> {
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting a write"))?;
        let mut outcomes = Vec::with_capacity(records.len());
        for NewRecord { record, vector } in records {
            let content = record.content.as_deref().unwrap_or_default();
            let id = record.id.to_string();
            let inserted: Vec<i64> = sqlx::query_scalar(INSERT_MEMORY)
                .bind(&id)
                .bind(&record.tenant_id)
                .bind(record.layer.as_str())
                .bind(&record.scope_id)
                .bind(&record.kind)
                .bind(content)
                .bind(serde_json::to_string(&record.tags).expect("tags serialise"))
                .bind(record.metadata.to_string())
                .bind(&record.content_hash)
                .bind(&record.embedder_id)
                .bind(record.created_at)
                .bind(record.updated_at)
                .bind(record.valid_from)
                .bind(i64::from(record.version))
                .bind(&id)
                .bind(vector_to_blob(&vector))
                .bind(&id)
                // All rows, so every statement runs (a row limit would stop after the first).
                .fetch_all(&mut *tx)
                .await
                .map_err(failed("inserting a memory"))?;
            if inserted.is_empty() {
                let (_, existing) = Self::duplicate_in(
                    &mut tx,
                    &record.tenant_id,
                    &record.scope(),
                    &record.content_hash,
                )
                .await?
                .ok_or_else(conflict_without_duplicate)?;
                outcomes.push(Inserted::Existing(existing));
            } else {
                outcomes.push(Inserted::New(record));
            }
        }
        tx.commit().await.map_err(failed("committing memories"))?;
        for outcome in &outcomes {
            if let Inserted::New(record) = outcome {
                self.index(record);
                self.cache.insert_new(record);
            }
        }
        Ok(outcomes)
    }

    async fn find_duplicate(
        &self,
        tenant_id: &str,
        scope: &Scope,
        content_hash: &str,
    ) -> Result<Option<MemoryRecord>> {
        if !self.contents.may_contain(tenant_id, scope, content_hash) {
            return Ok(None);
        }
        let mut conn = self.db.pool.acquire().await.map_err(failed("connecting"))?;
        Ok(
            Self::duplicate_in(&mut conn, tenant_id, scope, content_hash)
                .await?
                .map(|(_, record)| record),
        )
    }

    async fn get(&self, tenant_id: &str, id: Uuid) -> Result<Option<MemoryRecord>> {
        let lookup = self.cache.lookup(tenant_id, &[id]);
        if let Some(cached) = lookup.found.first() {
            return Ok(Some(MemoryRecord::clone(cached)));
        }
        let sql = format!("SELECT {RECORD_COLUMNS} FROM memories WHERE id = ? AND +tenant_id = ?");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(id.to_string())
            .bind(tenant_id)
            .fetch_optional(&self.db.pool)
            .await
            .map_err(failed("reading a memory"))?;
        let found = row
            .map(|row| record(&row))
            .transpose()?
            .map(|(_, record)| record);
        self.cache.fill(found.as_slice(), lookup.epoch);
        Ok(found)
    }

    async fn get_many(&self, tenant_id: &str, ids: &[Uuid]) -> Result<Vec<MemoryRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let lookup = self.cache.lookup(tenant_id, ids);
        let mut records: Vec<MemoryRecord> = lookup
            .found
            .iter()
            .map(|cached| MemoryRecord::clone(cached))
            .collect();
        if lookup.missing.is_empty() {
            return Ok(records);
        }
        let json: String = select_by_ids("", tenant_id, &lookup.missing)
            .build_query_scalar()
            .fetch_one(&self.db.pool)
            .await
            .map_err(failed("reading memories"))?;
        let read = records_from_json(&json)?;
        self.cache.fill(&read, lookup.epoch);
        records.extend(read);
        Ok(records)
    }

    async fn update(
        &self,
        tenant_id: &str,
        id: Uuid,
        change: RecordChange,
    ) -> Result<UpdateOutcome> {
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting a write"))?;
        let found = sqlx::query(
            "SELECT seq, layer, scope_id, content_hash FROM memories WHERE id = ? AND +tenant_id = ?",
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
            versions::close_statement::<Sqlite>(seq, next.valid_from)
                .build()
                .execute(&mut *tx)
                .await
                .map_err(failed("keeping a memory's version"))?;
        }
        update_statement::<Sqlite>(&change, seq)
            .build()
            .execute(&mut *tx)
            .await
            .map_err(failed("updating a memory"))?;

        if change.tags.is_some() {
            sqlx::query(REPLACE_TAGS)
                .bind(seq)
                .bind(seq)
                .execute(&mut *tx)
                .await
                .map_err(failed("writing tags"))?;
        }
        if let Some(content) = &change.content {
            sqlx::query("UPDATE memory_vectors SET vector = ? WHERE memory_seq = ?")
                .bind(vector_to_blob(&content.vector))
                .bind(seq)
                .execute(&mut *tx)
                .await
                .map_err(failed("updating a vector"))?;
        }
        let updated = Self::record_by_seq(&mut tx, seq).await?;
        if let Some(next) = &change.new_version {
            let below = i64::from(updated.version) - next.keep as i64;
            versions::prune_statement::<Sqlite>(tenant_id, id, below)
                .build()
                .execute(&mut *tx)
                .await
                .map_err(failed("pruning a memory's versions"))?;
        }
        // Forgotten whatever the commit's outcome: a failed commit may still have written.
        let committed = tx.commit().await;
        self.cache.invalidate([id]);
        committed.map_err(failed("committing an update"))?;
        if change.content.is_some() {
            self.contents.remove(tenant_id, &scope, found.get(3));
        }
        if change.content.is_some() || change.tags.is_some() {
            self.index(&updated);
        }
        Ok(UpdateOutcome::Updated(Box::new(updated)))
    }

    async fn delete_many(&self, tenant_id: &str, ids: &[Uuid]) -> Result<Vec<MemoryRecord>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting a write"))?;
        let rows = delete_statement::<Sqlite>("+tenant_id", tenant_id, ids)
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
            versions::forget_many_statement::<Sqlite>(tenant_id, &gone)
                .build()
                .execute(&mut *tx)
                .await
                .map_err(failed("deleting memories' versions"))?;
        }
        // Only a delete that found records changed anything: another tenant's delete of the
        // ids neither evicts them nor holds back fills.
        let committed = tx.commit().await;
        if !deleted.is_empty() {
            self.cache
                .invalidate(deleted.iter().map(|record| record.id));
        }
        committed.map_err(failed("committing a delete"))?;
        for record in &deleted {
            self.contents
                .remove(tenant_id, &record.scope(), &record.content_hash);
            self.lexical.remove(tenant_id, record.id);
        }
        Ok(deleted)
    }

    async fn expired(
        &self,
        layer: crate::model::Layer,
        before: crate::model::Timestamp,
        limit: usize,
    ) -> Result<Vec<(String, Uuid)>> {
        let rows: Vec<(String, String)> = expired_statement::<Sqlite>(layer, before, limit)
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
        let ids: Vec<String> = select_statement::<Sqlite>(tenant_id, selection, limit)
            .build_query_scalar()
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("selecting memories"))?;
        ids.iter().map(|id| parse_id(id)).collect()
    }

    async fn versions(&self, tenant_id: &str, id: Uuid, limit: usize) -> Result<Vec<MemoryRecord>> {
        let rows = versions::history_statement::<Sqlite>(tenant_id, id, limit)
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
        let rows = versions::valid_at_statement::<Sqlite>(tenant_id, filter, at, limit)
            .build()
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("reading past versions"))?;
        rows.iter().map(rows::version).collect()
    }

    async fn list(&self, tenant_id: &str, query: &ListQuery) -> Result<ListPage> {
        let rows = list_statement::<Sqlite>(tenant_id, query)
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
            adjacent_statement::<Sqlite>(tenant_id, ids)
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
        Ok(self
            .lexical
            .search(tenant_id, terms, filter, limit, self.max_postings))
    }

    async fn vectors_after(&self, position: i64, limit: usize) -> Result<Vec<StoredVector>> {
        let rows = sqlx::query(
            "SELECT m.seq, m.tenant_id, m.id, m.layer, m.scope_id, m.kind, m.tags, v.vector \
             FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq \
             WHERE m.seq > ? ORDER BY m.seq LIMIT ?",
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
             WHERE seq > ? AND embedder_id <> ? ORDER BY seq LIMIT ?",
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

    async fn replace_vectors(
        &self,
        embedder_id: &str,
        vectors: Vec<(String, Uuid, Vec<f32>)>,
    ) -> Result<()> {
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting a write"))?;
        let ids: Vec<Uuid> = vectors.iter().map(|(_, id, _)| *id).collect();
        for (tenant_id, id, vector) in vectors {
            let seq: Option<i64> = sqlx::query_scalar(
                "UPDATE memories SET embedder_id = ? WHERE id = ? AND +tenant_id = ? RETURNING seq",
            )
            .bind(embedder_id)
            .bind(id.to_string())
            .bind(&tenant_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(failed("re-embedding"))?;
            if let Some(seq) = seq {
                sqlx::query("UPDATE memory_vectors SET vector = ? WHERE memory_seq = ?")
                    .bind(vector_to_blob(&vector))
                    .bind(seq)
                    .execute(&mut *tx)
                    .await
                    .map_err(failed("re-embedding"))?;
            }
        }
        // The records' `embedder_id` changed (or may have, if the commit failed).
        let committed = tx.commit().await;
        self.cache.invalidate(ids);
        committed.map_err(failed("committing re-embedded vectors"))
    }

    async fn meta(&self, key: &str) -> Result<Option<String>> {
        sqlx::query_scalar("SELECT value FROM memory_meta WHERE key = ?")
            .bind(key)
            .fetch_optional(&self.db.pool)
            .await
            .map_err(failed("reading settings"))
    }

    async fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        sqlx::query("INSERT INTO memory_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
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
        "sqlite"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A re-embedding changes records (their `embedder_id`) without going through `update`;
    /// reads of records read before must see it.
    #[tokio::test]
    async fn a_re_embedding_is_seen_by_reads_of_cached_records() {
        let dir = tempfile::tempdir().unwrap();
        let config = SqliteConfig::default();
        let db = SqliteDatabase::open(dir.path(), &config).await.unwrap();
        let store = SqliteRecordStore::new(db, &config).await.unwrap();
        let record = MemoryRecord {
            id: Uuid::now_v7(),
            tenant_id: "acme".into(),
            layer: crate::model::Layer::Project,
            scope_id: "aeterna".into(),
            kind: "memory".into(),
            content: Some("Deploys go through staging first.".into()),
            tags: Vec::new(),
            metadata: serde_json::json!({}),
            content_hash: "hash".into(),
            embedder_id: "old-embedder".into(),
            created_at: 1,
            updated_at: 1,
            valid_from: 1,
            valid_to: None,
            version: 1,
        };
        let vector = vec![1.0, 0.0];
        store
            .insert(vec![NewRecord {
                record: record.clone(),
                vector: vector.clone(),
            }])
            .await
            .unwrap();
        assert_eq!(
            store.get("acme", record.id).await.unwrap(),
            Some(record.clone())
        );

        store
            .replace_vectors("new-embedder", vec![("acme".into(), record.id, vector)])
            .await
            .unwrap();
        let read = store.get("acme", record.id).await.unwrap().unwrap();
        assert_eq!(read.embedder_id, "new-embedder");
        let many = store.get_many("acme", &[record.id]).await.unwrap();
        assert_eq!(many, [read]);
    }

    #[tokio::test]
    async fn lookups_by_id_use_the_id_index_not_a_tenant_scan() {
        let dir = tempfile::tempdir().unwrap();
        let db = SqliteDatabase::open(dir.path(), &SqliteConfig::default())
            .await
            .unwrap();
        // With ten or more ids the planner preferred the tenant index when it could.
        let ids: Vec<Uuid> = (0..20).map(|_| Uuid::now_v7()).collect();
        let plan: Vec<String> = select_by_ids("EXPLAIN QUERY PLAN ", "acme", &ids)
            .build()
            .fetch_all(&db.pool)
            .await
            .unwrap()
            .iter()
            .map(|row| row.get::<String, _>(3))
            .collect();
        assert!(plan.iter().any(|step| step.contains("(id=?)")), "{plan:?}");
        assert!(
            plan.iter().all(|step| !step.contains("memories_by_tenant")),
            "{plan:?}"
        );
    }
}
