//! Typed host configuration. Every field has a serde default, so an empty TOML table is a valid
//! configuration and an operator only writes what they change.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::HostError;
use crate::tags::TagLimits;

/// Everything the operator controls about the extension host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostConfig {
    /// Per-callback limits. An extension's manifest may lower them, never raise them.
    pub limits: Limits,
    /// The operator's allowances for particular extensions, by id: each field set here replaces
    /// the one in `limits` for that extension (higher or lower), e.g. more fuel for an
    /// extension written in an interpreted language. Its manifest may still only lower them.
    pub extension_limits: BTreeMap<String, LimitOverrides>,
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
    /// Log records (lines of stdout or stderr, `host.log` calls — empty ones too) forwarded per
    /// callback. What goes over either cap is dropped and summed up in one line.
    pub output_cap_records: usize,
    /// The most output, in bytes, that extensions may hand back within one run: a chain holds one
    /// result at a time, the tag stage every block's replacement until they are spliced in. A
    /// callback whose result would cross it faults (`output-limit`) before the host copies it.
    pub max_run_output_bytes: usize,
    /// How often the epoch ticker thread advances the engine's epoch. The callback timeout is
    /// enforced with this granularity.
    pub epoch_tick_ms: u64,
    /// Maximum wasm stack per callback; deeper recursion is a `stack-overflow` fault.
    pub max_wasm_stack_bytes: usize,
    /// Tag blocks handed to `on-tag` per run; later blocks are left as they are (and a warning
    /// is logged), so a pathological LLM output cannot fan out into unbounded callbacks.
    pub max_tag_blocks: usize,
    /// Longest tag header (`<name …>`, in bytes); a longer one is not a tag and stays text.
    pub max_tag_header_bytes: usize,
    /// Most attributes in a tag header; a header with more is not a tag and stays text.
    pub max_tag_attributes: usize,
    /// Largest component file accepted, in bytes (compilation time grows with size).
    pub max_component_bytes: u64,
    /// Wall-clock budget for compiling one component (cache misses only). Compilation runs on a
    /// thread of its own, off every callback's path; past the budget the load is rejected.
    pub compile_timeout_ms: u64,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            limits: Limits::default(),
            pooling: PoolingConfig::default(),
            cache_dir: None,
            quarantine: QuarantineConfig::default(),
            state: StateConfig::default(),
            extension_limits: BTreeMap::new(),
            output_cap_bytes: 64 * 1024,
            output_cap_records: 1024,
            max_run_output_bytes: 8 * 1024 * 1024,
            epoch_tick_ms: 10,
            max_wasm_stack_bytes: 512 * 1024,
            max_tag_blocks: 256,
            max_tag_header_bytes: 4096,
            max_tag_attributes: 64,
            max_component_bytes: 64 * 1024 * 1024,
            compile_timeout_ms: 120_000,
        }
    }
}

