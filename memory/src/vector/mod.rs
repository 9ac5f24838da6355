//! Vector similarity search behind the [`VectorStore`] trait.
//!
//! The embedded profile uses [`InMemoryVectorIndex`]: an exact scan over one contiguous
//! `Vec<f32>` per tenant, with an int8 pre-scan and f32 rescoring for large tenants. It is a
//! derived index: the durable copy of every vector lives in the record store, written in the
//! same transaction as its record, and the index is rebuilt from it at start
//! ([`VectorStore::sync_from`]). A crash therefore never loses an acknowledged vector.
//!
//! The scale-out profile may use [`QdrantVectorStore`] instead: one collection shared by every
//! instance, derived from the record store in the same way and repaired from it when the two
//! drift apart ([`VectorStore::repair`]).

mod kernels;
mod memory;
mod qdrant;
mod quant;
mod tenant;
mod topk;

pub use memory::InMemoryVectorIndex;
pub use qdrant::{QdrantConfig, QdrantVectorStore};

use uuid::Uuid;

use crate::error::Result;
use crate::model::{MemoryFilter, Scope};
use crate::storage::RecordStore;

/// A vector and the record attributes that searches filter on.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorEntry {
    pub id: Uuid,
    pub scope: Scope,
    pub kind: String,
    pub tags: Vec<String>,
    /// Unit length, `dimensions` long.
    pub vector: Vec<f32>,
}

/// One vector search result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorHit {
    pub id: Uuid,
    /// Cosine similarity, -1..1.
    pub similarity: f32,
}

/// Refuses a vector whose length is not the store's `dims`; `store` names it in the error.
fn check_dimensions(vector: &[f32], dims: usize, store: &str) -> Result<()> {
    if vector.len() != dims {
        return Err(crate::error::MemoryError::storage(
            "vector index",
            anyhow::anyhow!(
                "a vector has {} dimensions; {store} holds {dims}",
                vector.len()
            ),
        ));
    }
    Ok(())
}

/// What comparing a persistent vector store with the record store found, and fixed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct VectorRepairs {
    /// Durable vectors compared.
    pub checked: u64,
    /// Vectors the store lacked, written.
    pub missing: u64,
    /// Vectors written from an older version of their record, rewritten.
    pub stale: u64,
    /// Vectors whose record is gone, removed.
    pub orphaned: u64,
}

/// Tuning of the in-memory index.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VectorIndexConfig {
    /// A tenant with at least this many vectors also keeps an int8 copy and scans it first
    /// (10 000: from there the f32 scan reads more memory than the int8 scan and the rescoring
    /// together cost); below half of it the copy is dropped again.
    pub quantize_min_rows: usize,
    /// The int8 pre-scan keeps `limit × rescore_factor` candidates (2: the recall test holds
    /// ≥ 0.99 for k of 10 to 400; 8 rescored a third of a 10k tenant for an assembly's 400,
    /// which cost more than the pre-scan itself) ...
    pub rescore_factor: usize,
    /// ... and at least this many (100). The best `max(limit, rescore_min)` of them are
    /// rescored exactly in f32, the rest only while their approximation could still reach the
    /// top `limit` (see `TenantVectors::rescore`).
    pub rescore_min: usize,
    /// Tenants with more vectors than this are scanned on the blocking thread pool rather
    /// than on an async worker (20 000).
    pub blocking_scan_rows: usize,
}

impl Default for VectorIndexConfig {
    fn default() -> Self {
        VectorIndexConfig {
            quantize_min_rows: 10_000,
            rescore_factor: 2,
            rescore_min: 100,
            blocking_scan_rows: 20_000,
        }
    }
}

/// Where vectors are searched. Implementations keep every tenant apart: a search only ever
/// sees the vectors of the tenant it names.
#[async_trait::async_trait]
pub trait VectorStore: Send + Sync {
    /// Brings the index up to date with the durable vectors of `records` (an in-memory index
    /// loads them all; a persistent one may only verify).
    async fn sync_from(&self, records: &dyn RecordStore) -> Result<()>;
    /// Inserts or replaces vectors (after their records were committed).
    async fn upsert(&self, tenant_id: &str, entries: Vec<VectorEntry>) -> Result<()>;
    async fn remove(&self, tenant_id: &str, ids: &[Uuid]) -> Result<()>;
    /// Replaces the tags of a stored vector (its record's tags changed, its content did not).
    async fn retag(&self, tenant_id: &str, id: Uuid, tags: Vec<String>) -> Result<()>;
    /// The `limit` vectors of `tenant_id` most similar to `query` among those `filter`
    /// admits (empty `filter.scopes` admits every scope), best first.
    async fn search(
        &self,
        tenant_id: &str,
        query: &[f32],
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<VectorHit>>;
    /// Cosine similarity of `query` with each of `ids` (`None` for an unknown id).
    async fn similarities(
        &self,
        tenant_id: &str,
        query: &[f32],
        ids: &[Uuid],
    ) -> Result<Vec<Option<f32>>>;
    /// Vectors held, across tenants.
    async fn count(&self) -> Result<u64>;
    /// Persists what only lives in memory, if anything.
    async fn flush(&self) -> Result<()>;
    /// Ok when the store answers.
    async fn ready(&self) -> Result<()>;
    /// What it is, for `/readyz`: `in-memory`, `qdrant`.
    fn backend(&self) -> &'static str;
    /// True when every instance reads and writes this same store, so the writes of other
    /// instances are already in it (false: each process holds its own copy).
    fn shared(&self) -> bool {
        false
    }
    /// Finds and fixes where the store differs from the durable vectors of `records`. Nothing
    /// to do for a copy that [`VectorStore::sync_from`] rebuilds whole.
    async fn repair(&self, _records: &dyn RecordStore) -> Result<VectorRepairs> {
        Ok(VectorRepairs::default())
    }
    /// What [`VectorStore::repair`] fixed since start (`checked` is not counted).
    fn repairs_total(&self) -> VectorRepairs {
        VectorRepairs::default()
    }
}
