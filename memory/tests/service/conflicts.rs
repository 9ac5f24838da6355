//! Conflicts a new memory reports with its scope (`MemoryService::conflicts`), measured on a
//! small labelled set: each case stores an existing fact among unrelated ones of the same
//! scope, adds a new fact, and checks what is flagged. The set was written for this test (not
//! taken from any benchmark); it mixes changed values, negations, renumberings, rewordings,
//! and same-subject facts that are both true, which should not be flagged.

use aeterna_memory::{ConflictRelation, Identity, Layer};

use super::*;

/// Facts of every case's scope that no new fact is about.
const BACKGROUND: &[&str] = &[
    "The on-call rotation changes every Monday at noon.",
    "Secrets live in the team vault, never in the repository.",
    "The design docs are in the docs/adr folder.",
    "Grafana dashboards are provisioned from the ops repository.",
    "The mobile app targets Android 12 and iOS 16.",
    "Customer data must stay in the EU region.",
];

struct Case {
    existing: &'static str,
    new: &'static str,
    expected: Option<ConflictRelation>,
}

const fn case(
    existing: &'static str,
    new: &'static str,
    expected: Option<ConflictRelation>,
) -> Case {
    Case {
        existing,
        new,
        expected,
    }
}

const CONTRADICTS: Option<ConflictRelation> = Some(ConflictRelation::Contradicts);
const REPEATS: Option<ConflictRelation> = Some(ConflictRelation::Repeats);

const CASES: &[Case] = &[
    case(
        "The deploy window is Tuesday afternoon.",
        "The deploy window moved to Thursday afternoon.",
        CONTRADICTS,
    ),
    case(
        "We use Redis for the session cache.",
        "We no longer use Redis for the session cache.",
        CONTRADICTS,
    ),
    case(
        "The API rate limit is 100 requests per minute.",
        "The API rate limit is 500 requests per minute.",
        CONTRADICTS,
    ),
    case(
        "Alice's editor is Vim.",
        "Alice's editor is now Emacs.",
        CONTRADICTS,
    ),
    case(
        "The staging database runs PostgreSQL 14.",
        "The staging database runs PostgreSQL 15.",
        CONTRADICTS,
    ),
    case(
        "Integration tests run on every push.",
        "Integration tests do not run on every push any more, only nightly.",
        CONTRADICTS,
    ),
    case(
        "The team standup is at 9:30.",
        "The team standup is at 10:00.",
        CONTRADICTS,
    ),
    case(
        "Bob leads the payments team.",
        "Carol leads the payments team.",
        CONTRADICTS,
    ),
    case(
        "The frontend is written in React.",
        "The frontend was rewritten in Svelte.",
        CONTRADICTS,
    ),
    case(
        "Logs are kept for 30 days.",
        "Logs are kept for 90 days.",
        CONTRADICTS,
    ),
    case(
        "The main branch is protected.",
        "The main branch is not protected anymore.",
        CONTRADICTS,
    ),
    case(
        "Releases are cut from the release branch.",
        "Releases are cut from main.",
        CONTRADICTS,
    ),
    case(
        "We deploy on Tuesdays.",
        "Deploys happen on Tuesday.",
        REPEATS,
    ),
    case(
        "Use ripgrep instead of grep for code search.",
        "For code search, use ripgrep rather than grep.",
        REPEATS,
    ),
    case(
        "The project uses PostgreSQL 15.",
        "The project uses PostgreSQL 15 in production.",
        REPEATS,
    ),
    case(
        "CI runs cargo clippy with warnings denied.",
        "CI runs clippy and denies warnings.",
        REPEATS,
    ),
    case(
        "Builds are cached in the shared sccache bucket.",
        "The shared sccache bucket caches builds.",
        REPEATS,
    ),
    case(
        "The deploy window is Tuesday afternoon.",
        "Deploys need two approvals.",
        None,
    ),
    case(
        "Bob leads the payments team.",
        "Bob leads the weekly retro.",
        None,
    ),
    case(
        "The API rate limit is 100 requests per minute.",
        "The API returns JSON errors.",
        None,
    ),
    case("Alice's editor is Vim.", "Alice works from Lisbon.", None),
    case(
        "Integration tests run on every push.",
        "Unit tests must finish within a minute.",
        None,
    ),
    case(
        "Logs are kept for 30 days.",
        "Metrics are kept for 30 days.",
        None,
    ),
    case(
        "The frontend is written in React.",
        "The backend is written in Rust.",
        None,
    ),
];

