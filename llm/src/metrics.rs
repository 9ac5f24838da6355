//! Prometheus metrics of the provider layer, registered under `llm` in the server's registry
//! ([`LlmRoles::register_metrics`](crate::LlmRoles::register_metrics)):
//!
//! * `aeterna_llm_requests_total{provider, outcome}` — HTTP calls to providers; `outcome` is
//!   `ok` or an error kind (`timeout`, `rate-limited`…);
//! * `aeterna_llm_retries_total{provider}`, `aeterna_llm_request_duration_seconds{provider}`;
//! * `aeterna_llm_tokens_total{tenant, role, direction}` — tokens the providers reported
//!   (`input` / `output`);
//! * `aeterna_llm_budget_exhausted_total{tenant, role}` — calls skipped over a cap;
//! * `aeterna_llm_served_total{role, provider}` — who answered each role call;
//!   `provider="deterministic"` counts fallbacks to the built-in;
//! * `aeterna_llm_provider_state{provider, state}` — 1 for the breaker's current state
//!   (`closed`, `open`, `half_open`), 0 for the others; and
//!   `aeterna_llm_provider_consecutive_failures{provider}`, read at scrape time.
//!
//! Label values come from closed sets: provider names and roles from the configuration, kinds
//! from [`ErrorKind`]; tenants from the server's tokens, and past [`MAX_TENANT_LABELS`]
//! distinct tenants the rest are counted as `_other`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::breaker::BreakerState;
use crate::chain::ProviderSlot;
use crate::error::ErrorKind;
use crate::provider::Usage;
use crate::role::Role;

