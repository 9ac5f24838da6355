//! The `[llm]` section end to end: configured from TOML, a stand-in provider over real HTTP
//! writes the summaries MCP tools return, and `/readyz` and `/metrics` show each provider's
//! circuit breaker and the tokens used per tenant and role.

use crate::standin;

use crate::common;

use aeterna_llm::{Api, BreakerConfig, LlmConfig, ProviderConfig, RetryConfig};
use aeterna_server::config::{Config, Overrides};
use serde_json::{Value, json};

use common::{ALPHA_TOKEN, TestServer, call_ok, two_tenants};
use standin::{Reply, StandIn};

fn llm_config(base_url: &str) -> LlmConfig {
    let mut provider = ProviderConfig::new(Api::OpenAi, base_url, "stand-in-model");
    provider.timeout_ms = 2_000;
    let mut config = LlmConfig {
        retry: RetryConfig {
            max_retries: 0,
            ..RetryConfig::default()
        },
        breaker: BreakerConfig {
            failure_threshold: 3,
            cool_down_ms: 60_000,
        },
        ..LlmConfig::default()
    };
    config.providers.insert("local".into(), provider);
    config.roles.summarize = vec!["local".into()];
    config
}

async fn get(server: &TestServer, path: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(server.url(path))
        .bearer_auth(ALPHA_TOKEN)
        .send()
        .await
        .expect(path)
}

#[tokio::test]
async fn summaries_come_from_the_provider_and_its_health_is_visible() {
    let stand_in = StandIn::start(Reply::Answer {
        text: json!({"sentence": "Releases ship on Tuesdays.", "paragraph": "Releases ship on \
            Tuesdays after the checklist.", "detailed": "Releases ship on Tuesdays after the \
            checklist in docs/RELEASING.md."})
        .to_string(),
        input_tokens: 250,
        output_tokens: 60,
    })
    .await;
    let base_url = stand_in.base_url();
    let server = TestServer::start(|config| {
        two_tenants(config);
        config.llm = llm_config(&base_url);
    })
    .await;
    let client = server.mcp(Some(ALPHA_TOKEN)).await;
    call_ok(
        &client,
        "memory_add",
        json!({"content": "Releases ship on Tuesdays; follow docs/RELEASING.md.", "layer": "project"}),
    )
    .await;
    let refreshed = call_ok(&client, "summary_refresh", json!({"layers": ["project"]})).await;
    let outcome = &refreshed["refreshed"][0];
    assert_eq!(
        outcome["generator"], "llm:local/stand-in-model summarize-v1",
        "{refreshed}"
    );
    assert!(outcome.get("fallback").is_none(), "{refreshed}");

    let ready: Value = get(&server, "/readyz").await.json().await.unwrap();
    let provider = &ready["llm"]["providers"][0];
    assert_eq!(
        (&provider["name"], &provider["state"], &provider["api"]),
        (&json!("local"), &json!("closed"), &json!("openai"))
    );
    assert_eq!(provider["roles"], json!(["summarize"]));

    // Three failures open the breaker: the tool still answers (extractive), and says why.
    stand_in.set_default(Reply::status(500));
    for n in 0..3 {
        call_ok(
            &client,
            "memory_add",
            json!({"content": format!("Hotfix {n} skips the checklist."), "layer": "project"}),
        )
        .await;
        let refreshed = call_ok(&client, "summary_refresh", json!({"layers": ["project"]})).await;
        let outcome = &refreshed["refreshed"][0];
        assert_eq!(outcome["generator"], "extractive-v1");
        let fallback = outcome["fallback"].as_str().unwrap_or_default();
        assert!(fallback.contains("local (upstream)"), "{fallback}");
    }
    let response = get(&server, "/readyz").await;
    assert_eq!(
        response.status(),
        200,
        "an open breaker does not make the server unready"
    );
    let ready: Value = response.json().await.unwrap();
    let provider = &ready["llm"]["providers"][0];
    assert_eq!(provider["state"], "open", "{ready}");
    assert_eq!(provider["consecutive_failures"], 3);
    assert_eq!(provider["last_error"]["kind"], "upstream");
    assert!(provider["probe_at"].as_i64().is_some());

    let metrics = get(&server, "/metrics").await.text().await.unwrap();
    for expected in [
        r#"aeterna_llm_provider_state{provider="local",state="open"} 1"#,
        r#"aeterna_llm_provider_state{provider="local",state="closed"} 0"#,
        r#"aeterna_llm_tokens_total{tenant="alpha",role="summarize",direction="input"} 250"#,
        r#"aeterna_llm_tokens_total{tenant="alpha",role="summarize",direction="output"} 60"#,
        r#"aeterna_llm_requests_total{provider="local",outcome="upstream"} 3"#,
        r#"aeterna_llm_served_total{role="summarize",provider="deterministic"} 3"#,
    ] {
        assert!(metrics.contains(expected), "missing {expected}:\n{metrics}");
    }
    server.server.shutdown().await.expect("shutdown");
}

#[test]
fn the_llm_section_loads_from_toml_and_refuses_keys_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aeterna.toml");
    std::fs::write(
        &path,
        r#"
[llm.providers.claude]
api = "anthropic"
base_url = "https://api.anthropic.com/v1"
model = "claude-3-5-haiku-latest"
api_key_env = "ANTHROPIC_API_KEY"

[llm.roles]
summarize = ["claude", "deterministic"]

[llm.budgets.tenants.acme.roles.summarize]
hourly_tokens = 5000
"#,
    )
    .unwrap();
    let config = Config::load(Some(&path), &Overrides::default()).expect("valid");
    assert_eq!(config.llm.roles.summarize, ["claude", "deterministic"]);
    assert_eq!(
        config
            .llm
            .budgets
            .caps("acme", aeterna_llm::Role::Summarize)
            .hourly_tokens,
        Some(5000)
    );

    std::fs::write(
        &path,
        r#"
[llm.providers.openai]
api = "openai"
base_url = "https://api.openai.com/v1"
model = "gpt-4o-mini"
api_key = "sk-live-do-not-put-me-here"
"#,
    )
    .unwrap();
    let error = Config::load(Some(&path), &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("llm.providers.openai.api_key_env"),
        "{error}"
    );
    assert!(!error.contains("sk-live"), "{error}");
}
