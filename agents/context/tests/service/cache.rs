//! The assembled-context cache: hits on repeat, misses after writes to a scope it read.

use std::sync::Arc;

use aeterna_context::{AssembleRequest, CacheConfig, ContextArchitect, ContextConfig};
use aeterna_memory::service::CHANGE_BUFFER;
use aeterna_memory::{Identity, Layer, MemoryPatch};

use crate::{add, alice, globex, open_temp};

fn request() -> AssembleRequest {
    AssembleRequest {
        query: "payment retry backoff".into(),
        ..AssembleRequest::default()
    }
}

/// Stores a project memory and caches the assembly of [`request`] over it, summaries
/// generated first (generating them later would, rightly, invalidate the entry).
async fn cache_an_assembly(architect: &ContextArchitect, who: &Identity) {
    add(
        architect,
        who,
        Layer::Project,
        &["Payment retry uses exponential backoff."],
    )
    .await;
    architect.refresh(who, None).await.expect("refresh");
    architect.assemble(who, request()).await.expect("assemble");
    architect.assemble(who, request()).await.expect("assemble");
    assert_eq!(architect.metrics().cache_hits(), 1, "the entry is cached");
}

#[tokio::test]
async fn repeat_is_a_hit_and_a_write_to_a_read_scope_is_a_miss() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    add(
        &architect,
        &who,
        Layer::Project,
        &["Payment retry uses exponential backoff."],
    )
    .await;
    let metrics = architect.metrics();

    let first = architect.assemble(&who, request()).await.expect("assemble");
    let second = architect.assemble(&who, request()).await.expect("assemble");
    assert!(Arc::ptr_eq(&first, &second));
    assert_eq!((metrics.cache_hits(), metrics.cache_misses()), (1, 1));

    // A write to a scope the assembly read (the session, though nothing came from it).
    let ids = add(
        &architect,
        &who,
        Layer::Session,
        &["Payment retry backoff is capped at 30 s."],
    )
    .await;
    let third = architect.assemble(&who, request()).await.expect("assemble");
    assert_eq!(metrics.cache_misses(), 2);
    assert!(
        third.sources.iter().any(|s| s.id == ids[0]),
        "the new memory is in the new result"
    );

    // Updates and deletes invalidate too.
    let id = ids[0].parse().expect("uuid");
    let patch = MemoryPatch {
        content: Some("Payment retry backoff is capped at 60 s.".into()),
        ..MemoryPatch::default()
    };
    architect
        .memory()
        .update(&who, id, patch)
        .await
        .expect("update");
    let fourth = architect.assemble(&who, request()).await.expect("assemble");
    assert_eq!(metrics.cache_misses(), 3);
    assert!(fourth.content.contains("60 s"));
    architect.memory().delete(&who, id).await.expect("delete");
    let fifth = architect.assemble(&who, request()).await.expect("assemble");
    assert_eq!(metrics.cache_misses(), 4);
    assert!(!fifth.content.contains("60 s"));
}

#[tokio::test]
async fn writes_elsewhere_keep_the_entry() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    cache_an_assembly(&architect, &who).await;

    // Another project of the same tenant, and the same project of another tenant.
    let elsewhere = Identity {
        project_id: Some("billing".into()),
        ..alice()
    };
    add(
        &architect,
        &elsewhere,
        Layer::Project,
        &["Billing retry uses a fixed delay."],
    )
    .await;
    let other_tenant = globex();
    add(
        &architect,
        &other_tenant,
        Layer::Project,
        &["Payment retry at globex."],
    )
    .await;

    architect.assemble(&who, request()).await.expect("assemble");
    assert_eq!(architect.metrics().cache_hits(), 2);
}

/// More writes between two assemblies than the change buffer holds: the notification of the
/// write that matters is dropped, so the whole cache must go.
#[tokio::test]
async fn a_burst_of_writes_past_the_change_buffer_clears_the_cache() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    cache_an_assembly(&architect, &who).await;
    let ids = add(
        &architect,
        &who,
        Layer::Session,
        &["Payment retry backoff is capped at 30 s."],
    )
    .await;
    let other_tenant = globex();
    let burst: Vec<String> = (0..CHANGE_BUFFER + 100)
        .map(|n| format!("Globex deploy note number {n}."))
        .collect();
    for chunk in burst.chunks(200) {
        let texts: Vec<&str> = chunk.iter().map(String::as_str).collect();
        add(&architect, &other_tenant, Layer::Project, &texts).await;
    }

    let after = architect.assemble(&who, request()).await.expect("assemble");
    assert_eq!(
        architect.metrics().cache_misses(),
        2,
        "not served from the cache"
    );
    assert!(
        after.sources.iter().any(|s| s.id == ids[0]),
        "the memory whose notification was dropped is in the result"
    );
}

#[tokio::test]
async fn the_key_covers_identity_and_options() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    add(
        &architect,
        &who,
        Layer::Project,
        &["Payment retry uses exponential backoff."],
    )
    .await;
    architect.assemble(&who, request()).await.expect("assemble");
    let variants = [
        AssembleRequest {
            token_budget: Some(1000),
            ..request()
        },
        AssembleRequest {
            min_relevance: Some(0.5),
            ..request()
        },
        AssembleRequest {
            layers: Some(vec![Layer::Project]),
            ..request()
        },
        AssembleRequest {
            query: "payment retry".into(),
            ..request()
        },
    ];
    for variant in variants {
        architect.assemble(&who, variant).await.expect("assemble");
    }
    let bob = Identity {
        user_id: Some("bob".into()),
        ..alice()
    };
    architect.assemble(&bob, request()).await.expect("assemble");
    assert_eq!(architect.metrics().cache_hits(), 0);
    assert_eq!(architect.metrics().cache_misses(), 6);
}

#[tokio::test]
async fn entries_expire_with_the_ttl() {
    let config = ContextConfig {
        cache: CacheConfig {
            ttl_secs: 0,
            ..CacheConfig::default()
        },
        ..ContextConfig::default()
    };
    let (_dir, architect) = open_temp(config).await;
    let who = alice();
    architect.assemble(&who, request()).await.expect("assemble");
    architect.assemble(&who, request()).await.expect("assemble");
    assert_eq!(architect.metrics().cache_hits(), 0);
}

#[tokio::test]
async fn a_summary_refresh_invalidates_results_that_read_its_scope() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    add(
        &architect,
        &who,
        Layer::Project,
        &["Payment retry uses exponential backoff."],
    )
    .await;
    architect.assemble(&who, request()).await.expect("assemble");
    architect
        .refresh(&who, Some(&[Layer::Project]))
        .await
        .expect("refresh");
    architect.assemble(&who, request()).await.expect("assemble");
    assert_eq!(architect.metrics().cache_hits(), 0);
}
