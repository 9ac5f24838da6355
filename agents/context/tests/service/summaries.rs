//! Layer summaries: depth budgets, regeneration on change, skips on unchanged sources,
//! persistence and triggers.

use std::collections::BTreeMap;

use aeterna_context::{ContextConfig, Depth, SummaryConfig, Tokenizer, TriggerConfig};
use aeterna_memory::Layer;

use crate::{add, alice, eventually, open, open_temp};

fn corpus(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                "Incident {i}: the ledger sync job {i} failed after the deploy of build {}. \
                 The retry worker restarted it and payments resumed within {} minutes.",
                1000 + i,
                i % 17 + 1
            )
        })
        .collect()
}

#[tokio::test]
async fn depths_respect_their_budgets() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    let texts = corpus(200);
    add(
        &architect,
        &who,
        Layer::Project,
        &texts.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await;
    let tokenizer = Tokenizer::get().expect("bpe");
    let budgets = SummaryConfig::default();
    let mut previous = 0;
    for depth in Depth::ALL {
        let summary = architect
            .summary(&who, Layer::Project, depth)
            .await
            .expect("summary");
        assert_eq!(summary.depth, depth);
        assert_eq!(summary.token_count, tokenizer.count(&summary.content));
        assert!(
            summary.token_count <= budgets.budget(depth),
            "{depth}: {}",
            summary.token_count
        );
        assert!(
            summary.token_count > previous,
            "{depth} is longer than the depth before"
        );
        assert!(
            summary.token_count * 2 > budgets.budget(depth),
            "{depth} uses its budget"
        );
        assert_eq!(summary.source_count, 200);
        assert_eq!(summary.generator, "extractive-v1");
        previous = summary.token_count;
    }
    assert_eq!(
        architect.metrics().summary_generations(),
        1,
        "one generation serves all depths"
    );
}

#[tokio::test]
async fn summaries_change_with_their_sources_and_are_not_regenerated_otherwise() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    let metrics = architect.metrics().clone();
    add(
        &architect,
        &who,
        Layer::Team,
        &[
            "The team deploys on Tuesdays.",
            "Code review needs two approvals.",
        ],
    )
    .await;
    let before = architect
        .summary(&who, Layer::Team, Depth::Detailed)
        .await
        .expect("summary");
    assert_eq!(metrics.summary_generations(), 1);

    let outcome = architect
        .refresh(&who, Some(&[Layer::Team]))
        .await
        .expect("refresh");
    assert!(!outcome[0].regenerated);
    assert_eq!(outcome[0].source_hash, before.source_hash);
    assert_eq!(
        (metrics.summary_generations(), metrics.summary_skips()),
        (1, 1)
    );
    let same = architect
        .summary(&who, Layer::Team, Depth::Detailed)
        .await
        .expect("summary");
    assert_eq!(same, before, "unchanged sources keep the stored summary");

    add(
        &architect,
        &who,
        Layer::Team,
        &["Hotfixes skip the release train but need a rollback plan."],
    )
    .await;
    let outcome = architect
        .refresh(&who, Some(&[Layer::Team]))
        .await
        .expect("refresh");
    assert!(outcome[0].regenerated);
    assert_eq!(metrics.summary_generations(), 2);
    let after = architect
        .summary(&who, Layer::Team, Depth::Detailed)
        .await
        .expect("summary");
    assert_ne!(after.source_hash, before.source_hash);
    assert_eq!(after.source_count, 3);
    assert!(after.content.contains("rollback plan"), "{}", after.content);
}

#[tokio::test]
async fn summaries_persist_across_restarts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let who = alice();
    let stored = {
        let architect = open(dir.path(), ContextConfig::default()).await;
        add(
            &architect,
            &who,
            Layer::Org,
            &["The org runs quarterly planning in March."],
        )
        .await;
        architect
            .summary(&who, Layer::Org, Depth::Paragraph)
            .await
            .expect("summary")
    };
    let architect = open(dir.path(), ContextConfig::default()).await;
    let loaded = architect
        .summary(&who, Layer::Org, Depth::Paragraph)
        .await
        .expect("summary");
    assert_eq!(loaded, stored);
    assert_eq!(
        architect.metrics().summary_generations(),
        0,
        "read from SQL, not regenerated"
    );
}

