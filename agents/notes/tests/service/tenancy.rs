//! Tenants never see each other's trajectories or notes, even with identical project and
//! session ids.

use aeterna_notes::{NoteListRequest, NotesError};

use crate::{Agent, alice, count_events, for_whom, inspect, manual, realistic_trajectory};

#[tokio::test]
async fn another_tenant_sees_nothing_of_acme() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let acme = alice();
    agent
        .notes
        .capture(for_whom(&acme, realistic_trajectory()))
        .unwrap();
    let note = agent.notes.distill(&acme).await.unwrap().notes[0].id;

    let mut globex = alice();
    globex.tenant_id = "globex".into();
    let error = agent.notes.get(&globex, note).await.unwrap_err();
    assert!(matches!(error, NotesError::NotFound(_)), "{error}");
    let page = agent
        .notes
        .list(
            &globex,
            NoteListRequest {
                limit: 10,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(page.notes.is_empty());

    // Same project and session ids, other tenant: nothing to distil, acme's events untouched.
    let outcome = agent.notes.distill(&globex).await.unwrap();
    assert!(outcome.notes.is_empty() && outcome.session_notes.is_empty());

    agent
        .notes
        .capture(for_whom(&globex, realistic_trajectory()[2..4].to_vec()))
        .unwrap();
    let theirs = agent.notes.distill(&globex).await.unwrap();
    assert_eq!(theirs.distilled_events, 2);
    let ours = agent.notes.distill(&acme).await.unwrap();
    assert_eq!(ours.session_notes.len(), 1);
    assert_eq!(ours.session_notes[0].events, 6);

    let db = inspect(dir.path()).await;
    assert_eq!(count_events(&db, "acme").await, 6);
    assert_eq!(count_events(&db, "globex").await, 2);
    agent.close().await;
}
