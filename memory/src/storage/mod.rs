//! Durable storage of memory records behind the [`RecordStore`] trait.
//!
//! A record store keeps records, their tags, their lexical index and the durable copy of each
//! record's vector (the [`crate::vector::VectorStore`] is an index derived from it). Every
//! method takes the tenant and filters by it in the query itself; a record of another tenant
//! is indistinguishable from one that does not exist.
//!
//! The embedded profile is [`sqlite::SqliteRecordStore`]; the scale-out profile is
//! [`postgres::PgRecordStore`]. Both share the row decoding ([`rows`]) and filter SQL
//! ([`filter`]).

mod bm25;
mod database;
mod filter;
pub mod lexical_index;
pub mod postgres;
mod rows;
pub mod sqlite;
mod versions;

pub use database::{Columns, Database, Transaction};
use uuid::Uuid;

use crate::error::Result;
use crate::model::{MemoryFilter, MemoryRecord, Scope};
use crate::vector::VectorEntry;

/// A record to insert (content included) and its vector.
#[derive(Debug, Clone)]
pub struct NewRecord {
    pub record: MemoryRecord,
    pub vector: Vec<f32>,
}

/// What an insert did.
#[derive(Debug, Clone, PartialEq)]
pub enum Inserted {
    /// The record was stored.
    New(MemoryRecord),
    /// A record with the same content already existed in that scope; nothing was written.
    Existing(MemoryRecord),
}

/// Changes to one record; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct RecordChange {
    /// New content, its hash and its vector.
    pub content: Option<ContentChange>,
    pub tags: Option<Vec<String>>,
    pub metadata: Option<serde_json::Value>,
    pub updated_at: crate::model::Timestamp,
    /// Keep the current version before changing it (a supersede); `None` rewrites in place.
    pub new_version: Option<NewVersion>,
}

/// A supersede: the current version closes at `valid_from`, where the new one opens.
#[derive(Debug, Clone, Copy)]
pub struct NewVersion {
    pub valid_from: crate::model::Timestamp,
    /// How many closed versions the memory keeps; older ones are deleted.
    pub keep: usize,
}

#[derive(Debug, Clone)]
pub struct ContentChange {
    pub content: String,
    pub content_hash: String,
    pub vector: Vec<f32>,
}

/// Why an update was refused.
#[derive(Debug)]
pub enum UpdateOutcome {
    Updated(Box<MemoryRecord>),
    NotFound,
    /// The new content duplicates the record `existing` in the same scope.
    Duplicate {
        existing: Uuid,
    },
}

/// One page of a listing, newest first.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub filter: MemoryFilter,
    /// Only records older than this position (from a previous page).
    pub before: Option<i64>,
    pub limit: usize,
    pub metadata_only: bool,
}

#[derive(Debug, Clone, Default)]
pub struct ListPage {
    pub items: Vec<MemoryRecord>,
    /// The position to pass as `before` for the next page, when there is one.
    pub next: Option<i64>,
}

/// Which records a forget or a purge deletes, beyond the tenant (always enforced). Every
/// condition given must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// Scopes and kinds (any of each) and tags (all of them); empty scopes mean every scope.
    pub filter: MemoryFilter,
    /// Every scope of these layers (retention: all sessions).
    pub layers: Vec<crate::model::Layer>,
    /// Only these records.
    pub ids: Vec<Uuid>,
    /// Only records last changed before this time (ms since the epoch).
    pub updated_before: Option<crate::model::Timestamp>,
}

/// A lexical match.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LexicalHit {
    pub id: Uuid,
    /// How well the record covers the query terms, 0..1: BM25 divided by the BM25 of a
    /// record of average length that contains each query term once.
    pub relevance: f32,
}

/// The records written just before and after one record in its scope (same layer, scope id
/// and kind): its neighbours in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adjacent {
    pub id: Uuid,
    pub previous: Option<Uuid>,
    pub next: Option<Uuid>,
}

/// A durable vector, with the position to continue paging from.
#[derive(Debug, Clone)]
pub struct StoredVector {
    pub position: i64,
    pub tenant_id: String,
    pub entry: VectorEntry,
}

/// A record whose vector must be recomputed.
#[derive(Debug, Clone)]
pub struct StaleRecord {
    pub position: i64,
    pub tenant_id: String,
    pub id: Uuid,
    pub content: String,
}

/// A record written through the change log (any instance), as it is now: `current` is `None`
/// when it has been deleted since (or was not asked for).
#[derive(Debug, Clone)]
pub struct ChangedRecord {
    pub position: i64,
    pub tenant_id: String,
    pub id: Uuid,
    pub scope: Scope,
    pub current: Option<VectorEntry>,
    /// Made through this store: already applied and announced when it was made.
    pub own: bool,
}

/// Counts for `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordCounts {
    pub records: u64,
    pub vectors: u64,
}

#[async_trait::async_trait]
pub trait RecordStore: Send + Sync {
    /// Stores the records and their vectors in one transaction. A record whose content
    /// already exists in its scope (or earlier in `records`) is not stored: the existing one
    /// is returned instead. Results are in the order of `records`.
    async fn insert(&self, records: Vec<NewRecord>) -> Result<Vec<Inserted>>;

