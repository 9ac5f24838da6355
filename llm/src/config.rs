//! [`LlmConfig`]: the `[llm]` section of the server configuration. Without providers (the
//! default) every role is served by the deterministic built-in and nothing here is used.
//!
//! ```toml
//! [llm.providers.local]
//! api = "openai"                      # any /v1/chat/completions: Ollama, vLLM, llama.cpp, OpenAI
//! base_url = "http://localhost:11434/v1"
//! model = "qwen2.5:7b-instruct"
//!
//! [llm.providers.claude]
//! api = "anthropic"                   # the Messages API
//! base_url = "https://api.anthropic.com/v1"
//! model = "claude-3-5-haiku-latest"
//! api_key_env = "ANTHROPIC_API_KEY"   # the key itself never goes in this file
//!
//! [llm.roles]
//! summarize = ["local", "claude"]     # tried in order; the deterministic built-in ends every chain
//! distill = ["claude", "local"]
//!
//! [llm.budgets]
//! hourly_tokens = 200000              # per tenant and role
//! [llm.budgets.tenants.acme.roles.distill]
//! daily_tokens = 50000
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use crate::role::Role;

/// The name that may end a role's chain, for readers who like it written out; it is implied.
pub const DETERMINISTIC: &str = "deterministic";

/// Everything the provider layer can be told.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// Providers by name; roles refer to them.
    pub providers: BTreeMap<String, ProviderConfig>,
    /// The chain of each role.
    pub roles: RolesConfig,
    /// Retries of a failed call to one provider (each provider may override it).
    pub retry: RetryConfig,
    /// When a provider's circuit breaker opens and half-opens (each provider may override it).
    pub breaker: BreakerConfig,
    /// Token caps per tenant and role.
    pub budgets: BudgetConfig,
    pub limits: LimitsConfig,
}

/// Which API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `POST {base_url}/chat/completions` (and `/embeddings`): OpenAI, Ollama, vLLM,
    /// llama.cpp's server, LM Studio, OpenRouter…
    #[serde(rename = "openai")]
    OpenAi,
    /// `POST {base_url}/messages`: Anthropic's Messages API.
    Anthropic,
}

impl Api {
    pub fn as_str(self) -> &'static str {
        match self {
            Api::OpenAi => "openai",
            Api::Anthropic => "anthropic",
        }
    }
}

/// One provider: an endpoint and a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub api: Api,
    /// The API root: `https://api.openai.com/v1`, `http://localhost:11434/v1` (Ollama),
    /// `https://api.anthropic.com/v1`.
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key (`OPENAI_API_KEY`, say). Unset means no
    /// key is sent (local servers). The key is never written in the configuration file.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Refused with a message saying to use `api_key_env`, so a pasted key is never accepted.
    #[serde(default, skip_serializing)]
    pub api_key: Option<RejectedSecret>,
    /// The whole request, connection to last byte, in milliseconds (60 000).
    #[serde(default = "defaults::timeout_ms")]
    pub timeout_ms: u64,
    /// Connecting, in milliseconds (5 000).
    #[serde(default = "defaults::connect_timeout_ms")]
    pub connect_timeout_ms: u64,
    /// The most output tokens asked for in one call (2 048); a role asks for less when it
    /// needs less.
    #[serde(default = "defaults::max_output_tokens")]
    pub max_output_tokens: u32,
    /// Sampling temperature (0.2: summaries and notes want facts, not flair).
    #[serde(default = "defaults::temperature")]
    pub temperature: f32,
    /// OpenAI API only: send `response_format: {"type": "json_object"}` when JSON is asked
    /// for (true). Turn off for servers that reject the field.
    #[serde(default = "defaults::yes")]
    pub json_mode: bool,
    /// Overrides `[llm.retry]` for this provider.
    #[serde(default)]
    pub retry: Option<RetryConfig>,
    /// Overrides `[llm.breaker]` for this provider.
    #[serde(default)]
    pub breaker: Option<BreakerConfig>,
}

impl ProviderConfig {
    /// A provider with every default, for tests and programs.
    pub fn new(api: Api, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        ProviderConfig {
            api,
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: None,
            api_key: None,
            timeout_ms: defaults::timeout_ms(),
            connect_timeout_ms: defaults::connect_timeout_ms(),
            max_output_tokens: defaults::max_output_tokens(),
            temperature: defaults::temperature(),
            json_mode: true,
            retry: None,
            breaker: None,
        }
    }

    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
}

/// Accepts any value and keeps none of it: `api_key` in the file is an error, and the value
/// must not end up in logs or `Debug` output.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RejectedSecret;

impl std::fmt::Debug for RejectedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<rejected>")
    }
}

impl<'de> Deserialize<'de> for RejectedSecret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| RejectedSecret)
    }
}

impl Serialize for RejectedSecret {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_none()
    }
}

