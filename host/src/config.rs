//! Typed host configuration. Every field has a serde default, so an empty TOML table is a valid
//! configuration and an operator only writes what they change.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::HostError;

/// Everything the operator controls about the extension host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// Per-callback limits. An extension's manifest may lower them, never raise them.
    pub limits: Limits,
    /// Sizes of the pooling instance allocator.
    pub pooling: PoolingConfig,
    /// Directory of precompiled components. `None` compiles every component on every load.
    pub cache_dir: Option<PathBuf>,
    /// When a faulting extension is taken out of the chain.
    pub quarantine: QuarantineConfig,
    /// The built-in in-memory state store.
    pub state: StateConfig,
    /// Bytes of guest stdout + stderr + `host.log` forwarded to `tracing` per callback.
    pub output_cap_bytes: usize,
    /// How often the epoch ticker thread advances the engine's epoch. The callback timeout is
    /// enforced with this granularity.
    pub epoch_tick_ms: u64,
    /// Maximum wasm stack per callback; deeper recursion is a `stack-overflow` fault.
    pub max_wasm_stack_bytes: usize,
    /// Tag blocks handed to `on-tag` per run; later blocks are left as they are (and a warning
    /// is logged), so a pathological LLM output cannot fan out into unbounded callbacks.
    pub max_tag_blocks: usize,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            pooling: PoolingConfig::default(),
            cache_dir: None,
            quarantine: QuarantineConfig::default(),
            state: StateConfig::default(),
            output_cap_bytes: 64 * 1024,
            epoch_tick_ms: 10,
            max_wasm_stack_bytes: 512 * 1024,
            max_tag_blocks: 256,
        }
    }
}

impl HostConfig {
    /// Rejects configurations that cannot work, naming the field.
    pub fn validate(&self) -> Result<(), HostError> {
        let invalid = |field: &str, why: &str| HostError::Config(format!("`{field}` {why}"));
        if self.limits.timeout_ms == 0 {
            return Err(invalid("limits.timeout_ms", "must be at least 1"));
        }
        if self.limits.fuel == 0 {
            return Err(invalid("limits.fuel", "must be at least 1"));
        }
        if self.limits.memory_mb == 0 || self.limits.memory_mb > 4096 {
            return Err(invalid("limits.memory_mb", "must be between 1 and 4096"));
        }
        if self.epoch_tick_ms == 0 {
            return Err(invalid("epoch_tick_ms", "must be at least 1"));
        }
        if self.quarantine.threshold == 0 {
            return Err(invalid("quarantine.threshold", "must be at least 1"));
        }
        if self.state.quota_bytes == 0 {
            return Err(invalid("state.quota_bytes", "must be at least 1"));
        }
        if self.state.max_total_bytes < self.state.quota_bytes {
            return Err(invalid(
                "state.max_total_bytes",
                "must be at least `state.quota_bytes`",
            ));
        }
        if self.max_wasm_stack_bytes < 64 * 1024 {
            return Err(invalid("max_wasm_stack_bytes", "must be at least 64 KiB"));
        }
        Ok(())
    }

    pub fn epoch_tick(&self) -> Duration {
        Duration::from_millis(self.epoch_tick_ms)
    }
}

/// Limits on one callback. The defaults are the ones documented in the WIT contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Wall-clock time per callback.
    pub timeout_ms: u64,
    /// Fuel per callback (about one unit per wasm instruction).
    pub fuel: u64,
    /// Linear memory per instance.
    pub memory_mb: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout_ms: 5_000,
            fuel: 1_000_000_000,
            memory_mb: 64,
        }
    }
}

impl Limits {
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    pub fn memory_bytes(&self) -> usize {
        usize::try_from(self.memory_mb.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
    }
}

/// Sizes of wasmtime's pooling allocator. Slots are reserved (virtual memory) up front and reused
/// across callbacks, which is what makes a fresh instance per callback cheap. Each concurrently
/// running callback holds one component instance slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PoolingConfig {
    /// Use the pooling allocator (on-demand allocation otherwise, e.g. where virtual memory is
    /// scarce).
    pub enabled: bool,
    /// Concurrently live component instances (callbacks in flight, across all chains).
    pub total_component_instances: u32,
    /// Concurrently live core instances (a Rust component has a handful each).
    pub total_core_instances: u32,
    pub total_memories: u32,
    pub total_tables: u32,
    /// Fiber stacks for async calls into wasm.
    pub total_stacks: u32,
    pub max_core_instances_per_component: u32,
    pub max_memories_per_component: u32,
    pub max_tables_per_component: u32,
    /// Elements per table.
    pub table_elements: usize,
    /// Slots kept warm (not decommitted) for reuse.
    pub max_unused_warm_slots: u32,
    /// Bytes of each linear memory reset in place (instead of returned to the kernel) when a
    /// slot is reused, so the next callback takes no page faults there. With `pagemap_scan`,
    /// only pages the guest dirtied are reset.
    pub memory_keep_resident_bytes: usize,
    /// The same for tables.
    pub table_keep_resident_bytes: usize,
    /// Find dirty pages with Linux's `PAGEMAP_SCAN` (6.7+; ignored where unsupported).
    pub pagemap_scan: bool,
}

impl Default for PoolingConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            total_component_instances: 256,
            total_core_instances: 2_048,
            total_memories: 512,
            total_tables: 1_024,
            total_stacks: 256,
            max_core_instances_per_component: 32,
            max_memories_per_component: 4,
            max_tables_per_component: 8,
            table_elements: 20_000,
            max_unused_warm_slots: 64,
            memory_keep_resident_bytes: 1024 * 1024,
            table_keep_resident_bytes: 64 * 1024,
            pagemap_scan: true,
        }
    }
}

/// Consecutive faults that take an extension out of the chain, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QuarantineConfig {
    pub threshold: u32,
    pub cooldown_ms: u64,
}

impl Default for QuarantineConfig {
    fn default() -> Self {
        Self {
            threshold: 3,
            cooldown_ms: 60_000,
        }
    }
}

impl QuarantineConfig {
    pub fn cooldown(&self) -> Duration {
        Duration::from_millis(self.cooldown_ms)
    }
}

/// Bounds of extension state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StateConfig {
    /// Key + value bytes per extension per (tenant, session).
    pub quota_bytes: u64,
    /// Total bytes kept by the in-memory store; least-recently-used scopes are dropped beyond it.
    pub max_total_bytes: u64,
}

impl Default for StateConfig {
    fn default() -> Self {
        Self {
            quota_bytes: 1024 * 1024,
            max_total_bytes: 256 * 1024 * 1024,
        }
    }
}
