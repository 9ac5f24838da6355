//! The host imports, routed by target: the real component imports on `wasm32`, the thread's
//! [`TestHost`](crate::testing::TestHost) elsewhere.
//!
//! The generated import shims compile on native targets but are unreachable there, so every
//! import goes through this module and nothing else calls the generated functions.

use crate::{LogLevel, QuotaUsage, SessionInfo, ToolDefinition};

/// Why the host refused a `set` (the WIT's `state-error`).
pub(crate) enum SetRefused {
    QuotaExceeded(QuotaUsage),
    InvalidKey(String),
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use super::*;
    use crate::bindings::aeterna::extension::{host, state};

    pub fn state_get(key: &str) -> Option<Vec<u8>> {
        state::get(key)
    }
    pub fn state_set(key: &str, value: &[u8]) -> Result<(), SetRefused> {
        state::set(key, value).map_err(|error| match error {
            state::StateError::QuotaExceeded(usage) => SetRefused::QuotaExceeded(usage),
            state::StateError::InvalidKey(reason) => SetRefused::InvalidKey(reason),
        })
    }
    pub fn state_delete(key: &str) -> bool {
        state::delete(key)
    }
    pub fn state_keys() -> Vec<String> {
        state::keys()
    }
    pub fn state_clear() {
        state::clear()
    }
    pub fn state_usage() -> QuotaUsage {
        state::usage()
    }
    pub fn session() -> SessionInfo {
        host::session()
    }
    pub fn tools() -> Vec<ToolDefinition> {
        host::tools()
    }
    pub fn config() -> Vec<(String, String)> {
        // Each callback runs in a fresh instance, so caching for the instance's life is exact.
        static CONFIG: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
        CONFIG.get_or_init(host::config).clone()
    }
    pub fn log(level: LogLevel, message: &str) {
        host::log(level, message)
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use super::*;
    use crate::testing::with_active;

    pub fn state_get(key: &str) -> Option<Vec<u8>> {
        with_active("state::get", |host| host.state().get(key))
    }
    pub fn state_set(key: &str, value: &[u8]) -> Result<(), SetRefused> {
        with_active("state::set", |host| host.state().set(key, value))
    }
    pub fn state_delete(key: &str) -> bool {
        with_active("state::delete", |host| host.state().delete(key))
    }
    pub fn state_keys() -> Vec<String> {
        with_active("state::keys", |host| host.state().keys())
    }
    pub fn state_clear() {
        with_active("state::clear", |host| host.state().clear())
    }
    pub fn state_usage() -> QuotaUsage {
        with_active("state::usage", |host| host.state().usage())
    }
    pub fn session() -> SessionInfo {
        with_active("host::session", |host| host.session.clone())
    }
    pub fn tools() -> Vec<ToolDefinition> {
        with_active("host::tools", |host| host.tools.clone())
    }
    pub fn config() -> Vec<(String, String)> {
        with_active("config", |host| host.config.clone())
    }
    pub fn log(level: LogLevel, message: &str) {
        with_active("log", |host| host.log(level, message))
    }
}

pub(crate) use imp::*;
