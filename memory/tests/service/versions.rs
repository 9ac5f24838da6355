//! Facts that change over time: supersede and fix, history, searches `as_of` a past time.

use aeterna_memory::{
    Layer, MemoryConfig, MemoryError, MemoryPatch, SearchRequest, UpdateMode, kind, now_millis,
};

use super::*;

fn search(query: &str, as_of: Option<i64>) -> SearchRequest {
    SearchRequest {
        query: query.into(),
        limit: 5,
        as_of,
        ..Default::default()
    }
}

fn content(patch: &str) -> MemoryPatch {
    MemoryPatch {
        content: Some(patch.into()),
        ..Default::default()
    }
}

/// Lets the clock move on, so that times before and after a write differ.
async fn tick() {
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
}

#[tokio::test]
async fn a_superseded_fact_is_searched_as_it_is_now_and_as_it_was_then() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let before_anything = now_millis();
    tick().await;
    let added = service
        .add(
            &who,
            memory(Layer::User, "Alice lives in Paris, near the Seine."),
        )
        .await
        .unwrap()
        .record;
    assert_eq!((added.version, added.valid_from), (1, added.created_at));
    tick().await;
    let while_in_paris = now_millis();
    tick().await;
    let moved = service
        .update(
            &who,
            added.id,
            content("Alice lives in Berlin, near the Spree."),
        )
        .await
        .unwrap();
    assert_eq!((moved.id, moved.version), (added.id, 2));
    assert!(moved.valid_from > while_in_paris && moved.valid_to.is_none());

    let now = service
        .search(&who, search("where does Alice live", None))
        .await
        .unwrap();
    assert_eq!(now.len(), 1, "{now:?}");
    assert!(now[0].record.content.as_deref().unwrap().contains("Berlin"));

    let then = service
        .search(&who, search("where does Alice live", Some(while_in_paris)))
        .await
        .unwrap();
    assert_eq!(then.len(), 1, "{then:?}");
    let past = &then[0].record;
    assert_eq!((past.id, past.version), (added.id, 1));
    assert!(past.content.as_deref().unwrap().contains("Paris"));
    assert_eq!(past.valid_to, Some(moved.valid_from));
    // The old words find the old version only when asked as of then.
    let paris_now = service
        .search(&who, search("Paris Seine", None))
        .await
        .unwrap();
    assert!(
        paris_now
            .iter()
            .all(|hit| !hit.record.content.as_deref().unwrap().contains("Paris")),
        "{paris_now:?}"
    );
    let paris_then = service
        .search(&who, search("Paris Seine", Some(while_in_paris)))
        .await
        .unwrap();
    assert_eq!(paris_then[0].record.version, 1, "{paris_then:?}");

    let before = service
        .search(&who, search("where does Alice live", Some(before_anything)))
        .await
        .unwrap();
    assert!(before.is_empty(), "nothing was written yet: {before:?}");

    let history = service.history(&who, added.id).await.unwrap();
    let versions: Vec<(u32, Option<i64>, bool)> = history
        .versions
        .iter()
        .map(|v| {
            (
                v.version,
                v.valid_to,
                v.content.as_deref().unwrap().contains("Berlin"),
            )
        })
        .collect();
    assert_eq!(
        versions,
        [(2, None, true), (1, Some(moved.valid_from), false)]
    );
}

