//! One suite for the `VectorStore` trait, instantiated for the in-memory index and for Qdrant
//! (when `QDRANT_URL` names one; each test then uses a collection of its own), plus the drift
//! repair that only a persistent store has.

use std::sync::Arc;

use aeterna_memory::vector::{
    InMemoryVectorIndex, QdrantConfig, QdrantVectorStore, VectorEntry, VectorHit,
    VectorIndexConfig, VectorRepairs, VectorStore,
};
use aeterna_memory::{Layer, MemoryConfig, MemoryFilter, Scope};
use uuid::Uuid;

fn entry(id: u128, scope: &str, kind: &str, tags: &[&str], vector: Vec<f32>) -> VectorEntry {
    VectorEntry {
        id: Uuid::from_u128(id),
        scope: Scope::new(Layer::Project, scope),
        kind: kind.into(),
        tags: tags.iter().map(|t| t.to_string()).collect(),
        vector,
    }
}

fn unit(x: f32, y: f32) -> Vec<f32> {
    let norm = (x * x + y * y).sqrt();
    vec![x / norm, y / norm, 0.0, 0.0]
}

fn ids(hits: Vec<VectorHit>) -> Vec<u128> {
    hits.iter().map(|hit| hit.id.as_u128()).collect()
}

fn scope(name: &str) -> MemoryFilter {
    MemoryFilter {
        scopes: vec![Scope::new(Layer::Project, name)],
        ..Default::default()
    }
}

async fn filters_by_tenant_scope_kind_and_tags(store: Arc<dyn VectorStore>) {
    store
        .upsert(
            "a",
            vec![
                entry(1, "p1", "memory", &["rust"], unit(1.0, 0.0)),
                entry(2, "p2", "memory", &["rust", "db"], unit(1.0, 0.1)),
                entry(3, "p1", "note", &[], unit(0.0, 1.0)),
            ],
        )
        .await
        .unwrap();
    store
        .upsert(
            "b",
            vec![entry(4, "p1", "memory", &["rust"], unit(1.0, 0.0))],
        )
        .await
        .unwrap();
    let query = unit(1.0, 0.0);
    let search = |tenant: &'static str, filter: MemoryFilter| {
        let store = store.clone();
        let query = query.clone();
        async move { ids(store.search(tenant, &query, &filter, 10).await.unwrap()) }
    };

    let all = MemoryFilter::default();
    assert_eq!(search("a", all.clone()).await, [1, 2, 3]);
    assert_eq!(search("b", all.clone()).await, [4]);
    assert!(search("c", all.clone()).await.is_empty());
    assert_eq!(search("a", scope("p1")).await, [1, 3]);
    let two_scopes = MemoryFilter {
        scopes: vec![
            Scope::new(Layer::Project, "p2"),
            Scope::new(Layer::Team, "p1"),
        ],
        ..Default::default()
    };
    assert_eq!(search("a", two_scopes).await, [2]);
    let notes = MemoryFilter {
        kinds: vec!["note".into()],
        ..Default::default()
    };
    assert_eq!(search("a", notes).await, [3]);
    let both_tags = MemoryFilter {
        tags: vec!["rust".into(), "db".into()],
        ..Default::default()
    };
    assert_eq!(search("a", both_tags).await, [2]);
    let unknown_tag = MemoryFilter {
        tags: vec!["nope".into()],
        ..Default::default()
    };
    assert!(search("a", unknown_tag).await.is_empty());

    let best = store.search("a", &query, &all, 1).await.unwrap();
    assert_eq!(best.len(), 1);
    assert!((best[0].similarity - 1.0).abs() < 1e-4, "{best:?}");

    // Removing through another tenant touches nothing.
    store.remove("b", &[Uuid::from_u128(1)]).await.unwrap();
    assert_eq!(search("a", all.clone()).await, [1, 2, 3]);
    store.remove("a", &[Uuid::from_u128(1)]).await.unwrap();
    assert_eq!(search("a", all.clone()).await, [2, 3]);
    let similarities = store
        .similarities(
            "a",
            &query,
            &[Uuid::from_u128(3), Uuid::from_u128(1), Uuid::from_u128(2)],
        )
        .await
        .unwrap();
    assert!(similarities[0].unwrap().abs() < 1e-4, "{similarities:?}");
    assert_eq!(similarities[1], None);
    assert!(similarities[2].unwrap() > 0.99, "{similarities:?}");
    // Another tenant's vector has no similarity for this one.
    let foreign = store
        .similarities("a", &query, &[Uuid::from_u128(4)])
        .await
        .unwrap();
    assert_eq!(foreign, [None]);
    assert_eq!(store.count().await.unwrap(), 3);
}

async fn a_vector_can_move_between_scopes_and_be_retagged(store: Arc<dyn VectorStore>) {
    store
        .upsert("t", vec![entry(1, "a", "memory", &[], unit(1.0, 0.0))])
        .await
        .unwrap();
    store
        .upsert("t", vec![entry(1, "b", "memory", &["x"], unit(0.0, 1.0))])
        .await
        .unwrap();
    let query = unit(0.0, 1.0);
    assert!(
        store
            .search("t", &query, &scope("a"), 5)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        ids(store.search("t", &query, &scope("b"), 5).await.unwrap()),
        [1]
    );
    let tagged = |tag: &str| MemoryFilter {
        tags: vec![tag.into()],
        ..Default::default()
    };
    store
        .retag("t", Uuid::from_u128(1), vec!["y".into()])
        .await
        .unwrap();
    assert!(
        store
            .search("t", &query, &tagged("x"), 5)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        ids(store.search("t", &query, &tagged("y"), 5).await.unwrap()),
        [1]
    );
    // Retagging through another tenant changes nothing.
    store
        .retag("u", Uuid::from_u128(1), vec!["z".into()])
        .await
        .unwrap();
    assert_eq!(
        ids(store.search("t", &query, &tagged("y"), 5).await.unwrap()),
        [1]
    );
    store.remove("t", &[Uuid::from_u128(1)]).await.unwrap();
    assert_eq!(store.count().await.unwrap(), 0);
}

