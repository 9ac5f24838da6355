//! Hindsight Learning: turns raw error text (compiler diagnostics, test failures, stack traces,
//! shell errors) into normalised [`ErrorSignature`]s and matches them to resolutions that
//! worked before — also when the error comes back as a bare message without its code, or as a
//! description in words.
//!
//! * [`signature`]: extraction, splitting and normalisation (pure, no I/O);
//! * [`terms`]: words for matching (stemmed, without stop words);
//! * `understand`: whether a query is tool output, a bare message or a description;
//! * [`score`]: the evidence (type, IDF-weighted message, embedding, context, language, fix
//!   text) and how it combines into a 0..1 score; `search`: candidates from BM25 over
//!   signatures and over fixes, embeddings and type buckets, ordered by rank fusion;
//! * [`rank`]: ordering resolutions by success with a confidence adjustment;
//! * [`HindsightService`]: capture, resolve (lineages with several examples), query
//!   (`matched` and `related`), feedback, promotion and approval over the memory service's
//!   SQLite database, with an in-memory candidate index per tenant;
//! * [`notes`]: resolutions rendered as Markdown memories of kind `hindsight`.

pub mod config;
pub mod error;
mod index;
mod learned;
pub mod model;
pub mod notes;
mod promote;
mod query;
pub mod rank;
mod resolve;
pub mod score;
mod search;
mod service;
pub mod signature;
mod store;
pub mod terms;
mod understand;

pub use config::{HindsightConfig, PromotionConfig};
pub use error::{HindsightError, Result};
pub use model::*;
pub use promote::MAX_PROMOTIONS_LISTED;
pub use resolve::MAX_EXAMPLES;
pub use service::HindsightService;
pub use signature::{ErrorSignature, Language, extract};
