use aeterna_memory::{Layer, MemoryError, MemoryPatch, SearchRequest, kind};

use super::*;

#[tokio::test]
async fn add_get_search_delete_round_trip() {
    let (_dir, service) = open_temp().await;
    service.ready().await.unwrap();
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
                explain: false,
                as_of: None,
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

#[tokio::test]
async fn exact_duplicates_in_a_scope_are_stored_once() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let text = "Use `cargo nextest` for the workspace tests.";
    let first = service
        .add(&who, memory(Layer::Project, text))
        .await
        .unwrap();
    let second = service
        .add(&who, memory(Layer::Project, text))
        .await
        .unwrap();
    assert!(!first.deduplicated);
    assert!(second.deduplicated);
    assert_eq!(second.record, first.record);

    // Another scope (layer) is another memory; so is a different text.
    let other_layer = service.add(&who, memory(Layer::Team, text)).await.unwrap();
    assert!(!other_layer.deduplicated);
    assert_ne!(other_layer.record.id, first.record.id);
    let mut other_session = alice();
    other_session.project_id = Some("other".into());
    assert!(
        !service
            .add(&other_session, memory(Layer::Project, text))
            .await
            .unwrap()
            .deduplicated
    );
    let near = service
        .add(&who, memory(Layer::Project, &format!("{text} ")))
        .await
        .unwrap();
    assert!(!near.deduplicated, "only exact duplicates are merged");

    // Within one batch too.
    let batch = service
        .add_batch(
            &who,
            vec![
                memory(Layer::User, "batched"),
                memory(Layer::User, "batched"),
                memory(Layer::User, text),
            ],
        )
        .await
        .unwrap();
    assert_eq!(
        batch.iter().map(|o| o.deduplicated).collect::<Vec<_>>(),
        [false, true, false]
    );
    assert_eq!(batch[0].record.id, batch[1].record.id);
    assert_eq!(
        service.stats().await.unwrap(),
        aeterna_memory::StoreStats {
            records: 6,
            vectors: 6,
            vector_repairs: Default::default(),
        }
    );
}

fn invalid<T: std::fmt::Debug>(result: Result<T, MemoryError>) -> String {
    match result {
        Err(MemoryError::InvalidInput(message)) => message,
        other => panic!("expected invalid input, got {other:?}"),
    }
}

#[tokio::test]
async fn limits_are_enforced_with_errors_naming_field_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let config = MemoryConfig {
        max_content_bytes: 100,
        max_tags: 2,
        max_tag_bytes: 8,
        max_metadata_bytes: 40,
        max_page_size: 5,
        ..Default::default()
    };
    let service = open(dir.path(), config).await;
    let who = alice();

    let message = invalid(
        service
            .add(&who, memory(Layer::Project, &"x".repeat(101)))
            .await,
    );
    assert!(
        message.contains("`content`") && message.contains("101 bytes") && message.contains("100"),
        "{message}"
    );
    let message = invalid(service.add(&who, memory(Layer::Project, "  \n ")).await);
    assert!(message.contains("`content` is empty"), "{message}");

    let mut new = memory(Layer::Project, "tags");
    new.tags = vec!["a".into(), "b".into(), "c".into()];
    let message = invalid(service.add(&who, new).await);
    assert!(
        message.contains("`tags`") && message.contains("3 tags") && message.contains("limit is 2"),
        "{message}"
    );
    let mut new = memory(Layer::Project, "tags");
    new.tags = vec!["far-too-long".into()];
    let message = invalid(service.add(&who, new).await);
    assert!(
        message.contains("`tags[0]`") && message.contains("8 bytes"),
        "{message}"
    );

    let mut new = memory(Layer::Project, "meta");
    new.metadata = serde_json::json!({"note": "x".repeat(50)});
    let message = invalid(service.add(&who, new).await);
    assert!(
        message.contains("`metadata`") && message.contains("40 bytes"),
        "{message}"
    );
    let mut new = memory(Layer::Project, "meta");
    new.metadata = serde_json::json!("not an object");
    assert!(invalid(service.add(&who, new).await).contains("JSON object"));

    let mut new = memory(Layer::Project, "kind");
    new.kind = Some("DROP TABLE".into());
    assert!(invalid(service.add(&who, new).await).contains("`kind`"));

    let request = |limit| SearchRequest {
        query: "anything".into(),
        layers: None,
        tags: vec![],
        kinds: vec![],
        limit,
        min_score: 0.0,
        explain: false,
        as_of: None,
    };
    assert!(invalid(service.search(&who, request(6)).await).contains("1 to 5"));
    assert!(invalid(service.search(&who, request(0)).await).contains("`limit`"));

    // In a batch, the error names the item.
    let batch = vec![
        memory(Layer::Project, "fine"),
        memory(Layer::Project, &"y".repeat(200)),
    ];
    let message = invalid(service.add_batch(&who, batch).await);
    assert!(message.contains("`items[1].content`"), "{message}");
    // Nothing of a refused batch was written.
    assert_eq!(service.stats().await.unwrap().records, 0);
}

