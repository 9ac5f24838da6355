use aeterna_memory::{Layer, MemoryError, MemoryPatch, SearchRequest, kind};

use super::*;

#[tokio::test]
async fn add_get_search_delete_round_trip() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let mut new = memory(
        Layer::Project,
        "The CI pipeline caches cargo builds in target/ between runs.",
    );
    new.tags = vec!["ci".into(), "cargo".into()];
    new.metadata = serde_json::json!({"source": "test"});
    let added = service.add(&who, new).await.unwrap();
    assert!(!added.deduplicated);
    let record = &added.record;
    assert_eq!(record.tenant_id, "acme");
    assert_eq!(
        (record.layer, record.scope_id.as_str()),
        (Layer::Project, "aeterna")
    );
    assert_eq!(record.kind, kind::MEMORY);
    assert_eq!(record.tags, ["ci", "cargo"]);
    assert_eq!(record.metadata, serde_json::json!({"source": "test"}));
    assert_eq!(record.embedder_id, "hash-v1-384");
    assert_eq!(record.content_hash.len(), 64);

    let fetched = service.get(&who, record.id).await.unwrap();
    assert_eq!(&fetched, record);

    let hits = service
        .search(
            &who,
            SearchRequest {
                query: "how are cargo builds cached in CI?".into(),
                layers: None,
                tags: vec![],
                kinds: vec![],
                limit: 5,
                min_score: 0.0,
            },
        )
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].record.id, record.id);
    assert_eq!(hits[0].layer, Layer::Project);
    assert!(hits[0].score > 0.3, "score {}", hits[0].score);

    let updated = service
        .update(
            &who,
            record.id,
            MemoryPatch {
                tags: Some(vec!["ci".into()]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.tags, ["ci"]);
    assert_eq!(updated.content, record.content);

    service.delete(&who, record.id).await.unwrap();
    assert!(matches!(
        service.get(&who, record.id).await,
        Err(MemoryError::NotFound(_))
    ));
    assert!(matches!(
        service.delete(&who, record.id).await,
        Err(MemoryError::NotFound(_))
    ));
    let stats = service.stats().await.unwrap();
    assert_eq!((stats.records, stats.vectors), (0, 0));
}
