//! Aeterna's LLM provider layer: the agents write better summaries, notes and loop analyses
//! with a model, and keep working without one.
//!
//! * [`ChatProvider`] — one model behind one API: [`provider::OpenAiChat`]
//!   (`/chat/completions`: OpenAI, Ollama, vLLM, llama.cpp…) and [`provider::AnthropicChat`]
//!   (the Messages API), over rustls HTTPS, with bounded bodies and timeouts.
//! * [`LlmError`] — one error type: the provider, an [`ErrorKind`], a `retryable` flag.
//! * [`retry`] — exponential backoff with full jitter, honouring `Retry-After`; [`breaker`] —
//!   a circuit breaker per provider (closed → open after 3 failures → half-open after a
//!   cool-down).
//! * [`RoleChain`] — the providers of one [`Role`] in order; the deterministic built-in of
//!   the caller ends every chain ([`Exhausted`] says why each provider was skipped), and every
//!   answer records who served it ([`Served`]).
//! * [`budget`] — tokens per tenant and role against hourly and daily caps, persisted in
//!   the deployment's database (migration `0500_llm_token_usage`).
//! * [`prompts`] — every prompt, versioned, asking for JSON; [`parse`] — a tolerant reader.
//! * [`agents`] — the Context Architect's summarizer and the Note-Taking agent's distiller
//!   over their chains; [`LlmRoles::analyze`] for the Meta-Agent.
//! * [`LlmRoles`] — all of it, built from [`LlmConfig`] (the server's `[llm]` section), with
//!   health for `/readyz` and metrics for `/metrics`.

pub mod agents;
pub mod analyze;
pub mod breaker;
pub mod budget;
pub mod chain;
pub mod config;
pub mod error;
pub mod metrics;
pub mod parse;
pub mod prompts;
pub mod provider;
pub mod retry;
mod role;
mod roles;

pub use analyze::{Analysis, AnalyzeInput, Decision};
pub use breaker::{BreakerSnapshot, BreakerState, CircuitBreaker};
pub use budget::BudgetLedger;
pub use chain::{BUILT_IN, Exhausted, ProviderSlot, RoleChain, Served, Skip};
pub use config::{
    Api, BreakerConfig, BudgetConfig, Caps, LimitsConfig, LlmConfig, ProviderConfig, RetryConfig,
    RolesConfig, TenantBudget,
};
pub use error::{ErrorKind, LlmError};
pub use metrics::LlmMetrics;
pub use provider::{ChatMessage, ChatProvider, ChatRequest, ChatResponse, Finish, Speaker, Usage};
pub use role::Role;
pub use roles::{LlmRoles, ProviderHealth};