#[tokio::test]
async fn a_layer_without_scope_is_refused() {
    let (_dir, service) = open_temp().await;
    let mut who = alice();
    who.session_id = None;
    match service.add(&who, memory(Layer::Session, "x")).await {
        Err(MemoryError::MissingScope {
            layer: Layer::Session,
            field: "session_id",
        }) => {}
        other => panic!("expected MissingScope, got {other:?}"),
    }
    let mut request = SearchRequest {
        query: "x".into(),
        layers: Some(vec![Layer::Session]),
        tags: vec![],
        kinds: vec![],
        limit: 3,
        min_score: 0.0,
        explain: false,
        as_of: None,
    };
    assert!(matches!(
        service.search(&who, request.clone()).await,
        Err(MemoryError::MissingScope { .. })
    ));
    // The company layer always has a scope.
    who = aeterna_memory::Identity::new("acme");
    let added = service
        .add(&who, memory(Layer::Company, "company-wide"))
        .await
        .unwrap();
    assert_eq!(added.record.scope_id, aeterna_memory::COMPANY_SCOPE);
    request.layers = None;
    assert!(service.search(&who, request).await.is_ok());
    assert!(matches!(
        service
            .add(
                &aeterna_memory::Identity::new(" "),
                memory(Layer::Company, "x")
            )
            .await,
        Err(MemoryError::InvalidInput(_))
    ));
}