#[tokio::test]
async fn n_changes_trigger_a_background_refresh() {
    let mut layers = BTreeMap::new();
    layers.insert(
        Layer::Session,
        TriggerConfig {
            interval_secs: 0,
            after_changes: 3,
            min_gap_secs: 0,
        },
    );
    let config = ContextConfig {
        summaries: SummaryConfig {
            layers,
            ..SummaryConfig::default()
        },
        ..ContextConfig::default()
    };
    let (_dir, architect) = open_temp(config).await;
    let who = alice();
    add(
        &architect,
        &who,
        Layer::Session,
        &["First note about the flaky test."],
    )
    .await;
    add(
        &architect,
        &who,
        Layer::Session,
        &["Second note: it fails only under load."],
    )
    .await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(
        architect.metrics().summary_generations(),
        0,
        "two changes are below the threshold"
    );
    add(
        &architect,
        &who,
        Layer::Session,
        &["Third note: the fake clock fixed it."],
    )
    .await;
    let metrics = architect.metrics().clone();
    eventually("the background refresh", || {
        metrics.summary_generations() == 1
    })
    .await;
    let summary = architect
        .summary(&who, Layer::Session, Depth::Detailed)
        .await
        .expect("summary");
    assert_eq!(summary.source_count, 3);
    assert_eq!(metrics.summary_generations(), 1);
}

/// A scope under a stream of writes is regenerated once per gap, with every write of the gap
/// in the next summary, not once per `after_changes` writes.
#[tokio::test]
async fn a_scope_written_without_pause_is_regenerated_once_per_gap() {
    let config = ContextConfig {
        summaries: SummaryConfig {
            triggers: TriggerConfig {
                interval_secs: 0,
                after_changes: 1,
                min_gap_secs: 2,
            },
            ..SummaryConfig::default()
        },
        ..ContextConfig::default()
    };
    let (_dir, architect) = open_temp(config).await;
    let who = alice();
    let metrics = architect.metrics().clone();
    add(
        &architect,
        &who,
        Layer::Session,
        &["First: the deploy failed."],
    )
    .await;
    eventually("the first refresh", || metrics.summary_generations() == 1).await;
    for note in [
        "Second: the cache was cold.",
        "Third: warming it fixed the deploy.",
        "Fourth: the warm-up now runs in CI.",
    ] {
        add(&architect, &who, Layer::Session, &[note]).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        metrics.summary_generations(),
        1,
        "writes within the gap wait for it"
    );
    eventually("the refresh when the gap ends", || {
        metrics.summary_generations() == 2
    })
    .await;
    let summary = architect
        .summary(&who, Layer::Session, Depth::Detailed)
        .await
        .expect("summary");
    assert_eq!(
        summary.source_count, 4,
        "the gap's writes are summarised together"
    );
    assert_eq!(metrics.summary_generations(), 2);
}

#[tokio::test]
async fn the_interval_refreshes_scopes_with_pending_changes() {
    let config = ContextConfig {
        summaries: SummaryConfig {
            triggers: TriggerConfig {
                interval_secs: 1,
                after_changes: 0,
                min_gap_secs: 0,
            },
            ..SummaryConfig::default()
        },
        ..ContextConfig::default()
    };
    let (_dir, architect) = open_temp(config).await;
    let who = alice();
    add(
        &architect,
        &who,
        Layer::User,
        &["Alice prefers tabs over spaces."],
    )
    .await;
    let metrics = architect.metrics().clone();
    eventually("the interval refresh", || {
        metrics.summary_generations() == 1
    })
    .await;
    let summary = architect
        .summary(&who, Layer::User, Depth::Sentence)
        .await
        .expect("summary");
    assert!(summary.content.contains("tabs"));
}

#[tokio::test]
async fn an_assembly_that_finds_no_summary_asks_for_one() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    add(
        &architect,
        &who,
        Layer::Project,
        &["Payment retry uses exponential backoff."],
    )
    .await;
    let request = aeterna_context::AssembleRequest {
        query: "payment retry".into(),
        ..Default::default()
    };
    architect.assemble(&who, request).await.expect("assemble");
    let metrics = architect.metrics().clone();
    eventually("the requested refresh", || {
        metrics.summary_generations() == 1
    })
    .await;
}

#[tokio::test]
async fn an_edited_memory_regenerates_the_summary() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    let ids = add(
        &architect,
        &who,
        Layer::Team,
        &["The team deploys on Tuesdays."],
    )
    .await;
    architect
        .refresh(&who, Some(&[Layer::Team]))
        .await
        .expect("refresh");
    let patch = aeterna_memory::MemoryPatch {
        content: Some("The team deploys on Thursdays.".into()),
        ..Default::default()
    };
    let id = ids[0].parse().expect("uuid");
    architect
        .memory()
        .update(&who, id, patch)
        .await
        .expect("update");
    let outcome = architect
        .refresh(&who, Some(&[Layer::Team]))
        .await
        .expect("refresh");
    assert!(outcome[0].regenerated);
    let summary = architect
        .summary(&who, Layer::Team, Depth::Sentence)
        .await
        .expect("summary");
    assert!(summary.content.contains("Thursdays"), "{}", summary.content);
}
