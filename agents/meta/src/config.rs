//! Meta-Agent settings (`[meta]` in the server configuration). The defaults are the design's:
//! BUILD 120 s, TEST 60 s, at most 3 iterations.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Hard ceiling on `max_iterations`, whatever the operator configures: a loop's record keeps
/// one summary per iteration.
pub const ITERATIONS_CEILING: u32 = 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetaConfig {
    /// Iterations of a loop that does not say (3).
    pub default_iterations: u32,
    /// Most iterations a loop may ask for (10; at most 20).
    pub max_iterations: u32,
    /// BUILD timeout of a loop that does not say, in ms (120 000).
    pub build_timeout_ms: u64,
    /// TEST timeout of a loop that does not say, in ms (60 000).
    pub test_timeout_ms: u64,
    /// Longest phase timeout a loop may ask for, in ms (1 800 000).
    pub max_phase_timeout_ms: u64,
    /// Cumulative timeout of a loop that does not say, in ms (900 000).
    pub loop_timeout_ms: u64,
    /// Longest cumulative timeout a loop may ask for, in ms (7 200 000).
    pub max_loop_timeout_ms: u64,
    /// Loops a tenant may have queued or running at once (4); beyond it a start is refused.
    pub max_active_loops_per_tenant: usize,
    /// Output kept per phase, in bytes, head and tail (64 KiB).
    pub max_output_bytes: usize,
    /// Longest task description, in bytes (4 KiB).
    pub max_task_bytes: usize,
    /// Longest `wait_ms` of `meta_loop_status`, in ms (30 000).
    pub max_wait_ms: u64,
    /// Token budget of the context assembled for a step's answer (1 500).
    pub context_token_budget: usize,
    /// Notes and Hindsight matches returned with a step, at most (3 and 5).
    pub max_notes: usize,
    pub max_matches: usize,
    /// Most loops `meta_loop_list` returns (100).
    pub max_listed: usize,
    /// Directories command-driven loops may run in (a loop's `working_dir` must be inside
    /// one). Empty: command-driven loops are refused.
    pub allowed_roots: Vec<PathBuf>,
    /// The operator's allow-list of commands, by name: `[meta.commands.py-test] argv =
    /// ["python3", "-m", "unittest"]`. Tenants name a command; they never send a command line.
    pub commands: BTreeMap<String, CommandConfig>,
}

/// One allowed command: the program and its arguments, run without a shell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandConfig {
    pub argv: Vec<String>,
}

impl Default for MetaConfig {
    fn default() -> Self {
        MetaConfig {
            default_iterations: 3,
            max_iterations: 10,
            build_timeout_ms: 120_000,
            test_timeout_ms: 60_000,
            max_phase_timeout_ms: 1_800_000,
            loop_timeout_ms: 900_000,
            max_loop_timeout_ms: 7_200_000,
            max_active_loops_per_tenant: 4,
            max_output_bytes: 64 * 1024,
            max_task_bytes: 4 * 1024,
            max_wait_ms: 30_000,
            context_token_budget: 1_500,
            max_notes: 3,
            max_matches: 5,
            max_listed: 100,
            allowed_roots: Vec::new(),
            commands: BTreeMap::new(),
        }
    }
}

impl MetaConfig {
    /// Checks the settings; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_iterations == 0 || self.max_iterations > ITERATIONS_CEILING {
            return Err(format!(
                "meta.max_iterations is {}; it must be 1..={ITERATIONS_CEILING}",
                self.max_iterations
            ));
        }
        if self.default_iterations == 0 || self.default_iterations > self.max_iterations {
            return Err(format!(
                "meta.default_iterations is {}; it must be 1..=meta.max_iterations ({})",
                self.default_iterations, self.max_iterations
            ));
        }
        for (key, value, max) in [
            (
                "meta.build_timeout_ms",
                self.build_timeout_ms,
                self.max_phase_timeout_ms,
            ),
            (
                "meta.test_timeout_ms",
                self.test_timeout_ms,
                self.max_phase_timeout_ms,
            ),
            (
                "meta.loop_timeout_ms",
                self.loop_timeout_ms,
                self.max_loop_timeout_ms,
            ),
        ] {
            if value == 0 || value > max {
                return Err(format!("{key} is {value}; it must be 1..={max}"));
            }
        }
        for (key, value) in [
            (
                "meta.max_active_loops_per_tenant",
                self.max_active_loops_per_tenant,
            ),
            ("meta.max_output_bytes", self.max_output_bytes),
            ("meta.max_task_bytes", self.max_task_bytes),
            ("meta.max_listed", self.max_listed),
        ] {
            if value == 0 {
                return Err(format!("{key} must be at least 1"));
            }
        }
        for (name, command) in &self.commands {
            if command.argv.is_empty() || command.argv[0].trim().is_empty() {
                return Err(format!(
                    "meta.commands.{name}.argv is empty; give the program and its arguments"
                ));
            }
        }
        for root in &self.allowed_roots {
            if !root.is_absolute() {
                return Err(format!(
                    "meta.allowed_roots: `{}` is not an absolute path",
                    root.display()
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_errors_name_the_key() {
        assert_eq!(MetaConfig::default().validate(), Ok(()));
        let mut config = MetaConfig::default();
        config
            .commands
            .insert("empty".into(), CommandConfig { argv: Vec::new() });
        assert!(
            config
                .validate()
                .unwrap_err()
                .contains("meta.commands.empty.argv")
        );
        let config = MetaConfig {
            test_timeout_ms: 0,
            ..MetaConfig::default()
        };
        assert!(
            config
                .validate()
                .unwrap_err()
                .contains("meta.test_timeout_ms")
        );
    }
}
