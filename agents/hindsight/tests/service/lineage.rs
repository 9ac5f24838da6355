//! Lineages with several examples: a second wording of an error joins the fix that resolved
//! the first, by `resolution_id` or because its fix text nearly duplicates it.

use super::*;

async fn resolve_with(
    h: &support::Harness,
    who: &Identity,
    request: ResolveRequest,
) -> ResolveOutcome {
    h.hindsight.resolve(who, request).await.expect("resolve")
}

const MOVE_FIX: &str =
    "Clone the value before the move, or pass a reference so ownership stays with the caller.";

#[tokio::test]
async fn a_second_wording_joins_by_resolution_id_and_queries_find_either() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", Some("core"));
    // `borrow of moved value` stored with its fix.
    let first = capture(&h, &who, "rust/E0382-use-after-move/queue.txt").await;
    let fix = resolve(&h, &who, first.signature_id, MOVE_FIX).await;

    // `use of moved value`, resolved by the same fix.
    let joined = resolve_with(
        &h,
        &who,
        ResolveRequest {
            error_text: Some(fixture("rust/E0382-use-after-move/message_bus.txt")),
            resolution_id: Some(fix.id),
            ..ResolveRequest::default()
        },
    )
    .await;
    assert!(joined.joined);
    assert_eq!(joined.resolution.id, fix.id);
    let [example] = joined.resolution.examples[..] else {
        panic!("{:?}", joined.resolution)
    };
    assert_ne!(example, first.signature_id);
    assert_eq!(
        count(&h, "SELECT count(*) FROM hindsight_resolutions").await,
        1,
        "no second fix"
    );

    // Joining again changes nothing.
    let again = resolve_with(
        &h,
        &who,
        ResolveRequest {
            signature_id: Some(example),
            resolution_id: Some(fix.id),
            ..ResolveRequest::default()
        },
    )
    .await;
    assert_eq!(again.resolution.examples, [example]);

    // Either wording finds the one fix, presented once.
    for path in [
        "rust/E0382-use-after-move/message_bus.txt",
        "rust/E0382-use-after-move/names.txt",
    ] {
        let found = query(&h, &who, path).await;
        assert_eq!(found.status, QueryStatus::Matched, "{path}");
        assert_eq!(found.matched[0].resolutions[0].id, fix.id, "{path}");
        let lineage_answers = found
            .matched
            .iter()
            .chain(&found.related)
            .filter(|m| m.resolutions.iter().any(|r| r.id == fix.id))
            .count();
        assert_eq!(lineage_answers, 1, "{path}: {found:?}");
    }
    // One track record.
    let after = feedback(&h, &who, fix.id, true).await.resolution;
    assert_eq!(
        (after.application_count, after.examples.clone()),
        (1, vec![example])
    );

    // The lineage survives a restart: the index is rebuilt from SQLite with the example and
    // the fix's words.
    let support::Harness {
        dir,
        memory,
        hindsight,
    } = h;
    drop((hindsight, memory));
    let memory = std::sync::Arc::new(
        aeterna_testkit::profile::open_memory(
            dir.path(),
            aeterna_memory::MemoryConfig::default(),
            std::sync::Arc::new(aeterna_memory::embed::HashingEmbedder::default()),
        )
        .await
        .expect("reopen"),
    );
    let reopened = HindsightService::new(memory, HindsightConfig::default()).expect("start");
    let found = reopened
        .query(
            &who,
            QueryRequest {
                error_text: Some("use of moved value: `msg`".into()),
                ..QueryRequest::default()
            },
        )
        .await
        .expect("query");
    assert_eq!(found.form, QueryForm::ErrorMessage);
    assert_eq!(found.matched[0].signature_id, example);
    assert_eq!(found.matched[0].resolutions[0].id, fix.id);
}