async fn rejects_vectors_of_the_wrong_dimension(store: Arc<dyn VectorStore>) {
    let error = store
        .upsert("a", vec![entry(1, "p", "memory", &[], vec![1.0; 3])])
        .await
        .unwrap_err();
    assert!(error.to_string().contains("3 dimensions"), "{error}");
    let error = store
        .search("a", &[1.0; 5], &MemoryFilter::default(), 3)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("5 dimensions"), "{error}");
    assert_eq!(store.count().await.unwrap(), 0);
    store.ready().await.unwrap();
}

macro_rules! vector_store_suite {
    ($backend:ident, $open:ident) => {
        mod $backend {
            #[tokio::test]
            async fn filters_by_tenant_scope_kind_and_tags() {
                if let Some(store) = super::$open(4).await {
                    super::filters_by_tenant_scope_kind_and_tags(store).await;
                }
            }

            #[tokio::test]
            async fn a_vector_can_move_between_scopes_and_be_retagged() {
                if let Some(store) = super::$open(4).await {
                    super::a_vector_can_move_between_scopes_and_be_retagged(store).await;
                }
            }

            #[tokio::test]
            async fn rejects_vectors_of_the_wrong_dimension() {
                if let Some(store) = super::$open(4).await {
                    super::rejects_vectors_of_the_wrong_dimension(store).await;
                }
            }
        }
    };
}

async fn open_in_memory(dims: usize) -> Option<Arc<dyn VectorStore>> {
    Some(Arc::new(InMemoryVectorIndex::new(
        dims,
        VectorIndexConfig::default(),
    )))
}

/// A collection of its own on the Qdrant at `QDRANT_URL`, or `None` (saying so) without one.
fn qdrant_config() -> Option<QdrantConfig> {
    let url = aeterna_testkit::profile::qdrant_url()?;
    Some(QdrantConfig {
        url: Some(url),
        collection: format!("aeterna_test_{}", Uuid::now_v7().simple()),
        ..Default::default()
    })
}

async fn open_qdrant(dims: usize) -> Option<Arc<dyn VectorStore>> {
    let config = qdrant_config()?;
    let url = config.url.clone()?;
    Some(Arc::new(
        QdrantVectorStore::connect(&url, dims, &config)
            .await
            .expect("connect to QDRANT_URL"),
    ))
}

vector_store_suite!(in_memory, open_in_memory);
vector_store_suite!(qdrant, open_qdrant);

/// Qdrant lost writes, kept a deleted record's point and holds an outdated one: a repair
/// finds each against the record store, fixes it, and a second repair finds nothing.
#[tokio::test]
async fn qdrant_repairs_drift_from_the_record_store() {
    let Some(qdrant) = qdrant_config() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = MemoryConfig {
        qdrant,
        ..Default::default()
    };
    let service = super::open(dir.path(), config.clone()).await;
    let who = super::alice();
    let mut added = Vec::new();
    for i in 0..5 {
        let memory = super::memory(Layer::Project, &format!("fact number {i} about tokio"));
        added.push(service.add(&who, memory).await.unwrap().record);
    }
    // The service's own collection (the profile names it after the data dir).
    let qdrant = &service.config().qdrant;
    let store = QdrantVectorStore::connect(
        qdrant.url.as_deref().unwrap(),
        service.embedder().dimensions(),
        qdrant,
    )
    .await
    .unwrap();
    assert_eq!(store.count().await.unwrap(), 5);

    // Drift: one point lost, one retagged behind the record store's back, one orphan.
    store.remove("acme", &[added[0].id]).await.unwrap();
    store
        .retag("acme", added[1].id, vec!["wrong".into()])
        .await
        .unwrap();
    let mut orphan = entry(
        99,
        "aeterna",
        "memory",
        &[],
        vec![0.0; store_dims(&service)],
    );
    orphan.vector[0] = 1.0;
    store.upsert("acme", vec![orphan]).await.unwrap();

    let records = service.records();
    let repaired = store.repair(records.as_ref()).await.unwrap();
    assert_eq!(
        repaired,
        VectorRepairs {
            checked: 5,
            missing: 1,
            stale: 1,
            orphaned: 1
        }
    );
    assert_eq!(
        store.repair(records.as_ref()).await.unwrap(),
        VectorRepairs {
            checked: 5,
            ..Default::default()
        }
    );
    let found = service
        .search(
            &who,
            aeterna_memory::SearchRequest {
                query: "fact number 0 about tokio".into(),
                layers: None,
                tags: Vec::new(),
                kinds: Vec::new(),
                limit: 1,
                min_score: 0.0,
                explain: false,
                as_of: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(found[0].record.id, added[0].id);
}

fn store_dims(service: &aeterna_memory::MemoryService) -> usize {
    service.embedder().dimensions()
}
