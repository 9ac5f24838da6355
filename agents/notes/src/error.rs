//! Errors of the Note-Taking agent. The `Display` text is shown to callers (MCP tool errors),
//! so it names the offending field and says what to do.

use aeterna_memory::MemoryError;

#[derive(Debug, thiserror::Error)]
pub enum NotesError {
    /// The request is malformed or breaks a limit; the message names the field.
    #[error("{0}")]
    InvalidInput(String),
    /// No note with this id in the caller's tenant.
    #[error("no note with id `{0}` in this tenant; check the id (note_list shows ids)")]
    NotFound(String),
    /// The trajectory store failed; the message says what was and was not written.
    #[error("trajectory storage unavailable ({context}): {source}")]
    Storage {
        context: String,
        #[source]
        source: anyhow::Error,
    },
    /// The memory service refused or failed to store or read a note.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// The agent is shutting down and accepts no more work.
    #[error("the note-taking agent is shutting down; retry against the restarted server")]
    ShuttingDown,
}

impl NotesError {
    pub fn invalid(message: impl Into<String>) -> Self {
        NotesError::InvalidInput(message.into())
    }

    pub fn storage(context: impl Into<String>, source: impl Into<anyhow::Error>) -> Self {
        NotesError::Storage {
            context: context.into(),
            source: source.into(),
        }
    }
}

pub type Result<T, E = NotesError> = std::result::Result<T, E>;
