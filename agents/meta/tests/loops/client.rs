//! Client-driven loops: the agent reports phases, the answers guide it.

use aeterna_meta::{Action, LoopState, NextAction, Phase, StartRequest, StepRequest};

use super::*;

fn step(id: Uuid, phase: Phase, success: bool, output: &str) -> StepRequest {
    StepRequest {
        loop_id: id,
        phase,
        success,
        output: output.into(),
        duration_ms: 25,
        failing_tests: Vec::new(),
        notes: None,
        tokens_used: 120,
    }
}

const FLAKY: &str = "test parser::tests::network ... FAILED\n\nfailures:\n\n---- \
                     parser::tests::network stdout ----\nthread 'parser::tests::network' \
                     panicked at src/lib.rs:9:5:\nconnection refused (os error 111)\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answers_guide_the_agent_through_the_phases() {
    let data = tempfile::tempdir().unwrap();
    let agents = Agents::open(data.path(), MetaConfig::default()).await;
    let who = alice();
    let started = agents
        .meta
        .start_loop(
            &who,
            StartRequest {
                task: "make the parser tests pass".into(),
                max_iterations: Some(4),
                ..StartRequest::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(started.next.action, NextAction::Build);
    let id = started.record.loop_id;

    let built = agents
        .meta
        .step(&who, step(id, Phase::Build, true, "Compiling parser"))
        .await
        .unwrap();
    assert_eq!(built.next.action, NextAction::Test);
    let build = built.record.last_build.as_ref().unwrap();
    assert_eq!(build.tokens_used, 120);

    // A transient failure is retried.
    let failed = agents
        .meta
        .step(&who, step(id, Phase::Test, false, FLAKY))
        .await
        .unwrap();
    let improve = failed.record.last_improve.as_ref().unwrap();
    assert_eq!(improve.action, Action::Retry, "{improve:#?}");
    assert_eq!(failed.next.action, NextAction::Build);
    assert_eq!(failed.record.iteration, 2);
    assert_eq!(
        failed.record.last_test.as_ref().unwrap().failing_tests,
        vec!["parser::tests::network".to_owned()]
    );

    // Secrets in reported output are redacted before storage.
    let secret = "error: auth failed with token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
    let refused = agents
        .meta
        .step(&who, step(id, Phase::Build, false, secret))
        .await
        .unwrap();
    let kept = &refused.record.last_build.as_ref().unwrap().output;
    assert!(!kept.contains("ghp_abcdef"), "{kept}");
    assert_eq!(
        refused.record.last_improve.as_ref().unwrap().action,
        Action::Refine
    );

    let passed = agents
        .meta
        .step(&who, step(id, Phase::Test, true, "test result: ok"))
        .await
        .unwrap();
    assert_eq!(passed.record.state, LoopState::Succeeded);
    assert_eq!(passed.next.action, NextAction::Done);
    assert_eq!(passed.record.iteration, 3);
    agents.close().await;
}
