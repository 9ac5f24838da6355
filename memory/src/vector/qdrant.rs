//! [`QdrantVectorStore`]: the scale-out profile's vector store, one Qdrant collection shared by
//! every instance (gRPC through `qdrant-client`).
//!
//! Each point is a record: its id is the record's UUID, its payload the attributes searches
//! filter on (`tenant`, `layer`, `scope`, `kind`, `tags`, each with a keyword index; `tenant`
//! is marked as the tenant key so Qdrant co-locates a tenant's points) plus a `digest` of what
//! the point was written from. Every request that reads or changes points carries the tenant
//! condition, so one tenant's call never touches another's points.
//!
//! Like the in-memory index, Qdrant holds a derived copy: the record store keeps the durable
//! vector, written first. A write whose vector did not reach Qdrant (it was down, the instance
//! died in between) is *drift*, and [`VectorStore::repair`] finds and fixes it — points
//! missing or written from an older version of their record (digest or tags differ), and
//! points whose record is gone. It runs at start and on an interval
//! ([`QdrantConfig::repair_interval_secs`]); what it fixed is counted in `/metrics`. The same
//! pass fills a collection created at start (a new deployment, or a new embedder's size):
//! that is loading, not drift, and is not counted.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use qdrant_client::Qdrant;
use qdrant_client::qdrant::value::Kind;
use qdrant_client::qdrant::vector_output::Vector;
use qdrant_client::qdrant::{
    Condition, CountPointsBuilder, CreateCollectionBuilder, CreateFieldIndexCollectionBuilder,
    DeletePointsBuilder, Distance, FieldType, Filter, GetPointsBuilder, KeywordIndexParamsBuilder,
    PayloadIncludeSelector, PointId, PointStruct, Query, QueryPointsBuilder, RetrievedPoint,
    ScrollPointsBuilder, SetPayloadPointsBuilder, UpsertPointsBuilder, Value, VectorParamsBuilder,
    point_id,
};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{VectorEntry, VectorHit, VectorRepairs, VectorStore};
use crate::error::{MemoryError, Result};
use crate::model::MemoryFilter;
use crate::storage::RecordStore;

/// Points written per upsert request (each a few KiB: well under gRPC's message limit).
const UPSERT_CHUNK: usize = 256;
/// Records compared per page while repairing.
const REPAIR_PAGE: usize = 1024;

/// `[memory.qdrant]`: how the scale-out profile uses Qdrant (the URL is the server's
/// `qdrant_url`).
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QdrantConfig {
    /// Where Qdrant's gRPC API listens (`http://host:6334`), from the server's `qdrant_url`;
    /// unset: no Qdrant.
    #[serde(skip)]
    pub url: Option<String>,
    /// The collection is named `<collection>_<dimensions>` ("aeterna_memories"), so a new
    /// embedder of another size starts its own collection instead of failing on the old one.
    pub collection: String,
    /// The API key Qdrant asks for, if any. Never shown in logs or `Debug` output.
    pub api_key: Option<String>,
    /// Longest a request may take (10 000 ms); a timed-out search fails with a clear error.
    pub timeout_ms: u64,
    /// Compare Qdrant with the record store and repair drift this often (3 600 s); it is
    /// also done at every start. 0: only at start.
    pub repair_interval_secs: u64,
}

impl Default for QdrantConfig {
    fn default() -> Self {
        QdrantConfig {
            url: None,
            collection: "aeterna_memories".into(),
            api_key: None,
            timeout_ms: 10_000,
            repair_interval_secs: 3600,
        }
    }
}

impl fmt::Debug for QdrantConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QdrantConfig")
            .field("url", &self.url)
            .field("collection", &self.collection)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("timeout_ms", &self.timeout_ms)
            .field("repair_interval_secs", &self.repair_interval_secs)
            .finish()
    }
}

/// Vectors in a Qdrant collection; see [`self`](super::qdrant).
pub struct QdrantVectorStore {
    client: Qdrant,
    collection: String,
    dims: usize,
    /// Set when `connect` created the collection: the first sync fills it, which is loading,
    /// not drift (a new deployment, or a new embedder's collection after re-embedding).
    created: AtomicBool,
    repairs: RepairCounters,
}

#[derive(Default)]
struct RepairCounters {
    missing: AtomicU64,
    stale: AtomicU64,
    orphaned: AtomicU64,
}

