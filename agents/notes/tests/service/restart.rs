//! Shutdown and restart: everything acknowledged is stored, and a backlog left at the
//! threshold is distilled at the next start.

use aeterna_notes::{NoteListRequest, NotesConfig};
use serde_json::json;

use crate::{
    Agent, alice, count_events, event, eventually, for_whom, inspect, manual, realistic_trajectory,
};

#[tokio::test]
async fn shutdown_stores_every_acknowledged_event() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let mut acknowledged = 0;
    for round in 0..7 {
        let events = (0..50)
            .map(|n| event("bash", "", json!(format!("{round}-{n}")), "", true))
            .collect();
        acknowledged += agent
            .notes
            .capture(for_whom(&alice(), events))
            .unwrap()
            .accepted;
    }
    assert_eq!(acknowledged, 350);
    // No flush: shutdown alone must drain the queue.
    agent.close().await;

    let agent = Agent::open(dir.path(), manual()).await;
    assert_eq!(count_events(&inspect(dir.path()).await, "acme").await, 350);
    agent.close().await;
}

#[tokio::test]
async fn a_backlog_at_the_threshold_is_distilled_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let who = alice();
    let agent = Agent::open(dir.path(), manual()).await;
    let mut events = realistic_trajectory();
    events.extend(realistic_trajectory());
    agent.notes.capture(for_whom(&who, events)).unwrap();
    agent.close().await;

    // The next run has automatic distillation on: the twelve pending events become a note.
    let agent = Agent::open(dir.path(), NotesConfig::default()).await;
    eventually("the backlog note", || async {
        agent.notes.snapshot().distill.notes_created == 1
    })
    .await;
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
    assert_eq!(page.notes[0].event_count, 12);
    agent.close().await;
}
