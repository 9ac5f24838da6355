//! The host's error types. Every error names what it is about: the file, the extension, the hook.

use std::path::PathBuf;

use crate::report::{Fault, RunReport};
use crate::types::Hook;

/// Errors of the public [`ExtensionHost`](crate::ExtensionHost) API.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("invalid host configuration: {0}")]
    Config(String),
    #[error("cannot start the wasm engine: {0}")]
    Engine(String),
    #[error("cannot read the extensions directory {}: {source}", path.display())]
    ReadDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// One extension file was rejected.
    #[error("{}: {reason}", path.display())]
    Load { path: PathBuf, reason: LoadError },
    #[error("no extension with id `{0}` is loaded")]
    UnknownExtension(String),
    /// A fail-closed extension faulted, so the chain stopped.
    #[error("{0}")]
    ChainStopped(Box<ChainStopped>),
}

impl HostError {
    pub(crate) fn load(path: impl Into<PathBuf>, reason: LoadError) -> Self {
        HostError::Load {
            path: path.into(),
            reason,
        }
    }
}

/// Why an extension file was rejected at load time.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read the file: {0}")]
    Io(#[from] std::io::Error),
    #[error(
        "the component is {size} bytes, over the host's limit of {max} bytes \
         (`max_component_bytes`); build it smaller or ask the operator to raise the limit"
    )]
    TooLarge { size: u64, max: u64 },
    #[error(
        "compiling the component took longer than the host's budget of {budget_ms} ms \
         (`compile_timeout_ms`): ask the operator to raise the budget, or load it again later \
         (the compilation goes on in the background and, with a compile cache, a later load of \
         the same bytes is quick)"
    )]
    CompileTimeout { budget_ms: u64 },
    #[error("not a WebAssembly binary (it does not start with the `\\0asm` magic bytes)")]
    NotWasm,
    #[error(
        "this is a core WebAssembly module, not a component: build the extension for \
         `wasm32-wasip2` (or wrap it with `wasm-tools component new`)"
    )]
    CoreModule,
    #[error("unsupported WebAssembly binary version/layer {0:#x}: expected a component")]
    UnknownEncoding(u32),
    #[error("invalid component: {0}")]
    Compile(String),
    #[error(
        "built for contract `{found}`, but this host implements `aeterna:extension@{expected}`: \
         rebuild the extension against the host's `wit/` directory"
    )]
    ContractVersion {
        found: String,
        expected: &'static str,
    },
    #[error(
        "not an Aeterna extension: it does not export {missing} from world \
         `aeterna:extension/extension@{expected}` (its exports: {exports})"
    )]
    NotAnExtension {
        missing: String,
        exports: String,
        expected: &'static str,
    },
    #[error("cannot link the component (it needs an import this host does not provide): {0}")]
    Link(String),
    #[error("manifest {}: {message}", path.display())]
    Manifest { path: PathBuf, message: String },
    #[error("register() faulted: {0}")]
    Register(Fault),
    #[error("invalid registration: {0}")]
    Registration(String),
    #[error("duplicate extension id `{id}`: already loaded from {}", other.display())]
    DuplicateId { id: String, other: PathBuf },
}

/// A fail-closed extension faulted and stopped the chain.
#[derive(Debug)]
pub struct ChainStopped {
    pub extension: String,
    pub hook: Hook,
    pub fault: Fault,
    /// The rows of the run up to and including the fault.
    pub report: RunReport,
}

impl std::fmt::Display for ChainStopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "extension `{}` faulted on hook `{}` and is fail-closed, so the chain stopped: {}",
            self.extension, self.hook, self.fault
        )
    }
}
