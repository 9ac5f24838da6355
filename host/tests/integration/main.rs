//! The host's integration tests, one binary (one link; `common` and the dependencies' generic
//! code compiled once). `bounded_memory.rs` and `tracing.rs` stay binaries of their own: one
//! counts the whole process's allocations, the other installs a subscriber.

#[path = "../common/mod.rs"]
mod common;

mod any_language;
mod chains;
mod containment;
mod hostile;
mod loading;
mod redis_state;
mod samples;
mod state_store;
