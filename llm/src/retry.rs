//! [`RetryPolicy`]: how long to wait before each retry of a retryable error: exponential backoff
//! with full jitter, or exactly what the provider asked for with `Retry-After`.

use std::time::Duration;

use crate::config::RetryConfig;
use crate::error::LlmError;

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    config: RetryConfig,
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Wait this long, then try again.
    RetryAfter(Duration),
    /// Stop: the error is final for this provider.
    GiveUp(GiveUpReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUpReason {
    /// The error cannot go away by sending the same request (400, 401, …).
    NotRetryable,
    /// `max_retries` retries were made.
    RetriesExhausted,
    /// The provider asked to wait longer than `max_backoff_ms`.
    RetryAfterTooLong,
}

impl RetryPolicy {
    pub fn new(config: RetryConfig) -> Self {
        RetryPolicy { config }
    }

    pub fn config(&self) -> &RetryConfig {
        &self.config
    }

    /// The backoff ceiling before retry `retry` (1-based): `initial × multiplier^(retry-1)`,
    /// at most `max_backoff`.
    pub fn ceiling(&self, retry: u32) -> Duration {
        let exponent = retry.saturating_sub(1).min(64) as i32;
        let millis = self.config.initial_backoff_ms as f64 * self.config.multiplier.powi(exponent);
        Duration::from_millis(millis.min(self.config.max_backoff_ms as f64) as u64)
    }

    /// What to do after attempt `retries_done + 1` failed with `error`.
    pub fn next(&self, retries_done: u32, error: &LlmError) -> Next {
        if !error.retryable {
            return Next::GiveUp(GiveUpReason::NotRetryable);
        }
        if retries_done >= self.config.max_retries {
            return Next::GiveUp(GiveUpReason::RetriesExhausted);
        }
        match error.retry_after {
            Some(wait) if wait > Duration::from_millis(self.config.max_backoff_ms) => {
                Next::GiveUp(GiveUpReason::RetryAfterTooLong)
            }
            Some(wait) => Next::RetryAfter(wait),
            None => {
                // Full jitter: uniformly anywhere below the ceiling, so clients that failed
                // together do not retry together.
                let ceiling = self.ceiling(retries_done + 1).as_millis() as u64;
                Next::RetryAfter(Duration::from_millis(fastrand::u64(0..=ceiling)))
            }
        }
    }
}

/// `Retry-After` as seconds or an HTTP date; a date in the past means now.
pub fn parse_retry_after(value: &str, now: std::time::SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    // Some providers send fractional seconds.
    if let Ok(seconds) = value.parse::<f64>()
        && seconds.is_finite()
        && seconds >= 0.0
    {
        return Some(Duration::from_secs_f64(seconds.min(86_400.0)));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn policy() -> RetryPolicy {
        RetryPolicy::new(RetryConfig::default())
    }

    fn error(kind: ErrorKind) -> LlmError {
        LlmError::new("p", kind, "x")
    }

    #[test]
    fn ceilings_double_up_to_the_maximum() {
        let ceilings: Vec<u64> = (1..=7)
            .map(|n| policy().ceiling(n).as_millis() as u64)
            .collect();
        assert_eq!(
            ceilings,
            [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]
        );
    }

    #[test]
    fn delays_are_jittered_below_the_ceiling() {
        let policy = policy();
        let delays: Vec<Duration> = (0..200)
            .map(|_| match policy.next(1, &error(ErrorKind::Upstream)) {
                Next::RetryAfter(delay) => delay,
                other => panic!("{other:?}"),
            })
            .collect();
        assert!(delays.iter().all(|d| *d <= Duration::from_secs(2)));
        // Full jitter spreads them: not all in one half.
        assert!(delays.iter().any(|d| *d < Duration::from_secs(1)));
        assert!(delays.iter().any(|d| *d > Duration::from_secs(1)));
    }

    #[test]
    fn what_is_retried_and_for_how_long() {
        let policy = policy();
        for kind in [
            ErrorKind::Validation,
            ErrorKind::Auth,
            ErrorKind::MalformedOutput,
        ] {
            assert_eq!(
                policy.next(0, &error(kind)),
                Next::GiveUp(GiveUpReason::NotRetryable)
            );
        }
        assert_eq!(
            policy.next(3, &error(ErrorKind::Timeout)),
            Next::GiveUp(GiveUpReason::RetriesExhausted)
        );
        let limited = error(ErrorKind::RateLimited).with_retry_after(Some(Duration::from_secs(7)));
        assert_eq!(
            policy.next(0, &limited),
            Next::RetryAfter(Duration::from_secs(7))
        );
        let too_long =
            error(ErrorKind::RateLimited).with_retry_after(Some(Duration::from_secs(31)));
        assert_eq!(
            policy.next(0, &too_long),
            Next::GiveUp(GiveUpReason::RetryAfterTooLong)
        );
    }

    #[test]
    fn retry_after_as_seconds_or_date() {
        let now = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(
            parse_retry_after(" 12 ", now),
            Some(Duration::from_secs(12))
        );
        assert_eq!(
            parse_retry_after("0.5", now),
            Some(Duration::from_millis(500))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            parse_retry_after(&later, now),
            Some(Duration::from_secs(30))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after(&earlier, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
    }
}
