//! The Aeterna memory server and the `aeterna` command.
//!
//! The transports (MCP over Streamable HTTP and stdio, the compatibility REST API) are thin:
//! they parse input, call [`aeterna_memory::MemoryService`] or an agent, and shape the result.

pub mod cli;
