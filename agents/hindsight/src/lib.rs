//! Hindsight Learning: turns raw error text (compiler diagnostics, test failures, stack traces,
//! shell errors) into normalised [`ErrorSignature`]s and matches them to resolutions that
//! worked before.
//!
//! * [`signature`]: extraction, splitting and normalisation (pure, no I/O);
//! * [`score`]: how similar two signatures are, in 0..1, and what counts as a match;
//! * [`rank`]: ordering resolutions by success with a confidence adjustment.

pub mod rank;
pub mod score;
pub mod signature;

pub use signature::{ErrorSignature, Language, extract};