impl QdrantVectorStore {
    /// Connects to the Qdrant at `url` (its gRPC port, usually 6334) and creates the
    /// collection for `dims`-dimensional vectors with its payload indexes, unless it exists.
    /// Fails, naming the URL, when Qdrant does not answer.
    pub async fn connect(url: &str, dims: usize, config: &QdrantConfig) -> Result<Self> {
        let unreachable = |error: qdrant_client::QdrantError| {
            MemoryError::storage(format!("Qdrant at {url} (qdrant_url)"), error)
        };
        let client = Qdrant::from_url(url)
            .api_key(config.api_key.clone())
            .timeout(Duration::from_millis(config.timeout_ms.max(1)))
            .connect_timeout(Duration::from_millis(config.timeout_ms.clamp(1, 5_000)))
            .skip_compatibility_check()
            .build()
            .map_err(unreachable)?;
        client.health_check().await.map_err(unreachable)?;
        let store = QdrantVectorStore {
            client,
            collection: format!("{}_{dims}", config.collection),
            dims,
            created: AtomicBool::new(false),
            repairs: RepairCounters::default(),
        };
        store.create_collection().await?;
        Ok(store)
    }

    /// The collection this store writes to.
    pub fn collection(&self) -> &str {
        &self.collection
    }

    /// Creates the collection and its payload indexes when missing. Instances starting at
    /// once may race to create it: losing that race is fine.
    async fn create_collection(&self) -> Result<()> {
        let exists = self
            .client
            .collection_exists(&self.collection)
            .await
            .map_err(|error| self.error("checking the collection", error))?;
        if !exists {
            let created = self
                .client
                .create_collection(
                    CreateCollectionBuilder::new(&self.collection).vectors_config(
                        VectorParamsBuilder::new(self.dims as u64, Distance::Cosine),
                    ),
                )
                .await;
            match created {
                Ok(_) => {
                    self.created.store(true, Ordering::Relaxed);
                    tracing::info!(collection = %self.collection, dims = self.dims, "Qdrant collection created");
                }
                Err(error) => {
                    let exists_now = self.client.collection_exists(&self.collection).await;
                    if !matches!(exists_now, Ok(true)) {
                        return Err(self.error("creating the collection", error));
                    }
                }
            }
        }
        // Creating an index that exists is a no-op, so this also completes an earlier start
        // that died half-way.
        let tenant_index =
            CreateFieldIndexCollectionBuilder::new(&self.collection, "tenant", FieldType::Keyword)
                .field_index_params(KeywordIndexParamsBuilder::default().is_tenant(true))
                .wait(true);
        self.client
            .create_field_index(tenant_index)
            .await
            .map_err(|error| self.error("indexing `tenant`", error))?;
        for field in ["layer", "scope", "kind", "tags"] {
            self.client
                .create_field_index(
                    CreateFieldIndexCollectionBuilder::new(
                        &self.collection,
                        field,
                        FieldType::Keyword,
                    )
                    .wait(true),
                )
                .await
                .map_err(|error| self.error(&format!("indexing `{field}`"), error))?;
        }
        Ok(())
    }

    fn error(&self, doing: &str, error: qdrant_client::QdrantError) -> MemoryError {
        MemoryError::storage(format!("Qdrant: {doing} in `{}`", self.collection), error)
    }

    fn check_dimensions(&self, vector: &[f32]) -> Result<()> {
        super::check_dimensions(
            vector,
            self.dims,
            &format!("the collection `{}`", self.collection),
        )
    }

