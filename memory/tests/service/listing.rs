use aeterna_memory::{Layer, ListRequest, MemoryError, NewMemory};

use super::*;

fn request(limit: usize) -> ListRequest {
    ListRequest {
        layers: None,
        tags: vec![],
        kinds: vec![],
        cursor: None,
        limit,
        metadata_only: false,
    }
}

fn tagged(layer: Layer, content: &str, tags: &[&str], kind: Option<&str>) -> NewMemory {
    NewMemory {
        layer,
        content: content.into(),
        tags: tags.iter().map(|t| t.to_string()).collect(),
        metadata: serde_json::json!({"n": content}),
        kind: kind.map(str::to_string),
    }
}

#[tokio::test]
async fn pages_are_newest_first_and_stable_under_inserts() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    for i in 0..25 {
        service
            .add(&who, memory(Layer::Project, &format!("memory {i}")))
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut page = service.list(&who, request(10)).await.unwrap();
    let mut inserted = 0;
    loop {
        seen.extend(page.items.iter().map(|r| r.content.clone().unwrap()));
        // Writes between pages must neither repeat nor skip older records.
        service
            .add(&who, memory(Layer::Project, &format!("late {inserted}")))
            .await
            .unwrap();
        inserted += 1;
        let Some(cursor) = page.next_cursor else {
            break;
        };
        page = service
            .list(
                &who,
                ListRequest {
                    cursor: Some(cursor),
                    ..request(10)
                },
            )
            .await
            .unwrap();
    }
    let expected: Vec<String> = (0..25).rev().map(|i| format!("memory {i}")).collect();
    assert_eq!(seen, expected);

    let first = service.list(&who, request(100)).await.unwrap();
    assert_eq!(first.items.len(), 25 + inserted);
    assert_eq!(first.next_cursor, None);
    assert_eq!(
        first.items[0].content.as_deref(),
        Some(format!("late {}", inserted - 1).as_str())
    );
}

#[tokio::test]
async fn metadata_only_listings_leave_content_out() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    service
        .add(&who, tagged(Layer::User, "secret-ish body", &["x"], None))
        .await
        .unwrap();
    let page = service
        .list(
            &who,
            ListRequest {
                metadata_only: true,
                ..request(5)
            },
        )
        .await
        .unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].content, None);
    assert_eq!(page.items[0].tags, ["x"]);
    assert_eq!(
        page.items[0].metadata,
        serde_json::json!({"n": "secret-ish body"})
    );
    let json = serde_json::to_value(&page.items[0]).unwrap();
    assert!(json.get("content").is_none());
}

#[tokio::test]
async fn listings_filter_by_layers_tags_and_kinds() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    service
        .add(
            &who,
            tagged(Layer::Project, "p rust db", &["rust", "db"], None),
        )
        .await
        .unwrap();
    service
        .add(
            &who,
            tagged(Layer::Project, "p rust", &["rust"], Some("note")),
        )
        .await
        .unwrap();
    service
        .add(&who, tagged(Layer::Session, "s db", &["db"], None))
        .await
        .unwrap();
    service
        .add(&who, tagged(Layer::Team, "t none", &[], Some("hindsight")))
        .await
        .unwrap();
    let contents = |page: aeterna_memory::Page| {
        let mut items: Vec<String> = page.items.into_iter().map(|r| r.content.unwrap()).collect();
        items.sort();
        items
    };

    let project = service
        .list(
            &who,
            ListRequest {
                layers: Some(vec![Layer::Project]),
                ..request(10)
            },
        )
        .await
        .unwrap();
    assert_eq!(contents(project), ["p rust", "p rust db"]);
    let rust_db = service
        .list(
            &who,
            ListRequest {
                tags: vec!["rust".into(), "db".into()],
                ..request(10)
            },
        )
        .await
        .unwrap();
    assert_eq!(contents(rust_db), ["p rust db"]);
    let db = service
        .list(
            &who,
            ListRequest {
                tags: vec!["db".into()],
                ..request(10)
            },
        )
        .await
        .unwrap();
    assert_eq!(contents(db), ["p rust db", "s db"]);
    let kinds = service
        .list(
            &who,
            ListRequest {
                kinds: vec!["note".into(), "hindsight".into()],
                ..request(10)
            },
        )
        .await
        .unwrap();
    assert_eq!(contents(kinds), ["p rust", "t none"]);
    let none = service
        .list(
            &who,
            ListRequest {
                tags: vec!["missing".into()],
                ..request(10)
            },
        )
        .await
        .unwrap();
    assert!(none.items.is_empty());

    // Retagging replaces the tags listings filter by.
    let session_db = service
        .list(
            &who,
            ListRequest {
                layers: Some(vec![Layer::Session]),
                ..request(10)
            },
        )
        .await
        .unwrap();
    let patch = aeterna_memory::MemoryPatch {
        tags: Some(vec!["ops".into(), "ops".into(), "cache".into()]),
        ..Default::default()
    };
    service
        .update(&who, session_db.items[0].id, patch)
        .await
        .unwrap();
    let by_tag = |tag: &'static str| {
        let service = &service;
        let who = &who;
        async move {
            let request = ListRequest {
                tags: vec![tag.into()],
                ..request(10)
            };
            contents(service.list(who, request).await.unwrap())
        }
    };
    assert_eq!(by_tag("db").await, ["p rust db"]);
    assert_eq!(by_tag("ops").await, ["s db"]);
    assert_eq!(by_tag("cache").await, ["s db"]);

    // Another session of the same user does not see this session's memories, but shares the
    // project's.
    let mut other = alice();
    other.session_id = Some("s-2".into());
    let visible = service.list(&other, request(10)).await.unwrap();
    assert_eq!(contents(visible), ["p rust", "p rust db", "t none"]);
}

#[tokio::test]
async fn bad_cursors_and_limits_are_clear_errors() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    for cursor in ["nonsense", "c1_", "'; DROP TABLE memories; --"] {
        match service
            .list(
                &who,
                ListRequest {
                    cursor: Some(cursor.into()),
                    ..request(5)
                },
            )
            .await
        {
            Err(MemoryError::InvalidInput(message)) => {
                assert!(message.contains("`cursor`"), "{message}")
            }
            other => panic!("expected invalid cursor, got {other:?}"),
        }
    }
    match service.list(&who, request(101)).await {
        Err(MemoryError::InvalidInput(message)) => {
            assert!(message.contains("1 to 100"), "{message}")
        }
        other => panic!("expected invalid limit, got {other:?}"),
    }
}