fn in_session(session: usize) -> Identity {
    Identity {
        session_id: Some(format!("conflicts-{session}")),
        ..alice()
    }
}

#[tokio::test]
async fn conflicts_are_flagged_on_a_labelled_set_and_nothing_changes() {
    let (_dir, service) = open_temp().await;
    let (mut right, mut flagged, mut expected_flags, mut found) = (0, 0, 0, 0);
    let mut wrong = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let who = in_session(i);
        let mut batch: Vec<_> = BACKGROUND
            .iter()
            .map(|text| memory(Layer::Session, text))
            .collect();
        batch.push(memory(Layer::Session, case.existing));
        let existing = service
            .add_batch(&who, batch)
            .await
            .unwrap()
            .pop()
            .unwrap()
            .record;
        let added = service
            .add(&who, memory(Layer::Session, case.new))
            .await
            .unwrap()
            .record;
        let conflicts = service.conflicts(&who, &added).await.unwrap();
        assert!(conflicts.len() <= 3, "{conflicts:?}");
        assert!(
            conflicts
                .iter()
                .all(|c| c.id != added.id && (0.0..=1.0).contains(&c.score)),
            "{conflicts:?}"
        );
        let on_target = conflicts.iter().find(|c| c.id == existing.id);
        let got = on_target.map(|c| c.relation);
        flagged += conflicts.len();
        expected_flags += usize::from(case.expected.is_some());
        // A flag on the existing fact is found when one was expected, whatever the relation.
        found += usize::from(case.expected.is_some() && got.is_some());
        right += conflicts
            .iter()
            .filter(|c| c.id == existing.id && case.expected.is_some())
            .count();
        if got != case.expected {
            wrong.push(format!(
                "{:?} for {:?} vs {:?}: {conflicts:?}",
                got, case.new, case.existing
            ));
        }
        // Only reported: the existing memory is untouched.
        let still = service.get(&who, existing.id).await.unwrap();
        assert_eq!((still.version, still.valid_to), (1, None));
    }
    let precision = right as f32 / flagged.max(1) as f32;
    let recall = found as f32 / expected_flags as f32;
    let exact = CASES.len() - wrong.len();
    println!(
        "conflicts: {exact}/{} cases exact, flag precision {precision:.2}, recall {recall:.2}; \
         misjudged: {wrong:#?}",
        CASES.len()
    );
    assert!(recall >= 0.8, "recall {recall:.2}: {wrong:#?}");
    assert!(precision >= 0.75, "precision {precision:.2}: {wrong:#?}");
    assert!(
        exact * 10 >= CASES.len() * 7,
        "{exact}/{}: {wrong:#?}",
        CASES.len()
    );
}

#[tokio::test]
async fn conflicts_stay_in_their_scope() {
    let (_dir, service) = open_temp().await;
    let (here, elsewhere) = (in_session(1), in_session(2));
    let other = service
        .add(
            &elsewhere,
            memory(Layer::Session, "The deploy window is Tuesday afternoon."),
        )
        .await
        .unwrap()
        .record;
    let project = service
        .add(
            &here,
            memory(Layer::Project, "The deploy window is Monday afternoon."),
        )
        .await
        .unwrap()
        .record;
    let added = service
        .add(
            &here,
            memory(Layer::Session, "The deploy window is Thursday afternoon."),
        )
        .await
        .unwrap()
        .record;
    let conflicts = service.conflicts(&here, &added).await.unwrap();
    assert!(
        conflicts
            .iter()
            .all(|c| c.id != other.id && c.id != project.id),
        "another session's and another layer's memories are not candidates: {conflicts:?}"
    );
    assert!(conflicts.is_empty(), "{conflicts:?}");
}