    /// Compares every durable vector of `records` with its point and fixes what differs:
    /// writes missing and outdated points, deletes points whose record is gone. Safe while
    /// instances write, as records are committed before their points are written and deleted
    /// before their points are removed — except that an update landing between the read of a
    /// page and the rewrite of its outdated points is overwritten by the older version; the
    /// next repair then finds that point outdated and corrects it.
    /// What it fixed is counted in `/metrics` when `count` (not while filling a new collection).
    async fn repair_drift(&self, records: &dyn RecordStore, count: bool) -> Result<VectorRepairs> {
        let started = std::time::Instant::now();
        let mut repaired = VectorRepairs::default();
        let mut after = 0;
        loop {
            let page = records.vectors_after(after, REPAIR_PAGE).await?;
            let Some(last) = page.last() else { break };
            after = last.position;
            repaired.checked += page.len() as u64;
            let ids: Vec<PointId> = page
                .iter()
                .map(|stored| point_id(stored.entry.id))
                .collect();
            let points = self
                .client
                .get_points(
                    GetPointsBuilder::new(&self.collection, ids)
                        .with_payload(payload_fields(&["digest", "tags"])),
                )
                .await
                .map_err(|error| self.error("reading points to repair", error))?
                .result;
            let written: HashMap<Uuid, (Option<String>, Vec<String>)> = points
                .into_iter()
                .filter_map(|point| {
                    let id = uuid_of(point.id.as_ref()?)?;
                    Some((
                        id,
                        (
                            string_of(point.payload.get("digest")),
                            strings_of(point.payload.get("tags")),
                        ),
                    ))
                })
                .collect();
            let mut outdated: HashMap<&str, HashSet<Uuid>> = HashMap::new();
            for stored in &page {
                let entry = &stored.entry;
                match written.get(&entry.id) {
                    None => repaired.missing += 1,
                    Some((digest, tags))
                        if digest.as_deref() != Some(digest_of(entry).as_str())
                            || tags != &entry.tags =>
                    {
                        repaired.stale += 1
                    }
                    Some(_) => continue,
                }
                outdated
                    .entry(&stored.tenant_id)
                    .or_default()
                    .insert(entry.id);
            }
            for (tenant_id, ids) in outdated {
                let entries = page
                    .iter()
                    .filter(|stored| ids.contains(&stored.entry.id))
                    .map(|stored| stored.entry.clone())
                    .collect();
                self.upsert(tenant_id, entries).await?;
            }
        }
        repaired.orphaned = self.remove_orphans(records).await?;
        let drifted = repaired.missing + repaired.stale + repaired.orphaned > 0;
        let elapsed_ms = started.elapsed().as_millis() as u64;
        if !count {
            tracing::info!(
                collection = %self.collection,
                points = repaired.missing,
                elapsed_ms,
                "Qdrant collection filled from the record store"
            );
        } else if drifted {
            self.repairs
                .missing
                .fetch_add(repaired.missing, Ordering::Relaxed);
            self.repairs
                .stale
                .fetch_add(repaired.stale, Ordering::Relaxed);
            self.repairs
                .orphaned
                .fetch_add(repaired.orphaned, Ordering::Relaxed);
            tracing::warn!(
                collection = %self.collection,
                checked = repaired.checked,
                missing = repaired.missing,
                stale = repaired.stale,
                orphaned = repaired.orphaned,
                elapsed_ms,
                "Qdrant drift repaired"
            );
        } else {
            tracing::info!(
                collection = %self.collection,
                checked = repaired.checked,
                elapsed_ms,
                "Qdrant matches the record store"
            );
        }
        Ok(repaired)
    }

    /// Deletes the points whose record no longer exists; returns how many.
    async fn remove_orphans(&self, records: &dyn RecordStore) -> Result<u64> {
        let mut removed = 0;
        let mut offset: Option<PointId> = None;
        loop {
            let mut scroll = ScrollPointsBuilder::new(&self.collection)
                .limit(REPAIR_PAGE as u32)
                .with_payload(payload_fields(&["tenant"]))
                .with_vectors(false);
            if let Some(offset) = offset.take() {
                scroll = scroll.offset(offset);
            }
            let page = self
                .client
                .scroll(scroll)
                .await
                .map_err(|error| self.error("listing points to repair", error))?;
            let mut by_tenant: HashMap<String, Vec<Uuid>> = HashMap::new();
            for point in &page.result {
                let (Some(id), Some(tenant)) = (
                    point.id.as_ref().and_then(uuid_of),
                    string_of(point.payload.get("tenant")),
                ) else {
                    continue;
                };
                by_tenant.entry(tenant).or_default().push(id);
            }
            for (tenant_id, ids) in by_tenant {
                let alive: HashSet<Uuid> = records
                    .get_many(&tenant_id, &ids)
                    .await?
                    .into_iter()
                    .map(|record| record.id)
                    .collect();
                let orphans: Vec<Uuid> = ids.into_iter().filter(|id| !alive.contains(id)).collect();
                if !orphans.is_empty() {
                    removed += orphans.len() as u64;
                    self.remove(&tenant_id, &orphans).await?;
                }
            }
            match page.next_page_offset {
                Some(next) => offset = Some(next),
                None => break,
            }
        }
        Ok(removed)
    }

