//! Aeterna's layered memory.
//!
//! Memories live in layers (agent, user, session, project, team, org, company), each scoped by
//! an id taken from the caller's [`Identity`]. [`MemoryService`] is the entry point; it is
//! transport-agnostic and is used by the MCP server, the REST API and the agents.

pub mod embed;
pub mod error;
pub mod model;
pub mod service;

pub use error::{MemoryError, Result};
pub use model::*;
pub use service::{MemoryConfig, MemoryService, StoreStats};
