//! What the provider layer costs, with p50/p95/p99 (`cargo bench -p aeterna-llm`):
//!
//! * **overhead** — a role call through the chain (breaker, budget reservation, retry loop,
//!   metrics, the OpenAI client, JSON answer parsing) against the stand-in, next to the same
//!   HTTP request made with a bare `reqwest` client: the stand-in's own latency. Bar: ≤ 1 ms
//!   added at p50.
//! * **fallback** — a summary and a note with the LLM configured but its breaker open, next to
//!   the deterministic path alone. Bar: ≤ 1 ms added.
//!
//! The stand-in runs in the same process, on its own runtime thread.

#[path = "../tests/standin/mod.rs"]
mod standin;

use std::time::{Duration, Instant};

use aeterna_context::summarize::{SourceDoc, SummaryInput};
use aeterna_context::{SummaryGenerator, Tokenizer};
use aeterna_llm::{
    Api, BreakerConfig, ChatRequest, LlmConfig, LlmRoles, ProviderConfig, RetryConfig, Role,
};
use aeterna_memory::{Identity, Layer};
use aeterna_notes::distill::DistillInput;
use aeterna_notes::{CapturedEvent, DistillerChain};
use standin::{Reply, StandIn};

const CALLS: usize = 2_000;
const FALLBACKS: usize = 2_000;

fn main() {
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let stand_in = server.block_on(StandIn::start(Reply::text(
        r#"{"sentence": "a", "paragraph": "b", "detailed": "c"}"#,
    )));
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    client.block_on(overhead(&stand_in));
    client.block_on(fallback(&stand_in));
}

fn config(base_url: &str, breaker: BreakerConfig) -> LlmConfig {
    let mut config = LlmConfig {
        retry: RetryConfig {
            max_retries: 0,
            ..RetryConfig::default()
        },
        breaker,
        ..LlmConfig::default()
    };
    config.providers.insert(
        "local".into(),
        ProviderConfig::new(Api::OpenAi, base_url, "bench-model"),
    );
    config.roles.summarize = vec!["local".into()];
    config.roles.distill = vec!["local".into()];
    config
}

async fn overhead(stand_in: &StandIn) {
    let roles =
        LlmRoles::start(config(&stand_in.base_url(), BreakerConfig::default()), None).unwrap();
    let chain = roles.chain(Role::Summarize);
    let request = ChatRequest::new("You summarise.", "Summarise: the build uses cargo.", 300);
    let raw = reqwest::Client::new();
    let url = format!("{}/chat/completions", stand_in.base_url());
    let body = serde_json::json!({
        "model": "bench-model",
        "messages": [{"role": "system", "content": "You summarise."},
                     {"role": "user", "content": "Summarise: the build uses cargo."}],
        "max_tokens": 300, "temperature": 0.2, "stream": false,
        "response_format": {"type": "json_object"}
    });
    let mut direct = Vec::with_capacity(CALLS);
    let mut layered = Vec::with_capacity(CALLS);
    // Interleaved, so both see the same machine load.
    for round in 0..CALLS + 200 {
        let started = Instant::now();
        let bytes = raw
            .post(&url)
            .json(&body)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let _: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let raw_took = started.elapsed();
        let started = Instant::now();
        chain
            .run("bench", &request, |response| {
                aeterna_llm::prompts::read_summary(&response.text)
            })
            .await
            .unwrap();
        let layered_took = started.elapsed();
        if round >= 200 {
            direct.push(raw_took);
            layered.push(layered_took);
        }
    }
    report("stand-in round trip, bare reqwest", &mut direct);
    report("same call through the provider layer", &mut layered);
    let (d, l) = (percentiles(&mut direct), percentiles(&mut layered));
    println!(
        "  overhead: p50 {:+.3} ms, p95 {:+.3} ms, p99 {:+.3} ms",
        ms(l[0]) - ms(d[0]),
        ms(l[1]) - ms(d[1]),
        ms(l[2]) - ms(d[2])
    );
}

