//! Forgetting: by filter with a dry run, per-layer retention, a tenant purge, and the audit
//! log that records each without the content.

use std::collections::BTreeMap;

use aeterna_memory::{
    ForgetRequest, Identity, Layer, MemoryConfig, MemoryError, RetentionConfig, SearchRequest,
    with_pool,
};

use super::*;

fn tagged(layer: Layer, content: &str, tag: &str) -> aeterna_memory::NewMemory {
    let mut new = memory(layer, content);
    new.tags = vec![tag.into()];
    new
}

async fn found(service: &MemoryService, who: &Identity, query: &str) -> Vec<String> {
    service
        .search(
            who,
            SearchRequest {
                query: query.into(),
                limit: 20,
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .into_iter()
        .map(|hit| hit.record.content.unwrap_or_default())
        .collect()
}

/// The audit rows of `tenant`: (actor, action, count, detail).
async fn audit(service: &MemoryService, tenant: &str) -> Vec<(String, String, i64, String)> {
    with_pool!(service.database(), |pool| sqlx::query_as(
        "SELECT actor, action, count, detail FROM memory_audit WHERE tenant_id = $1 ORDER BY seq"
    )
    .bind(tenant)
    .fetch_all(pool)
    .await)
    .unwrap()
}

#[tokio::test]
async fn forgetting_by_tag_counts_first_then_removes_everywhere() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    for n in 0..3 {
        service
            .add(
                &who,
                tagged(
                    Layer::Project,
                    &format!("Scratch idea {n} about caching"),
                    "scratch",
                ),
            )
            .await
            .unwrap();
    }
    service
        .add(
            &who,
            tagged(Layer::Project, "Keep: caching lives in the CDN", "keep"),
        )
        .await
        .unwrap();
    let vectors_before = service.stats().await.unwrap().vectors;

    let select = |dry_run| ForgetRequest {
        tags: vec!["scratch".into()],
        dry_run,
        ..Default::default()
    };
    let counted = service.forget(&who, select(true)).await.unwrap();
    assert_eq!(
        (counted.matched, counted.forgotten, counted.ids.len()),
        (3, 0, 3)
    );
    assert_eq!(found(&service, &who, "caching").await.len(), 4);
    assert!(
        audit(&service, "acme").await.is_empty(),
        "a dry run writes no audit row"
    );

    let forgot = service.forget(&who, select(false)).await.unwrap();
    assert_eq!(
        (forgot.matched, forgot.forgotten, forgot.more),
        (3, 3, false)
    );
    assert_eq!(forgot.scopes.len(), 1);
    assert_eq!(
        found(&service, &who, "caching idea").await,
        ["Keep: caching lives in the CDN"]
    );
    assert_eq!(service.stats().await.unwrap().vectors, vectors_before - 3);
    for id in &forgot.ids {
        assert!(matches!(
            service.get(&who, *id).await,
            Err(MemoryError::NotFound(_))
        ));
    }

    let rows = audit(&service, "acme").await;
    assert_eq!(rows.len(), 1);
    let (actor, action, count, detail) = &rows[0];
    assert_eq!(
        (actor.as_str(), action.as_str(), *count),
        ("user:alice", "forget", 3)
    );
    assert!(detail.contains(&forgot.ids[0].to_string()), "{detail}");
    assert!(
        !detail.contains("Scratch"),
        "the audit keeps no content: {detail}"
    );

    let again = service.forget(&who, select(false)).await.unwrap();
    assert_eq!((again.matched, again.forgotten), (0, 0));
}

#[tokio::test]
async fn forgetting_needs_a_selection_and_stays_in_the_callers_scopes() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let refused = service
        .forget(&who, ForgetRequest::default())
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("nothing selected"),
        "{refused}"
    );

    let mut bob = alice();
    bob.user_id = Some("bob".into());
    service
        .add(&bob, memory(Layer::User, "Bob prefers tabs"))
        .await
        .unwrap();
    service
        .add(&who, memory(Layer::User, "Alice prefers spaces"))
        .await
        .unwrap();
    let forgot = service
        .forget(
            &who,
            ForgetRequest {
                layers: Some(vec![Layer::User]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(forgot.forgotten, 1);
    assert_eq!(found(&service, &bob, "prefers").await, ["Bob prefers tabs"]);
}

#[tokio::test]
async fn retention_expires_only_the_layers_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let config = MemoryConfig {
        retention: RetentionConfig {
            days: BTreeMap::from([(Layer::Session, 0)]),
            ..RetentionConfig::default()
        },
        ..MemoryConfig::default()
    };
    let service = open(dir.path(), config).await;
    let who = alice();
    service
        .add(
            &who,
            memory(Layer::Session, "The session scratchpad says hello"),
        )
        .await
        .unwrap();
    service
        .add(&who, memory(Layer::Project, "The project says hello"))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    let expired = service.expire().await.unwrap();
    assert_eq!(expired.len(), 1, "{expired:?}");
    assert_eq!(
        (expired[0].tenant_id.as_str(), expired[0].forgotten),
        ("acme", 1)
    );
    assert_eq!(
        found(&service, &who, "says hello").await,
        ["The project says hello"]
    );
    let rows = audit(&service, "acme").await;
    assert_eq!(
        rows.iter()
            .map(|(actor, action, count, _)| (actor.as_str(), action.as_str(), *count))
            .collect::<Vec<_>>(),
        [("retention", "expire", 1)]
    );
}

#[tokio::test]
async fn a_purge_removes_one_tenant_and_nothing_of_another() {
    let (_dir, service) = open_temp().await;
    let acme = alice();
    let mut globex = alice();
    globex.tenant_id = "globex".into();
    for n in 0..7 {
        service
            .add(&acme, memory(Layer::Project, &format!("acme fact {n}")))
            .await
            .unwrap();
    }
    service
        .add(&globex, memory(Layer::Project, "globex fact"))
        .await
        .unwrap();
    assert_eq!(service.purge_tenant("acme", "operator").await.unwrap(), 7);
    assert!(found(&service, &acme, "fact").await.is_empty());
    assert_eq!(found(&service, &globex, "fact").await, ["globex fact"]);
    assert_eq!(audit(&service, "acme").await[0].1, "purge");
    assert!(audit(&service, "globex").await.is_empty());
}

#[tokio::test]
async fn a_forgotten_note_is_taken_out_of_the_notes_that_link_it() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let note = |content: String, related: Vec<String>| aeterna_memory::NewMemory {
        layer: Layer::Project,
        content,
        tags: Vec::new(),
        metadata: serde_json::json!({ "title": "a note", "related": related }),
        kind: Some(aeterna_memory::kind::NOTE.into()),
    };
    let earlier = service
        .add(
            &who,
            note(
                "# Rotating the staging signing key\n\nUse the vault CLI.\n".into(),
                vec![],
            ),
        )
        .await
        .unwrap()
        .record;
    let other = service
        .add(&who, note("# Pinning the toolchain\n".into(), vec![]))
        .await
        .unwrap()
        .record;
    let linking = service
        .add(
            &who,
            note(
                format!(
                    "# Key rotation, again\n\n## Related notes\n\n\
                     - [Rotating the staging signing key](aeterna://notes/{}) — Use the vault CLI.\n\
                     - [Pinning the toolchain](aeterna://notes/{})\n\nDone.\n",
                    earlier.id, other.id
                ),
                vec![earlier.id.to_string(), other.id.to_string()],
            ),
        )
        .await
        .unwrap()
        .record;

    let outcome = service
        .forget(
            &who,
            ForgetRequest {
                ids: vec![earlier.id],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(outcome.forgotten, 1);

    let rewritten = service.get(&who, linking.id).await.unwrap();
    let content = rewritten.content.unwrap();
    assert!(!content.contains(&earlier.id.to_string()), "{content}");
    assert!(
        !content.contains("Rotating the staging signing key"),
        "{content}"
    );
    assert!(
        content.contains(&format!("aeterna://notes/{}", other.id)),
        "{content}"
    );
    assert!(content.starts_with("# Key rotation, again") && content.ends_with("Done.\n"));
    assert_eq!(
        rewritten.metadata["related"],
        serde_json::json!([other.id.to_string()])
    );
    // A fix, not a new version: no history keeps the link.
    assert_eq!(rewritten.version, 1);
    let history = service.history(&who, linking.id).await.unwrap();
    assert_eq!(history.versions.len(), 1);
    let hits = found(&service, &who, "rotating the staging signing key vault CLI").await;
    assert!(
        hits.iter()
            .all(|hit| !hit.contains("Rotating the staging signing key")),
        "the forgotten note's words are searchable nowhere: {hits:?}"
    );
}
