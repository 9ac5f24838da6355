//! HindsightService against a real memory service on SQLite: capture, resolve, query,
//! feedback, promotion, approval, redaction, notes and tenancy.

mod support;

use std::collections::BTreeSet;

use aeterna_hindsight::*;
use aeterna_memory::{Identity, Layer, SearchRequest, kind};
use sqlx::Row;
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
    let pool = &h.memory.sqlite().expect("sqlite").pool;
    sqlx::query(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_one(pool)
        .await
        .expect(sql)
        .get(0)
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
    let best = &found.matches[0];
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
    assert!(other.matches.is_empty());
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
    let ranked: Vec<Uuid> = found.matches[0].resolutions.iter().map(|r| r.id).collect();
    assert_eq!(ranked, [proven.id, lucky.id], "19 of 20 outranks 2 of 3");
    let top = &found.matches[0].resolutions[0];
    assert_eq!((top.success_count, top.application_count), (19, 20));
    assert!(top.confidence < top.success_rate);
}

#[tokio::test]
async fn promotion_happens_exactly_at_the_threshold_once() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", Some("core"));
    let sig = capture(&h, &who, "go/undefined/main.txt").await;
    let resolution = resolve(
        &h,
        &who,
        sig.signature_id,
        "declare the variable before use",
    )
    .await;

    // Two successes, then a failure: 3 applications at 0.67 is below 0.8.
    assert_eq!(
        feedback(&h, &who, resolution.id, true).await.promotion,
        None
    );
    assert_eq!(
        feedback(&h, &who, resolution.id, true).await.promotion,
        None
    );
    assert_eq!(
        feedback(&h, &who, resolution.id, false).await.promotion,
        None
    );
    assert_eq!(
        feedback(&h, &who, resolution.id, true).await.promotion,
        None,
        "3/4 = 0.75"
    );
    // 4 of 5 = 0.8: promoted to the team now.
    let step = feedback(&h, &who, resolution.id, true)
        .await
        .promotion
        .expect("promoted");
    let PromotionStep::Promoted { promotion } = step else {
        panic!("{step:?}")
    };
    assert_eq!(
        (promotion.from_layer, promotion.to_layer),
        (Layer::Project, Layer::Team)
    );
    assert_eq!(
        (promotion.from_scope.as_str(), promotion.to_scope.as_str()),
        ("shop", "core")
    );
    assert_eq!(promotion.requested_by, "acme-dev");
    assert_eq!(promotion.application_count, 5);
    // Further success does not promote again.
    assert_eq!(
        feedback(&h, &who, resolution.id, true).await.promotion,
        None
    );
    assert_eq!(
        count(&h, "SELECT count(*) FROM hindsight_promotions").await,
        1
    );
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM hindsight_resolutions WHERE layer = 'team'"
        )
        .await,
        1
    );

    // A teammate in another project now finds it, with its track record.
    let teammate = identity("acme", "billing", Some("core"));
    let found = query(&h, &teammate, "go/undefined/worker.txt").await;
    assert_eq!(found.status, QueryStatus::Matched);
    let shared = &found.matches[0].resolutions[0];
    assert_eq!(
        (shared.layer, shared.origin_id),
        (Layer::Team, resolution.id)
    );
    assert_eq!(
        (shared.application_count, shared.baseline_applications),
        (5, 5)
    );
    // The project itself sees one resolution per lineage, not both copies.
    let mine = query(&h, &who, "go/undefined/worker.txt").await;
    assert_eq!(mine.matches.len(), 1);
    assert_eq!(mine.matches[0].resolutions.len(), 1);
    // The team copy moves on to org only after 3 applications at team level.
    let copy = shared.id;
    assert_eq!(feedback(&h, &teammate, copy, true).await.promotion, None);
    assert_eq!(feedback(&h, &teammate, copy, true).await.promotion, None);
    let step = feedback(&h, &teammate, copy, true)
        .await
        .promotion
        .expect("to org");
    assert!(
        matches!(step, PromotionStep::Promoted { ref promotion } if promotion.to_layer == Layer::Org)
    );
}

