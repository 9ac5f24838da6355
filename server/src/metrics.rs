//! Prometheus metrics: calls and latency per operation (MCP tool or REST endpoint), errors,
//! authentication failures and store sizes. Served as text at `/metrics`.
//!
//! Label values come from a closed set (registered tool names and fixed endpoint names), so a
//! client cannot blow up the series count with made-up tool names.

use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use aeterna_memory::StoreStats;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Succeeded.
    Ok,
    /// The operation refused the input or failed (an MCP tool error, a REST 4xx/5xx).
    Error,
    /// The request was unusable (an MCP protocol error such as an unknown tool).
    Rejected,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error => "error",
            Outcome::Rejected => "rejected",
        }
    }
}

impl EncodeLabelValue for Outcome {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        EncodeLabelValue::encode(&self.as_str(), encoder)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct CallLabels {
    operation: String,
    outcome: Outcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct OperationLabels {
    operation: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RepairLabels {
    kind: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct TransportLabels {
    transport: String,
}

/// The server's metrics registry.
pub struct Metrics {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    durations: Family<OperationLabels, Histogram>,
    auth_failures: Family<TransportLabels, Counter>,
    in_flight: Gauge,
    records: Gauge,
    vectors: Gauge,
    vector_repairs: Family<RepairLabels, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("aeterna");
        let calls = Family::<CallLabels, Counter>::default();
        registry.register(
            "calls",
            "MCP tool calls and REST requests, by outcome",
            calls.clone(),
        );
        // 50 µs … ~13 s
        let durations = Family::<OperationLabels, Histogram>::new_with_constructor(
            (|| Histogram::new(exponential_buckets(0.00005, 2.0, 19))) as fn() -> Histogram,
        );
        registry.register_with_unit(
            "call_duration",
            "Time spent in MCP tool calls and REST requests",
            prometheus_client::registry::Unit::Seconds,
            durations.clone(),
        );
        let auth_failures = Family::<TransportLabels, Counter>::default();
        registry.register(
            "auth_failures",
            "Requests refused for a missing or invalid token",
            auth_failures.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "in_flight_calls",
            "Calls being processed now",
            in_flight.clone(),
        );
        let records = Gauge::default();
        registry.register(
            "memory_records",
            "Memory records stored, all tenants",
            records.clone(),
        );
        let vectors = Gauge::default();
        registry.register(
            "memory_vectors",
            "Vectors in the index, all tenants",
            vectors.clone(),
        );
        let vector_repairs = Family::<RepairLabels, Gauge>::default();
        registry.register(
            "vector_repairs",
            "Vectors the drift repair of a persistent vector store (Qdrant) fixed since start, \
             by kind: missing, stale, orphaned",
            vector_repairs.clone(),
        );
        Metrics {
            registry,
            calls,
            durations,
            auth_failures,
            in_flight,
            records,
            vectors,
            vector_repairs,
        }
    }

    /// The registry, for agents that bring their own metrics (registered before the `Arc`).
    pub fn registry_mut(&mut self) -> &mut Registry {
        &mut self.registry
    }

    /// Counts one finished call of `operation`.
    pub fn record_call(&self, operation: &str, outcome: Outcome, elapsed: Duration) {
        self.calls
            .get_or_create(&CallLabels {
                operation: operation.to_owned(),
                outcome,
            })
            .inc();
        self.durations
            .get_or_create(&OperationLabels {
                operation: operation.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
    }

    pub fn record_auth_failure(&self, transport: &str) {
        self.auth_failures
            .get_or_create(&TransportLabels {
                transport: transport.to_owned(),
            })
            .inc();
    }

    /// Marks a call as in flight until the guard drops.
    pub fn in_flight(&self) -> InFlightGuard {
        self.in_flight.inc();
        InFlightGuard {
            gauge: self.in_flight.clone(),
        }
    }

    pub fn set_store_stats(&self, stats: &StoreStats) {
        self.records
            .set(i64::try_from(stats.records).unwrap_or(i64::MAX));
        self.vectors
            .set(i64::try_from(stats.vectors).unwrap_or(i64::MAX));
        let repairs = &stats.vector_repairs;
        for (kind, count) in [
            ("missing", repairs.missing),
            ("stale", repairs.stale),
            ("orphaned", repairs.orphaned),
        ] {
            self.vector_repairs
                .get_or_create(&RepairLabels { kind })
                .set(i64::try_from(count).unwrap_or(i64::MAX));
        }
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(%error, "cannot encode metrics");
        }
        text
    }
}

/// Decrements the in-flight gauge on drop.
pub struct InFlightGuard {
    gauge: Gauge,
}

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}
