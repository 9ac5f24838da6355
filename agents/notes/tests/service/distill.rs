//! Distillation end to end: notes stored as project memories of kind `note`, found by search,
//! never duplicated, and written automatically at the threshold.

use aeterna_memory::{Layer, SearchRequest, kind};
use aeterna_notes::{NoteListRequest, NotesConfig, NotesError};

use crate::{Agent, alice, eventually, for_whom, inspect, manual, realistic_trajectory};

#[tokio::test]
async fn a_realistic_trajectory_becomes_a_project_note() {
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let who = alice();
    agent
        .notes
        .capture(for_whom(&who, realistic_trajectory()))
        .unwrap();

    // note_distill stores what is still queued first: no explicit flush here.
    let outcome = agent.notes.distill(&who).await.unwrap();
    assert_eq!(outcome.notes.len(), 1);
    assert_eq!(outcome.distilled_events, 6);
    let summary = &outcome.notes[0];
    assert_eq!(
        summary.title,
        "Fix for failing test `parser::tests::parses_empty_input` in `src/parser.rs`"
    );
    assert_eq!(
        (summary.layer, summary.scope_id.as_str()),
        (Layer::Project, "parser")
    );
    assert_eq!(summary.uri, format!("aeterna://notes/{}", summary.id));

    let record = agent.memory.get(&who, summary.id).await.unwrap();
    assert_eq!(record.kind, kind::NOTE);
    let content = record.content.unwrap();
    let section = |name: &str| -> String {
        let start = content
            .find(&format!("## {name}\n"))
            .unwrap_or_else(|| panic!("no {name}:\n{content}"));
        let rest = &content[start + name.len() + 4..];
        rest[..rest.find("\n## ").unwrap_or(rest.len())].to_owned()
    };
    let problem = section("Problem");
    assert!(
        problem.contains("`parser::tests::parses_empty_input`"),
        "{problem}"
    );
    assert!(problem.contains("index out of bounds"), "{problem}");
    let solution = section("Solution");
    assert!(
        solution.contains("Edited `src/parser.rs`: Return Expr::Empty for an empty token list"),
        "{solution}"
    );
    assert!(
        solution.contains("`cargo test parser` passed"),
        "{solution}"
    );
    for name in ["Context", "Patterns", "Tags"] {
        section(name);
    }

    // The note is a memory like any other: hybrid search finds it.
    let hits = agent
        .memory
        .search(
            &who,
            SearchRequest {
                query: "parses_empty_input index out of bounds fix".into(),
                layers: None,
                tags: vec![],
                kinds: vec![],
                limit: 5,
                min_score: 0.0,
                explain: false,
                as_of: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(hits.first().map(|hit| hit.record.id), Some(summary.id));

    // For programs: sections and metadata.
    let note = agent.notes.get(&who, summary.id).await.unwrap();
    assert_eq!(note.covered_events, 6);
    let sections = note.sections.expect("sections fit in the metadata");
    assert_eq!(sections.solution.len(), 2);
    // Front matter first, then the note, then the related notes (none yet).
    let front = format!(
        "---\nid: {}\ntitle: \"Fix for failing test `parser::tests::parses_empty_input` in \
         `src/parser.rs`\"\ndescription: \"",
        summary.id
    );
    assert!(note.markdown.starts_with(&front), "{}", note.markdown);
    assert!(
        note.markdown.contains(
            "keywords: [\"parser::tests::parses_empty_input\", \"src/parser.rs\", \"rust\"]\n---\n\n# Fix for failing test"
        ),
        "{}",
        note.markdown
    );
    assert!(
        note.markdown
            .contains("## Related notes\n\n_No earlier note")
    );
    assert_eq!(summary.keywords[0], "parser::tests::parses_empty_input");
    assert_eq!(
        summary.description,
        "`cargo test parser` failed: test `parser::tests::parses_empty_input` with `index out of \
         bounds: the len is 0 but the index is 0`. Fixed by editing `src/parser.rs`; `cargo test \
         parser` passed."
    );
    agent.close().await;
}

#[tokio::test]
async fn a_later_note_links_the_related_earlier_ones_of_its_project() {
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let who = alice();
    agent
        .notes
        .capture(for_whom(&who, realistic_trajectory()))
        .unwrap();
    let first = agent.notes.distill(&who).await.unwrap().notes[0].clone();

    // Another session of the same project meets the same failure.
    let mut later = who.clone();
    later.session_id = Some("s-2".into());
    agent
        .notes
        .capture(for_whom(&later, realistic_trajectory()[2..].to_vec()))
        .unwrap();
    let second = agent.notes.distill(&later).await.unwrap().notes[0].clone();
    assert_ne!(second.id, first.id);
    let note = agent.notes.get(&later, second.id).await.unwrap();
    let related = &note.markdown[note.markdown.find("## Related notes").expect("section")..];
    assert!(
        related.contains(&format!(
            "- [{}](aeterna://notes/{})",
            first.title, first.id
        )),
        "{related}"
    );

    // Another project's notes are never linked.
    let mut elsewhere = who.clone();
    elsewhere.project_id = Some("compiler".into());
    elsewhere.session_id = Some("s-3".into());
    agent
        .notes
        .capture(for_whom(&elsewhere, realistic_trajectory()))
        .unwrap();
    let third = agent.notes.distill(&elsewhere).await.unwrap().notes[0].clone();
    let note = agent.notes.get(&elsewhere, third.id).await.unwrap();
    assert!(
        note.markdown
            .contains("_No earlier note of this project matched._")
    );
    agent.close().await;
}

#[tokio::test]
async fn sessions_with_nothing_worth_a_note_are_declined_and_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let who = alice();
    // Only looking around: a search and a read that both succeeded.
    agent
        .notes
        .capture(for_whom(&who, realistic_trajectory()[..2].to_vec()))
        .unwrap();
    let outcome = agent.notes.distill(&who).await.unwrap();
    assert!(outcome.notes.is_empty());
    assert_eq!(outcome.distilled_events, 0);
    assert_eq!(outcome.declined.len(), 1);
    assert_eq!(outcome.declined[0].events, 2);
    assert_eq!(outcome.declined[0].distiller, "deterministic-v1");
    assert!(
        outcome.declined[0]
            .reason
            .starts_with("nothing failed and nothing was changed"),
        "{}",
        outcome.declined[0].reason
    );
    assert!(outcome.session_notes.is_empty());

    // Declined events are not distilled again, and later events still make notes.
    let again = agent.notes.distill(&who).await.unwrap();
    assert!(again.declined.is_empty() && again.notes.is_empty());
    agent
        .notes
        .capture(for_whom(&who, realistic_trajectory()[2..].to_vec()))
        .unwrap();
    let later = agent.notes.distill(&who).await.unwrap();
    assert_eq!(later.notes.len(), 1);
    assert_eq!(later.distilled_events, 4);
    let page = agent.notes.tenant_notes(&who, None, 10).await.unwrap();
    assert_eq!(
        page.notes.iter().map(|n| n.id).collect::<Vec<_>>(),
        vec![later.notes[0].id],
        "declined events name no note"
    );
    assert_eq!(agent.notes.snapshot().distill.events_declined, 2);
    agent.close().await;
}

#[tokio::test]
async fn re_distilling_the_same_events_writes_no_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let who = alice();
    agent
        .notes
        .capture(for_whom(&who, realistic_trajectory()))
        .unwrap();
    let first = agent.notes.distill(&who).await.unwrap();
    let again = agent.notes.distill(&who).await.unwrap();
    assert!(again.notes.is_empty());
    assert_eq!(again.distilled_events, 0);
    assert_eq!(again.session_notes.len(), 1);
    assert_eq!(
        (again.session_notes[0].id, again.session_notes[0].events),
        (first.notes[0].id, 6)
    );

    // New events become a second note; the first keeps its six.
    agent
        .notes
        .capture(for_whom(&who, realistic_trajectory()[2..4].to_vec()))
        .unwrap();
    let more = agent.notes.distill(&who).await.unwrap();
    assert_eq!(more.distilled_events, 2);
    assert_eq!(
        more.session_notes
            .iter()
            .map(|n| n.events)
            .collect::<Vec<_>>(),
        vec![6, 2]
    );

    let page = agent
        .notes
        .list(
            &who,
            NoteListRequest {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.notes.len(), 2);
    assert_eq!(agent.notes.snapshot().distill.notes_created, 2);
    agent.close().await;
}

#[tokio::test]
async fn a_note_lost_between_storing_and_marking_is_not_duplicated() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    // A crash after the note was stored but before its events were marked: the next
    // distillation writes identical content, which the memory service deduplicates.
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let who = alice();
    agent
        .notes
        .capture(for_whom(&who, realistic_trajectory()))
        .unwrap();
    let first = agent.notes.distill(&who).await.unwrap().notes[0].id;
    let writer = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        dir.path().join("aeterna.db").display()
    ))
    .await
    .unwrap();
    sqlx::query("UPDATE trajectory_events SET note_id = NULL")
        .execute(&writer)
        .await
        .unwrap();

    let again = agent.notes.distill(&who).await.unwrap();
    assert_eq!(
        again.notes.iter().map(|n| n.id).collect::<Vec<_>>(),
        vec![first]
    );
    assert_eq!(agent.notes.snapshot().distill.notes_deduplicated, 1);
    let page = agent
        .notes
        .list(
            &who,
            NoteListRequest {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.notes.len(), 1);
    agent.close().await;
}