#[tokio::test]
async fn approval_mode_queues_and_approve_promotes_once() {
    let config = HindsightConfig {
        promotion: PromotionConfig {
            require_approval: BTreeSet::from([Layer::Team]),
            ..PromotionConfig::default()
        },
        ..HindsightConfig::default()
    };
    let h = harness(config).await;
    let who = identity("acme", "shop", Some("core"));
    let sig = capture(&h, &who, "java/NumberFormatException/Port.txt").await;
    let resolution = resolve(
        &h,
        &who,
        sig.signature_id,
        "validate before Integer.parseInt",
    )
    .await;
    for _ in 0..2 {
        feedback(&h, &who, resolution.id, true).await;
    }
    let step = feedback(&h, &who, resolution.id, true)
        .await
        .promotion
        .expect("queued");
    let PromotionStep::Pending { promotion } = step else {
        panic!("{step:?}")
    };
    assert_eq!(promotion.status, PromotionStatus::Pending);
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM hindsight_resolutions WHERE layer = 'team'"
        )
        .await,
        0
    );
    assert_eq!(
        feedback(&h, &who, resolution.id, true).await.promotion,
        None,
        "queued once"
    );
    let pending = h
        .hindsight
        .promotions(&who, Some(PromotionStatus::Pending), 10)
        .await
        .expect("list");
    assert_eq!(
        pending.iter().map(|p| p.id).collect::<Vec<_>>(),
        [promotion.id]
    );

    // Someone outside the team cannot decide it.
    let outsider = identity("acme", "shop", Some("platform"));
    let refused = h
        .hindsight
        .approve(
            &outsider,
            ApproveRequest {
                promotion_id: promotion.id,
                approve: true,
            },
        )
        .await
        .expect_err("not in the team");
    assert!(refused.to_string().contains("team_id"), "{refused}");

    let lead = Identity {
        user_id: Some("lead".into()),
        ..identity("acme", "other", Some("core"))
    };
    let approved = h
        .hindsight
        .approve(
            &lead,
            ApproveRequest {
                promotion_id: promotion.id,
                approve: true,
            },
        )
        .await
        .expect("approve");
    assert_eq!(approved.status, PromotionStatus::Promoted);
    assert_eq!(approved.decided_by.as_deref(), Some("lead"));
    assert!(approved.decided_at.is_some() && approved.promoted_resolution_id.is_some());
    // Approving again changes nothing.
    let again = h
        .hindsight
        .approve(
            &lead,
            ApproveRequest {
                promotion_id: promotion.id,
                approve: true,
            },
        )
        .await
        .expect("idempotent");
    assert_eq!(again, approved);
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM hindsight_resolutions WHERE layer = 'team'"
        )
        .await,
        1
    );
    let found = query(&h, &lead, "java/NumberFormatException/Retry.txt").await;
    assert_eq!(found.matches[0].resolutions[0].layer, Layer::Team);
}

#[tokio::test]
async fn rejection_and_missing_scope() {
    let config = HindsightConfig {
        promotion: PromotionConfig {
            require_approval: BTreeSet::from([Layer::Team]),
            min_applications: 1,
            ..PromotionConfig::default()
        },
        ..HindsightConfig::default()
    };
    let h = harness(config).await;
    // Without a team the promotion cannot be placed: it says what is missing.
    let solo = identity("acme", "shop", None);
    let sig = capture(&h, &solo, "node/ReferenceError/logger.txt").await;
    let resolution = resolve(&h, &solo, sig.signature_id, "fix the typo").await;
    let step = feedback(&h, &solo, resolution.id, true)
        .await
        .promotion
        .expect("qualifies");
    assert_eq!(
        step,
        PromotionStep::NeedsScope {
            layer: Layer::Team,
            field: "team_id".into()
        }
    );
    assert_eq!(
        count(&h, "SELECT count(*) FROM hindsight_promotions").await,
        0
    );

    let member = identity("acme", "shop", Some("core"));
    let PromotionStep::Pending { promotion } = feedback(&h, &member, resolution.id, true)
        .await
        .promotion
        .expect("queued")
    else {
        panic!("expected a pending promotion")
    };
    let rejected = h
        .hindsight
        .approve(
            &member,
            ApproveRequest {
                promotion_id: promotion.id,
                approve: false,
            },
        )
        .await
        .expect("reject");
    assert_eq!(rejected.status, PromotionStatus::Rejected);
    assert!(rejected.promoted_resolution_id.is_none());
    // A rejected promotion is not requested again.
    assert_eq!(
        feedback(&h, &member, resolution.id, true).await.promotion,
        None
    );
}

