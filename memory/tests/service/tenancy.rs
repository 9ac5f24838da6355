use aeterna_memory::{Identity, ListRequest, MemoryError, MemoryPatch, SearchRequest};

use super::*;

/// Tenant B with exactly the same scope ids as tenant A.
fn bob_of_other_tenant() -> Identity {
    Identity {
        tenant_id: "globex".into(),
        ..alice()
    }
}

#[tokio::test]
async fn tenants_never_see_each_others_memories() {
    let (_dir, service) = open_temp().await;
    let a = alice();
    let b = bob_of_other_tenant();
    let mut ids = Vec::new();
    for layer in aeterna_memory::Layer::ALL {
        let added = service
            .add(
                &a,
                memory(
                    layer,
                    &format!("acme's private plan for {layer}: migrate billing to Postgres"),
                ),
            )
            .await
            .unwrap();
        ids.push(added.record.id);
    }

    for id in &ids {
        assert!(matches!(
            service.get(&b, *id).await,
            Err(MemoryError::NotFound(_))
        ));
        let patch = MemoryPatch {
            content: Some("hijacked".into()),
            ..Default::default()
        };
        assert!(matches!(
            service.update(&b, *id, patch).await,
            Err(MemoryError::NotFound(_))
        ));
        assert!(matches!(
            service.delete(&b, *id).await,
            Err(MemoryError::NotFound(_))
        ));
        // Untouched for its owner.
        assert!(
            service
                .get(&a, *id)
                .await
                .unwrap()
                .content
                .unwrap()
                .starts_with("acme's private plan")
        );
    }
    let search = SearchRequest {
        query: "private plan migrate billing Postgres".into(),
        layers: None,
        tags: vec![],
        kinds: vec![],
        limit: 50,
        min_score: 0.0,
        explain: false,
        as_of: None,
    };
    assert!(service.search(&b, search.clone()).await.unwrap().is_empty());
    assert_eq!(service.search(&a, search).await.unwrap().len(), ids.len());
    let list = ListRequest {
        layers: None,
        tags: vec![],
        kinds: vec![],
        cursor: None,
        limit: 50,
        metadata_only: false,
    };
    assert!(
        service
            .list(&b, list.clone())
            .await
            .unwrap()
            .items
            .is_empty()
    );

    // The same content in the other tenant is its own record, not a duplicate of acme's.
    let text = "acme's private plan for project: migrate billing to Postgres";
    let theirs = service.add(&b, memory(Layer::Project, text)).await.unwrap();
    assert!(!theirs.deduplicated);
    assert_eq!(theirs.record.tenant_id, "globex");
    assert_eq!(service.list(&b, list).await.unwrap().items.len(), 1);

    // A cursor taken from tenant A's listing shows B nothing of A's.
    let page = service
        .list(
            &a,
            ListRequest {
                layers: None,
                tags: vec![],
                kinds: vec![],
                cursor: None,
                limit: 2,
                metadata_only: false,
            },
        )
        .await
        .unwrap();
    let stolen = ListRequest {
        cursor: page.next_cursor,
        layers: None,
        tags: vec![],
        kinds: vec![],
        limit: 50,
        metadata_only: false,
    };
    let items = service.list(&b, stolen).await.unwrap().items;
    assert!(items.iter().all(|r| r.tenant_id == "globex"));
}
