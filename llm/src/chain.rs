//! Provider slots and role chains.
//!
//! A [`ProviderSlot`] is one provider with its circuit breaker and retry policy:
//! [`ProviderSlot::call`] retries retryable errors with backoff while the breaker lets calls
//! through. A [`RoleChain`] tries its slots in order for one role and tenant, skipping a slot
//! whose breaker is open or whose call would pass the tenant's budget, and moving on when a
//! call fails or its answer does not parse. Every outcome says who served and why the others
//! were skipped; when all were skipped the caller's deterministic built-in serves
//! ([`Exhausted`]).

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tracing::Instrument;

use crate::breaker::CircuitBreaker;
use crate::budget::BudgetLedger;
use crate::error::{ErrorKind, LlmError};
use crate::metrics::LlmMetrics;
use crate::provider::{ChatProvider, ChatRequest, ChatResponse, Usage};
use crate::retry::{GiveUpReason, Next, RetryPolicy};
use crate::role::Role;

/// The name the deterministic built-in goes by in outcomes and metrics.
pub const BUILT_IN: &str = "deterministic";

/// One provider, its breaker and its retry policy.
pub struct ProviderSlot {
    provider: Arc<dyn ChatProvider>,
    breaker: CircuitBreaker,
    retry: RetryPolicy,
    metrics: LlmMetrics,
}

impl fmt::Debug for ProviderSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderSlot")
            .field("provider", &self.provider.name())
            .field("model", &self.provider.model())
            .finish_non_exhaustive()
    }
}

impl ProviderSlot {
    pub fn new(
        provider: Arc<dyn ChatProvider>,
        breaker: CircuitBreaker,
        retry: RetryPolicy,
        metrics: LlmMetrics,
    ) -> Self {
        ProviderSlot {
            provider,
            breaker,
            retry,
            metrics,
        }
    }

    pub fn name(&self) -> &str {
        self.provider.name()
    }

    pub fn model(&self) -> &str {
        self.provider.model()
    }

    pub fn breaker(&self) -> &CircuitBreaker {
        &self.breaker
    }

    /// Calls the provider, retrying retryable errors while the breaker allows. Returns the
    /// answer, or the last error (a breaker that opened during our own retries returns the
    /// failure that opened it, which says more than "circuit open").
    pub async fn call(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let mut retries = 0;
        let mut last_error: Option<LlmError> = None;
        loop {
            let permit = match self.breaker.acquire() {
                Ok(permit) => permit,
                Err(open) => return Err(last_error.unwrap_or(open)),
            };
            let started = Instant::now();
            let result = self.provider.chat(request).await;
            permit.record(&result);
            self.metrics.request(
                self.name(),
                result.as_ref().map(|_| ()).map_err(|e| e.kind),
                started.elapsed(),
            );
            let error = match result {
                Ok(response) => return Ok(response),
                Err(error) => error,
            };
            match self.retry.next(retries, &error) {
                Next::RetryAfter(delay) => {
                    tracing::warn!(
                        provider = self.name(),
                        kind = %error.kind,
                        retry = retries + 1,
                        delay_ms = delay.as_millis() as u64,
                        error = %error.message,
                        "provider call failed; retrying"
                    );
                    self.metrics.retry(self.name());
                    retries += 1;
                    last_error = Some(error);
                    tokio::time::sleep(delay).await;
                }
                Next::GiveUp(reason) => {
                    if reason == GiveUpReason::RetryAfterTooLong {
                        tracing::warn!(
                            provider = self.name(),
                            retry_after_ms = error.retry_after.map(|d| d.as_millis() as u64),
                            "the provider asked to wait longer than max_backoff_ms; moving on"
                        );
                    }
                    return Err(error);
                }
            }
        }
    }
}

/// Why a provider of the chain did not serve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skip {
    pub provider: String,
    pub kind: ErrorKind,
    pub reason: String,
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.provider, self.kind, self.reason)
    }
}

/// A role call a provider answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Served<T> {
    pub value: T,
    /// The provider's name in the configuration.
    pub provider: String,
    /// The model that answered.
    pub model: String,
    pub usage: Usage,
    /// Providers tried before it, and why they did not serve.
    pub skipped: Vec<Skip>,
}

/// No provider served: the caller's deterministic built-in does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Exhausted {
    pub role: Role,
    /// Every provider of the chain and why it did not serve (empty: the chain has none).
    pub skipped: Vec<Skip>,
}

