//! What the host tells the extension about the current call.

use crate::{SessionInfo, ToolDefinition, sys};

/// The session the callback runs for: tenant, session, and user and project when known.
pub fn session() -> SessionInfo {
    sys::session()
}

/// The tools available to the agent in this session.
pub fn tools() -> Vec<ToolDefinition> {
    sys::tools()
}
