//! Host bindings generated from `wit/extension.wit` (the single source of truth).
//!
//! Imports are async (the state store may be remote) and trappable (a host failure, such as an
//! unreachable state store, aborts the callback instead of lying to the guest). Exports are async
//! so that wasm runs on a fiber and the epoch deadline can yield to the executor.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "extension",
    imports: { default: async | trappable },
    exports: { default: async },
});

pub use self::aeterna::extension::host as host_api;
pub use self::aeterna::extension::state as state_api;
pub use self::aeterna::extension::types as wit_types;