/// Distinct tenant label values at most.
pub const MAX_TENANT_LABELS: usize = 1_000;
const OTHER_TENANTS: &str = "_other";

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RequestLabels {
    provider: String,
    outcome: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ProviderLabels {
    provider: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct TokenLabels {
    tenant: String,
    role: String,
    direction: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct TenantRoleLabels {
    tenant: String,
    role: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ServedLabels {
    role: String,
    provider: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct StateLabels {
    provider: String,
    state: String,
}

type Latency = Family<ProviderLabels, Histogram, fn() -> Histogram>;

/// Cheap to clone: every metric is a shared handle.
#[derive(Clone)]
pub struct LlmMetrics {
    requests: Family<RequestLabels, Counter>,
    retries: Family<ProviderLabels, Counter>,
    latency: Latency,
    tokens: Family<TokenLabels, Counter>,
    budget_exhausted: Family<TenantRoleLabels, Counter>,
    served: Family<ServedLabels, Counter>,
    tenants: Arc<Mutex<HashSet<String>>>,
}

impl Default for LlmMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl LlmMetrics {
    pub fn new() -> Self {
        // 1 ms … ~65 s
        let latency: fn() -> Histogram = || Histogram::new(exponential_buckets(0.001, 2.0, 17));
        LlmMetrics {
            requests: Family::default(),
            retries: Family::default(),
            latency: Family::new_with_constructor(latency),
            tokens: Family::default(),
            budget_exhausted: Family::default(),
            served: Family::default(),
            tenants: Arc::new(Mutex::new(HashSet::new())),
        }
    }

    fn tenant_label(&self, tenant: &str) -> String {
        let mut tenants = self.tenants.lock();
        if tenants.contains(tenant) {
            return tenant.to_owned();
        }
        if tenants.len() < MAX_TENANT_LABELS {
            tenants.insert(tenant.to_owned());
            return tenant.to_owned();
        }
        OTHER_TENANTS.to_owned()
    }

    pub(crate) fn request(&self, provider: &str, outcome: Result<(), ErrorKind>, took: Duration) {
        let outcome = match outcome {
            Ok(()) => "ok",
            Err(kind) => kind.as_str(),
        };
        self.requests
            .get_or_create(&RequestLabels {
                provider: provider.to_owned(),
                outcome: outcome.to_owned(),
            })
            .inc();
        self.latency
            .get_or_create(&ProviderLabels {
                provider: provider.to_owned(),
            })
            .observe(took.as_secs_f64());
    }

    pub(crate) fn retry(&self, provider: &str) {
        self.retries
            .get_or_create(&ProviderLabels {
                provider: provider.to_owned(),
            })
            .inc();
    }

    pub(crate) fn tokens(&self, tenant: &str, role: Role, usage: &Usage) {
        let tenant = self.tenant_label(tenant);
        for (direction, count) in [
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
        ] {
            self.tokens
                .get_or_create(&TokenLabels {
                    tenant: tenant.clone(),
                    role: role.as_str().to_owned(),
                    direction: direction.to_owned(),
                })
                .inc_by(count);
        }
    }

    pub(crate) fn budget_exhausted(&self, tenant: &str, role: Role) {
        self.budget_exhausted
            .get_or_create(&TenantRoleLabels {
                tenant: self.tenant_label(tenant),
                role: role.as_str().to_owned(),
            })
            .inc();
    }

    /// Counts who served a call of `role` (`deterministic` for the built-in).
    pub fn served(&self, role: Role, provider: &str) {
        self.served
            .get_or_create(&ServedLabels {
                role: role.as_str().to_owned(),
                provider: provider.to_owned(),
            })
            .inc();
    }

    pub(crate) fn register(&self, registry: &mut Registry, slots: Arc<[Arc<ProviderSlot>]>) {
        let registry = registry.sub_registry_with_prefix("llm");
        registry.register(
            "requests",
            "Calls to LLM providers, by outcome (ok or the error kind)",
            self.requests.clone(),
        );
        registry.register(
            "retries",
            "Retries of failed provider calls",
            self.retries.clone(),
        );
        registry.register_with_unit(
            "request_duration",
            "Time of one provider call (one attempt)",
            Unit::Seconds,
            self.latency.clone(),
        );
        registry.register(
            "tokens",
            "Tokens used, as the providers reported them, by tenant, role and direction",
            self.tokens.clone(),
        );
        registry.register(
            "budget_exhausted",
            "Calls skipped because the tenant's token budget for the role was spent",
            self.budget_exhausted.clone(),
        );
        registry.register(
            "served",
            "Role calls by who answered; provider=\"deterministic\" is the built-in fallback",
            self.served.clone(),
        );
        registry.register_collector(Box::new(HealthCollector(slots)));
    }
}

/// The breakers' states, read at scrape time.
#[derive(Debug)]
struct HealthCollector(Arc<[Arc<ProviderSlot>]>);

impl Collector for HealthCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let snapshots: Vec<_> = self
            .0
            .iter()
            .map(|slot| (slot.name().to_owned(), slot.breaker().snapshot()))
            .collect();
        let mut states = encoder.encode_descriptor(
            "provider_state",
            "Circuit breaker state of each provider: 1 for the current state",
            None,
            MetricType::Gauge,
        )?;
        for (provider, snapshot) in &snapshots {
            for state in BreakerState::ALL {
                let gauge = ConstGauge::new(i64::from(snapshot.state == state));
                gauge.encode(states.encode_family(&StateLabels {
                    provider: provider.clone(),
                    state: state.as_str().to_owned(),
                })?)?;
            }
        }
        let mut failures = encoder.encode_descriptor(
            "provider_consecutive_failures",
            "Consecutive failures of each provider (the breaker opens at its threshold)",
            None,
            MetricType::Gauge,
        )?;
        for (provider, snapshot) in &snapshots {
            let gauge = ConstGauge::new(i64::from(snapshot.consecutive_failures));
            gauge.encode(failures.encode_family(&ProviderLabels {
                provider: provider.clone(),
            })?)?;
        }
        let mut opened = encoder.encode_descriptor(
            "provider_circuit_opened",
            "Times each provider's circuit breaker opened",
            None,
            MetricType::Counter,
        )?;
        for (provider, snapshot) in &snapshots {
            let counter = ConstCounter::new(snapshot.opened_total);
            counter.encode(opened.encode_family(&ProviderLabels {
                provider: provider.clone(),
            })?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_labels_are_bounded() {
        let metrics = LlmMetrics::new();
        for n in 0..MAX_TENANT_LABELS {
            assert_eq!(metrics.tenant_label(&format!("t{n}")), format!("t{n}"));
        }
        assert_eq!(metrics.tenant_label("one-too-many"), OTHER_TENANTS);
        assert_eq!(metrics.tenant_label("t0"), "t0");
    }
}