/// Provider names per role, tried in order. The deterministic built-in always ends the chain
/// (writing `"deterministic"` last is allowed and changes nothing); an empty chain is the
/// built-in alone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RolesConfig {
    pub summarize: Vec<String>,
    pub distill: Vec<String>,
    pub analyze: Vec<String>,
    /// Must stay empty: embeddings are chosen by `[embedder]`. A per-call fallback between
    /// embedding models would mix vector spaces in one index, and the built-in (hashing)
    /// embedder cannot stand in for another model's vectors.
    pub embed: Vec<String>,
}

impl RolesConfig {
    pub fn chain(&self, role: Role) -> &[String] {
        match role {
            Role::Summarize => &self.summarize,
            Role::Distill => &self.distill,
            Role::Analyze => &self.analyze,
            Role::Embed => &self.embed,
        }
    }
}

/// Exponential backoff with full jitter: before retry `n` (1-based) wait a random time in
/// `0..=min(max_backoff, initial_backoff × multiplier^(n-1))`, or exactly what `Retry-After`
/// asks when the provider says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryConfig {
    /// Retries after the first attempt (3).
    pub max_retries: u32,
    /// The first backoff ceiling, in milliseconds (1 000).
    pub initial_backoff_ms: u64,
    /// The largest backoff, in milliseconds (30 000). A `Retry-After` longer than this is not
    /// waited for: the chain moves on to the next provider.
    pub max_backoff_ms: u64,
    /// Growth of the ceiling per retry (2).
    pub multiplier: f64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_retries: 3,
            initial_backoff_ms: 1_000,
            max_backoff_ms: 30_000,
            multiplier: 2.0,
        }
    }
}

/// A circuit breaker per provider: after `failure_threshold` consecutive failures it opens and
/// calls skip the provider at once; after `cool_down_ms` one call is let through (half-open);
/// its success closes the breaker, its failure opens it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BreakerConfig {
    /// Consecutive failures that open the breaker (3).
    pub failure_threshold: u32,
    /// How long it stays open, in milliseconds (300 000: five minutes).
    pub cool_down_ms: u64,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            failure_threshold: 3,
            cool_down_ms: 300_000,
        }
    }
}

/// Token caps (input + output tokens, as the provider reports them) per tenant and role, per
/// UTC hour and UTC day. Each cap is looked up from the most specific level that sets it:
/// `tenants.<t>.roles.<role>`, `tenants.<t>`, `roles.<role>`, then this level. No cap at any
/// level means unlimited; 0 means no LLM calls at all. Over a cap, the call goes to the next
/// provider of the chain, and in the end to the deterministic built-in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetConfig {
    pub hourly_tokens: Option<u64>,
    pub daily_tokens: Option<u64>,
    pub roles: BTreeMap<Role, Caps>,
    pub tenants: BTreeMap<String, TenantBudget>,
}

/// Caps of one level; `None` inherits from the broader level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Caps {
    pub hourly_tokens: Option<u64>,
    pub daily_tokens: Option<u64>,
}

/// A tenant's caps, and per-role caps of that tenant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TenantBudget {
    pub hourly_tokens: Option<u64>,
    pub daily_tokens: Option<u64>,
    pub roles: BTreeMap<Role, Caps>,
}

impl BudgetConfig {
    /// The caps that apply to `tenant` and `role`.
    pub fn caps(&self, tenant: &str, role: Role) -> Caps {
        let tenant = self.tenants.get(tenant);
        let levels = [
            tenant.and_then(|t| t.roles.get(&role)).copied(),
            tenant.map(|t| Caps {
                hourly_tokens: t.hourly_tokens,
                daily_tokens: t.daily_tokens,
            }),
            self.roles.get(&role).copied(),
            Some(Caps {
                hourly_tokens: self.hourly_tokens,
                daily_tokens: self.daily_tokens,
            }),
        ];
        let levels = levels.iter().flatten();
        Caps {
            hourly_tokens: levels.clone().find_map(|caps| caps.hourly_tokens),
            daily_tokens: levels.clone().find_map(|caps| caps.daily_tokens),
        }
    }
}

/// Bounds on what goes to and comes from a provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// The largest prompt sent, in bytes (48 KiB); source text beyond it is left out.
    pub max_prompt_bytes: usize,
    /// The largest response body read, in bytes (1 MiB); a longer one is an error.
    pub max_response_bytes: usize,
    /// The token budget of an LLM-written note (its sections, counted with the o200k BPE):
    /// 1 000. A longer note is unusable and the next provider (in the end the deterministic
    /// distiller) writes it.
    pub max_note_tokens: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_prompt_bytes: 48 * 1024,
            max_response_bytes: 1024 * 1024,
            max_note_tokens: 1_000,
        }
    }
}

