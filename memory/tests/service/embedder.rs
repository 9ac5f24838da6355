//! Changing the embedder re-embeds or refuses; vector spaces are never mixed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use aeterna_memory::embed::{Embedder, HashingEmbedder};
use aeterna_memory::{
    EmbedderChange, Layer, ListRequest, MemoryConfig, MemoryError, MemoryService, SearchRequest,
};

use super::*;

/// Fails every embedding call after the first `ok_calls`.
struct FailingAfter {
    inner: HashingEmbedder,
    ok_calls: usize,
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl Embedder for FailingAfter {
    fn id(&self) -> &str {
        self.inner.id()
    }
    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }
    async fn embed(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        if self.calls.fetch_add(1, Ordering::SeqCst) >= self.ok_calls {
            anyhow::bail!("embedding server went away");
        }
        self.inner.embed(texts).await
    }
}

async fn open_with(
    path: &std::path::Path,
    embedder: Arc<dyn Embedder>,
    policy: EmbedderChange,
) -> Result<MemoryService, MemoryError> {
    let config = MemoryConfig {
        on_embedder_change: policy,
        reembed_batch: 10,
        ..Default::default()
    };
    crate::open_with_embedder(path, config, embedder).await
}

async fn fill(path: &std::path::Path, count: usize) {
    let service = open(path, MemoryConfig::default()).await;
    let items = (0..count)
        .map(|i| {
            memory(
                Layer::Project,
                &format!("memory {i}: configuring the load balancer"),
            )
        })
        .collect();
    service.add_batch(&alice(), items).await.unwrap();
}

async fn embedder_ids(service: &MemoryService) -> Vec<String> {
    let request = ListRequest {
        layers: None,
        tags: vec![],
        kinds: vec![],
        cursor: None,
        limit: 100,
        metadata_only: true,
    };
    let mut ids: Vec<String> = service
        .list(&alice(), request)
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|r| r.embedder_id)
        .collect();
    ids.dedup();
    ids
}

#[tokio::test]
async fn a_different_embedder_is_refused_with_instructions() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), 3).await;
    let error = open_with(
        dir.path(),
        Arc::new(HashingEmbedder::new(256)),
        EmbedderChange::Refuse,
    )
    .await
    .err()
    .unwrap();
    let MemoryError::EmbedderMismatch(message) = &error else {
        panic!("{error:?}")
    };
    for needle in [
        "hash-v1-384",
        "hash-v1-256",
        "on_embedder_change = \"reembed\"",
        "3 stored memories",
    ] {
        assert!(
            message.contains(needle),
            "{needle:?} missing from {message}"
        );
    }
    // Nothing changed: the original embedder still opens it.
    let service = open(dir.path(), MemoryConfig::default()).await;
    assert_eq!(embedder_ids(&service).await, ["hash-v1-384"]);
}

#[tokio::test]
async fn a_different_embedder_re_embeds_every_record_when_configured() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), 25).await;
    let service = open_with(
        dir.path(),
        Arc::new(HashingEmbedder::new(256)),
        EmbedderChange::Reembed,
    )
    .await
    .unwrap();
    assert_eq!(embedder_ids(&service).await, ["hash-v1-256"]);
    assert_eq!(
        service.stats().await.unwrap(),
        aeterna_memory::StoreStats {
            records: 25,
            vectors: 25,
            vector_repairs: Default::default(),
        }
    );
    let hits = service
        .search(
            &alice(),
            SearchRequest {
                query: "configure balancers".into(),
                layers: None,
                tags: vec![],
                kinds: vec![],
                limit: 5,
                min_score: 0.0,
                explain: true,
                as_of: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(hits.len(), 5);
    assert!(
        hits.iter()
            .all(|hit| hit.explain.as_ref().unwrap().semantic_rank.is_some()),
        "the re-embedded vectors are searchable"
    );
    drop(service);
    // Now 256 is the stored embedder, even under the refuse policy.
    open_with(
        dir.path(),
        Arc::new(HashingEmbedder::new(256)),
        EmbedderChange::Refuse,
    )
    .await
    .unwrap();
}

/// A hashing embedder that says it is a remote API, whose calls cost money.
struct Remote(HashingEmbedder);

#[async_trait::async_trait]
impl Embedder for Remote {
    fn id(&self) -> &str {
        self.0.id()
    }
    fn dimensions(&self) -> usize {
        self.0.dimensions()
    }
    fn is_local(&self) -> bool {
        false
    }
    async fn embed(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        self.0.embed(texts).await
    }
}

#[tokio::test]
async fn by_default_a_local_embedder_re_embeds_and_a_remote_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), 12).await;
    assert_eq!(
        MemoryConfig::default().on_embedder_change,
        EmbedderChange::Auto
    );
    let error = open_with(
        dir.path(),
        Arc::new(Remote(HashingEmbedder::new(256))),
        EmbedderChange::Auto,
    )
    .await
    .err()
    .unwrap();
    let MemoryError::EmbedderMismatch(message) = &error else {
        panic!("{error:?}")
    };
    assert!(message.contains("12 stored memories"), "{message}");

    let service = open_with(
        dir.path(),
        Arc::new(HashingEmbedder::new(256)),
        EmbedderChange::Auto,
    )
    .await
    .unwrap();
    assert_eq!(embedder_ids(&service).await, ["hash-v1-256"]);
}