#[tokio::test]
async fn a_fix_rewrites_in_place_and_keeps_no_history() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let added = service
        .add(&who, memory(Layer::Project, "Deploys go thruogh staging."))
        .await
        .unwrap()
        .record;
    let fixed = service
        .update(
            &who,
            added.id,
            MemoryPatch {
                mode: Some(UpdateMode::Fix),
                ..content("Deploys go through staging.")
            },
        )
        .await
        .unwrap();
    assert_eq!((fixed.version, fixed.valid_from), (1, added.valid_from));
    let history = service.history(&who, added.id).await.unwrap();
    assert_eq!(history.versions.len(), 1);
    assert_eq!(
        history.versions[0].content.as_deref(),
        Some("Deploys go through staging.")
    );

    // A tag change is not a new fact either.
    let tagged = service
        .update(
            &who,
            added.id,
            MemoryPatch {
                tags: Some(vec!["deploy".into()]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(tagged.version, 1);
}

#[tokio::test]
async fn the_agents_kinds_are_fixed_by_default_and_supersede_when_asked() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let mut note = memory(Layer::Project, "Note: the build needs protoc.");
    note.kind = Some(kind::NOTE.into());
    let note = service.add(&who, note).await.unwrap().record;
    let rewritten = service
        .update(&who, note.id, content("Note: the build needs protoc 25."))
        .await
        .unwrap();
    assert_eq!(rewritten.version, 1);
    let superseded = service
        .update(
            &who,
            note.id,
            MemoryPatch {
                mode: Some(UpdateMode::Supersede),
                ..content("Note: the build needs protoc 26.")
            },
        )
        .await
        .unwrap();
    assert_eq!(superseded.version, 2);
}

#[tokio::test]
async fn a_change_can_say_when_it_took_effect_within_bounds() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let added = service
        .add(&who, memory(Layer::User, "Bob works on billing."))
        .await
        .unwrap()
        .record;
    tick().await;
    let effective = now_millis() - 1;
    tick().await;
    let changed = service
        .update(
            &who,
            added.id,
            MemoryPatch {
                valid_from: Some(effective),
                ..content("Bob works on search.")
            },
        )
        .await
        .unwrap();
    assert_eq!(changed.valid_from, effective);

    for (at, why) in [
        (now_millis() + 60_000, "in the future"),
        (effective, "not after the current version's start"),
    ] {
        let refused = service
            .update(
                &who,
                added.id,
                MemoryPatch {
                    valid_from: Some(at),
                    ..content("Bob works on ranking.")
                },
            )
            .await
            .unwrap_err();
        assert!(
            matches!(&refused, MemoryError::InvalidInput(m) if m.contains("`valid_from`")),
            "{why}: {refused}"
        );
    }
    let refused = service
        .update(
            &who,
            added.id,
            MemoryPatch {
                valid_from: Some(effective),
                mode: Some(UpdateMode::Fix),
                ..content("Bob works on ranking.")
            },
        )
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("`fix`"), "{refused}");
}

#[tokio::test]
async fn a_memory_keeps_a_bounded_number_of_versions() {
    let dir = tempfile::tempdir().unwrap();
    let config = MemoryConfig {
        max_versions_per_memory: 2,
        ..MemoryConfig::default()
    };
    let service = open(dir.path(), config).await;
    let who = alice();
    let id = service
        .add(&who, memory(Layer::User, "The office is on floor 1."))
        .await
        .unwrap()
        .record
        .id;
    for floor in 2..=5 {
        service
            .update(
                &who,
                id,
                content(&format!("The office is on floor {floor}.")),
            )
            .await
            .unwrap();
    }
    let history = service.history(&who, id).await.unwrap();
    let numbers: Vec<u32> = history.versions.iter().map(|v| v.version).collect();
    assert_eq!(numbers, [5, 4, 3]);
}

#[tokio::test]
async fn deleting_a_memory_deletes_its_past() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let id = service
        .add(
            &who,
            memory(Layer::User, "The VPN password rotates monthly."),
        )
        .await
        .unwrap()
        .record
        .id;
    tick().await;
    let then = now_millis();
    tick().await;
    service
        .update(&who, id, content("The VPN password rotates weekly."))
        .await
        .unwrap();
    service.delete(&who, id).await.unwrap();
    assert!(matches!(
        service.history(&who, id).await,
        Err(MemoryError::NotFound(_))
    ));
    let hits = service
        .search(&who, search("VPN password rotates", Some(then)))
        .await
        .unwrap();
    assert!(hits.is_empty(), "{hits:?}");
}
