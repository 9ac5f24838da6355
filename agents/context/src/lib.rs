//! The Context Architect: hierarchical context for AI coding agents, assembled under a token
//! budget from Aeterna's layered memory.
//!
//! * [`fit`] turns scored memories and layer summaries into Markdown that fits a token budget,
//!   counted with a real BPE ([`tokens`]).
//! * [`summarize`] writes each layer's summaries at three depths ([`Depth`]); the default is
//!   deterministic and extractive, and an LLM provider slots in behind [`Summarizer`].
//! * [`cache`] keeps assembled contexts until their TTL ends or a scope they read is written;
//!   with several instances, [`shared_cache`] keeps them in Redis instead, invalidated across
//!   instances by per-tenant versions that `publish` bumps after every memory write.
//! * [`ContextArchitect`] is the service: `assemble`, `summary`, `refresh`, over a
//!   [`aeterna_memory::MemoryService`], with summaries in SQL ([`store`]) and [`metrics`].
//!
//! Nothing here knows about MCP or HTTP: the server's tools parse arguments and call in.

mod architect;
mod assemble;
pub mod cache;
pub mod config;
pub mod dedup;
pub mod error;
pub mod fit;
pub mod metrics;
pub mod model;
mod publish;
mod refresh;
pub mod render;
pub mod shared_cache;
pub mod store;
pub mod summarize;
pub mod text;
pub mod tokens;
mod triggers;

pub use architect::ContextArchitect;
pub use assemble::AssembleRequest;
pub use refresh::{RefreshOutcome, source_hash};

pub use config::{CacheConfig, ContextConfig, SummaryConfig, TriggerConfig};
pub use error::{ContextError, Result};
pub use model::{AssembledContext, Depth, LayerSummary, Source, SourceDepth};
pub use shared_cache::{CacheHealth, SharedCacheConfig, SharedResultCache};
pub use summarize::{Drafted, ExtractiveSummarizer, Summarizer, SummaryGenerator};
pub use tokens::Tokenizer;
