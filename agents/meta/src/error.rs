//! Errors of the Meta-Agent. The `Display` text is shown to callers (MCP tool errors), so it
//! names the offending argument and says what to do.

use aeterna_memory::MemoryError;

#[derive(Debug, thiserror::Error)]
pub enum MetaError {
    /// The request is malformed or breaks a limit; the message names the argument.
    #[error("{0}")]
    InvalidInput(String),
    /// No loop with this id in the caller's tenant (another tenant's loop looks the same).
    #[error(
        "no loop with id `{0}` in this tenant; check `loop_id` (meta_loop_start returns it, \
         meta_loop_list shows yours)"
    )]
    NotFound(String),
    /// The tenant already runs its maximum number of loops.
    #[error(
        "{active} loops are already active for this tenant; the limit is {limit} \
         (meta.max_active_loops_per_tenant): wait for one to finish or cancel one with \
         meta_loop_cancel"
    )]
    TooManyLoops { active: usize, limit: usize },
    /// The loop store failed; the message says what was not written.
    #[error("meta-loop storage unavailable ({context}): {source}; retry later")]
    Storage {
        context: String,
        #[source]
        source: anyhow::Error,
    },
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The agent is shutting down and starts no more loops.
    #[error("the Meta-Agent is shutting down; retry against the restarted server")]
    ShuttingDown,
}

impl MetaError {
    pub fn invalid(message: impl Into<String>) -> Self {
        MetaError::InvalidInput(message.into())
    }

    pub fn storage(context: impl Into<String>, source: impl Into<anyhow::Error>) -> Self {
        MetaError::Storage {
            context: context.into(),
            source: source.into(),
        }
    }

    /// Whether the caller can fix it (as opposed to a failing store).
    pub fn is_caller_error(&self) -> bool {
        match self {
            MetaError::Storage { .. } | MetaError::ShuttingDown => false,
            MetaError::Memory(error) => !matches!(error, MemoryError::Storage { .. }),
            _ => true,
        }
    }
}

pub type Result<T, E = MetaError> = std::result::Result<T, E>;

/// `map_err` helper for sqlx calls.
pub(crate) fn failed(context: &'static str) -> impl FnOnce(sqlx::Error) -> MetaError {
    move |error| MetaError::storage(context, error)
}
