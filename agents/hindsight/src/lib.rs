//! Hindsight Learning: turns raw error text (compiler diagnostics, test failures, stack traces,
//! shell errors) into normalised [`ErrorSignature`]s and matches them to resolutions that
//! worked before.
//!
//! * [`signature`]: extraction, splitting and normalisation (pure, no I/O);
//! * [`score`]: how similar two signatures are, in 0..1, and what counts as a match;
//! * [`rank`]: ordering resolutions by success with a confidence adjustment;
//! * [`HindsightService`]: capture, resolve, query, feedback, promotion and approval over the
//!   memory service's SQLite database, with an in-memory candidate index per tenant;
//! * [`notes`]: resolutions rendered as Markdown memories of kind `hindsight`.

pub mod config;
pub mod error;
mod index;
pub mod model;
pub mod notes;
mod promote;
pub mod rank;
pub mod score;
mod service;
pub mod signature;
mod store;

pub use config::{HindsightConfig, PromotionConfig};
pub use error::{HindsightError, Result};
pub use model::*;
pub use promote::MAX_PROMOTIONS_LISTED;
pub use service::HindsightService;
pub use signature::{ErrorSignature, Language, extract};
