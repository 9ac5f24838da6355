//! Errors of the memory service. Every message says what to fix.

use crate::model::Layer;

/// What went wrong with a memory operation. The `Display` text is shown to callers (MCP tool
/// errors, REST responses), so it names the offending field and what to do.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The request is malformed or breaks a limit; the message names the field.
    #[error("{0}")]
    InvalidInput(String),
    /// The identity has no scope for the requested layer.
    #[error(
        "layer `{layer}` needs `{field}`: pass it as an argument or configure a default for this token"
    )]
    MissingScope { layer: Layer, field: &'static str },
    /// The caller's token does not hold the scope or role the call needs; the message names
    /// both.
    #[error("{0}")]
    Forbidden(String),
    /// No such record for this tenant (records of other tenants are indistinguishable from
    /// records that do not exist).
    #[error("no memory with id `{0}` in this tenant; check the id (memory_list shows ids)")]
    NotFound(String),
    /// A store is unreachable or failed; nothing was written.
    #[error("storage unavailable ({context}): {source}; nothing was written, retry later")]
    Storage {
        context: String,
        #[source]
        source: anyhow::Error,
    },
    /// The configured embedder does not match the one that produced the stored vectors.
    #[error("{0}")]
    EmbedderMismatch(String),
}

impl MemoryError {
    pub fn invalid(message: impl Into<String>) -> Self {
        MemoryError::InvalidInput(message.into())
    }

    pub fn storage(context: impl Into<String>, source: impl Into<anyhow::Error>) -> Self {
        MemoryError::Storage {
            context: context.into(),
            source: source.into(),
        }
    }
}

pub type Result<T, E = MemoryError> = std::result::Result<T, E>;
