//! `aeterna-host`: runs Aeterna extensions — WebAssembly components built for `wasm32-wasip2`
//! against `wit/extension.wit` — sandboxed, limited and chained by priority.
//!
//! The host is a library with no knowledge of the server; the server and the client bridge both
//! embed it. The entry point is [`ExtensionHost`]:
//!
//! ```no_run
//! # async fn demo() -> Result<(), aeterna_host::HostError> {
//! use aeterna_host::{CallContext, ExtensionHost, HostConfig};
//!
//! let host = ExtensionHost::new(HostConfig::default())?;
//! let report = host.load_dir("extensions").await?;
//! for (file, error) in &report.rejected {
//!     eprintln!("{}: {error}", file.display());
//! }
//! let ctx = CallContext::new("tenant", "session");
//! let run = host.run_plain_text(&ctx, "tool output".into()).await?;
//! println!("{} ({} callbacks)", run.output, run.report.rows.len());
//! # Ok(()) }
//! ```
//!
//! Loading and running need a Tokio runtime (compilation runs on its blocking pool; timeouts use
//! its timer); creating the host does not.
//!
//! # Guarantees
//!
//! * Each callback runs in a fresh wasmtime `Store` from a pre-linked `InstancePre`, with fuel, an
//!   epoch deadline, a memory cap and a locked-down WASI (see [`HostConfig`] and `wit/`).
//! * A fault (trap, stack overflow, timeout, fuel, memory, `ext-error`) is isolated to its
//!   extension, reported with a distinct [`FaultKind`], and discards the callback's state writes.
//! * Loading and reloading swap registry snapshots; runs in flight keep the snapshot they began
//!   with.
//!
//! # Modules
//!
//! `engine` (wasmtime config, epoch ticker) · `cache` (precompiled components on disk) ·
//! `manifest` · `loader` (validation, linking, `register()`) · `registry` (snapshots) ·
//! `executor` (chains) · `callback` (one sandboxed call) · `sandbox` (WASI, output capture,
//! memory limiter) · `imports` (guest imports) · `health` (quarantine) · [`tags`] (tag parser) ·
//! [`state`] (state stores and the per-callback overlay).

mod bindings;
mod cache;
mod callback;
mod config;
mod engine;
mod error;
mod executor;
mod health;
mod host;
mod imports;
mod loader;
mod manifest;
mod registry;
mod report;
mod sandbox;
pub mod state;
pub mod tags;
mod types;

pub use cache::CacheStats;
pub use config::{HostConfig, Limits, PoolingConfig, QuarantineConfig, StateConfig};
pub use error::{ChainStopped, HostError, LoadError};
pub use host::{ExtensionHost, ExtensionStatus, LoadReport, PromptAddition};
pub use loader::{CONTRACT_VERSION, validate_id as validate_extension_id};
pub use manifest::{FailurePolicy, Manifest};
pub use registry::ExtensionInfo;
pub use report::{Fault, FaultKind, Outcome, ReportRow, RunOutput, RunReport};
pub use state::{MemoryStateStore, QuotaUsage, StateScope, StateStore};
pub use types::{Attribute, CallContext, Hook, Message, Registration, ToolConfig, ToolDefinition};