    /// The tenant condition, plus `ids` when given: the selector of every point operation.
    fn tenant_points(tenant_id: &str, ids: &[Uuid]) -> Filter {
        let mut must = vec![Condition::matches("tenant", tenant_id.to_string())];
        if !ids.is_empty() {
            must.push(Condition::has_id(ids.iter().map(|id| point_id(*id))));
        }
        Filter::must(must)
    }

    /// What `filter` admits, always within `tenant_id`.
    fn search_filter(tenant_id: &str, filter: &MemoryFilter) -> Filter {
        let mut must = vec![Condition::matches("tenant", tenant_id.to_string())];
        if !filter.scopes.is_empty() {
            must.push(
                Filter::should(filter.scopes.iter().map(|scope| {
                    Filter::must([
                        Condition::matches("layer", scope.layer.as_str().to_string()),
                        Condition::matches("scope", scope.scope_id.clone()),
                    ])
                    .into()
                }))
                .into(),
            );
        }
        if !filter.kinds.is_empty() {
            must.push(Condition::matches("kind", filter.kinds.clone()));
        }
        for tag in &filter.tags {
            must.push(Condition::matches("tags", tag.clone()));
        }
        Filter::must(must)
    }

    fn point(tenant_id: &str, entry: VectorEntry) -> PointStruct {
        let digest = digest_of(&entry);
        let payload: HashMap<String, Value> = HashMap::from([
            ("tenant".to_string(), Value::from(tenant_id.to_string())),
            ("layer".to_string(), entry.scope.layer.as_str().into()),
            ("scope".to_string(), entry.scope.scope_id.into()),
            ("kind".to_string(), entry.kind.into()),
            ("tags".to_string(), Value::from(entry.tags)),
            ("digest".to_string(), digest.into()),
        ]);
        PointStruct::new(point_id(entry.id), entry.vector, payload)
    }
}

#[async_trait::async_trait]
impl VectorStore for QdrantVectorStore {
    /// Qdrant persists the points itself: only drift is repaired ([`VectorStore::repair`]),
    /// or a collection this store just created is filled.
    async fn sync_from(&self, records: &dyn RecordStore) -> Result<()> {
        let filling = self.created.swap(false, Ordering::Relaxed);
        self.repair_drift(records, !filling).await.map(drop)
    }

    async fn upsert(&self, tenant_id: &str, entries: Vec<VectorEntry>) -> Result<()> {
        for entry in &entries {
            self.check_dimensions(&entry.vector)?;
        }
        let mut points = entries
            .into_iter()
            .map(|entry| Self::point(tenant_id, entry));
        loop {
            let chunk: Vec<PointStruct> = points.by_ref().take(UPSERT_CHUNK).collect();
            if chunk.is_empty() {
                return Ok(());
            }
            self.client
                .upsert_points(UpsertPointsBuilder::new(&self.collection, chunk).wait(true))
                .await
                .map_err(|error| self.error("writing points", error))?;
        }
    }

    async fn remove(&self, tenant_id: &str, ids: &[Uuid]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        self.client
            .delete_points(
                DeletePointsBuilder::new(&self.collection)
                    .points(Self::tenant_points(tenant_id, ids))
                    .wait(true),
            )
            .await
            .map_err(|error| self.error("deleting points", error))?;
        Ok(())
    }

    async fn retag(&self, tenant_id: &str, id: Uuid, tags: Vec<String>) -> Result<()> {
        let payload = HashMap::from([("tags".to_string(), Value::from(tags))]);
        self.client
            .set_payload(
                SetPayloadPointsBuilder::new(&self.collection, payload)
                    .points_selector(Self::tenant_points(tenant_id, &[id]))
                    .wait(true),
            )
            .await
            .map_err(|error| self.error("retagging a point", error))?;
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
        if limit == 0 {
            return Ok(Vec::new());
        }
        let response = self
            .client
            .query(
                QueryPointsBuilder::new(&self.collection)
                    .query(Query::new_nearest(query.to_vec()))
                    .filter(Self::search_filter(tenant_id, filter))
                    .limit(limit as u64)
                    .with_payload(false),
            )
            .await
            .map_err(|error| self.error("searching", error))?;
        Ok(response
            .result
            .into_iter()
            .filter_map(|point| {
                Some(VectorHit {
                    id: uuid_of(point.id.as_ref()?)?,
                    similarity: point.score,
                })
            })
            .collect())
    }

