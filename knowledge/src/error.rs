//! What can go wrong with knowledge, in words a user can act on.

/// An error of the knowledge repository, its items or their export.
#[derive(Debug, thiserror::Error)]
pub enum KnowledgeError {
    /// An item or an argument breaks a rule; the message names it.
    #[error("{0}")]
    Invalid(String),
    /// A limit of `[knowledge]` was reached; the message names it.
    #[error("{0}")]
    Limit(String),
    /// An item that does not exist on the branch read.
    #[error("no knowledge item `{0}` on the branch read; `knowledge_search` lists the items")]
    NotFound(String),
    /// git itself failed, with what was being done.
    #[error("git: {doing}: {source}")]
    Git {
        doing: String,
        #[source]
        source: git2::Error,
    },
    /// Memory refused or failed a write of the sync, with what was being done.
    #[error("memory: {doing}: {source}")]
    Memory {
        doing: String,
        #[source]
        source: aeterna_memory::MemoryError,
    },
    /// Reading or writing a file failed, with its path.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T, E = KnowledgeError> = std::result::Result<T, E>;

/// Wraps a git error with what was being done: `.map_err(git("reading HEAD"))`.
pub(crate) fn git(doing: impl Into<String>) -> impl FnOnce(git2::Error) -> KnowledgeError {
    let doing = doing.into();
    move |source| KnowledgeError::Git { doing, source }
}

/// Wraps an I/O error with the path it concerns.
pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> KnowledgeError + '_ {
    move |source| KnowledgeError::Io {
        path: path.display().to_string(),
        source,
    }
}