#[tokio::test]
async fn an_interrupted_re_embedding_is_never_taken_for_a_finished_one_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), 35).await;
    let failing = FailingAfter {
        inner: HashingEmbedder::new(256),
        ok_calls: 2,
        calls: AtomicUsize::new(0),
    };
    let error = open_with(dir.path(), Arc::new(failing), EmbedderChange::Reembed)
        .await
        .err()
        .unwrap();
    assert!(matches!(error, MemoryError::Storage { .. }), "{error:?}");
    assert!(error.to_string().contains("rerun to resume"), "{error}");

    for embedder in [HashingEmbedder::new(256), HashingEmbedder::new(384)] {
        let error = open_with(dir.path(), Arc::new(embedder), EmbedderChange::Refuse)
            .await
            .err()
            .unwrap();
        assert!(error.to_string().contains("interrupted"), "{error}");
    }

    let service = open_with(
        dir.path(),
        Arc::new(HashingEmbedder::new(256)),
        EmbedderChange::Reembed,
    )
    .await
    .unwrap();
    assert_eq!(embedder_ids(&service).await, ["hash-v1-256"]);
    assert_eq!(service.stats().await.unwrap().vectors, 35);
}

#[tokio::test]
async fn an_empty_database_simply_adopts_the_new_embedder() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path(), MemoryConfig::default()).await);
    let service = open_with(
        dir.path(),
        Arc::new(HashingEmbedder::new(256)),
        EmbedderChange::Refuse,
    )
    .await
    .unwrap();
    let added = service
        .add(&alice(), memory(Layer::User, "fresh"))
        .await
        .unwrap();
    assert_eq!(added.record.embedder_id, "hash-v1-256");
}

#[tokio::test]
async fn a_failing_embedder_fails_the_write_and_stores_nothing() {
    let (_dir, service) = {
        let dir = tempfile::tempdir().unwrap();
        let failing = FailingAfter {
            inner: HashingEmbedder::default(),
            ok_calls: 0,
            calls: AtomicUsize::new(0),
        };
        let service = open_with(dir.path(), Arc::new(failing), EmbedderChange::Refuse)
            .await
            .unwrap();
        (dir, service)
    };
    let error = service
        .add(&alice(), memory(Layer::User, "x"))
        .await
        .unwrap_err();
    assert!(matches!(error, MemoryError::Storage { .. }));
    assert!(
        error.to_string().contains("embedding server went away")
            || error.to_string().contains("hash-v1-384"),
        "{error}"
    );
    assert_eq!(service.stats().await.unwrap().records, 0);
}

/// Adding content that is already stored answers with the stored record without embedding it:
/// for content stored before a restart, for content an update wrote, and never for content an
/// update replaced.
#[tokio::test]
async fn a_duplicate_add_needs_no_embedding_across_updates_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let who = alice();
    let embedding_fails_after = |ok_calls| {
        Arc::new(FailingAfter {
            inner: HashingEmbedder::default(),
            ok_calls,
            calls: AtomicUsize::new(0),
        })
    };
    let (kept, updated) = {
        // Three embeddings: two adds and one update; every later embedding fails.
        let service = open_with(dir.path(), embedding_fails_after(3), EmbedderChange::Refuse)
            .await
            .unwrap();
        let kept = service
            .add(
                &who,
                memory(Layer::Project, "Releases are cut on Tuesdays."),
            )
            .await
            .unwrap();
        let updated = service
            .add(
                &who,
                memory(Layer::Project, "The staging cluster is in eu-west."),
            )
            .await
            .unwrap();
        service
            .update(
                &who,
                updated.record.id,
                aeterna_memory::MemoryPatch {
                    content: Some("The staging cluster is in eu-central.".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        let again = service
            .add(
                &who,
                memory(Layer::Project, "The staging cluster is in eu-central."),
            )
            .await
            .expect("the updated content is a duplicate: no embedding");
        assert!(again.deduplicated);
        assert_eq!(again.record.id, updated.record.id);
        service.flush().await.unwrap();
        (kept.record.id, updated.record.id)
    };

    let service = open_with(dir.path(), embedding_fails_after(0), EmbedderChange::Refuse)
        .await
        .unwrap();
    for (content, id) in [
        ("Releases are cut on Tuesdays.", kept),
        ("The staging cluster is in eu-central.", updated),
    ] {
        let again = service
            .add(&who, memory(Layer::Project, content))
            .await
            .unwrap_or_else(|error| panic!("{content:?} is stored, yet it was embedded: {error}"));
        assert!(again.deduplicated, "{content:?}");
        assert_eq!(again.record.id, id, "{content:?}");
    }
    // Stored content elsewhere, and content an update replaced, are new: they need embedding.
    for (layer, content) in [
        (Layer::Team, "Releases are cut on Tuesdays."),
        (Layer::Project, "The staging cluster is in eu-west."),
    ] {
        let error = service
            .add(&who, memory(layer, content))
            .await
            .expect_err("new content is embedded, and this embedder fails");
        assert!(
            error.to_string().contains("embedding server went away"),
            "{error}"
        );
    }
}
