//! HindsightService against a real memory service on SQLite: capture, resolve, query,
//! feedback, promotion, approval, redaction, notes and tenancy.

#[path = "../support/mod.rs"]
mod support;

mod boundaries;
mod lineage;
mod promotion;

use std::collections::BTreeSet;

use aeterna_hindsight::*;
use aeterna_memory::{Identity, Layer, SearchRequest, kind};
use support::{fixture, harness, identity};
use uuid::Uuid;

async fn capture(h: &support::Harness, who: &Identity, path: &str) -> CapturedSignature {
    let outcome = h
        .hindsight
        .capture(
            who,
            CaptureRequest {
                error_text: fixture(path),
                layer: None,
            },
        )
        .await
        .expect("capture");
    outcome
        .signatures
        .into_iter()
        .next()
        .expect("one signature")
}

async fn resolve(
    h: &support::Harness,
    who: &Identity,
    signature_id: Uuid,
    description: &str,
) -> Resolution {
    h.hindsight
        .resolve(
            who,
            ResolveRequest {
                signature_id: Some(signature_id),
                error_text: None,
                resolution_id: None,
                description: description.to_string(),
                changes: Changes {
                    diff: Some("-    raw\n+    raw.parse().expect(\"a port\")".into()),
                    files: vec![FileChange {
                        file: "src/main.rs".into(),
                        summary: "parse the port".into(),
                    }],
                },
                layer: None,
            },
        )
        .await
        .expect("resolve")
        .resolution
}

async fn feedback(
    h: &support::Harness,
    who: &Identity,
    id: Uuid,
    success: bool,
) -> FeedbackOutcome {
    h.hindsight
        .feedback(
            who,
            FeedbackRequest {
                resolution_id: id,
                success,
                comment: None,
            },
        )
        .await
        .expect("feedback")
}

async fn query(h: &support::Harness, who: &Identity, path: &str) -> QueryOutcome {
    h.hindsight
        .query(
            who,
            QueryRequest {
                error_text: Some(fixture(path)),
                ..QueryRequest::default()
            },
        )
        .await
        .expect("query")
}

async fn count(h: &support::Harness, sql: &str) -> i64 {
    aeterna_memory::with_pool!(h.memory.database(), |pool| {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
            .fetch_one(pool)
            .await
            .expect(sql)
    })
}

#[tokio::test]
async fn capture_resolve_query_round_trip_across_different_code() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let captured = capture(&h, &who, "rust/E0308-mismatched-types/parse_port.txt").await;
    assert!(!captured.merged);
    let resolution = resolve(
        &h,
        &who,
        captured.signature_id,
        "parse the string into the integer",
    )
    .await;

    // Same class, different file, names and lines.
    let found = query(&h, &who, "rust/E0308-mismatched-types/invoice_total.txt").await;
    assert_eq!(found.status, QueryStatus::Matched);
    let best = &found.matched[0];
    assert_eq!(best.signature_id, captured.signature_id);
    assert!(best.score >= 0.8 && best.score <= 1.0, "{best:?}");
    assert_eq!(best.resolutions[0].id, resolution.id);
    assert_eq!(
        best.resolutions[0].changes.files[0].summary,
        "parse the port"
    );

    // Unrelated error: no known resolution, not a weak guess.
    let other = query(&h, &who, "python/KeyError/cart.txt").await;
    assert_eq!(other.status, QueryStatus::NoKnownResolution);
    assert!(other.matched.is_empty());
}

#[tokio::test]
async fn near_duplicates_merge_and_count_occurrences() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let first = capture(&h, &who, "rust/E0425-unresolved-name/counter.txt").await;
    let second = capture(&h, &who, "rust/E0425-unresolved-name/render.txt").await;
    assert_eq!(second.signature_id, first.signature_id);
    assert!(second.merged);
    assert_eq!(second.occurrence_count, 2);
    let third = capture(&h, &who, "rust/E0599-no-method/shapes.txt").await;
    assert_ne!(third.signature_id, first.signature_id);
    assert_eq!(
        count(&h, "SELECT count(*) FROM hindsight_signatures").await,
        2
    );
    let stored = h
        .hindsight
        .signature(&who, first.signature_id)
        .await
        .expect("visible");
    // The merged signature knows both files.
    for file in ["file:counter.rs", "file:render.rs"] {
        assert!(
            stored.signature.context_patterns.iter().any(|c| c == file),
            "{stored:?}"
        );
    }
}

#[tokio::test]
async fn several_errors_in_one_capture_become_several_signatures() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let outcome = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: fixture("typescript/multi/report.txt"),
                layer: None,
            },
        )
        .await
        .expect("capture");
    let types: Vec<&str> = outcome
        .signatures
        .iter()
        .map(|s| s.error_type.as_str())
        .collect();
    assert_eq!(types, ["TS2322", "TS2339"]);
}