#[tokio::test]
async fn updates_change_content_vector_and_tags_and_refuse_duplicates() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let first = service
        .add(
            &who,
            memory(
                Layer::Project,
                "Deploys go through the staging cluster first.",
            ),
        )
        .await
        .unwrap()
        .record;
    let second = service
        .add(
            &who,
            memory(Layer::Project, "Release notes live in CHANGELOG.md."),
        )
        .await
        .unwrap()
        .record;

    let updated = service
        .update(
            &who,
            first.id,
            MemoryPatch {
                content: Some("Database migrations run automatically at startup.".into()),
                metadata: Some(serde_json::json!({"reviewed": true})),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.id, first.id);
    assert_eq!(updated.created_at, first.created_at);
    assert!(updated.updated_at >= first.updated_at);
    assert_ne!(updated.content_hash, first.content_hash);
    assert_eq!(updated.metadata, serde_json::json!({"reviewed": true}));

    let search = |query: &str| SearchRequest {
        query: query.into(),
        layers: None,
        tags: vec![],
        kinds: vec![],
        limit: 1,
        min_score: 0.0,
        explain: false,
        as_of: None,
    };
    let hits = service
        .search(&who, search("when do database migrations run"))
        .await
        .unwrap();
    assert_eq!(hits[0].record.id, first.id);
    let hits = service
        .search(&who, search("staging cluster deploys"))
        .await
        .unwrap();
    assert!(
        hits.iter().all(|hit| hit.score < 0.3),
        "the old content is gone: {hits:?}"
    );

    let error = service
        .update(
            &who,
            first.id,
            MemoryPatch {
                content: second.content.clone(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains(&second.id.to_string()),
        "{error}"
    );
    assert!(matches!(
        service.update(&who, first.id, MemoryPatch::default()).await,
        Err(MemoryError::InvalidInput(_))
    ));
    assert!(matches!(
        service
            .update(
                &who,
                uuid::Uuid::now_v7(),
                MemoryPatch {
                    tags: Some(vec![]),
                    ..Default::default()
                }
            )
            .await,
        Err(MemoryError::NotFound(_))
    ));
}

/// Each read below follows a read of the same record before a change (the embedded profile
/// keeps records it has read in memory): every committed change is seen at once.
#[tokio::test]
async fn reads_after_a_change_see_the_change() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let mut new = memory(Layer::Project, "The staging cluster runs on three nodes.");
    new.tags = vec!["ops".into()];
    let record = service.add(&who, new).await.unwrap().record;
    let search = SearchRequest {
        query: "how many nodes does the staging cluster run on".into(),
        layers: None,
        tags: vec![],
        kinds: vec![],
        limit: 5,
        min_score: 0.0,
        explain: false,
        as_of: None,
    };
    assert_eq!(service.get(&who, record.id).await.unwrap(), record);
    let hits = service.search(&who, search.clone()).await.unwrap();
    assert_eq!(hits[0].record, record);

    let updated = service
        .update(
            &who,
            record.id,
            MemoryPatch {
                content: Some("The staging cluster runs on five nodes.".into()),
                tags: Some(vec!["ops".into(), "staging".into()]),
                metadata: Some(serde_json::json!({"checked": true})),
                mode: None,
                valid_from: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        updated.content.as_deref(),
        Some("The staging cluster runs on five nodes.")
    );
    assert_eq!(service.get(&who, record.id).await.unwrap(), updated);
    let hits = service.search(&who, search.clone()).await.unwrap();
    assert_eq!(hits[0].record, updated);

    service.delete(&who, record.id).await.unwrap();
    assert!(matches!(
        service.get(&who, record.id).await,
        Err(MemoryError::NotFound(_))
    ));
    let hits = service.search(&who, search).await.unwrap();
    assert!(
        hits.iter().all(|hit| hit.record.id != record.id),
        "{hits:?}"
    );
}

#[tokio::test]
async fn every_committed_write_is_broadcast() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let mut changes = service.subscribe();
    let added = service
        .add(&who, memory(Layer::Session, "watch me"))
        .await
        .unwrap()
        .record;
    service
        .add(&who, memory(Layer::Session, "watch me"))
        .await
        .unwrap(); // deduplicated: no write
    service
        .update(
            &who,
            added.id,
            MemoryPatch {
                tags: Some(vec!["t".into()]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    service.delete(&who, added.id).await.unwrap();
    let _ = service.delete(&who, added.id).await; // not found: no write
    for _ in 0..3 {
        let change = changes.try_recv().expect("a change per write");
        assert_eq!(change.tenant_id, "acme");
        assert_eq!(
            change.scope,
            aeterna_memory::Scope::new(Layer::Session, "s-1")
        );
    }
    assert!(
        changes.try_recv().is_err(),
        "no change for writes that did not happen"
    );
}

#[tokio::test]
async fn secrets_are_redacted_before_storage_and_embedding() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let token = "ghp_Tk9sY2FsRGV2VG9rZW5Gb3JUZXN0czEyMzQ1Ng";
    let mut new = memory(
        Layer::Project,
        &format!("CI pushes with GITHUB_TOKEN={token} to the release repo"),
    );
    new.metadata =
        serde_json::json!({"env": {"DB_PASSWORD": "DB_PASSWORD=hunter2hunter2"}, "note": "plain"});
    let record = service.add(&who, new).await.unwrap().record;
    let content = record.content.clone().unwrap();
    assert!(
        !content.contains(token) && content.contains("[REDACTED:github-token]"),
        "{content}"
    );
    let metadata = record.metadata.to_string();
    assert!(
        !metadata.contains("hunter2") && metadata.contains("plain"),
        "{metadata}"
    );
    assert_eq!(service.get(&who, record.id).await.unwrap(), record);
    // The secret is not searchable either.
    let hits = service
        .search(
            &who,
            SearchRequest {
                query: token.into(),
                layers: None,
                tags: vec![],
                kinds: vec![],
                limit: 5,
                min_score: 0.0,
                explain: false,
                as_of: None,
            },
        )
        .await
        .unwrap();
    assert!(
        hits.iter()
            .all(|hit| !hit.record.content.as_deref().unwrap().contains(token))
    );

    let updated = service
        .update(
            &who,
            record.id,
            MemoryPatch {
                content: Some(format!("rotated: token={token}")),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(!updated.content.unwrap().contains(token));

    // Operators can turn it off.
    let dir = tempfile::tempdir().unwrap();
    let raw = open(
        dir.path(),
        MemoryConfig {
            redact_secrets: false,
            ..Default::default()
        },
    )
    .await;
    let kept = raw
        .add(
            &who,
            memory(Layer::Project, &format!("GITHUB_TOKEN={token}")),
        )
        .await
        .unwrap();
    assert!(kept.record.content.unwrap().contains(token));
}