#[tokio::test]
async fn the_threshold_distils_a_session_automatically() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), NotesConfig::default()).await;
    let who = alice();
    let mut events = realistic_trajectory();
    events.extend(realistic_trajectory()[..3].to_vec());
    agent.notes.capture(for_whom(&who, events)).unwrap();
    // Nine events: below the threshold of ten.
    agent.notes.flush().await.unwrap();
    let db = inspect(dir.path()).await;
    assert_eq!(agent.notes.snapshot().distill.notes_created, 0);

    agent
        .notes
        .capture(for_whom(&who, realistic_trajectory()[3..4].to_vec()))
        .unwrap();
    eventually("an automatic note", || async {
        agent.notes.snapshot().distill.notes_created == 1
    })
    .await;
    let covered: i64 =
        sqlx::query_scalar("SELECT count(*) FROM trajectory_events WHERE note_id IS NOT NULL")
            .fetch_one(&db)
            .await
            .unwrap();
    assert_eq!(covered, 10);
    let page = agent
        .notes
        .list(
            &who,
            NoteListRequest {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(page.notes[0].event_count, 10);
    agent.close().await;
}

#[tokio::test]
async fn distilling_needs_a_project_or_session_and_unknown_notes_are_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let mut nobody = alice();
    nobody.project_id = None;
    nobody.session_id = None;
    let error = agent.notes.distill(&nobody).await.unwrap_err();
    assert!(error.to_string().contains("pass `project_id`"), "{error}");

    let error = agent
        .notes
        .get(&alice(), uuid::Uuid::now_v7())
        .await
        .unwrap_err();
    assert!(matches!(error, NotesError::NotFound(_)), "{error}");

    // A plain memory is not a note.
    let plain = agent
        .memory
        .add(
            &alice(),
            aeterna_memory::NewMemory {
                layer: Layer::Project,
                content: "not a note".into(),
                tags: vec![],
                metadata: serde_json::Value::Null,
                kind: None,
            },
        )
        .await
        .unwrap();
    let error = agent
        .notes
        .get(&alice(), plain.record.id)
        .await
        .unwrap_err();
    assert!(matches!(error, NotesError::NotFound(_)), "{error}");
    agent.close().await;
}

#[tokio::test]
async fn a_session_without_a_project_gets_a_session_note() {
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let mut who = alice();
    who.project_id = None;
    agent
        .notes
        .capture(for_whom(&who, realistic_trajectory()))
        .unwrap();
    let outcome = agent.notes.distill(&who).await.unwrap();
    assert_eq!(
        (outcome.notes[0].layer, outcome.notes[0].scope_id.as_str()),
        (Layer::Session, "s-1")
    );
    agent.close().await;
}
