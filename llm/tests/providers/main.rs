//! The provider layer against stand-ins for an OpenAI-compatible and an Anthropic API, served
//! over real HTTP by the tests: retries and backoff, `Retry-After`, the circuit breaker,
//! budgets, and the agents with providers that answer, misbehave or are down.

#[path = "../standin/mod.rs"]
mod standin;

mod agents;
mod budgets;
mod resilience;
mod wire;

use std::sync::Arc;

use aeterna_llm::{
    Api, BreakerConfig, ChatRequest, ChatResponse, LlmConfig, LlmRoles, ProviderConfig,
    RetryConfig, Role, RoleChain,
};

/// Retries fast enough for tests: 40 ms, 80 ms, then at most 100 ms.
pub fn fast_retry(max_retries: u32) -> RetryConfig {
    RetryConfig {
        max_retries,
        initial_backoff_ms: 40,
        max_backoff_ms: 100,
        multiplier: 2.0,
    }
}

/// A breaker that does not open during a test unless it means to.
pub fn lenient_breaker() -> BreakerConfig {
    BreakerConfig {
        failure_threshold: 100,
        cool_down_ms: 60_000,
    }
}

pub fn provider(api: Api, base_url: &str) -> ProviderConfig {
    let mut provider = ProviderConfig::new(api, base_url, "test-model");
    provider.timeout_ms = 2_000;
    provider.connect_timeout_ms = 500;
    provider
}

/// `providers` (name, config) in every chat role's chain, in order.
pub fn config(providers: Vec<(&str, ProviderConfig)>) -> LlmConfig {
    let mut config = LlmConfig {
        retry: fast_retry(3),
        breaker: lenient_breaker(),
        ..LlmConfig::default()
    };
    let names: Vec<String> = providers.iter().map(|(n, _)| n.to_string()).collect();
    for (name, provider) in providers {
        config.providers.insert(name.to_owned(), provider);
    }
    config.roles.summarize = names.clone();
    config.roles.distill = names.clone();
    config.roles.analyze = names;
    config
}

pub fn start(config: LlmConfig) -> Arc<LlmRoles> {
    LlmRoles::start(config, None).expect("start the provider layer")
}

/// A small request and its answer text, through `role`'s chain for `tenant`.
pub async fn ask(
    chain: &RoleChain,
    tenant: &str,
) -> Result<aeterna_llm::Served<String>, aeterna_llm::Exhausted> {
    let request = ChatRequest::new("system", "hello", 100);
    chain
        .run(tenant, &request, |response: &ChatResponse| {
            Ok(response.text.clone())
        })
        .await
}

pub fn analyze_chain(roles: &LlmRoles) -> &RoleChain {
    roles.chain(Role::Analyze)
}
