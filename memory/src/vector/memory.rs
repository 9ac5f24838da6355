//! [`InMemoryVectorIndex`]: the embedded profile's vector store.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;
use uuid::Uuid;

use super::tenant::TenantVectors;
use super::{VectorEntry, VectorHit, VectorIndexConfig, VectorStore};
use crate::error::{MemoryError, Result};
use crate::model::MemoryFilter;
use crate::storage::RecordStore;

/// Vectors loaded per page while rebuilding from the record store.
const SYNC_PAGE: usize = 4096;

/// Exact in-memory vector search, one contiguous slab per tenant; see [`super`].
pub struct InMemoryVectorIndex {
    dims: usize,
    config: VectorIndexConfig,
    tenants: RwLock<HashMap<String, Arc<RwLock<TenantVectors>>>>,
}

impl InMemoryVectorIndex {
    pub fn new(dims: usize, config: VectorIndexConfig) -> Self {
        InMemoryVectorIndex {
            dims,
            config,
            tenants: RwLock::new(HashMap::new()),
        }
    }

    fn tenant(&self, tenant_id: &str) -> Option<Arc<RwLock<TenantVectors>>> {
        self.tenants.read().get(tenant_id).cloned()
    }

    fn tenant_or_create(&self, tenant_id: &str) -> Arc<RwLock<TenantVectors>> {
        if let Some(tenant) = self.tenant(tenant_id) {
            return tenant;
        }
        self.tenants
            .write()
            .entry(tenant_id.to_string())
            .or_insert_with(|| Arc::new(RwLock::new(TenantVectors::new(self.dims))))
            .clone()
    }

    fn check_dimensions(&self, vector: &[f32]) -> Result<()> {
        super::check_dimensions(vector, self.dims, "the index")
    }

    /// Whether `tenant_id` currently scans an int8 copy first (for tests and benchmarks).
    pub fn is_quantized(&self, tenant_id: &str) -> bool {
        self.tenant(tenant_id)
            .is_some_and(|tenant| tenant.read().is_quantized())
    }

    /// Synchronous search, for benchmarks of the scan itself.
    pub fn search_blocking(
        &self,
        tenant_id: &str,
        query: &[f32],
        filter: &MemoryFilter,
        limit: usize,
    ) -> Vec<VectorHit> {
        match self.tenant(tenant_id) {
            Some(tenant) => tenant.read().search(query, filter, limit, &self.config),
            None => Vec::new(),
        }
    }

