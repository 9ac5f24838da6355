//! Errors of the Context Architect. The `Display` text reaches callers (MCP tool errors), so
//! each message names the offending argument and what to do.

use aeterna_memory::MemoryError;

#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    /// An argument is out of range or malformed; the message names it.
    #[error("{0}")]
    InvalidInput(String),
    /// The memory service refused or failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The summary store failed; nothing was written.
    #[error("summary store unavailable ({context}): {source}; nothing was written, retry later")]
    Storage {
        context: String,
        #[source]
        source: anyhow::Error,
    },
    /// The BPE could not be loaded (a broken build, not a runtime condition).
    #[error("{0}")]
    Tokenizer(String),
}

impl ContextError {
    pub fn invalid(message: impl Into<String>) -> Self {
        ContextError::InvalidInput(message.into())
    }

    pub fn storage(context: impl Into<String>, source: impl Into<anyhow::Error>) -> Self {
        ContextError::Storage {
            context: context.into(),
            source: source.into(),
        }
    }
}

pub type Result<T, E = ContextError> = std::result::Result<T, E>;
