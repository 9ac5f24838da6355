//! [`CircuitBreaker`]: one per provider. Closed, it lets calls through and counts consecutive
//! failures; at `failure_threshold` it opens and refuses calls at once for `cool_down`; then it
//! half-opens and lets exactly one probe through, whose success closes it and whose failure
//! opens it again. Only failures that say something about the provider count
//! ([`ErrorKind::counts_against_provider`]).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde::Serialize;
use tokio::time::Instant;

use crate::config::BreakerConfig;
use crate::error::{ErrorKind, LlmError};

/// The breaker's state, as `/readyz` and `/metrics` show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    Closed,
    Open,
    HalfOpen,
}

impl BreakerState {
    pub const ALL: [BreakerState; 3] = [
        BreakerState::Closed,
        BreakerState::Open,
        BreakerState::HalfOpen,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}

/// The last failure a breaker saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LastError {
    pub kind: ErrorKind,
    pub message: String,
    /// Milliseconds since the Unix epoch.
    pub at: i64,
}

/// A breaker's state for people and dashboards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BreakerSnapshot {
    pub state: BreakerState,
    pub consecutive_failures: u32,
    /// While open: when the next probe will be let through, in milliseconds since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<LastError>,
    /// Times the breaker opened since the start.
    pub opened_total: u64,
    /// Calls refused while it was open.
    pub rejected_total: u64,
}

#[derive(Debug)]
struct Inner {
    state: State,
    consecutive_failures: u32,
    last_error: Option<LastError>,
    opened_total: u64,
    rejected_total: u64,
}

#[derive(Debug, Clone, Copy)]
enum State {
    Closed,
    Open {
        until: Instant,
        until_wall: i64,
    },
    /// `probing`: the one call let through is still out.
    HalfOpen {
        probing: bool,
    },
}

#[derive(Debug)]
pub struct CircuitBreaker {
    provider: String,
    config: BreakerConfig,
    inner: Mutex<Inner>,
}

/// Permission for one call. Report how it went with [`Permit::record`]; a permit dropped
/// without a result (the caller was cancelled) frees a half-open breaker for another probe.
#[must_use = "record the call's outcome"]
pub struct Permit<'a> {
    breaker: &'a CircuitBreaker,
    probe: bool,
    recorded: bool,
}

impl CircuitBreaker {
    pub fn new(provider: impl Into<String>, config: BreakerConfig) -> Self {
        CircuitBreaker {
            provider: provider.into(),
            config,
            inner: Mutex::new(Inner {
                state: State::Closed,
                consecutive_failures: 0,
                last_error: None,
                opened_total: 0,
                rejected_total: 0,
            }),
        }
    }

    /// Lets a call through, or refuses it with [`ErrorKind::CircuitOpen`].
    pub fn acquire(&self) -> Result<Permit<'_>, LlmError> {
        let mut inner = self.inner.lock();
        let probe = match inner.state {
            State::Closed => false,
            State::Open { until, .. } if Instant::now() >= until => {
                inner.state = State::HalfOpen { probing: true };
                true
            }
            State::HalfOpen { probing: false } => {
                inner.state = State::HalfOpen { probing: true };
                true
            }
            State::Open { .. } | State::HalfOpen { probing: true } => {
                inner.rejected_total += 1;
                return Err(self.open_error(&inner));
            }
        };
        Ok(Permit {
            breaker: self,
            probe,
            recorded: false,
        })
    }

    /// True while calls would be refused (open and not yet due for a probe, or a probe out).
    pub fn is_refusing(&self) -> bool {
        match self.inner.lock().state {
            State::Closed | State::HalfOpen { probing: false } => false,
            State::Open { until, .. } => Instant::now() < until,
            State::HalfOpen { probing: true } => true,
        }
    }

    pub fn snapshot(&self) -> BreakerSnapshot {
        let inner = self.inner.lock();
        let (state, probe_at) = match inner.state {
            State::Closed => (BreakerState::Closed, None),
            State::Open { until, until_wall } if Instant::now() < until => {
                (BreakerState::Open, Some(until_wall))
            }
            // Due for a probe: the next call goes through.
            State::Open { .. } | State::HalfOpen { .. } => (BreakerState::HalfOpen, None),
        };
        BreakerSnapshot {
            state,
            consecutive_failures: inner.consecutive_failures,
            probe_at,
            last_error: inner.last_error.clone(),
            opened_total: inner.opened_total,
            rejected_total: inner.rejected_total,
        }
    }

    fn open_error(&self, inner: &Inner) -> LlmError {
        let last = inner
            .last_error
            .as_ref()
            .map(|e| format!("; last failure: {} ({})", e.message, e.kind))
            .unwrap_or_default();
        let when = match inner.state {
            State::Open { until, .. } => {
                let left = until.saturating_duration_since(Instant::now());
                format!("a probe is let through in {} s", left.as_secs().max(1))
            }
            _ => "a probe call is under way".to_owned(),
        };
        LlmError::new(
            self.provider.clone(),
            ErrorKind::CircuitOpen,
            format!(
                "circuit open after {} consecutive failures, {when}{last}",
                inner.consecutive_failures
            ),
        )
        .not_retryable()
    }

    fn on_success(&self) {
        let mut inner = self.inner.lock();
        if !matches!(inner.state, State::Closed) {
            tracing::info!(provider = %self.provider, "provider answered again; circuit closed");
        }
        inner.state = State::Closed;
        inner.consecutive_failures = 0;
    }

    fn on_failure(&self, error: &LlmError, probe: bool) {
        let mut inner = self.inner.lock();
        inner.last_error = Some(LastError {
            kind: error.kind,
            message: error.message.clone(),
            at: unix_millis(SystemTime::now()),
        });
        if !error.kind.counts_against_provider() {
            if probe {
                // The provider answered; it is not the provider's fault. Let the next call probe.
                inner.state = State::HalfOpen { probing: false };
            }
            return;
        }
        inner.consecutive_failures = inner.consecutive_failures.saturating_add(1);
        if probe || inner.consecutive_failures >= self.config.failure_threshold {
            let cool_down = Duration::from_millis(self.config.cool_down_ms);
            inner.state = State::Open {
                until: Instant::now() + cool_down,
                until_wall: unix_millis(SystemTime::now() + cool_down),
            };
            inner.opened_total += 1;
            tracing::warn!(
                provider = %self.provider,
                kind = %error.kind,
                failures = inner.consecutive_failures,
                cool_down_ms = self.config.cool_down_ms,
                error = %error.message,
                "circuit opened: the provider is skipped until the cool-down ends"
            );
        }
    }

    fn on_abandoned(&self) {
        let mut inner = self.inner.lock();
        if let State::HalfOpen { probing: true } = inner.state {
            inner.state = State::HalfOpen { probing: false };
        }
    }
}

