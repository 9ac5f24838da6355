//! What the server does, independent of the transport: plain async functions over the memory
//! service (and, later, the agents). MCP tools and REST handlers parse input, call these and
//! shape the result, so the same logic serves both and is testable without HTTP.

pub mod compat;
pub mod context;
pub mod hindsight;
pub mod knowledge;
pub mod memory;
pub mod meta;
pub mod notes;
pub mod schema;