    /// The record of `scope` whose content has `content_hash`, if any.
    async fn find_duplicate(
        &self,
        tenant_id: &str,
        scope: &Scope,
        content_hash: &str,
    ) -> Result<Option<MemoryRecord>>;

    async fn get(&self, tenant_id: &str, id: Uuid) -> Result<Option<MemoryRecord>>;

    /// The records of `ids` that exist in `tenant_id`, in no particular order.
    async fn get_many(&self, tenant_id: &str, ids: &[Uuid]) -> Result<Vec<MemoryRecord>>;

    async fn update(
        &self,
        tenant_id: &str,
        id: Uuid,
        change: RecordChange,
    ) -> Result<UpdateOutcome>;

    /// Deletes a record, its tags, its vector and its past versions; returns what was deleted.
    async fn delete(&self, tenant_id: &str, id: Uuid) -> Result<Option<MemoryRecord>> {
        Ok(self.delete_many(tenant_id, &[id]).await?.pop())
    }

    /// Deletes the records of `ids` that exist in `tenant_id` (with their tags, vectors and
    /// past versions) in one transaction; returns what was deleted (content left out).
    async fn delete_many(&self, tenant_id: &str, ids: &[Uuid]) -> Result<Vec<MemoryRecord>>;

    /// Records of `layer` in every tenant last changed before `before`, oldest first, at most
    /// `limit`: (tenant, id).
    async fn expired(
        &self,
        layer: crate::model::Layer,
        before: crate::model::Timestamp,
        limit: usize,
    ) -> Result<Vec<(String, Uuid)>>;

    /// The ids of the records `selection` matches, oldest first, at most `limit`.
    async fn select(
        &self,
        tenant_id: &str,
        selection: &Selection,
        limit: usize,
    ) -> Result<Vec<Uuid>>;

    /// The closed versions of record `id`, newest first, at most `limit` (each with its
    /// `valid_to`).
    async fn versions(&self, tenant_id: &str, id: Uuid, limit: usize) -> Result<Vec<MemoryRecord>>;

    /// The closed versions in the filter's scopes and kinds that were valid at `at`, with
    /// their vectors, the most recently closed first, at most `limit`. The filter's tags are
    /// left to the caller (a version's tags are its own).
    async fn versions_at(
        &self,
        tenant_id: &str,
        filter: &MemoryFilter,
        at: crate::model::Timestamp,
        limit: usize,
    ) -> Result<Vec<(MemoryRecord, Vec<f32>)>>;

    async fn list(&self, tenant_id: &str, query: &ListQuery) -> Result<ListPage>;

    /// The neighbours of the records of `ids` that exist in `tenant_id`, in no particular
    /// order. A store that keeps no write order answers none.
    async fn adjacent(&self, _tenant_id: &str, _ids: &[Uuid]) -> Result<Vec<Adjacent>> {
        Ok(Vec::new())
    }

    /// The best `limit` lexical matches of any of `terms` (plain words; the store quotes
    /// them for its query language), best first.
    async fn lexical_search(
        &self,
        tenant_id: &str,
        terms: &[String],
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<LexicalHit>>;

    /// Durable vectors of every tenant after `position`, in position order (for loading a
    /// vector index).
    async fn vectors_after(&self, position: i64, limit: usize) -> Result<Vec<StoredVector>>;

    /// Records after `position` whose vector was not made by `embedder_id`, in position order.
    async fn stale_records(
        &self,
        embedder_id: &str,
        position: i64,
        limit: usize,
    ) -> Result<Vec<StaleRecord>>;

    /// Replaces the vectors of records (tenant, id) and marks them as made by `embedder_id`.
    async fn replace_vectors(
        &self,
        embedder_id: &str,
        vectors: Vec<(String, Uuid, Vec<f32>)>,
    ) -> Result<()>;

    async fn meta(&self, key: &str) -> Result<Option<String>>;
    async fn set_meta(&self, key: &str, value: &str) -> Result<()>;

    async fn counts(&self) -> Result<RecordCounts>;

    /// Ok when the store answers.
    async fn ping(&self) -> Result<()>;

    /// What the store is, for `/readyz`: `sqlite` or `postgres`.
    fn backend(&self) -> &'static str;

    /// Whether other processes write to this store too (then the service follows the change
    /// log). The embedded store has one writer, this process, and no change log.
    fn shared(&self) -> bool {
        false
    }

    /// The position of the newest change in the change log (0 when empty).
    async fn change_position(&self) -> Result<i64> {
        Ok(0)
    }

    /// Changes after `position`, in position order, with each record as it is now; `current`
    /// is read only `with_vectors` (a follower whose vector store is shared needs none).
    async fn changes_after(
        &self,
        _position: i64,
        _limit: usize,
        _with_vectors: bool,
    ) -> Result<Vec<ChangedRecord>> {
        Ok(Vec::new())
    }

    /// Forgets changes made before `older_than` (ms since the epoch); returns how many.
    async fn prune_changes(&self, _older_than: i64) -> Result<u64> {
        Ok(0)
    }
}