async fn fallback(stand_in: &StandIn) {
    // One failure opens the breaker for an hour.
    let open = BreakerConfig {
        failure_threshold: 1,
        cool_down_ms: 3_600_000,
    };
    stand_in.script([Reply::status(500)]);
    let roles = LlmRoles::start(config(&stand_in.base_url(), open), None).unwrap();
    let tokenizer = Tokenizer::get().unwrap();
    let with_llm = SummaryGenerator::with_primary(roles.summarizer().unwrap(), tokenizer);
    let alone = SummaryGenerator::extractive(tokenizer);
    let texts: Vec<String> = (0..50)
        .map(|n| format!("Deploy {n} ran the sqlite migration before the cargo build; rollbacks need approval."))
        .collect();
    let docs: Vec<SourceDoc<'_>> = texts
        .iter()
        .map(|text| SourceDoc {
            text,
            updated_at: 0,
        })
        .collect();
    let input = SummaryInput {
        tenant_id: "bench",
        layer: Layer::Project,
        scope_id: "p",
        docs: &docs,
        budgets: [50, 200, 500],
    };
    let first = with_llm.generate(&input).await;
    assert!(first.fallback.is_some(), "the breaker opened");
    let (mut deterministic, mut fell_back) = (Vec::new(), Vec::new());
    for _ in 0..FALLBACKS {
        let started = Instant::now();
        alone.generate(&input).await;
        deterministic.push(started.elapsed());
        let started = Instant::now();
        let generated = with_llm.generate(&input).await;
        fell_back.push(started.elapsed());
        assert_eq!(generated.generator, "extractive-v1");
    }
    report("summary, deterministic alone", &mut deterministic);
    report("summary, LLM breaker open → deterministic", &mut fell_back);
    added(&mut deterministic, &mut fell_back);

    let events = session();
    let session_key = events[0].session_key();
    let input = DistillInput {
        session: &session_key,
        events: &events,
    };
    let with_llm = DistillerChain::new(roles.distillers().unwrap());
    let alone = DistillerChain::default();
    let (mut deterministic, mut fell_back) = (Vec::new(), Vec::new());
    for _ in 0..FALLBACKS {
        let started = Instant::now();
        alone.distill(input).await;
        deterministic.push(started.elapsed());
        let started = Instant::now();
        with_llm.distill(input).await;
        fell_back.push(started.elapsed());
    }
    report("note of 40 events, deterministic alone", &mut deterministic);
    report("note, LLM breaker open → deterministic", &mut fell_back);
    added(&mut deterministic, &mut fell_back);
}

fn session() -> Vec<CapturedEvent> {
    let mut identity = Identity::new("bench");
    identity.session_id = Some("s".into());
    identity.project_id = Some("p".into());
    (0..40)
        .map(|n| CapturedEvent {
            id: uuid::Uuid::now_v7(),
            identity: identity.clone(),
            tool_name: if n % 2 == 0 { "edit_file" } else { "bash" }.into(),
            description: format!("step {n}"),
            input: if n % 2 == 0 {
                format!(r#"{{"path": "src/module_{n}.rs"}}"#)
            } else {
                r#"{"command": "cargo test"}"#.into()
            },
            output: if n % 4 == 1 {
                "test m::t ... FAILED\ntest result: FAILED. 1 failed".into()
            } else {
                "ok".into()
            },
            success: n % 4 != 1,
            duration_ms: 100,
            tags: vec![],
            metadata: serde_json::json!({}),
            truncated: vec![],
            captured_at: 1_750_000_000_000 + n * 1000,
        })
        .collect()
}

fn percentiles(samples: &mut [Duration]) -> [Duration; 3] {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)];
    [at(0.50), at(0.95), at(0.99)]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn report(name: &str, samples: &mut [Duration]) {
    let [p50, p95, p99] = percentiles(samples);
    println!(
        "{name:<48} p50 {:>8.3} ms  p95 {:>8.3} ms  p99 {:>8.3} ms  (n = {})",
        ms(p50),
        ms(p95),
        ms(p99),
        samples.len()
    );
}

fn added(base: &mut [Duration], with: &mut [Duration]) {
    let (b, w) = (percentiles(base), percentiles(with));
    println!(
        "  added: p50 {:+.3} ms, p95 {:+.3} ms, p99 {:+.3} ms",
        ms(w[0]) - ms(b[0]),
        ms(w[1]) - ms(b[1]),
        ms(w[2]) - ms(b[2])
    );
}
