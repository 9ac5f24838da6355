//! Cancellation, restarts, the per-tenant cap, bad input and tenancy.

use aeterna_meta::{
    CommandsRequest, Driver, LoopState, MetaError, Phase, RESTART_REASON, StartRequest, StepRequest,
};

use super::*;

fn hanging(dir: &Path) -> StartRequest {
    StartRequest {
        task: "run the slow suite".into(),
        commands: Some(CommandsRequest {
            build: None,
            test: "py-hang".into(),
            working_dir: dir.display().to_string(),
        }),
        ..StartRequest::default()
    }
}

fn client(task: &str) -> StartRequest {
    StartRequest {
        task: task.into(),
        ..StartRequest::default()
    }
}

fn report(id: Uuid, phase: Phase, success: bool) -> StepRequest {
    StepRequest {
        loop_id: id,
        phase,
        success,
        output: String::new(),
        duration_ms: 10,
        failing_tests: Vec::new(),
        notes: None,
        tokens_used: 0,
    }
}

async fn group_of_running_test(dir: &Path) -> i32 {
    let pids = wait_for_file(&dir.join("pids")).await;
    pids.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_mid_phase_kills_the_phase_and_ends_the_loop() {
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = python_project(root.path());
    let agents = Agents::open(data.path(), config(root.path())).await;
    let who = alice();
    let id = agents
        .meta
        .start_loop(&who, hanging(&dir))
        .await
        .unwrap()
        .record
        .loop_id;
    let pgid = group_of_running_test(&dir).await;
    let running = agents.meta.status(&who, id).await.unwrap();
    assert_eq!(
        (running.state, running.phase),
        (LoopState::Running, Some(Phase::Test))
    );

    let cancelled = agents.meta.cancel(&who, id).await.unwrap();
    assert_eq!(cancelled.state, LoopState::Cancelled, "{cancelled:#?}");
    assert!(cancelled.finished_at.is_some());
    assert!(
        group_gone(pgid).await,
        "left alive: {:?}",
        alive_in_group(pgid)
    );
    // Cancelling again returns the ended loop unchanged.
    assert_eq!(agents.meta.cancel(&who, id).await.unwrap(), cancelled);
    agents.close().await;
}

/// A restart mid-loop: the command-driven loop is marked failed with the reason (and its
/// processes are gone); the client-driven loop resumes where it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_fails_command_loops_and_resumes_client_loops() {
    if aeterna_testkit::profile::skip_on_postgres(
        "on a shared database a running command loop may belong to another instance: it is failed only past its deadline",
    ) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = python_project(root.path());
    let who = alice();
    let agents = Agents::open(data.path(), config(root.path())).await;
    let command = agents
        .meta
        .start_loop(&who, hanging(&dir))
        .await
        .unwrap()
        .record
        .loop_id;
    let client_loop = agents
        .meta
        .start_loop(&who, client("refactor the parser"))
        .await
        .unwrap()
        .record
        .loop_id;
    agents
        .meta
        .step(&who, report(client_loop, Phase::Build, true))
        .await
        .unwrap();
    let pgid = group_of_running_test(&dir).await;
    agents.close().await;
    assert!(
        group_gone(pgid).await,
        "left alive: {:?}",
        alive_in_group(pgid)
    );

    let agents = Agents::open(data.path(), config(root.path())).await;
    let failed = agents.meta.status(&who, command).await.unwrap();
    assert_eq!(failed.state, LoopState::Failed, "{failed:#?}");
    assert_eq!(failed.reason.as_deref(), Some(RESTART_REASON));
    assert_eq!(failed.driver, Driver::Command);

    let resumed = agents.meta.status(&who, client_loop).await.unwrap();
    assert_eq!(
        (resumed.state, resumed.phase),
        (LoopState::Running, Some(Phase::Test))
    );
    let done = agents
        .meta
        .step(&who, report(client_loop, Phase::Test, true))
        .await
        .unwrap();
    assert_eq!(done.record.state, LoopState::Succeeded);
    agents.close().await;
}

fn refused<T: std::fmt::Debug>(result: Result<T, MetaError>, needle: &str) {
    let error = result.expect_err("refused").to_string();
    assert!(error.contains(needle), "{needle:?} not in {error:?}");
}

