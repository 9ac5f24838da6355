//! The Aeterna memory server and the `aeterna` command.
//!
//! The transports (MCP over Streamable HTTP and stdio, the compatibility REST API) are thin:
//! they parse input, call [`aeterna_memory::MemoryService`] or an agent through
//! [`domain`], and shape the result.
//!
//! * [`config`]: typed configuration from TOML, `AETERNA_*` variables and flags;
//! * [`auth`]: tokens → tenants, in constant time;
//! * [`state`]: [`state::AppState`], the services every transport shares;
//! * [`domain`]: the operations, as plain async functions;
//! * [`mcp`]: the MCP handler and its tool modules;
//! * [`http`]: the axum application (`/mcp`, `/healthz`, `/readyz`, `/metrics`, `/v1/*`);
//! * [`server`]: binding, serving and graceful shutdown;
//! * [`cli`]: the `aeterna` command.

pub mod auth;
pub mod cli;
pub mod config;
pub mod domain;
pub mod embedder;
pub mod http;
pub mod mcp;
pub mod metrics;
pub mod server;
pub mod state;
pub mod telemetry;
