//! Command-driven loops against a real Python project.

use aeterna_hindsight::{QueryRequest, ResolveRequest};
use aeterna_meta::{
    Action, CommandsRequest, LoopState, Phase, StartRequest, StepRequest, TestStatus,
};

use super::*;

fn command_loop(dir: &Path, build: Option<&str>, test: &str) -> StartRequest {
    StartRequest {
        task: "make the calculator's tests pass".into(),
        commands: Some(CommandsRequest {
            build: build.map(str::to_owned),
            test: test.into(),
            working_dir: dir.display().to_string(),
        }),
        ..StartRequest::default()
    }
}

/// A failing test, a known fix in Hindsight, the code fixed between iterations: the loop
/// refines with the fix, succeeds at iteration 2, distils a note and gives the fix positive
/// feedback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_between_iterations_succeeds_at_iteration_two_and_teaches() {
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = python_project(root.path());
    let agents = Agents::open(data.path(), config(root.path())).await;
    let who = alice();

    let resolved = agents
        .hindsight
        .resolve(
            &who,
            ResolveRequest {
                error_text: Some(failing_output(&dir)),
                description: "calc.add subtracted; return a + b".into(),
                ..ResolveRequest::default()
            },
        )
        .await
        .expect("record the known fix");
    let fix = resolved.resolution.id;

    write(&dir, "go-1", "");
    let started = agents
        .meta
        .start_loop(&who, command_loop(&dir, Some("py-build"), "py-test"))
        .await
        .expect("start");
    let id = started.record.loop_id;
    assert_eq!(started.record.state, LoopState::Queued);

    // Iteration 1 fails and IMPROVE refines with the known fix; then the fix is applied.
    let refined = wait_until(&agents.meta, &who, id, |r| r.iteration == 2).await;
    let improve = refined.last_improve.clone().expect("IMPROVE ran");
    assert_eq!(improve.action, Action::Refine, "{improve:#?}");
    assert_eq!(improve.applied_resolutions, vec![fix]);
    assert!(
        improve
            .matches
            .iter()
            .any(|m| m.matched && m.fixes.iter().any(|f| f.resolution_id == fix))
    );
    let test = refined.last_test.clone().expect("TEST ran");
    assert_eq!(test.status, TestStatus::Failed);
    assert_eq!(
        test.failing_tests,
        vec!["test_add (test_calc.CalcTest.test_add)".to_owned()],
        "recognised by the notes agent's readers"
    );
    write(&dir, "calc.py", FIXED);
    write(&dir, "go-2", "");

    let done = wait_final(&agents.meta, &who, id).await;
    assert_eq!(done.state, LoopState::Succeeded, "{done:#?}");
    assert_eq!(done.iteration, 2);
    assert_eq!(done.iterations.len(), 2);
    assert_eq!(done.iterations[0].action, Some(Action::Refine));
    assert_eq!(done.iterations[1].action, Some(Action::Exit));
    assert_eq!(done.last_improve.as_ref().unwrap().action, Action::Exit);
    assert!(
        done.learning_errors.is_empty(),
        "{:?}",
        done.learning_errors
    );

    let note_id = done.note_id.expect("a note distilled from the loop");
    let note = agents
        .notes
        .get(&who, note_id)
        .await
        .expect("the note exists");
    assert!(!note.summary.title.is_empty());

    let after = agents
        .hindsight
        .query(
            &who,
            QueryRequest {
                error_text: Some(failing_output_text(&dir)),
                ..QueryRequest::default()
            },
        )
        .await
        .unwrap();
    let resolution = after
        .matched
        .iter()
        .flat_map(|m| &m.resolutions)
        .find(|r| r.id == fix)
        .expect("the fix is still known");
    assert_eq!(
        (resolution.success_count, resolution.application_count),
        (1, 1),
        "positive feedback recorded"
    );
    agents.close().await;
}

/// The buggy output, whatever the code is now.
fn failing_output_text(dir: &Path) -> String {
    write(dir, "calc.py", BUGGY);
    let output = failing_output(dir);
    write(dir, "calc.py", FIXED);
    output
}

