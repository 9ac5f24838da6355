//! [`LlmError`]: the one error type of the provider layer. Every error names the provider and
//! its [`ErrorKind`], and says whether trying again may help ([`LlmError::retryable`]).

use std::fmt;
use std::time::Duration;

use serde::Serialize;

/// What went wrong, in classes that decide what happens next (retry, trip the breaker, move on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// The provider refused the request itself (400, 404, 413, 422): a wrong model name, a
    /// prompt too long. Trying again sends the same request; never retried.
    Validation,
    /// 401 or 403: the API key is missing, wrong or lacks access. Never retried.
    Auth,
    /// 429: the provider asks us to slow down (it may say for how long: `Retry-After`).
    RateLimited,
    /// No answer within the configured timeout (or 408).
    Timeout,
    /// The connection failed or was reset before an answer arrived.
    Connection,
    /// The provider failed (5xx) or answered with something that is not its API's response.
    Upstream,
    /// The model answered, but not with what was asked (no JSON, missing fields).
    MalformedOutput,
    /// The provider's circuit breaker is open: it failed repeatedly and is left alone for a
    /// while. Nothing was sent.
    CircuitOpen,
    /// The tenant's token budget for this role is spent for the hour or the day. Nothing was
    /// sent.
    BudgetExhausted,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::Validation,
        ErrorKind::Auth,
        ErrorKind::RateLimited,
        ErrorKind::Timeout,
        ErrorKind::Connection,
        ErrorKind::Upstream,
        ErrorKind::MalformedOutput,
        ErrorKind::CircuitOpen,
        ErrorKind::BudgetExhausted,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Validation => "validation",
            ErrorKind::Auth => "auth",
            ErrorKind::RateLimited => "rate-limited",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connection => "connection",
            ErrorKind::Upstream => "upstream",
            ErrorKind::MalformedOutput => "malformed-output",
            ErrorKind::CircuitOpen => "circuit-open",
            ErrorKind::BudgetExhausted => "budget-exhausted",
        }
    }

    /// Whether an error of this kind may go away if the same request is sent again.
    pub fn retryable_by_default(self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimited
                | ErrorKind::Timeout
                | ErrorKind::Connection
                | ErrorKind::Upstream
        )
    }

    /// Whether an error of this kind says something about the provider's health, and so counts
    /// towards opening its circuit breaker. A refused request (validation) or an unusable
    /// answer from a working model does not; neither do errors raised before anything was sent.
    pub fn counts_against_provider(self) -> bool {
        matches!(
            self,
            ErrorKind::Auth
                | ErrorKind::RateLimited
                | ErrorKind::Timeout
                | ErrorKind::Connection
                | ErrorKind::Upstream
        )
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed provider call: which provider, what kind of failure, what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmError {
    /// The provider's name in the configuration (`llm.providers.<name>`).
    pub provider: String,
    pub kind: ErrorKind,
    /// Whether sending the same request again may succeed.
    pub retryable: bool,
    /// What happened and what to check; never contains the API key.
    pub message: String,
    /// The HTTP status, when the provider answered.
    pub status: Option<u16>,
    /// How long the provider asked us to wait (`Retry-After`).
    pub retry_after: Option<Duration>,
}

impl LlmError {
    pub fn new(provider: impl Into<String>, kind: ErrorKind, message: impl Into<String>) -> Self {
        LlmError {
            provider: provider.into(),
            kind,
            retryable: kind.retryable_by_default(),
            message: message.into(),
            status: None,
            retry_after: None,
        }
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> Self {
        self.retry_after = retry_after;
        self
    }

    pub fn not_retryable(mut self) -> Self {
        self.retryable = false;
        self
    }
}

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.provider, self.kind, self.message)
    }
}

impl std::error::Error for LlmError {}
