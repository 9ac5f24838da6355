//! Retries, backoff bounds, `Retry-After`, what is never retried, timeouts, and the circuit
//! breaker, against the stand-in over HTTP.

use std::time::{Duration, Instant};

use aeterna_llm::{Api, BreakerConfig, BreakerState, ErrorKind};

use crate::standin::{Reply, StandIn};
use crate::{analyze_chain, ask, config, fast_retry, provider, start};

/// Gaps between the requests the stand-in saw.
fn gaps(stand_in: &StandIn) -> Vec<Duration> {
    let seen = stand_in.seen();
    seen.windows(2).map(|w| w[1].at - w[0].at).collect()
}

/// Scheduling slack on a shared, loaded machine.
const SLACK: Duration = Duration::from_millis(150);

#[tokio::test]
async fn retryable_errors_are_retried_with_bounded_backoff() {
    let stand_in = StandIn::start(Reply::text("fine")).await;
    stand_in.script([Reply::status(500), Reply::status(503), Reply::status(502)]);
    let roles = start(config(vec![(
        "local",
        provider(Api::OpenAi, &stand_in.base_url()),
    )]));
    let served = ask(analyze_chain(&roles), "acme").await.expect("served");
    assert_eq!(served.value, "fine");
    assert_eq!(stand_in.requests(), 4, "three retries, then the answer");
    // Full jitter below ceilings of 40, 80 and 100 (the maximum) ms.
    let ceilings = [40, 80, 100].map(Duration::from_millis);
    for (gap, ceiling) in gaps(&stand_in).iter().zip(ceilings) {
        assert!(*gap <= ceiling + SLACK, "{gap:?} > {ceiling:?}");
    }

    // Four failures: three retries, then the error, and the chain moves on (to the built-in).
    stand_in.script(std::iter::repeat_n(Reply::status(500), 4));
    let before = stand_in.requests();
    let exhausted = ask(analyze_chain(&roles), "acme")
        .await
        .expect_err("no provider");
    assert_eq!(stand_in.requests() - before, 4);
    assert_eq!(exhausted.skipped.len(), 1);
    let skip = &exhausted.skipped[0];
    assert_eq!(
        (skip.provider.as_str(), skip.kind),
        ("local", ErrorKind::Upstream)
    );
    assert!(skip.reason.contains("500"), "{}", skip.reason);
    assert!(
        exhausted.to_string().contains("local (upstream)"),
        "{exhausted}"
    );
}

#[tokio::test]
async fn retry_after_is_honoured_and_a_long_one_moves_on() {
    let stand_in = StandIn::start(Reply::text("after the wait")).await;
    stand_in.script([Reply::rate_limited("1")]);
    let mut config = config(vec![("local", provider(Api::OpenAi, &stand_in.base_url()))]);
    config.retry.max_backoff_ms = 2_000;
    let roles = start(config);
    let served = ask(analyze_chain(&roles), "acme").await.expect("served");
    assert_eq!(served.value, "after the wait");
    let gap = gaps(&stand_in)[0];
    assert!(
        gap >= Duration::from_millis(980) && gap <= Duration::from_secs(1) + SLACK,
        "waited {gap:?} for Retry-After: 1"
    );

    // Longer than max_backoff_ms: not waited for.
    stand_in.script([Reply::rate_limited("120")]);
    let before = stand_in.requests();
    let started = Instant::now();
    let exhausted = ask(analyze_chain(&roles), "acme")
        .await
        .expect_err("moved on");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(stand_in.requests() - before, 1);
    assert_eq!(exhausted.skipped[0].kind, ErrorKind::RateLimited);
}

#[tokio::test]
async fn client_errors_are_never_retried() {
    let stand_in = StandIn::start(Reply::text("unused")).await;
    let roles = start(config(vec![(
        "local",
        provider(Api::OpenAi, &stand_in.base_url()),
    )]));
    for (status, kind) in [
        (400, ErrorKind::Validation),
        (401, ErrorKind::Auth),
        (403, ErrorKind::Auth),
        (404, ErrorKind::Validation),
    ] {
        stand_in.script([Reply::status(status)]);
        let before = stand_in.requests();
        let exhausted = ask(analyze_chain(&roles), "acme")
            .await
            .expect_err("refused");
        assert_eq!(stand_in.requests() - before, 1, "{status} was retried");
        assert_eq!(exhausted.skipped[0].kind, kind, "{status}");
        assert!(
            exhausted.skipped[0]
                .reason
                .contains(&format!("stand-in error {status}")),
            "the provider's message is kept: {}",
            exhausted.skipped[0].reason
        );
    }
}

#[tokio::test]
async fn a_hanging_provider_times_out_and_the_next_one_serves() {
    let hanging = StandIn::start(Reply::Hang).await;
    let working = StandIn::start(Reply::text("from the second")).await;
    let mut slow = provider(Api::OpenAi, &hanging.base_url());
    slow.timeout_ms = 200;
    slow.retry = Some(fast_retry(1));
    let roles = start(config(vec![
        ("slow", slow),
        ("backup", provider(Api::Anthropic, &working.base_url())),
    ]));
    let started = Instant::now();
    let served = ask(analyze_chain(&roles), "acme").await.expect("served");
    let took = started.elapsed();
    assert_eq!(
        (served.provider.as_str(), served.value.as_str()),
        ("backup", "from the second")
    );
    assert_eq!(hanging.requests(), 2, "one retry of the timeout");
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(2),
        "{took:?}"
    );
    assert_eq!(served.skipped.len(), 1);
    assert_eq!(served.skipped[0].kind, ErrorKind::Timeout);
    assert!(
        served.skipped[0].reason.contains("200 ms"),
        "{}",
        served.skipped[0].reason
    );
}

