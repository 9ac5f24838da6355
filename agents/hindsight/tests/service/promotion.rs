//! Feedback-driven promotion to broader layers, with and without approval.

use super::*;

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
    let shared = &found.matched[0].resolutions[0];
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
    assert_eq!(mine.matched.len(), 1);
    assert_eq!(mine.matched[0].resolutions.len(), 1);
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
    assert_eq!(found.matched[0].resolutions[0].layer, Layer::Team);
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
