//! Metrics of the Meta-Agent, as `prometheus-client` metrics the server registers in its
//! `/metrics` registry ([`MetaMetrics::register`]):
//!
//! * `meta_loops_finished_total{outcome}` — loops by final state;
//! * `meta_loops_started_total{driver}`;
//! * `meta_loop_iterations` — iterations per finished loop (the design flags > 3 as an anomaly;
//!   `meta_loops_over_three_iterations_total` counts them);
//! * `meta_phase_duration_seconds{phase}` — BUILD and TEST as run or reported, IMPROVE as
//!   computed.

use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets, linear_buckets};
use prometheus_client::registry::{Registry, Unit};

use crate::model::{Driver, LoopState, Phase};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EncodeLabelValue)]
enum OutcomeLabel {
    Succeeded,
    Failed,
    Escalated,
    Cancelled,
    TimedOut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EncodeLabelValue)]
enum PhaseLabel {
    Build,
    Test,
    Improve,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EncodeLabelValue)]
enum DriverLabel {
    Client,
    Command,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: OutcomeLabel,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PhaseLabels {
    phase: PhaseLabel,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DriverLabels {
    driver: DriverLabel,
}

/// Cheap to clone: every metric is a shared handle.
#[derive(Clone)]
pub struct MetaMetrics {
    finished: Family<OutcomeLabels, Counter>,
    started: Family<DriverLabels, Counter>,
    iterations: Histogram,
    over_three: Counter,
    phase_duration: Family<PhaseLabels, Histogram, fn() -> Histogram>,
}

impl Default for MetaMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl MetaMetrics {
    pub fn new() -> Self {
        // 1 ms … ~2.3 h
        let durations: fn() -> Histogram = || Histogram::new(exponential_buckets(0.001, 2.0, 24));
        MetaMetrics {
            finished: Family::default(),
            started: Family::default(),
            iterations: Histogram::new(linear_buckets(1.0, 1.0, 10)),
            over_three: Counter::default(),
            phase_duration: Family::new_with_constructor(durations),
        }
    }

    /// Adds these metrics to `registry` (under its prefix: `aeterna_meta_…`).
    pub fn register(&self, registry: &mut Registry) {
        let registry = registry.sub_registry_with_prefix("meta");
        registry.register(
            "loops_finished",
            "Meta-loops that ended, by outcome",
            self.finished.clone(),
        );
        registry.register(
            "loops_started",
            "Meta-loops started, by driver",
            self.started.clone(),
        );
        registry.register(
            "loop_iterations",
            "Iterations per finished meta-loop",
            self.iterations.clone(),
        );
        registry.register(
            "loops_over_three_iterations",
            "Finished meta-loops that ran more than 3 iterations (an anomaly by design)",
            self.over_three.clone(),
        );
        registry.register_with_unit(
            "phase_duration",
            "Duration of meta-loop phases",
            Unit::Seconds,
            self.phase_duration.clone(),
        );
    }

    pub fn started(&self, driver: Driver) {
        let driver = match driver {
            Driver::Client => DriverLabel::Client,
            Driver::Command => DriverLabel::Command,
        };
        self.started.get_or_create(&DriverLabels { driver }).inc();
    }

    pub fn finished(&self, state: LoopState, iterations: u32) {
        let outcome = match state {
            LoopState::Succeeded => OutcomeLabel::Succeeded,
            LoopState::Failed => OutcomeLabel::Failed,
            LoopState::Escalated => OutcomeLabel::Escalated,
            LoopState::Cancelled => OutcomeLabel::Cancelled,
            LoopState::TimedOut => OutcomeLabel::TimedOut,
            LoopState::Queued | LoopState::Running => return,
        };
        self.finished
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
        self.iterations.observe(f64::from(iterations));
        if iterations > 3 {
            self.over_three.inc();
        }
    }

    pub fn phase(&self, phase: Phase, duration: Duration) {
        let phase = match phase {
            Phase::Build => PhaseLabel::Build,
            Phase::Test => PhaseLabel::Test,
            Phase::Improve => PhaseLabel::Improve,
        };
        self.phase_duration
            .get_or_create(&PhaseLabels { phase })
            .observe(duration.as_secs_f64());
    }
}