impl LlmConfig {
    /// True when some role has a provider: without one, nothing of this crate runs.
    pub fn is_enabled(&self) -> bool {
        Role::ALL
            .iter()
            .any(|role| self.chain_names(*role).next().is_some())
    }

    /// The provider names of `role`'s chain, without the implied `deterministic` at the end.
    pub fn chain_names(&self, role: Role) -> impl Iterator<Item = &str> {
        self.roles
            .chain(role)
            .iter()
            .map(String::as_str)
            .filter(|name| *name != DETERMINISTIC)
    }

    /// The retry policy of `provider`.
    pub fn retry_for(&self, provider: &ProviderConfig) -> RetryConfig {
        provider.retry.clone().unwrap_or_else(|| self.retry.clone())
    }

    /// The breaker settings of `provider`.
    pub fn breaker_for(&self, provider: &ProviderConfig) -> BreakerConfig {
        provider
            .breaker
            .clone()
            .unwrap_or_else(|| self.breaker.clone())
    }

    /// Checks what serde cannot; every message names the key.
    pub fn validate(&self) -> Result<(), String> {
        for (name, provider) in &self.providers {
            validate_provider(name, provider)?;
            validate_retry(
                &format!("llm.providers.{name}.retry"),
                &self.retry_for(provider),
            )?;
            validate_breaker(
                &format!("llm.providers.{name}.breaker"),
                &self.breaker_for(provider),
            )?;
        }
        validate_retry("llm.retry", &self.retry)?;
        validate_breaker("llm.breaker", &self.breaker)?;
        for role in Role::ALL {
            let chain = self.roles.chain(role);
            let mut seen = BTreeSet::new();
            for (position, name) in chain.iter().enumerate() {
                let key = format!("llm.roles.{role}[{position}]");
                if name == DETERMINISTIC {
                    if position + 1 != chain.len() {
                        return Err(format!(
                            "{key}: \"{DETERMINISTIC}\" always ends the chain; list providers \
                             before it, none after"
                        ));
                    }
                    continue;
                }
                let Some(provider) = self.providers.get(name) else {
                    return Err(format!(
                        "{key}: no provider named {name:?}; define [llm.providers.{name}] or use \
                         one of: {}",
                        self.providers
                            .keys()
                            .map(String::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                };
                if !seen.insert(name) {
                    return Err(format!("{key}: {name:?} appears twice in the chain"));
                }
                if role == Role::Embed {
                    return Err(format!(
                        "{key}: embeddings are configured in [embedder] (provider = \"openai\" \
                         takes any /v1/embeddings endpoint, base_url = {:?}): one index holds \
                         the vectors of one model, so embeddings cannot fall back from model to \
                         model per call",
                        provider.base_url
                    ));
                }
            }
        }
        if self.limits.max_prompt_bytes < 1024 {
            return Err(format!(
                "llm.limits.max_prompt_bytes = {} is too small for any prompt; use at least 1024",
                self.limits.max_prompt_bytes
            ));
        }
        if self.limits.max_note_tokens < 100 {
            return Err(format!(
                "llm.limits.max_note_tokens = {} is too small for a note; use at least 100",
                self.limits.max_note_tokens
            ));
        }
        if self.limits.max_response_bytes < 1024 {
            return Err(format!(
                "llm.limits.max_response_bytes = {} is too small for any answer; use at least \
                 1024",
                self.limits.max_response_bytes
            ));
        }
        Ok(())
    }
}

fn validate_provider(name: &str, provider: &ProviderConfig) -> Result<(), String> {
    let key = format!("llm.providers.{name}");
    if name.is_empty() || name == DETERMINISTIC {
        return Err(format!(
            "{key}: {name:?} cannot name a provider; \"{DETERMINISTIC}\" is the built-in"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(format!(
            "{key}: provider names use letters, digits, '-', '_' and '.' (they become metric \
             labels)"
        ));
    }
    if provider.api_key.is_some() {
        return Err(format!(
            "{key}.api_key: API keys are never read from the configuration file; put the key \
             in an environment variable and name it in {key}.api_key_env"
        ));
    }
    let base = provider.base_url.trim();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(format!(
            "{key}.base_url = {:?} must start with http:// or https://",
            provider.base_url
        ));
    }
    if provider.model.trim().is_empty() {
        return Err(format!("{key}.model is empty; name the model to use"));
    }
    if provider.api_key_env.as_deref().is_some_and(str::is_empty) {
        return Err(format!(
            "{key}.api_key_env is empty; name the environment variable holding the key, or \
             leave the key out"
        ));
    }
    if provider.timeout_ms == 0 || provider.connect_timeout_ms == 0 {
        return Err(format!(
            "{key}: timeout_ms and connect_timeout_ms must be at least 1"
        ));
    }
    if provider.max_output_tokens == 0 {
        return Err(format!("{key}.max_output_tokens must be at least 1"));
    }
    if !(0.0..=2.0).contains(&provider.temperature) {
        return Err(format!(
            "{key}.temperature = {} must be between 0 and 2",
            provider.temperature
        ));
    }
    Ok(())
}

fn validate_retry(key: &str, retry: &RetryConfig) -> Result<(), String> {
    if retry.max_retries > 10 {
        return Err(format!(
            "{key}.max_retries = {} is more than 10; a provider that fails that often is down",
            retry.max_retries
        ));
    }
    if !(retry.multiplier.is_finite() && retry.multiplier >= 1.0) {
        return Err(format!(
            "{key}.multiplier = {} must be at least 1",
            retry.multiplier
        ));
    }
    if retry.initial_backoff_ms > retry.max_backoff_ms {
        return Err(format!(
            "{key}: initial_backoff_ms ({}) is above max_backoff_ms ({})",
            retry.initial_backoff_ms, retry.max_backoff_ms
        ));
    }
    Ok(())
}

fn validate_breaker(key: &str, breaker: &BreakerConfig) -> Result<(), String> {
    if breaker.failure_threshold == 0 {
        return Err(format!("{key}.failure_threshold must be at least 1"));
    }
    Ok(())
}

mod defaults {
    pub fn timeout_ms() -> u64 {
        60_000
    }
    pub fn connect_timeout_ms() -> u64 {
        5_000
    }
    pub fn max_output_tokens() -> u32 {
        2_048
    }
    pub fn temperature() -> f32 {
        0.2
    }
    pub fn yes() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> LlmConfig {
        serde_json::from_str(json).expect("config parses")
    }

    #[test]
    fn caps_come_from_the_most_specific_level() {
        let config = parse(
            r#"{"budgets": {"hourly_tokens": 1000, "daily_tokens": 5000,
                "roles": {"distill": {"hourly_tokens": 500}},
                "tenants": {"acme": {"daily_tokens": 2000,
                    "roles": {"distill": {"hourly_tokens": 0}}}}}}"#,
        );
        let caps = |tenant, role| config.budgets.caps(tenant, role);
        assert_eq!(
            caps("other", Role::Summarize),
            Caps {
                hourly_tokens: Some(1000),
                daily_tokens: Some(5000)
            }
        );
        assert_eq!(caps("other", Role::Distill).hourly_tokens, Some(500));
        assert_eq!(
            caps("acme", Role::Summarize),
            Caps {
                hourly_tokens: Some(1000),
                daily_tokens: Some(2000)
            }
        );
        assert_eq!(
            caps("acme", Role::Distill),
            Caps {
                hourly_tokens: Some(0),
                daily_tokens: Some(2000)
            }
        );
        assert_eq!(
            LlmConfig::default().budgets.caps("x", Role::Analyze),
            Caps::default()
        );
    }

    #[test]
    fn a_key_in_the_file_is_refused_and_never_echoed() {
        let config = parse(
            r#"{"providers": {"openai": {"api": "openai", "base_url": "https://api.openai.com/v1",
                "model": "gpt-4o-mini", "api_key": "sk-live-123"}}}"#,
        );
        let error = config.validate().unwrap_err();
        assert!(error.contains("api_key_env"), "{error}");
        assert!(!format!("{config:?}").contains("sk-live-123"));
        assert!(!serde_json::to_string(&config).unwrap().contains("sk-live"));
    }

    #[test]
    fn chains_name_defined_providers_and_end_with_the_built_in() {
        let base =
            r#""providers": {"a": {"api": "openai", "base_url": "http://x/v1", "model": "m"}}"#;
        let ok = parse(&format!(
            r#"{{{base}, "roles": {{"summarize": ["a", "deterministic"]}}}}"#
        ));
        ok.validate().unwrap();
        assert!(ok.is_enabled());
        assert_eq!(ok.chain_names(Role::Summarize).collect::<Vec<_>>(), ["a"]);
        let unknown = parse(&format!(r#"{{{base}, "roles": {{"distill": ["b"]}}}}"#));
        assert!(
            unknown
                .validate()
                .unwrap_err()
                .contains("llm.roles.distill[0]")
        );
        let middle = parse(&format!(
            r#"{{{base}, "roles": {{"distill": ["deterministic", "a"]}}}}"#
        ));
        assert!(middle.validate().unwrap_err().contains("always ends"));
        let embed = parse(&format!(r#"{{{base}, "roles": {{"embed": ["a"]}}}}"#));
        assert!(embed.validate().unwrap_err().contains("[embedder]"));
        assert!(!LlmConfig::default().is_enabled());
    }

    #[test]
    fn unknown_keys_are_refused() {
        let error = serde_json::from_str::<LlmConfig>(r#"{"retry": {"max_retry": 3}}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("max_retry"), "{error}");
    }
}