    /// Synchronous upsert, for bulk loading.
    pub fn upsert_blocking(&self, tenant_id: &str, entries: &[VectorEntry]) -> Result<()> {
        for entry in entries {
            self.check_dimensions(&entry.vector)?;
        }
        let tenant = self.tenant_or_create(tenant_id);
        let mut tenant = tenant.write();
        for entry in entries {
            tenant.upsert(entry, &self.config);
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl VectorStore for InMemoryVectorIndex {
    async fn sync_from(&self, records: &dyn RecordStore) -> Result<()> {
        let started = std::time::Instant::now();
        self.tenants.write().clear();
        let mut after = 0;
        let mut loaded = 0usize;
        loop {
            let page = records.vectors_after(after, SYNC_PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.position;
            loaded += page.len();
            let mut by_tenant: HashMap<String, Vec<VectorEntry>> = HashMap::new();
            for stored in page {
                by_tenant
                    .entry(stored.tenant_id)
                    .or_default()
                    .push(stored.entry);
            }
            for (tenant_id, entries) in by_tenant {
                self.upsert_blocking(&tenant_id, &entries)?;
            }
        }
        tracing::info!(
            vectors = loaded,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "vector index loaded"
        );
        Ok(())
    }

    async fn upsert(&self, tenant_id: &str, entries: Vec<VectorEntry>) -> Result<()> {
        self.upsert_blocking(tenant_id, &entries)
    }

    async fn remove(&self, tenant_id: &str, ids: &[Uuid]) -> Result<()> {
        if let Some(tenant) = self.tenant(tenant_id) {
            let mut tenant = tenant.write();
            for id in ids {
                tenant.remove(id, &self.config);
            }
        }
        Ok(())
    }

    async fn retag(&self, tenant_id: &str, id: Uuid, tags: Vec<String>) -> Result<()> {
        if let Some(tenant) = self.tenant(tenant_id) {
            tenant.write().retag(&id, &tags);
        }
        Ok(())
    }

    async fn search(
        &self,
        tenant_id: &str,
        query: &[f32],
        filter: &MemoryFilter,
        limit: usize,
    ) -> Result<Vec<VectorHit>> {
        self.check_dimensions(query)?;
        let Some(tenant) = self.tenant(tenant_id) else {
            return Ok(Vec::new());
        };
        if tenant.read().len() <= self.config.blocking_scan_rows {
            return Ok(tenant.read().search(query, filter, limit, &self.config));
        }
        let (query, filter, config) = (query.to_vec(), filter.clone(), self.config.clone());
        tokio::task::spawn_blocking(move || tenant.read().search(&query, &filter, limit, &config))
            .await
            .map_err(|error| MemoryError::storage("vector scan", error))
    }

    async fn similarities(
        &self,
        tenant_id: &str,
        query: &[f32],
        ids: &[Uuid],
    ) -> Result<Vec<Option<f32>>> {
        self.check_dimensions(query)?;
        let Some(tenant) = self.tenant(tenant_id) else {
            return Ok(vec![None; ids.len()]);
        };
        let tenant = tenant.read();
        Ok(tenant.similarities(query, ids))
    }

    async fn count(&self) -> Result<u64> {
        let tenants = self.tenants.read();
        Ok(tenants
            .values()
            .map(|tenant| tenant.read().len() as u64)
            .sum())
    }

    /// Nothing to do: every vector is already durable in the record store.
    async fn flush(&self) -> Result<()> {
        Ok(())
    }

    fn backend(&self) -> &'static str {
        "in-memory"
    }

    async fn ready(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Layer, Scope};

    /// Unit vectors with a cluster structure like real embeddings: each is a random mix of a
    /// few of 64 topic directions plus noise.
    fn corpus(rows: usize, dims: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        let topics: Vec<Vec<f32>> = (0..64)
            .map(|_| (0..dims).map(|_| next()).collect())
            .collect();
        (0..rows)
            .map(|_| {
                let mut vector: Vec<f32> = (0..dims).map(|_| next() * 0.6).collect();
                for _ in 0..3 {
                    let topic = &topics[((next() + 1.0) * 31.99) as usize];
                    let weight = next().abs();
                    vector
                        .iter_mut()
                        .zip(topic)
                        .for_each(|(x, t)| *x += weight * t);
                }
                crate::embed::normalize(&mut vector);
                vector
            })
            .collect()
    }

    fn entry(id: u128, scope: &str, kind: &str, tags: &[&str], vector: Vec<f32>) -> VectorEntry {
        VectorEntry {
            id: Uuid::from_u128(id),
            scope: Scope::new(Layer::Project, scope),
            kind: kind.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            vector,
        }
    }

    #[tokio::test]
    async fn a_vector_can_move_between_scopes_and_segments_can_empty_and_refill() {
        let index = InMemoryVectorIndex::new(2, VectorIndexConfig::default());
        let scope = |name: &str| MemoryFilter {
            scopes: vec![Scope::new(Layer::Project, name)],
            ..Default::default()
        };
        index
            .upsert("t", vec![entry(1, "a", "memory", &[], vec![1.0, 0.0])])
            .await
            .unwrap();
        index
            .upsert("t", vec![entry(1, "b", "memory", &["x"], vec![0.0, 1.0])])
            .await
            .unwrap();
        assert!(
            index
                .search("t", &[0.0, 1.0], &scope("a"), 5)
                .await
                .unwrap()
                .is_empty()
        );
        let hits = index
            .search("t", &[0.0, 1.0], &scope("b"), 5)
            .await
            .unwrap();
        assert_eq!((hits.len(), hits[0].id.as_u128()), (1, 1));
        index.remove("t", &[Uuid::from_u128(1)]).await.unwrap();
        assert_eq!(index.count().await.unwrap(), 0);
        index
            .upsert("t", vec![entry(2, "b", "memory", &[], vec![1.0, 0.0])])
            .await
            .unwrap();
        assert_eq!(
            index
                .search("t", &[1.0, 0.0], &scope("b"), 5)
                .await
                .unwrap()[0]
                .id
                .as_u128(),
            2
        );
    }

    /// Upserts and removals keep the f32 rows, the int8 copy and the id map aligned.
    #[tokio::test]
    async fn removal_and_replacement_keep_rows_aligned_in_both_precisions() {
        let dims = 32;
        let config = VectorIndexConfig {
            quantize_min_rows: 10,
            ..Default::default()
        };
        let index = InMemoryVectorIndex::new(dims, config);
        let vectors = corpus(40, dims, 7);
        let entries: Vec<_> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| entry(i as u128, "p", "memory", &[], v.clone()))
            .collect();
        index.upsert("t", entries).await.unwrap();
        assert!(index.is_quantized("t"));
        let removed: Vec<Uuid> = (0..40).step_by(3).map(Uuid::from_u128).collect();
        index.remove("t", &removed).await.unwrap();
        // Replace vector 1 with vector 2's direction: both must now be found for it.
        index
            .upsert("t", vec![entry(1, "p", "memory", &[], vectors[2].clone())])
            .await
            .unwrap();
        for (i, vector) in vectors.iter().enumerate() {
            let hits = index
                .search("t", vector, &MemoryFilter::default(), 2)
                .await
                .unwrap();
            if i % 3 == 0 {
                assert!(hits.iter().all(|hit| hit.id.as_u128() != i as u128));
            } else if i == 2 {
                let ids: Vec<u128> = hits.iter().map(|hit| hit.id.as_u128()).collect();
                assert!(ids.contains(&1) && ids.contains(&2), "{ids:?}");
            } else if i != 1 {
                assert_eq!(hits[0].id.as_u128(), i as u128);
                assert!((hits[0].similarity - 1.0).abs() < 1e-4);
            }
        }
        index
            .remove("t", &(0..40).map(Uuid::from_u128).collect::<Vec<_>>())
            .await
            .unwrap();
        assert!(!index.is_quantized("t"));
        assert_eq!(index.count().await.unwrap(), 0);
    }

    /// The int8 pre-scan with f32 rescoring returns the same top k as the exact scan, for the
    /// k of a search (10), of its fused candidates (40) and of an assembly (100, 400).
    #[test]
    fn int8_with_rescoring_keeps_exact_recall() {
        for k in [10, 40, 100, 400] {
            let recall = int8_recall(k);
            eprintln!("int8 recall@{k}: {recall:.4}");
            assert!(recall >= 0.99, "recall@{k} {recall}");
        }
    }

    fn int8_recall(k: usize) -> f64 {
        let dims = 384;
        let rows = 20_000;
        let vectors = corpus(rows + 50, dims, 42);
        let exact = InMemoryVectorIndex::new(
            dims,
            VectorIndexConfig {
                quantize_min_rows: usize::MAX,
                ..Default::default()
            },
        );
        let quantized = InMemoryVectorIndex::new(
            dims,
            VectorIndexConfig {
                quantize_min_rows: 1,
                ..Default::default()
            },
        );
        let entries: Vec<_> = vectors[..rows]
            .iter()
            .enumerate()
            .map(|(i, v)| {
                entry(
                    i as u128,
                    if i % 10 == 0 { "ten" } else { "rest" },
                    "memory",
                    &[],
                    v.clone(),
                )
            })
            .collect();
        exact.upsert_blocking("t", &entries).unwrap();
        quantized.upsert_blocking("t", &entries).unwrap();
        assert!(quantized.is_quantized("t") && !exact.is_quantized("t"));

        let tenth = MemoryFilter {
            scopes: vec![Scope::new(Layer::Project, "ten")],
            ..Default::default()
        };
        let (mut found, mut expected) = (0, 0);
        for query in &vectors[rows..] {
            for filter in [&MemoryFilter::default(), &tenth] {
                let truth: Vec<Uuid> = exact
                    .search_blocking("t", query, filter, k)
                    .iter()
                    .map(|h| h.id)
                    .collect();
                let got: Vec<Uuid> = quantized
                    .search_blocking("t", query, filter, k)
                    .iter()
                    .map(|h| h.id)
                    .collect();
                expected += truth.len();
                found += got.iter().filter(|id| truth.contains(id)).count();
            }
        }
        found as f64 / expected as f64
    }
}