#[tokio::test]
async fn a_near_duplicate_fix_joins_but_a_short_or_foreign_one_does_not() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let first = capture(&h, &who, "rust/E0502-borrow-conflict/scores.txt").await;
    let fix = resolve(
        &h,
        &who,
        first.signature_id,
        "End the shared borrow before mutating: copy the needed value out first.",
    )
    .await;

    // The same fix, reworded a little, for the other wording: joins.
    let second = capture(&h, &who, "rust/E0502-borrow-conflict/cursor.txt").await;
    let joined = resolve_with(
        &h,
        &who,
        ResolveRequest {
            signature_id: Some(second.signature_id),
            description: "end the shared borrow before mutating; copy the needed values out first"
                .into(),
            ..ResolveRequest::default()
        },
    )
    .await;
    assert!(joined.joined, "{joined:?}");
    assert_eq!(joined.resolution.id, fix.id);
    assert_eq!(joined.resolution.examples, [second.signature_id]);

    // A different fix for the same signature is a new resolution.
    let other =
        resolve_with(
            &h,
            &who,
            ResolveRequest {
                signature_id: Some(second.signature_id),
                description:
                    "Restructure the loop so the vector is mutated after iterating over indices."
                        .into(),
                ..ResolveRequest::default()
            },
        )
        .await;
    assert!(!other.joined);

    // The same words for an error of another language do not join: they are another fix.
    let python = capture(&h, &who, "python/KeyError/cart.txt").await;
    let foreign = resolve_with(
        &h,
        &who,
        ResolveRequest {
            signature_id: Some(python.signature_id),
            description: "End the shared borrow before mutating: copy the needed value out first."
                .into(),
            ..ResolveRequest::default()
        },
    )
    .await;
    assert!(!foreign.joined);

    // Too short to be trusted as the same fix.
    let third = capture(&h, &who, "rust/E0502-borrow-conflict/inventory.txt").await;
    let terse = |text: &str| ResolveRequest {
        signature_id: Some(third.signature_id),
        description: text.into(),
        ..ResolveRequest::default()
    };
    let first_terse = resolve_with(&h, &who, terse("fix the borrow")).await;
    let second_terse = resolve_with(&h, &who, terse("fix the borrow")).await;
    assert!(!first_terse.joined && !second_terse.joined);
}

#[tokio::test]
async fn joining_needs_a_visible_fix_and_no_new_text() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let sig = capture(&h, &who, "go/undefined/main.txt").await;
    let fix = resolve(&h, &who, sig.signature_id, "declare it first").await;

    let both = h
        .hindsight
        .resolve(
            &who,
            ResolveRequest {
                signature_id: Some(sig.signature_id),
                resolution_id: Some(fix.id),
                description: "also this".into(),
                ..ResolveRequest::default()
            },
        )
        .await
        .expect_err("both");
    assert!(
        both.to_string().contains("leave out `description`"),
        "{both}"
    );

    // Another tenant's fix is not found, and nothing of the error text is captured.
    let other = identity("globex", "shop", None);
    let before = count(&h, "SELECT count(*) FROM hindsight_signatures").await;
    let missing = h
        .hindsight
        .resolve(
            &other,
            ResolveRequest {
                error_text: Some(fixture("go/undefined/server.txt")),
                resolution_id: Some(fix.id),
                ..ResolveRequest::default()
            },
        )
        .await
        .expect_err("not visible");
    assert!(
        matches!(missing, HindsightError::NotFound { .. }),
        "{missing}"
    );
    assert_eq!(
        count(&h, "SELECT count(*) FROM hindsight_signatures").await,
        before
    );

    let empty = h
        .hindsight
        .resolve(
            &who,
            ResolveRequest {
                signature_id: Some(sig.signature_id),
                ..ResolveRequest::default()
            },
        )
        .await
        .expect_err("no description");
    assert!(
        empty.to_string().contains("`description` is empty"),
        "{empty}"
    );
}

#[tokio::test]
async fn a_promoted_fix_takes_its_examples_along() {
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", Some("core"));
    let first = capture(&h, &who, "node/TypeError-read-undefined/orders.txt").await;
    let fix = resolve(&h, &who, first.signature_id, "guard with optional chaining").await;
    resolve_with(
        &h,
        &who,
        ResolveRequest {
            error_text: Some(fixture("node/TypeError-read-undefined/session.txt")),
            resolution_id: Some(fix.id),
            ..ResolveRequest::default()
        },
    )
    .await;
    for _ in 0..3 {
        feedback(&h, &who, fix.id, true).await;
    }
    // A teammate in another project finds the promoted copy by the second wording.
    let teammate = identity("acme", "billing", Some("core"));
    let found = query(&h, &teammate, "node/TypeError-read-undefined/session.txt").await;
    assert_eq!(found.status, QueryStatus::Matched, "{found:?}");
    let shared = &found.matched[0].resolutions[0];
    assert_eq!((shared.layer, shared.origin_id), (Layer::Team, fix.id));
    assert_eq!(shared.examples.len(), 1);
    assert_eq!(found.matched[0].layer, Layer::Team);
}
