//! [`MemoryService`]: the one entry point the agents and transports use.
//!
//! Validation, limits, deduplication, embedding and hybrid retrieval live here; storage
//! backends only store and query, always filtered by tenant in the query itself.

use std::path::Path;
use std::sync::Arc;

use uuid::Uuid;

use crate::error::Result;
use crate::model::{
    AddOutcome, Identity, ListRequest, MemoryChange, MemoryPatch, MemoryRecord, NewMemory, Page,
    SearchHit, SearchRequest,
};

/// Limits and defaults of the memory service. Every field is configurable.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Largest accepted content, in bytes (64 KiB).
    pub max_content_bytes: usize,
    /// Largest page for listings and searches (100).
    pub max_page_size: usize,
    /// Most tags per record (32), each at most `max_tag_bytes` (128).
    pub max_tags: usize,
    pub max_tag_bytes: usize,
    /// Largest metadata object as JSON text, in bytes (16 KiB).
    pub max_metadata_bytes: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            max_content_bytes: 64 * 1024,
            max_page_size: 100,
            max_tags: 32,
            max_tag_bytes: 128,
            max_metadata_bytes: 16 * 1024,
        }
    }
}

/// Store sizes, for `/metrics`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StoreStats {
    pub records: u64,
    pub vectors: u64,
}

/// The layered memory of every tenant.
pub struct MemoryService {
    _private: (),
}

impl MemoryService {
    /// Opens (creating if needed) the embedded profile in `data_dir`: SQLite in WAL mode plus
    /// the persisted in-memory vector index.
    pub async fn open_embedded(
        data_dir: &Path,
        config: MemoryConfig,
        embedder: Arc<dyn crate::embed::Embedder>,
    ) -> Result<Self> {
        let _ = (data_dir, config, embedder);
        todo!("aeterna-memory: open_embedded")
    }

    /// Stores a memory in the caller's scope for `new.layer`; an identical content in that
    /// scope is returned instead of being stored twice.
    pub async fn add(&self, who: &Identity, new: NewMemory) -> Result<AddOutcome> {
        let _ = (who, new);
        todo!()
    }

    /// One record of the caller's tenant.
    pub async fn get(&self, who: &Identity, id: Uuid) -> Result<MemoryRecord> {
        let _ = (who, id);
        todo!()
    }

    /// Hybrid retrieval: BM25 and vector similarity fused by reciprocal rank.
    pub async fn search(&self, who: &Identity, request: SearchRequest) -> Result<Vec<SearchHit>> {
        let _ = (who, request);
        todo!()
    }

    /// A page of records, newest first.
    pub async fn list(&self, who: &Identity, request: ListRequest) -> Result<Page> {
        let _ = (who, request);
        todo!()
    }

    /// Applies `patch`, re-embedding when the content changes.
    pub async fn update(&self, who: &Identity, id: Uuid, patch: MemoryPatch) -> Result<MemoryRecord> {
        let _ = (who, id, patch);
        todo!()
    }

    /// Deletes a record and its vector. Unknown ids are [`crate::MemoryError::NotFound`].
    pub async fn delete(&self, who: &Identity, id: Uuid) -> Result<()> {
        let _ = (who, id);
        todo!()
    }

    /// Every committed write, for cache invalidation.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<MemoryChange> {
        todo!()
    }

    /// Ok when every store answers.
    pub async fn ready(&self) -> Result<()> {
        todo!()
    }

    pub async fn stats(&self) -> Result<StoreStats> {
        todo!()
    }

    /// Persists what is held in memory (the vector index). Called on graceful shutdown.
    pub async fn flush(&self) -> Result<()> {
        todo!()
    }
}