/// Three failures escalate and store the failure in Hindsight; once a person records the fix,
/// the next loop meeting the same failure refines with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exhaustion_escalates_and_the_next_loop_refines_with_the_stored_failure() {
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = python_project(root.path());
    let agents = Agents::open(data.path(), config(root.path())).await;
    let who = alice();

    let started = agents
        .meta
        .start_loop(&who, command_loop(&dir, None, "py-test"))
        .await
        .expect("start");
    let id = started.record.loop_id;
    let done = wait_final(&agents.meta, &who, id).await;
    assert_eq!(done.state, LoopState::Escalated, "{done:#?}");
    assert_eq!(done.iteration, 3);
    assert_eq!(done.iterations.len(), 3);
    assert!(
        done.iterations[..2]
            .iter()
            .all(|i| i.action == Some(Action::Refine))
    );
    assert_eq!(done.iterations[2].action, Some(Action::Escalate));
    assert!(
        done.reason
            .as_deref()
            .unwrap()
            .contains("iterations exhausted")
    );
    let report = done
        .escalation_report
        .clone()
        .expect("a report for a person");
    assert!(report.contains("## What was tried"), "{report}");
    assert!(report.contains("AssertionError"), "{report}");
    assert_eq!(done.stored_signatures.len(), 1, "{done:#?}");
    let stored = done.stored_signatures[0];

    // Hindsight knows the failure now.
    let output = failing_output(&dir);
    let known = agents
        .hindsight
        .query(
            &who,
            QueryRequest {
                error_text: Some(output.clone()),
                ..QueryRequest::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(known.matched.first().map(|m| m.signature_id), Some(stored));

    // A person fixes it and records the fix.
    let fix = agents
        .hindsight
        .resolve(
            &who,
            ResolveRequest {
                signature_id: Some(stored),
                description: "calc.add subtracted; return a + b".into(),
                ..ResolveRequest::default()
            },
        )
        .await
        .unwrap()
        .resolution
        .id;

    // The next loop (client-driven) meets the same failure and gets the match.
    let next = agents
        .meta
        .start_loop(
            &who,
            StartRequest {
                task: "make the calculator's tests pass again".into(),
                ..StartRequest::default()
            },
        )
        .await
        .unwrap();
    let answer = agents
        .meta
        .step(
            &who,
            StepRequest {
                loop_id: next.record.loop_id,
                phase: Phase::Test,
                success: false,
                output,
                duration_ms: 40,
                failing_tests: Vec::new(),
                notes: None,
                tokens_used: 0,
            },
        )
        .await
        .unwrap();
    let improve = answer.record.last_improve.as_ref().unwrap();
    assert_eq!(improve.action, Action::Refine, "{improve:#?}");
    assert_eq!(improve.applied_resolutions, vec![fix]);
    assert_eq!(
        answer.hindsight.first().map(|h| h.signature_id),
        Some(stored)
    );
    assert!(answer.hindsight[0].matched);
    agents.close().await;
}

/// A hanging test is killed at the TEST timeout with everything it spawned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_test_is_killed_with_its_process_group_at_the_timeout() {
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = python_project(root.path());
    let agents = Agents::open(data.path(), config(root.path())).await;
    let who = alice();
    let mut request = command_loop(&dir, None, "py-hang");
    request.max_iterations = Some(1);
    request.test_timeout_ms = Some(1_500);
    let id = agents
        .meta
        .start_loop(&who, request)
        .await
        .unwrap()
        .record
        .loop_id;
    let pids = wait_for_file(&dir.join("pids")).await;
    let ids: Vec<i32> = pids
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let (leader, pgid, grandchild) = (ids[0], ids[1], ids[2]);
    assert_eq!(leader, pgid, "the command leads its own process group");
    assert!(alive_in_group(pgid).contains(&grandchild));

    let done = wait_final(&agents.meta, &who, id).await;
    let test = done.last_test.as_ref().unwrap();
    assert_eq!(test.status, TestStatus::TimedOut, "{done:#?}");
    assert!(
        test.output.contains("timed out after 1500 ms"),
        "{}",
        test.output
    );
    assert!(test.duration_ms >= 1_500 && test.duration_ms < 10_000);
    assert_eq!(done.state, LoopState::Escalated);
    assert!(
        group_gone(pgid).await,
        "left alive: {:?}",
        alive_in_group(pgid)
    );
    agents.close().await;
}