#[tokio::test]
async fn feedback_updates_rates_and_ranking_adjusts_for_confidence() {
    let config = HindsightConfig {
        promotion: PromotionConfig {
            enabled: false,
            ..PromotionConfig::default()
        },
        ..HindsightConfig::default()
    };
    let h = harness(config).await;
    let who = identity("acme", "shop", None);
    let sig = capture(&h, &who, "python/ModuleNotFoundError/plot_sales.txt").await;
    let lucky = resolve(&h, &who, sig.signature_id, "pip install the module").await;
    let proven = resolve(
        &h,
        &who,
        sig.signature_id,
        "add the module to requirements.txt",
    )
    .await;

    let after = feedback(&h, &who, lucky.id, true).await.resolution;
    assert_eq!(
        (
            after.success_count,
            after.application_count,
            after.success_rate
        ),
        (1, 1, 1.0)
    );
    for attempt in 0..20 {
        feedback(&h, &who, proven.id, attempt != 7).await;
    }
    let failed = feedback(&h, &who, lucky.id, false).await.resolution;
    assert_eq!(
        (
            failed.success_count,
            failed.application_count,
            failed.success_rate
        ),
        (1, 2, 0.5)
    );
    let after_one = feedback(&h, &who, lucky.id, true).await.resolution;
    assert_eq!(after_one.application_count, 3);
    assert!((after_one.success_rate - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(
        count(&h, "SELECT count(*) FROM hindsight_feedback").await,
        23
    );

    let found = query(&h, &who, "python/ModuleNotFoundError/fetch_weather.txt").await;
    let ranked: Vec<Uuid> = found.matched[0].resolutions.iter().map(|r| r.id).collect();
    assert_eq!(ranked, [proven.id, lucky.id], "19 of 20 outranks 2 of 3");
    let top = &found.matched[0].resolutions[0];
    assert_eq!((top.success_count, top.application_count), (19, 20));
    assert!(top.confidence < top.success_rate);
}

#[tokio::test]
async fn resolutions_become_searchable_hindsight_notes() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let sig = capture(&h, &who, "gcc/missing-header/net.txt").await;
    let resolution = resolve(
        &h,
        &who,
        sig.signature_id,
        "install libnetutil-dev and add -I vendor/include",
    )
    .await;
    let note_id = resolution.note_id.expect("a note");
    let hits = h
        .memory
        .search(
            &who,
            SearchRequest {
                query: "netutil header No such file or directory".into(),
                layers: None,
                tags: vec![],
                kinds: vec![kind::HINDSIGHT.into()],
                limit: 5,
                min_score: 0.0,
                explain: false,
                as_of: None,
            },
        )
        .await
        .expect("search");
    assert_eq!(hits.first().map(|h| h.record.id), Some(note_id));
    let note = hits[0].record.content.clone().expect("content");
    assert!(
        note.starts_with("# Hindsight: no-such-file-or-directory"),
        "{note}"
    );
    assert!(
        note.contains("install libnetutil-dev") && note.contains("Not applied yet."),
        "{note}"
    );

    feedback(&h, &who, resolution.id, true).await;
    let updated = h
        .memory
        .get(&who, note_id)
        .await
        .expect("note")
        .content
        .expect("content");
    assert!(
        updated.contains("Applied 1 time, 1 succeeded (100%"),
        "{updated}"
    );
}

#[tokio::test]
async fn a_signature_can_be_queried_directly_and_survives_a_restart() {
    let dir;
    let sig_id;
    {
        let h = harness(HindsightConfig::default()).await;
        let who = identity("acme", "shop", None);
        sig_id = capture(&h, &who, "kotlin/type-mismatch/Port.txt")
            .await
            .signature_id;
        resolve(&h, &who, sig_id, "convert with toInt()").await;
        dir = h.dir;
    }
    // A fresh process on the same data dir loads the index from SQLite.
    let memory = std::sync::Arc::new(
        aeterna_testkit::profile::open_memory(
            dir.path(),
            aeterna_memory::MemoryConfig::default(),
            std::sync::Arc::new(aeterna_memory::embed::HashingEmbedder::default()),
        )
        .await
        .expect("reopen"),
    );
    let hindsight = HindsightService::new(memory, HindsightConfig::default()).expect("start");
    let who = identity("acme", "shop", None);
    let signature = extract(&fixture("kotlin/type-mismatch/Price.txt")).remove(0);
    let found = hindsight
        .query(
            &who,
            QueryRequest {
                signature: Some(signature),
                ..QueryRequest::default()
            },
        )
        .await
        .expect("query");
    assert_eq!(found.matched[0].signature_id, sig_id);
    assert_eq!(
        found.matched[0].resolutions[0].description,
        "convert with toInt()"
    );
}