impl fmt::Display for Exhausted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.skipped.is_empty() {
            return write!(f, "no provider is configured for {}", self.role);
        }
        write!(f, "no provider served {}: ", self.role)?;
        for (n, skip) in self.skipped.iter().enumerate() {
            if n > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{skip}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Exhausted {}

/// The providers of one role, in order, sharing the ledger.
#[derive(Clone)]
pub struct RoleChain {
    role: Role,
    slots: Vec<Arc<ProviderSlot>>,
    ledger: BudgetLedger,
    metrics: LlmMetrics,
}

impl RoleChain {
    pub fn new(
        role: Role,
        slots: Vec<Arc<ProviderSlot>>,
        ledger: BudgetLedger,
        metrics: LlmMetrics,
    ) -> Self {
        RoleChain {
            role,
            slots,
            ledger,
            metrics,
        }
    }

    pub fn role(&self) -> Role {
        self.role
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The provider names in order.
    pub fn providers(&self) -> Vec<&str> {
        self.slots.iter().map(|slot| slot.name()).collect()
    }

    /// `Err` when every provider's breaker refuses calls right now: the caller can skip
    /// building a prompt and go straight to its built-in (the chain would skip them all).
    pub fn precheck(&self) -> Result<(), Exhausted> {
        if self.slots.is_empty() || self.slots.iter().any(|s| !s.breaker().is_refusing()) {
            return Ok(());
        }
        let skipped = self
            .slots
            .iter()
            .filter_map(|slot| slot.breaker().acquire().err())
            .map(|error| Skip {
                provider: error.provider,
                kind: error.kind,
                reason: error.message,
            })
            .collect::<Vec<_>>();
        if skipped.len() < self.slots.len() {
            // One became due for a probe meanwhile; let `run` send it.
            return Ok(());
        }
        self.metrics.served(self.role, BUILT_IN);
        Err(Exhausted {
            role: self.role,
            skipped,
        })
    }

    /// Sends `request` to each provider in turn until one answers with something `parse`
    /// accepts. `parse` returns why an answer is unusable. Counts who served, including the
    /// built-in when every provider was skipped (the caller then runs it).
    pub async fn run<T>(
        &self,
        tenant: &str,
        request: &ChatRequest,
        parse: impl Fn(&ChatResponse) -> Result<T, String>,
    ) -> Result<Served<T>, Exhausted> {
        let mut skipped = Vec::new();
        for slot in &self.slots {
            let span = tracing::info_span!(
                "llm_call",
                role = %self.role,
                provider = slot.name(),
                model = slot.model(),
                tenant
            );
            match self
                .try_slot(slot, tenant, request, &parse)
                .instrument(span)
                .await
            {
                Ok((value, response)) => {
                    self.metrics.served(self.role, slot.name());
                    return Ok(Served {
                        value,
                        provider: slot.name().to_owned(),
                        model: response.model,
                        usage: response.usage,
                        skipped,
                    });
                }
                Err(error) => {
                    tracing::warn!(
                        role = %self.role,
                        provider = %error.provider,
                        kind = %error.kind,
                        tenant,
                        error = %error.message,
                        "provider skipped; trying the next in the chain"
                    );
                    skipped.push(Skip {
                        provider: error.provider,
                        kind: error.kind,
                        reason: error.message,
                    });
                }
            }
        }
        self.metrics.served(self.role, BUILT_IN);
        Err(Exhausted {
            role: self.role,
            skipped,
        })
    }

    async fn try_slot<T>(
        &self,
        slot: &ProviderSlot,
        tenant: &str,
        request: &ChatRequest,
        parse: &impl Fn(&ChatResponse) -> Result<T, String>,
    ) -> Result<(T, ChatResponse), LlmError> {
        if slot.breaker().is_refusing() {
            // Say so without touching the budget; `acquire` gives the reason (or lets a probe
            // through when the cool-down ended meanwhile: the permit is dropped unused).
            drop(slot.breaker().acquire()?);
        }
        let estimate = request.estimated_prompt_tokens() + u64::from(request.max_tokens);
        let reservation = match self
            .ledger
            .reserve(slot.name(), tenant, self.role, estimate)
            .await
        {
            Ok(reservation) => reservation,
            Err(error) => {
                if error.kind == ErrorKind::BudgetExhausted {
                    self.metrics.budget_exhausted(tenant, self.role);
                }
                return Err(error);
            }
        };
        let response = slot.call(request).await?;
        reservation.commit(&response.usage);
        self.metrics.tokens(tenant, self.role, &response.usage);
        match parse(&response) {
            Ok(value) => Ok((value, response)),
            Err(why) => Err(LlmError::new(
                slot.name(),
                ErrorKind::MalformedOutput,
                format!("the answer of {} was unusable: {why}", response.model),
            )),
        }
    }
}