    async fn similarities(
        &self,
        tenant_id: &str,
        query: &[f32],
        ids: &[Uuid],
    ) -> Result<Vec<Option<f32>>> {
        self.check_dimensions(query)?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let points = self
            .client
            .scroll(
                ScrollPointsBuilder::new(&self.collection)
                    .filter(Self::tenant_points(tenant_id, ids))
                    .limit(ids.len() as u32)
                    .with_payload(false)
                    .with_vectors(true),
            )
            .await
            .map_err(|error| self.error("reading vectors", error))?
            .result;
        let by_id: HashMap<Uuid, f32> = points
            .into_iter()
            .filter_map(|point| {
                let id = uuid_of(point.id.as_ref()?)?;
                let vector = dense_vector(point)?;
                (vector.len() == query.len()).then(|| (id, super::kernels::dot_f32(query, &vector)))
            })
            .collect();
        Ok(ids.iter().map(|id| by_id.get(id).copied()).collect())
    }

    async fn count(&self) -> Result<u64> {
        let response = self
            .client
            .count(CountPointsBuilder::new(&self.collection).exact(true))
            .await
            .map_err(|error| self.error("counting points", error))?;
        Ok(response.result.map_or(0, |result| result.count))
    }

    /// Nothing to do: every upsert waits until Qdrant has applied it.
    async fn flush(&self) -> Result<()> {
        Ok(())
    }

    fn backend(&self) -> &'static str {
        "qdrant"
    }

    async fn ready(&self) -> Result<()> {
        self.client
            .health_check()
            .await
            .map_err(|error| self.error("health check", error))?;
        Ok(())
    }

    fn shared(&self) -> bool {
        true
    }

    async fn repair(&self, records: &dyn RecordStore) -> Result<VectorRepairs> {
        self.repair_drift(records, true).await
    }

    fn repairs_total(&self) -> VectorRepairs {
        VectorRepairs {
            checked: 0,
            missing: self.repairs.missing.load(Ordering::Relaxed),
            stale: self.repairs.stale.load(Ordering::Relaxed),
            orphaned: self.repairs.orphaned.load(Ordering::Relaxed),
        }
    }
}

fn payload_fields(fields: &[&str]) -> PayloadIncludeSelector {
    PayloadIncludeSelector {
        fields: fields.iter().map(|field| field.to_string()).collect(),
    }
}

fn point_id(id: Uuid) -> PointId {
    PointId::from(id.to_string())
}

fn uuid_of(id: &PointId) -> Option<Uuid> {
    match id.point_id_options.as_ref()? {
        point_id::PointIdOptions::Uuid(text) => Uuid::parse_str(text).ok(),
        point_id::PointIdOptions::Num(_) => None,
    }
}

fn string_of(value: Option<&Value>) -> Option<String> {
    match value?.kind.as_ref()? {
        Kind::StringValue(text) => Some(text.clone()),
        _ => None,
    }
}

fn strings_of(value: Option<&Value>) -> Vec<String> {
    match value.and_then(|value| value.kind.as_ref()) {
        Some(Kind::ListValue(list)) => list
            .values
            .iter()
            .filter_map(|value| string_of(Some(value)))
            .collect(),
        Some(Kind::StringValue(text)) => vec![text.clone()],
        _ => Vec::new(),
    }
}

fn dense_vector(point: RetrievedPoint) -> Option<Vec<f32>> {
    match point.vectors?.get_vector()? {
        Vector::Dense(dense) => Some(dense.data),
        _ => None,
    }
}

/// What a point was written from, but its tags (compared as they are): the vector, scope and
/// kind. A repair rewrites a point whose digest differs from its record's.
fn digest_of(entry: &VectorEntry) -> String {
    let mut hasher = Sha256::new();
    for value in &entry.vector {
        hasher.update(value.to_le_bytes());
    }
    for part in [
        entry.scope.layer.as_str(),
        &entry.scope.scope_id,
        &entry.kind,
    ] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(&hasher.finalize()[..12])
}
