//! [`LlmRoles`]: the provider layer as the server and the agents use it. Built once from
//! [`LlmConfig`]; one [`ProviderSlot`] (client, breaker, retry policy) per provider, shared by
//! every role that lists it; one [`RoleChain`] per role; one [`BudgetLedger`].

use std::sync::Arc;
use std::time::Duration;

use aeterna_context::{Summarizer, Tokenizer};
use aeterna_memory::storage::Database;
use aeterna_notes::Distiller;
use anyhow::Context;
use parking_lot::Mutex;
use prometheus_client::registry::Registry;
use serde::Serialize;

use crate::agents::{LlmDistiller, LlmSummarizer};
use crate::analyze::{Analysis, AnalyzeInput};
use crate::breaker::{BreakerSnapshot, CircuitBreaker};
use crate::budget::BudgetLedger;
use crate::chain::{Exhausted, ProviderSlot, RoleChain, Served};
use crate::config::{Api, LlmConfig};
use crate::metrics::LlmMetrics;
use crate::prompts;
use crate::provider::{ChatProvider, build_chat};
use crate::retry::RetryPolicy;
use crate::role::Role;

/// How often recorded token usage is written to the database.
const USAGE_FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// The roles that chat (`embed` uses embedding endpoints).
const CHAT_ROLES: [Role; 3] = [Role::Summarize, Role::Distill, Role::Analyze];

pub struct LlmRoles {
    config: LlmConfig,
    slots: Arc<[Arc<ProviderSlot>]>,
    chains: Vec<RoleChain>,
    ledger: BudgetLedger,
    metrics: LlmMetrics,
    flusher: Mutex<Option<UsageFlusher>>,
}

/// The background task that writes token usage every [`USAGE_FLUSH_INTERVAL`].
struct UsageFlusher {
    /// Asks the task to stop before its next flush (a flush under way is finished first:
    /// it has taken the batch from the ledger, and aborting it would lose that usage).
    stop: Arc<tokio::sync::Notify>,
    task: tokio::task::JoinHandle<()>,
}

/// A provider's health, for `/readyz`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderHealth {
    pub name: String,
    pub api: &'static str,
    pub model: String,
    /// The roles whose chains list it.
    pub roles: Vec<Role>,
    #[serde(flatten)]
    pub breaker: BreakerSnapshot,
}

impl LlmRoles {
    /// No providers: every role is the deterministic built-in.
    pub fn disabled() -> Arc<Self> {
        Self::assemble(LlmConfig::default(), Vec::new(), None)
    }

    /// Builds every provider a chat role lists (reading API keys from the environment) and,
    /// with a database, persists token usage in it. Inside a Tokio runtime when `db` is given
    /// (a background task writes usage).
    pub fn start(config: LlmConfig, db: Option<Database>) -> anyhow::Result<Arc<Self>> {
        config
            .validate()
            .map_err(|error| anyhow::anyhow!("invalid [llm] configuration: {error}"))?;
        let mut providers: Vec<Arc<dyn ChatProvider>> = Vec::new();
        for (name, provider) in &config.providers {
            let listed = CHAT_ROLES
                .iter()
                .any(|role| config.chain_names(*role).any(|n| n == name));
            if listed {
                providers.push(build_chat(name, provider, &config.limits)?);
            }
        }
        Self::start_with(config, providers, db)
    }

