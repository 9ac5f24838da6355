//! Capture through the service: storage with the tenant on every row, capture modes, and
//! refusal of bad input.

use aeterna_notes::{CaptureMode, CaptureStatus, NotesError};
use serde_json::json;

use crate::{Agent, alice, count_events, event, for_whom, inspect, manual};

#[tokio::test]
async fn accepted_events_are_stored_with_their_tenant_and_identity() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let events = (0..25)
        .map(|n| {
            event(
                "bash",
                &format!("step {n}"),
                json!({"command": format!("echo {n}")}),
                "ok",
                true,
            )
        })
        .collect();
    let receipt = agent.notes.capture(for_whom(&alice(), events)).unwrap();
    assert_eq!(
        (receipt.accepted, receipt.filtered, receipt.dropped),
        (25, 0, 0)
    );
    assert!(
        receipt
            .events
            .iter()
            .all(|r| r.status == CaptureStatus::Accepted && r.id.is_some())
    );
    assert_eq!(receipt.queue_capacity, 1000);
    assert!(
        receipt
            .durability
            .contains("a crash before then loses them")
    );
    agent.notes.flush().await.unwrap();

    let db = inspect(dir.path()).await;
    assert_eq!(count_events(&db, "acme").await, 25);
    let (tenant, project, session, user, description): (String, String, String, Option<String>, String) = sqlx::query_as(
        "SELECT tenant_id, project_id, session_id, user_id, description FROM trajectory_events ORDER BY id LIMIT 1",
    )
    .fetch_one(&db)
    .await
    .unwrap();
    assert_eq!(
        (
            tenant.as_str(),
            project.as_str(),
            session.as_str(),
            user.as_deref(),
            description.as_str()
        ),
        ("acme", "parser", "s-1", Some("alice"), "step 0")
    );
    let snapshot = agent.notes.snapshot().capture;
    assert_eq!(
        (snapshot.accepted, snapshot.written, snapshot.pending),
        (25, 25, 0)
    );
    agent.close().await;
}

#[tokio::test]
async fn capture_modes_apply_per_tenant_and_project() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut config = manual();
    config
        .capture
        .tenants
        .insert("quiet".into(), CaptureMode::Disabled);
    config
        .capture
        .tenants
        .insert("sampler".into(), CaptureMode::Sampled { every: 4 });
    config
        .capture
        .projects
        .insert("acme/noisy".into(), CaptureMode::ErrorsOnly);
    config.limits.max_batch_events = 1000;
    let agent = Agent::open(dir.path(), config).await;

    let mixed = || {
        (0..40)
            .map(|n| event("bash", "", json!(n), "", n % 4 == 0))
            .collect::<Vec<_>>()
    };

    let mut noisy = alice();
    noisy.project_id = Some("noisy".into());
    let receipt = agent.notes.capture(for_whom(&noisy, mixed())).unwrap();
    assert_eq!(
        (receipt.accepted, receipt.filtered),
        (30, 10),
        "errors_only keeps the 30 failures"
    );
    assert!(
        receipt
            .events
            .iter()
            .all(|r| r.mode == CaptureMode::ErrorsOnly)
    );

    let mut quiet = alice();
    quiet.tenant_id = "quiet".into();
    let receipt = agent.notes.capture(for_whom(&quiet, mixed())).unwrap();
    assert_eq!((receipt.accepted, receipt.filtered), (0, 40));

    let mut sampler = alice();
    sampler.tenant_id = "sampler".into();
    let many = (0..800)
        .map(|n| event("bash", "", json!(n), "", true))
        .collect();
    let sampled = agent
        .notes
        .capture(for_whom(&sampler, many))
        .unwrap()
        .accepted;
    // 1 in 4 of 800: mean 200, standard deviation ~12.2; 5 sigma either way.
    assert!((139..=261).contains(&sampled), "sampled {sampled}");

    let receipt = agent.notes.capture(for_whom(&alice(), mixed())).unwrap();
    assert_eq!(receipt.accepted, 40, "the default mode keeps everything");

    agent.notes.flush().await.unwrap();
    let db = inspect(dir.path()).await;
    let failures_only: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM trajectory_events WHERE tenant_id = 'acme' AND project_id = 'noisy' AND success = 1",
    )
    .fetch_one(&db)
    .await
    .unwrap();
    assert_eq!(failures_only, 0);
    assert_eq!(count_events(&db, "quiet").await, 0);
    assert_eq!(count_events(&db, "sampler").await, sampled as i64);
    assert_eq!(count_events(&db, "acme").await, 70);
    assert_eq!(
        agent.notes.snapshot().capture.filtered,
        (10 + 40 + 800 - sampled) as u64
    );
    agent.close().await;
}

#[tokio::test]
async fn invalid_input_is_refused_by_index_and_nothing_is_enqueued() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let events = vec![
        event("bash", "fine", json!("ls"), "", true),
        event("  ", "no tool", json!("ls"), "", true),
    ];
    let error = agent.notes.capture(for_whom(&alice(), events)).unwrap_err();
    assert!(matches!(error, NotesError::InvalidInput(_)));
    assert!(
        error
            .to_string()
            .starts_with("events[1]: `tool_name` is empty"),
        "{error}"
    );

    let error = agent.notes.capture(vec![]).unwrap_err();
    assert!(error.to_string().contains("`events` is empty"), "{error}");

    let too_many = (0..101)
        .map(|_| event("bash", "", json!(null), "", true))
        .collect();
    let error = agent
        .notes
        .capture(for_whom(&alice(), too_many))
        .unwrap_err();
    assert!(error.to_string().contains("limit is 100"), "{error}");

    agent.notes.flush().await.unwrap();
    assert_eq!(count_events(&inspect(dir.path()).await, "acme").await, 0);
    assert_eq!(agent.notes.snapshot().capture.accepted, 0);
    agent.close().await;
}

#[tokio::test]
async fn oversized_fields_are_truncated_and_marked() {
    if aeterna_testkit::profile::skip_on_postgres("it reads or locks the SQLite file directly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut config = manual();
    config.limits.max_output_bytes = 100;
    let agent = Agent::open(dir.path(), config).await;
    let long = "word ".repeat(10_000);
    agent
        .notes
        .capture(for_whom(
            &alice(),
            vec![event("bash", "", json!("ls"), &long, true)],
        ))
        .unwrap();
    agent.notes.flush().await.unwrap();
    let (output, truncated): (String, String) =
        sqlx::query_as("SELECT output, truncated FROM trajectory_events")
            .fetch_one(&inspect(dir.path()).await)
            .await
            .unwrap();
    assert!(
        output.len() <= 100 && output.starts_with("word word"),
        "{}",
        output.len()
    );
    assert_eq!(truncated, r#"["output"]"#);
    agent.close().await;
}