#[tokio::test]
async fn secrets_in_error_text_and_resolutions_never_reach_storage() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let text = fixture("python/multi/leaky_config.txt");
    let secrets = [
        "Xq7pR2vLm9sW",
        "ghp_R4nd0mT0k3nF0rT3st1ngPurp0s3sOnly123",
        "AKIAZ3MHT6ZQ4KXLP7WA",
        "ada.lovelace@example.com",
        "sk_live_51HxQmPlK9vTr4eW",
        "grace.hopper@example.org",
    ];
    for secret in &secrets[..4] {
        assert!(text.contains(secret), "the fixture carries {secret}");
    }
    let captured = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: text.clone(),
                layer: None,
            },
        )
        .await
        .expect("capture");
    let resolution = h
        .hindsight
        .resolve(
            &who,
            ResolveRequest {
                signature_id: Some(captured.signatures[0].signature_id),
                error_text: None,
                description: "rotated token ghp_R4nd0mT0k3nF0rT3st1ngPurp0s3sOnly123; ask grace.hopper@example.org".into(),
                changes: Changes {
                    diff: Some("-API_KEY=sk_live_51HxQmPlK9vTr4eW\n+API_KEY=${API_KEY}".into()),
                    files: vec![FileChange { file: ".env".into(), summary: "DB_PASSWORD=Xq7pR2vLm9sW removed".into() }],
                },
                layer: None,
            },
        )
        .await
        .expect("resolve")
        .resolution;
    feedback(&h, &who, resolution.id, true).await;
    h.hindsight
        .feedback(
            &who,
            FeedbackRequest {
                resolution_id: resolution.id,
                success: true,
                comment: Some("worked, thanks ada.lovelace@example.com".into()),
            },
        )
        .await
        .expect("feedback");

    // Every text and blob column of every hindsight table, and the notes, read back raw.
    let pool = &h.memory.sqlite().expect("sqlite").pool;
    let mut scanned = 0;
    for table in [
        "hindsight_signatures",
        "hindsight_resolutions",
        "hindsight_feedback",
        "hindsight_promotions",
        "memories",
    ] {
        let columns: Vec<String> =
            sqlx::query(sqlx::AssertSqlSafe(format!("PRAGMA table_info({table})")))
                .fetch_all(pool)
                .await
                .expect("columns")
                .iter()
                .map(|row| row.get::<String, _>("name"))
                .collect();
        for column in columns {
            let sql = format!("SELECT CAST({column} AS BLOB) FROM {table}");
            for row in sqlx::query(sqlx::AssertSqlSafe(sql))
                .fetch_all(pool)
                .await
                .expect("scan")
            {
                let bytes: Option<Vec<u8>> = row.get(0);
                let value = String::from_utf8_lossy(&bytes.unwrap_or_default()).into_owned();
                scanned += value.len();
                for secret in secrets {
                    assert!(
                        !value.contains(secret),
                        "{table}.{column} stores {secret}: {value}"
                    );
                }
            }
        }
    }
    assert!(
        scanned > 1000,
        "the scan read the stored rows ({scanned} bytes)"
    );
    let stored = h
        .hindsight
        .signature(&who, captured.signatures[0].signature_id)
        .await
        .expect("visible");
    assert!(stored.sample.contains("[REDACTED:"), "{}", stored.sample);
    assert!(
        stored.signature.message_pattern.contains("<SECRET>"),
        "{:?}",
        stored.signature
    );
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
async fn tenants_and_scopes_are_isolated() {
    let h = harness(HindsightConfig::default()).await;
    let acme = identity("acme", "shop", None);
    let globex = identity("globex", "shop", None);
    let sig = capture(&h, &acme, "python/NameError/report.txt").await;
    let resolution = resolve(&h, &acme, sig.signature_id, "define the variable").await;

    assert_eq!(
        query(&h, &globex, "python/NameError/cli.txt").await.status,
        QueryStatus::NoKnownResolution
    );
    let denied = h
        .hindsight
        .feedback(
            &globex,
            FeedbackRequest {
                resolution_id: resolution.id,
                success: true,
                comment: None,
            },
        )
        .await
        .expect_err("another tenant");
    assert!(
        denied.to_string().contains("no resolution with id"),
        "{denied}"
    );
    assert!(
        h.hindsight
            .signature(&globex, sig.signature_id)
            .await
            .is_err()
    );
    // Another project of the same tenant does not see project-layer knowledge either.
    let other_project = identity("acme", "billing", None);
    assert_eq!(
        query(&h, &other_project, "python/NameError/cli.txt")
            .await
            .status,
        QueryStatus::NoKnownResolution
    );
    assert_eq!(
        query(&h, &acme, "python/NameError/cli.txt").await.status,
        QueryStatus::Matched
    );
}