fn missing<T: std::fmt::Debug>(result: Result<T, MetaError>) {
    assert!(matches!(result, Err(MetaError::NotFound(_))), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_refused_naming_the_argument() {
    let root = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let dir = python_project(root.path());
    let mut operator = config(root.path());
    operator.max_active_loops_per_tenant = 2;
    let agents = Agents::open(data.path(), operator).await;
    let who = alice();

    let mut unknown = hanging(&dir);
    unknown.commands.as_mut().unwrap().test = "sh".into();
    refused(
        agents.meta.start_loop(&who, unknown).await,
        "`test_command` is `sh`, which is not in the operator's allow-list",
    );
    let mut outside = hanging(&dir);
    outside.commands.as_mut().unwrap().working_dir = "/".into();
    refused(agents.meta.start_loop(&who, outside).await, "`working_dir`");
    let mut escape = hanging(&dir);
    escape.commands.as_mut().unwrap().working_dir = format!("{}/../../..", dir.display());
    refused(agents.meta.start_loop(&who, escape).await, "`working_dir`");
    let mut greedy = client("x");
    greedy.max_iterations = Some(50);
    refused(
        agents.meta.start_loop(&who, greedy).await,
        "`max_iterations` is 50",
    );
    let mut slow = client("x");
    slow.test_timeout_ms = Some(10_000_000);
    refused(
        agents.meta.start_loop(&who, slow).await,
        "`test_timeout_ms`",
    );
    refused(
        agents.meta.start_loop(&who, client("  ")).await,
        "`task` is empty",
    );
    refused(
        agents
            .meta
            .start_loop(&who, client(&"x".repeat(5_000)))
            .await,
        "meta.max_task_bytes",
    );

    // The per-tenant cap refuses the third active loop; another tenant is not counted.
    let first = agents.meta.start_loop(&who, client("one")).await.unwrap();
    let first = first.record.loop_id;
    agents.meta.start_loop(&who, client("two")).await.unwrap();
    refused(
        agents.meta.start_loop(&who, client("three")).await,
        "meta.max_active_loops_per_tenant",
    );
    agents
        .meta
        .start_loop(&mallory(), client("elsewhere"))
        .await
        .expect("another tenant has its own cap");

    // Steps: the wrong phase, an ended loop.
    refused(
        agents
            .meta
            .step(&who, report(first, Phase::Improve, true))
            .await,
        "`phase` is `improve`",
    );
    agents
        .meta
        .step(&who, report(first, Phase::Build, true))
        .await
        .unwrap();
    refused(
        agents
            .meta
            .step(&who, report(first, Phase::Build, true))
            .await,
        "expects `test`",
    );
    agents
        .meta
        .step(&who, report(first, Phase::Test, true))
        .await
        .unwrap();
    refused(
        agents
            .meta
            .step(&who, report(first, Phase::Test, true))
            .await,
        "has ended (succeeded)",
    );
    // A slot is free again.
    agents.meta.start_loop(&who, client("three")).await.unwrap();

    // Another tenant's loop is not found, whatever the call.
    missing(agents.meta.status(&mallory(), first).await);
    missing(agents.meta.cancel(&mallory(), first).await);
    missing(
        agents
            .meta
            .step(&mallory(), report(first, Phase::Test, true))
            .await,
    );
    missing(agents.meta.status(&who, Uuid::now_v7()).await);
    let listed = agents.meta.list(&mallory(), None, 10).await.unwrap();
    assert!(listed.loops.iter().all(|l| l.loop_id != first));
    let mine = agents
        .meta
        .list(&who, Some(LoopState::Succeeded), 10)
        .await
        .unwrap();
    assert_eq!(
        mine.loops.iter().map(|l| l.loop_id).collect::<Vec<_>>(),
        vec![first]
    );
    refused(agents.meta.list(&who, None, 1_000).await, "`limit` is 1000");
    agents.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loops_of_teams_the_caller_does_not_hold_are_missing_and_not_listed() {
    let data = tempfile::tempdir().unwrap();
    let mut operator = MetaConfig::default();
    operator.max_active_loops_per_tenant = 8;
    let agents = Agents::open(data.path(), operator).await;
    let of_team = |team: &str| Identity {
        team_id: Some(team.into()),
        ..alice()
    };
    let holds_a = Identity {
        grants: Arc::new(Grants {
            users: Claim::of(["alice"]),
            teams: Claim::of(["a"]),
            ..Grants::default()
        }),
        ..of_team("a")
    };
    // Team a's loops are the oldest, so a listing of two reads past three of team b's.
    let mut team_a = Vec::new();
    for task in ["a-1", "a-2"] {
        let started = agents.meta.start_loop(&of_team("a"), client(task)).await;
        team_a.push(started.unwrap().record.loop_id);
    }
    let mut team_b = Vec::new();
    for task in ["b-1", "b-2", "b-3"] {
        let started = agents.meta.start_loop(&of_team("b"), client(task)).await;
        team_b.push(started.unwrap().record.loop_id);
    }

    let listed = agents.meta.list(&holds_a, None, 2).await.unwrap();
    let listed: Vec<_> = listed.loops.iter().map(|l| l.loop_id).collect();
    assert_eq!(listed, vec![team_a[1], team_a[0]]);
    for id in &team_b {
        missing(agents.meta.status(&holds_a, *id).await);
        missing(agents.meta.cancel(&holds_a, *id).await);
    }
    agents.meta.status(&holds_a, team_a[0]).await.unwrap();
    // Unrestricted grants (the single-user install) list every loop.
    let everything = agents.meta.list(&alice(), None, 10).await.unwrap();
    assert_eq!(everything.loops.len(), 5);
    agents.close().await;
}
