//! Metrics of the Context Architect, as `prometheus-client` metrics the server registers in its
//! `/metrics` registry ([`ContextMetrics::register`]).
//!
//! * `context_assemble_duration_seconds{cache}` — assembly latency, by cache `hit` or `miss`
//!   (or `uncached` while the shared Redis cache is unreachable);
//! * `context_budget_utilisation` — `total_tokens / token_budget` of each computed assembly;
//! * `context_cache_lookups_total{cache}` — hit rate is `hit / (hit + miss)`;
//! * `context_summary_generations_total`, `context_summary_skips_total` — refreshes that
//!   regenerated, and refreshes skipped because the source hash was unchanged;
//! * `context_summary_refresh_duration_seconds` — time per scope refresh.

use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets, linear_buckets};
use prometheus_client::registry::{Registry, Unit};

/// Whether an assembly was answered from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EncodeLabelValue)]
pub enum CacheOutcome {
    Hit,
    Miss,
    /// The shared cache was unreachable: assembled without a cache.
    Uncached,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct CacheLabels {
    cache: CacheOutcome,
}

type HistogramFamily = Family<CacheLabels, Histogram, fn() -> Histogram>;

/// Cheap to clone: every metric is a shared handle.
#[derive(Clone)]
pub struct ContextMetrics {
    assemble_duration: HistogramFamily,
    budget_utilisation: Histogram,
    cache_lookups: Family<CacheLabels, Counter>,
    summary_generations: Counter,
    summary_skips: Counter,
    summary_refresh_duration: Histogram,
}

impl Default for ContextMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl ContextMetrics {
    pub fn new() -> Self {
        // 20 µs … ~2.6 s
        let latency: fn() -> Histogram = || Histogram::new(exponential_buckets(0.00002, 2.0, 18));
        ContextMetrics {
            assemble_duration: Family::new_with_constructor(latency),
            budget_utilisation: Histogram::new(linear_buckets(0.1, 0.1, 10)),
            cache_lookups: Family::default(),
            summary_generations: Counter::default(),
            summary_skips: Counter::default(),
            summary_refresh_duration: Histogram::new(exponential_buckets(0.0001, 2.0, 18)),
        }
    }

    /// Adds these metrics to `registry` (under its prefix, e.g. `aeterna_context_…`).
    pub fn register(&self, registry: &mut Registry) {
        let registry = registry.sub_registry_with_prefix("context");
        registry.register_with_unit(
            "assemble_duration",
            "Time to answer context_assemble, by cache outcome",
            Unit::Seconds,
            self.assemble_duration.clone(),
        );
        registry.register(
            "budget_utilisation",
            "Share of the token budget an assembled context uses (cache misses only)",
            self.budget_utilisation.clone(),
        );
        registry.register(
            "cache_lookups",
            "Assembled-context cache lookups, by outcome",
            self.cache_lookups.clone(),
        );
        registry.register(
            "summary_generations",
            "Layer summaries regenerated",
            self.summary_generations.clone(),
        );
        registry.register(
            "summary_skips",
            "Summary refreshes skipped because their sources were unchanged",
            self.summary_skips.clone(),
        );
        registry.register_with_unit(
            "summary_refresh_duration",
            "Time to refresh the summaries of one scope",
            Unit::Seconds,
            self.summary_refresh_duration.clone(),
        );
    }

    pub(crate) fn assembled(&self, cache: CacheOutcome, elapsed: Duration) {
        self.cache_lookups
            .get_or_create(&CacheLabels { cache })
            .inc();
        self.assemble_duration
            .get_or_create(&CacheLabels { cache })
            .observe(elapsed.as_secs_f64());
    }

    pub(crate) fn utilisation(&self, total_tokens: usize, budget: usize) {
        if budget > 0 {
            self.budget_utilisation
                .observe(total_tokens as f64 / budget as f64);
        }
    }

    pub(crate) fn refreshed(&self, regenerated: bool, elapsed: Duration) {
        if regenerated {
            self.summary_generations.inc();
        } else {
            self.summary_skips.inc();
        }
        self.summary_refresh_duration.observe(elapsed.as_secs_f64());
    }

    /// Cache lookups answered from the cache so far.
    pub fn cache_hits(&self) -> u64 {
        self.cache_lookups
            .get_or_create(&CacheLabels {
                cache: CacheOutcome::Hit,
            })
            .get()
    }

    /// Cache lookups that had to assemble.
    pub fn cache_misses(&self) -> u64 {
        self.cache_lookups
            .get_or_create(&CacheLabels {
                cache: CacheOutcome::Miss,
            })
            .get()
    }

    /// Assemblies run without a cache because the shared cache was unreachable.
    pub fn uncached(&self) -> u64 {
        self.cache_lookups
            .get_or_create(&CacheLabels {
                cache: CacheOutcome::Uncached,
            })
            .get()
    }

    /// Summary regenerations so far (refreshes with changed sources).
    pub fn summary_generations(&self) -> u64 {
        self.summary_generations.get()
    }

    /// Refreshes skipped because the source hash was unchanged.
    pub fn summary_skips(&self) -> u64 {
        self.summary_skips.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_metrics_render_with_the_prefix() {
        let metrics = ContextMetrics::new();
        metrics.assembled(CacheOutcome::Hit, Duration::from_micros(300));
        metrics.assembled(CacheOutcome::Miss, Duration::from_millis(4));
        metrics.utilisation(3000, 4000);
        metrics.refreshed(true, Duration::from_millis(2));
        let mut registry = Registry::with_prefix("aeterna");
        metrics.register(&mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).expect("encode");
        for name in [
            "aeterna_context_assemble_duration_seconds_bucket",
            "aeterna_context_cache_lookups_total{cache=\"Hit\"} 1",
            "aeterna_context_budget_utilisation_sum 0.75",
            "aeterna_context_summary_generations_total 1",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
        assert_eq!((metrics.cache_hits(), metrics.cache_misses()), (1, 1));
    }
}