#[tokio::test]
async fn bad_input_gets_clear_errors_and_writes_nothing() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let empty = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: "  ".into(),
                layer: None,
            },
        )
        .await;
    assert!(
        empty
            .unwrap_err()
            .to_string()
            .contains("`error_text` is empty")
    );
    let huge = "x".repeat(300 * 1024);
    let big = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: huge,
                layer: None,
            },
        )
        .await;
    assert!(big.unwrap_err().to_string().contains("the limit is"));
    let clean = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: "Compiling shop v0.1.0\nFinished".into(),
                layer: None,
            },
        )
        .await;
    assert!(matches!(clean, Err(HindsightError::NoErrorRecognised)));
    let no_team = h
        .hindsight
        .capture(
            &who,
            CaptureRequest {
                error_text: fixture("go/undefined/main.txt"),
                layer: Some(Layer::Team),
            },
        )
        .await;
    assert!(no_team.unwrap_err().to_string().contains("needs `team_id`"));
    let unknown = h
        .hindsight
        .feedback(
            &who,
            FeedbackRequest {
                resolution_id: Uuid::now_v7(),
                success: true,
                comment: None,
            },
        )
        .await;
    assert!(matches!(
        unknown,
        Err(HindsightError::NotFound {
            what: "resolution",
            ..
        })
    ));
    let both = h
        .hindsight
        .query(
            &who,
            QueryRequest {
                error_text: Some("x".into()),
                signature: Some(extract(&fixture("go/undefined/main.txt")).remove(0)),
                ..QueryRequest::default()
            },
        )
        .await;
    assert!(both.unwrap_err().to_string().contains("not both"));
    let limit = h
        .hindsight
        .query(
            &who,
            QueryRequest {
                error_text: Some(fixture("go/undefined/main.txt")),
                limit: Some(0),
                ..QueryRequest::default()
            },
        )
        .await;
    assert!(limit.unwrap_err().to_string().contains("`limit` is 0"));
    let threshold = h
        .hindsight
        .query(
            &who,
            QueryRequest {
                error_text: Some(fixture("go/undefined/main.txt")),
                threshold: Some(1.5),
                ..QueryRequest::default()
            },
        )
        .await;
    assert!(threshold.unwrap_err().to_string().contains("within 0..1"));
    let sig = capture(&h, &who, "go/undefined/main.txt").await;
    let blank = h
        .hindsight
        .resolve(
            &who,
            ResolveRequest {
                signature_id: Some(sig.signature_id),
                error_text: None,
                description: " ".into(),
                changes: Changes::default(),
                layer: None,
            },
        )
        .await;
    assert!(
        blank
            .unwrap_err()
            .to_string()
            .contains("`description` is empty")
    );
    assert_eq!(
        count(&h, "SELECT count(*) FROM hindsight_resolutions").await,
        0
    );
    assert_eq!(
        count(&h, "SELECT count(*) FROM hindsight_signatures").await,
        1
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
        aeterna_memory::MemoryService::open_embedded(
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
    assert_eq!(found.matches[0].signature_id, sig_id);
    assert_eq!(
        found.matches[0].resolutions[0].description,
        "convert with toInt()"
    );
}