impl HostConfig {
    /// Rejects configurations that cannot work, naming the field.
    pub fn validate(&self) -> Result<(), HostError> {
        let invalid = |field: &str, why: &str| HostError::Config(format!("`{field}` {why}"));
        self.limits
            .validate()
            .map_err(|(field, why)| invalid(&format!("limits.{field}"), why))?;
        for (id, overrides) in &self.extension_limits {
            overrides
                .apply(&self.limits)
                .validate()
                .map_err(|(field, why)| invalid(&format!("extension_limits.{id}.{field}"), why))?;
        }
        for (field, value) in [
            ("output_cap_records", self.output_cap_records),
            ("max_run_output_bytes", self.max_run_output_bytes),
            ("max_tag_header_bytes", self.max_tag_header_bytes),
        ] {
            if value == 0 {
                return Err(invalid(field, "must be at least 1"));
            }
        }
        if self.max_component_bytes == 0 {
            return Err(invalid("max_component_bytes", "must be at least 1"));
        }
        if self.compile_timeout_ms == 0 {
            return Err(invalid("compile_timeout_ms", "must be at least 1"));
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

    pub fn compile_timeout(&self) -> Duration {
        Duration::from_millis(self.compile_timeout_ms)
    }

    /// The operator's limits for extension `id`: `limits` with its `extension_limits` entry
    /// applied.
    pub fn limits_for(&self, id: &str) -> Limits {
        match self.extension_limits.get(id) {
            Some(overrides) => overrides.apply(&self.limits),
            None => self.limits,
        }
    }

    /// The largest linear memory any extension may have, in bytes (sizes the pooling allocator).
    pub fn max_memory_bytes(&self) -> usize {
        self.extension_limits
            .values()
            .map(|overrides| overrides.apply(&self.limits).memory_bytes())
            .fold(self.limits.memory_bytes(), usize::max)
    }

    /// The tag parser's bounds.
    pub fn tag_limits(&self) -> TagLimits {
        TagLimits {
            max_blocks: self.max_tag_blocks,
            max_header_bytes: self.max_tag_header_bytes,
            max_attributes: self.max_tag_attributes,
        }
    }
}

/// Limits on one callback. The defaults are the ones documented in the WIT contract.
///
/// # Why fuel, and how much
///
/// The wall-clock timeout already bounds a callback's CPU time, but how much work fits in it
/// depends on the machine and its load: the same callback passes on an idle host and fails on a
/// busy one. Fuel (about one unit per wasm instruction) is the deterministic bound: a callback
/// that fits its fuel fits it everywhere. So fuel is sized to end a runaway callback *before*
/// the timeout on an ordinary machine, while leaving honest work of any language well inside it:
///
/// * `fuel` (10 G by default, roughly 2 s of wasm on a current x86 core) is what every callback
///   gets. Interpreted guests need it: a JavaScript runtime spends ~2,600 instructions per
///   character it hands back, so 10 G lets a JavaScript extension produce a few MiB of text,
///   where the old 1 G stopped it at ~370 KiB.
/// * `fuel_per_input_byte` (4,000 by default) adds fuel in proportion to the input, because a
///   transformation's work grows with what it transforms: no input is too long for its fuel
///   (the timeout and the run's output bound still apply).
///
/// An operator who wants a tighter deterministic bound lowers them; `extension_limits` grants
/// one extension more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Wall-clock time per callback.
    pub timeout_ms: u64,
    /// Fuel per callback, whatever its input.
    pub fuel: u64,
    /// Further fuel per byte of the callback's input (the text, the messages' roles and
    /// contents, or the tag's name, attributes and content).
    pub fuel_per_input_byte: u64,
    /// Linear memory per instance.
    pub memory_mb: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout_ms: 5_000,
            fuel: 10_000_000_000,
            fuel_per_input_byte: 4_000,
            memory_mb: 64,
        }
    }
}

impl Limits {
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// The fuel of a callback whose input is `input_bytes` long.
    pub fn fuel_for_input(&self, input_bytes: usize) -> u64 {
        let input_bytes = u64::try_from(input_bytes).unwrap_or(u64::MAX);
        self.fuel
            .saturating_add(self.fuel_per_input_byte.saturating_mul(input_bytes))
    }

    /// Rejects limits that cannot work, as `(field, why)`.
    fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        if self.timeout_ms == 0 {
            return Err(("timeout_ms", "must be at least 1"));
        }
        if self.fuel == 0 {
            return Err(("fuel", "must be at least 1"));
        }
        if self.memory_mb == 0 || self.memory_mb > 4096 {
            return Err(("memory_mb", "must be between 1 and 4096"));
        }
        Ok(())
    }

    pub fn memory_bytes(&self) -> usize {
        usize::try_from(self.memory_mb.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
    }
}

/// The operator's allowance for one extension: each field set replaces the one in
/// [`HostConfig::limits`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitOverrides {
    pub timeout_ms: Option<u64>,
    pub fuel: Option<u64>,
    pub fuel_per_input_byte: Option<u64>,
    pub memory_mb: Option<u64>,
}

impl LimitOverrides {
    pub fn apply(&self, limits: &Limits) -> Limits {
        Limits {
            timeout_ms: self.timeout_ms.unwrap_or(limits.timeout_ms),
            fuel: self.fuel.unwrap_or(limits.fuel),
            fuel_per_input_byte: self
                .fuel_per_input_byte
                .unwrap_or(limits.fuel_per_input_byte),
            memory_mb: self.memory_mb.unwrap_or(limits.memory_mb),
        }
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
