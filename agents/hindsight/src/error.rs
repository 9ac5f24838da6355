//! Errors of the Hindsight service. The `Display` text is shown to callers (MCP tool errors),
//! so it names the offending argument and what to do.

use aeterna_memory::{Layer, MemoryError};

#[derive(Debug, thiserror::Error)]
pub enum HindsightError {
    /// The request is malformed or breaks a limit; the message names the field.
    #[error("{0}")]
    InvalidInput(String),
    /// Nothing in the error text looks like an error.
    #[error(
        "no error recognised in `error_text`; pass the raw output of the failing compiler, test \
         run or program (rustc/cargo, Python, Node/tsc, Java/Kotlin, Go, C/C++, shell)"
    )]
    NoErrorRecognised,
    /// No such item in this tenant, or not in a scope the caller can see.
    #[error("no {what} with id `{id}` in your scopes; check the id (it is returned by {hint})")]
    NotFound {
        what: &'static str,
        id: String,
        hint: &'static str,
    },
    /// The caller has no scope for a layer the operation needs.
    #[error(
        "layer `{layer}` needs `{field}`: pass it as an argument or configure a default for this token"
    )]
    MissingScope { layer: Layer, field: &'static str },
    /// The caller may not decide this promotion.
    #[error("{0}")]
    Forbidden(String),
    /// A store failed; nothing was written.
    #[error(
        "hindsight storage unavailable ({context}): {source}; nothing was written, retry later"
    )]
    Storage {
        context: String,
        #[source]
        source: anyhow::Error,
    },
    #[error(transparent)]
    Memory(#[from] MemoryError),
}

impl HindsightError {
    pub fn invalid(message: impl Into<String>) -> Self {
        HindsightError::InvalidInput(message.into())
    }

    pub fn storage(context: impl Into<String>, source: impl Into<anyhow::Error>) -> Self {
        HindsightError::Storage {
            context: context.into(),
            source: source.into(),
        }
    }

    /// Whether the caller can fix it (as opposed to a failing store).
    pub fn is_caller_error(&self) -> bool {
        match self {
            HindsightError::Storage { .. } => false,
            HindsightError::Memory(error) => !matches!(error, MemoryError::Storage { .. }),
            _ => true,
        }
    }
}

pub type Result<T, E = HindsightError> = std::result::Result<T, E>;

/// `map_err` helper for sqlx calls.
pub(crate) fn failed(context: &'static str) -> impl FnOnce(sqlx::Error) -> HindsightError {
    move |error| HindsightError::storage(context, error)
}