impl Permit<'_> {
    /// Reports the call's outcome to the breaker.
    pub fn record<T>(mut self, result: &Result<T, LlmError>) {
        self.recorded = true;
        match result {
            Ok(_) => self.breaker.on_success(),
            Err(error) => self.breaker.on_failure(error, self.probe),
        }
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if !self.recorded && self.probe {
            self.breaker.on_abandoned();
        }
    }
}

fn unix_millis(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breaker() -> CircuitBreaker {
        CircuitBreaker::new(
            "p",
            BreakerConfig {
                failure_threshold: 3,
                cool_down_ms: 1_000,
            },
        )
    }

    fn fail(breaker: &CircuitBreaker, kind: ErrorKind) {
        let permit = breaker.acquire().expect("let through");
        permit.record::<()>(&Err(LlmError::new("p", kind, "boom")));
    }

    #[tokio::test(start_paused = true)]
    async fn opens_after_three_failures_then_half_opens_for_one_probe() {
        let breaker = breaker();
        fail(&breaker, ErrorKind::Upstream);
        fail(&breaker, ErrorKind::Timeout);
        assert_eq!(breaker.snapshot().state, BreakerState::Closed);
        fail(&breaker, ErrorKind::Connection);
        let snapshot = breaker.snapshot();
        assert_eq!(snapshot.state, BreakerState::Open);
        assert_eq!(snapshot.last_error.unwrap().kind, ErrorKind::Connection);
        let refused = breaker.acquire().err().expect("refused while open");
        assert_eq!(refused.kind, ErrorKind::CircuitOpen);
        assert!(!refused.retryable);
        assert!(refused.message.contains("boom"), "{}", refused.message);

        tokio::time::advance(Duration::from_millis(1_001)).await;
        assert_eq!(breaker.snapshot().state, BreakerState::HalfOpen);
        let probe = breaker.acquire().expect("one probe");
        assert!(breaker.acquire().is_err(), "only one probe at a time");
        probe.record::<()>(&Err(LlmError::new("p", ErrorKind::Upstream, "still down")));
        assert_eq!(breaker.snapshot().state, BreakerState::Open);

        tokio::time::advance(Duration::from_millis(1_001)).await;
        breaker.acquire().expect("probe").record(&Ok(()));
        let snapshot = breaker.snapshot();
        assert_eq!(
            (
                snapshot.state,
                snapshot.consecutive_failures,
                snapshot.opened_total
            ),
            (BreakerState::Closed, 0, 2)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn refused_requests_and_bad_answers_do_not_count() {
        let breaker = breaker();
        for _ in 0..5 {
            fail(&breaker, ErrorKind::Validation);
            fail(&breaker, ErrorKind::MalformedOutput);
        }
        assert_eq!(breaker.snapshot().state, BreakerState::Closed);
        fail(&breaker, ErrorKind::Upstream);
        fail(&breaker, ErrorKind::Upstream);
        breaker.acquire().unwrap().record(&Ok(()));
        fail(&breaker, ErrorKind::Upstream);
        assert_eq!(
            breaker.snapshot().consecutive_failures,
            1,
            "a success resets the count"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_abandoned_probe_lets_the_next_call_probe() {
        let breaker = breaker();
        for _ in 0..3 {
            fail(&breaker, ErrorKind::Upstream);
        }
        tokio::time::advance(Duration::from_millis(1_001)).await;
        drop(breaker.acquire().expect("probe"));
        assert!(breaker.acquire().is_ok());
    }
}