    /// As [`start`](Self::start), with the chat providers given (each named as in the
    /// configuration, whose `providers` entries still supply retry and breaker settings).
    pub fn start_with(
        config: LlmConfig,
        providers: Vec<Arc<dyn ChatProvider>>,
        db: Option<Database>,
    ) -> anyhow::Result<Arc<Self>> {
        let flush_runtime = match &db {
            Some(_) => Some(tokio::runtime::Handle::try_current().context(
                "the LLM provider layer persists token usage from a background task: start it \
                 inside a Tokio runtime",
            )?),
            None => None,
        };
        let roles = Self::assemble(config, providers, db);
        if let Some(runtime) = flush_runtime {
            let ledger = roles.ledger.clone();
            let stop = Arc::new(tokio::sync::Notify::new());
            let stopped = stop.clone();
            let task = runtime.spawn(async move {
                let mut ticks = tokio::time::interval(USAGE_FLUSH_INTERVAL);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        () = stopped.notified() => return,
                        _ = ticks.tick() => {}
                    }
                    if let Err(error) = ledger.flush().await {
                        tracing::warn!(
                            error = format!("{error:#}"),
                            "cannot write LLM token usage; kept for the next try"
                        );
                    }
                }
            });
            *roles.flusher.lock() = Some(UsageFlusher { stop, task });
        }
        Ok(roles)
    }

    fn assemble(
        config: LlmConfig,
        providers: Vec<Arc<dyn ChatProvider>>,
        db: Option<Database>,
    ) -> Arc<Self> {
        let metrics = LlmMetrics::new();
        let slots: Arc<[Arc<ProviderSlot>]> = providers
            .into_iter()
            .map(|provider| {
                let settings = config.providers.get(provider.name());
                let retry = settings.map_or_else(|| config.retry.clone(), |p| config.retry_for(p));
                let breaker =
                    settings.map_or_else(|| config.breaker.clone(), |p| config.breaker_for(p));
                Arc::new(ProviderSlot::new(
                    provider.clone(),
                    CircuitBreaker::new(provider.name(), breaker),
                    RetryPolicy::new(retry),
                    metrics.clone(),
                ))
            })
            .collect();
        let ledger = match db {
            Some(db) => BudgetLedger::with_store(config.budgets.clone(), db),
            None => BudgetLedger::in_memory(config.budgets.clone()),
        };
        let chains = Role::ALL
            .iter()
            .map(|&role| {
                let members = config
                    .chain_names(role)
                    .filter_map(|name| slots.iter().find(|slot| slot.name() == name).cloned())
                    .collect();
                RoleChain::new(role, members, ledger.clone(), metrics.clone())
            })
            .collect();
        Arc::new(LlmRoles {
            config,
            slots,
            chains,
            ledger,
            metrics,
            flusher: Mutex::new(None),
        })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// True when some role has a provider.
    pub fn is_enabled(&self) -> bool {
        self.chains.iter().any(|chain| !chain.is_empty())
    }

    /// The chain of `role` (empty: the built-in alone).
    pub fn chain(&self, role: Role) -> &RoleChain {
        &self.chains[role.index()]
    }

    pub fn ledger(&self) -> &BudgetLedger {
        &self.ledger
    }

    pub fn metrics(&self) -> &LlmMetrics {
        &self.metrics
    }

    /// The Context Architect's summarizer, when `summarize` has providers.
    pub fn summarizer(&self) -> Option<Arc<dyn Summarizer>> {
        let chain = self.chain(Role::Summarize);
        (!chain.is_empty()).then(|| {
            Arc::new(LlmSummarizer::new(
                chain.clone(),
                self.config.limits.max_prompt_bytes,
            )) as Arc<dyn Summarizer>
        })
    }

    /// The Note-Taking agent's distillers (ahead of its deterministic one), when `distill` has
    /// providers.
    pub fn distillers(&self) -> anyhow::Result<Vec<Arc<dyn Distiller>>> {
        let chain = self.chain(Role::Distill);
        if chain.is_empty() {
            return Ok(Vec::new());
        }
        let tokenizer = Tokenizer::get().context("loading the tokenizer that counts notes")?;
        Ok(vec![Arc::new(LlmDistiller::new(
            chain.clone(),
            tokenizer,
            self.config.limits.max_note_tokens,
            self.config.limits.max_prompt_bytes,
        ))])
    }

    /// The Meta-Agent's IMPROVE decision for a failed iteration of `tenant`. `Err` says every
    /// provider was skipped and why (or that none is configured): decide with the
    /// deterministic rules then.
    pub async fn analyze(
        &self,
        tenant: &str,
        input: &AnalyzeInput<'_>,
    ) -> Result<Served<Analysis>, Exhausted> {
        let chain = self.chain(Role::Analyze);
        chain.precheck()?;
        let request = prompts::analyze(input, self.config.limits.max_prompt_bytes);
        chain
            .run(tenant, &request, |response| {
                prompts::read_analysis(&response.text).map(Analysis::from_answer)
            })
            .await
    }

    /// Each provider's breaker state, last error and roles.
    pub fn health(&self) -> Vec<ProviderHealth> {
        self.slots
            .iter()
            .map(|slot| {
                let settings = self.config.providers.get(slot.name());
                ProviderHealth {
                    name: slot.name().to_owned(),
                    api: settings.map_or("custom", |p| match p.api {
                        Api::OpenAi => "openai",
                        Api::Anthropic => "anthropic",
                    }),
                    model: slot.model().to_owned(),
                    roles: Role::ALL
                        .into_iter()
                        .filter(|role| self.chain(*role).providers().contains(&slot.name()))
                        .collect(),
                    breaker: slot.breaker().snapshot(),
                }
            })
            .collect()
    }

    /// Adds the provider layer's metrics to `registry` (under `llm`).
    pub fn register_metrics(&self, registry: &mut Registry) {
        self.metrics.register(registry, self.slots.clone());
    }

    /// Writes the token usage recorded so far and stops the background writer. Call before
    /// the database closes.
    pub async fn shutdown(&self) {
        let flusher = self.flusher.lock().take();
        if let Some(UsageFlusher { stop, task }) = flusher {
            stop.notify_one();
            // It only ends between flushes, so it cannot lose a batch it had taken.
            let _ = task.await;
        }
        if let Err(error) = self.ledger.flush().await {
            tracing::warn!(
                error = format!("{error:#}"),
                "cannot write the last LLM token usage"
            );
        }
    }
}

impl Drop for LlmRoles {
    /// Without [`shutdown`](Self::shutdown) first, usage not yet written is not written.
    fn drop(&mut self) {
        if let Some(flusher) = self.flusher.lock().take() {
            flusher.task.abort();
        }
    }
}
