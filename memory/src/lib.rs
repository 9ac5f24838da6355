//! Aeterna's layered memory.
//!
//! Memories live in layers (agent, user, session, project, team, org, company), each scoped by
//! an id taken from the caller's [`Identity`]. [`MemoryService`] is the entry point; it is
//! transport-agnostic and is used by the MCP server, the REST API and the agents.
//!
//! * [`storage`]: durable records behind [`storage::RecordStore`]; the embedded profile is
//!   SQLite ([`storage::sqlite::SqliteDatabase`], shared with the agents' tables); the
//!   scale-out profile is PostgreSQL ([`storage::postgres::PgDatabase`]), shared by every
//!   instance, whose writes each instance [`follow`]s.
//! * [`vector`]: similarity search behind [`vector::VectorStore`]; the embedded profile is an
//!   exact in-memory scan rebuilt from the durable vectors at start.
//! * [`embed`]: text embedders behind [`embed::Embedder`].
//! * [`retrieval`]: how lexical and vector evidence become ranked hits with 0..1 scores.
//! * [`learned`]: the outlet through which the agents announce what they learned to reviewed
//!   knowledge.
//! * [`migrate`]: copying an embedded deployment into PostgreSQL (`aeterna migrate`).

pub mod bundle;
mod config;
pub mod embed;
pub mod error;
pub mod follow;
pub mod grants;
mod intern;
pub mod learned;
pub mod migrate;
pub mod model;
mod reembed;
pub mod retrieval;
pub mod service;
pub mod storage;
mod text;
mod validate;

/// Secret redaction exactly as the service applies it before storage, for callers that hold
/// text durably before handing it to the service (the REST ingest queue).
pub mod redaction {
    pub use crate::validate::{redacted as text, redacted_metadata as metadata};
}
pub mod vector;
mod writes;

pub use error::{MemoryError, Result};
pub use grants::{Claim, Grants};
pub use model::*;
pub use service::{
    EmbedderChange, Expired, ForgetOutcome, ForgetRequest, MemoryConfig, MemoryService,
    RetentionConfig, RetrievalConfig, StoreHealth, StoreStats, Stores,
};