#[tokio::test]
async fn unusable_answers_move_to_the_next_provider_without_retries() {
    let odd = StandIn::start(Reply::Garbage("<html>gateway</html>".into())).await;
    let good = StandIn::start(Reply::text("ok")).await;
    let roles = start(config(vec![
        ("odd", provider(Api::OpenAi, &odd.base_url())),
        ("good", provider(Api::OpenAi, &good.base_url())),
    ]));
    let served = ask(analyze_chain(&roles), "acme").await.expect("served");
    assert_eq!(served.provider, "good");
    assert_eq!(odd.requests(), 1);
    assert_eq!(served.skipped[0].kind, ErrorKind::MalformedOutput);

    // A model answer the caller cannot use also moves on, and counts as the model's answer.
    odd.set_default(Reply::text("I'd rather not answer in JSON."));
    let analysis = roles
        .analyze("acme", &analyze_input())
        .await
        .expect_err("nobody decides");
    assert_eq!(analysis.skipped.len(), 2);
    assert!(
        analysis
            .skipped
            .iter()
            .all(|s| s.kind == ErrorKind::MalformedOutput)
    );
    assert!(
        analysis.skipped[0].reason.contains("no JSON object"),
        "{}",
        analysis.skipped[0].reason
    );
}

#[tokio::test]
async fn fenced_json_with_prose_is_read() {
    let stand_in = StandIn::start(Reply::text(
        "Here is my decision:\n```json\n{\"decision\": \"Refine\", \"rationale\": \"The test \
         expects an empty list\", \"next_steps\": \"1. return Vec::new()\\n2. re-run\",}\n```\n\
         Let me know!",
    ))
    .await;
    let roles = start(config(vec![(
        "local",
        provider(Api::OpenAi, &stand_in.base_url()),
    )]));
    let served = roles
        .analyze("acme", &analyze_input())
        .await
        .expect("served");
    assert_eq!(served.value.decision, aeterna_llm::Decision::Refine);
    assert_eq!(served.value.next_steps, ["return Vec::new()", "re-run"]);
    assert_eq!(served.value.root_cause, None);
    let prompt = stand_in.seen()[0].prompt();
    assert!(
        prompt.contains("error[E0308]: mismatched types"),
        "{prompt}"
    );
}

#[tokio::test]
async fn the_breaker_opens_short_circuits_and_half_opens() {
    let stand_in = StandIn::start(Reply::status(500)).await;
    let mut flaky = provider(Api::OpenAi, &stand_in.base_url());
    flaky.retry = Some(fast_retry(0));
    flaky.breaker = Some(BreakerConfig {
        failure_threshold: 3,
        cool_down_ms: 300,
    });
    let roles = start(config(vec![("flaky", flaky)]));
    for _ in 0..3 {
        ask(analyze_chain(&roles), "acme")
            .await
            .expect_err("failing");
    }
    assert_eq!(stand_in.requests(), 3);
    let health = &roles.health()[0];
    assert_eq!(health.breaker.state, BreakerState::Open);
    let last = health.breaker.last_error.as_ref().expect("last error");
    assert_eq!(last.kind, ErrorKind::Upstream);

    // Open: refused at once, nothing sent.
    let started = Instant::now();
    let exhausted = ask(analyze_chain(&roles), "acme").await.expect_err("open");
    assert!(
        started.elapsed() < Duration::from_millis(50),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(stand_in.requests(), 3);
    assert_eq!(exhausted.skipped[0].kind, ErrorKind::CircuitOpen);
    assert!(
        exhausted.skipped[0]
            .reason
            .contains("3 consecutive failures")
    );

    // After the cool-down one probe goes through; its failure opens the breaker again.
    tokio::time::sleep(Duration::from_millis(320)).await;
    assert_eq!(roles.health()[0].breaker.state, BreakerState::HalfOpen);
    ask(analyze_chain(&roles), "acme")
        .await
        .expect_err("probe fails");
    assert_eq!(stand_in.requests(), 4);
    assert_eq!(roles.health()[0].breaker.state, BreakerState::Open);

    // The next probe succeeds and closes it.
    stand_in.set_default(Reply::text("back"));
    tokio::time::sleep(Duration::from_millis(320)).await;
    let served = ask(analyze_chain(&roles), "acme")
        .await
        .expect("probe succeeds");
    assert_eq!(served.value, "back");
    let health = &roles.health()[0];
    assert_eq!(
        (health.breaker.state, health.breaker.consecutive_failures),
        (BreakerState::Closed, 0)
    );
    assert_eq!(health.breaker.opened_total, 2);
}

pub fn analyze_input() -> aeterna_llm::AnalyzeInput<'static> {
    aeterna_llm::AnalyzeInput {
        task: "Make the parser accept empty input",
        iteration: 2,
        max_iterations: 3,
        build_output: "error[E0308]: mismatched types\n  --> src/parser.rs:12:5",
        test_output: "",
        previous_attempts: &[],
        known_resolutions: &[],
    }
}
