//! What a chain run reports: one row per extension with its outcome, duration and fuel.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::types::Hook;

/// The result of a chain together with its report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunOutput<T> {
    pub output: T,
    pub report: RunReport,
}

/// One row per extension callback (or skip) of a run, in execution order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct RunReport {
    pub rows: Vec<ReportRow>,
}

impl RunReport {
    /// Rows whose outcome is a fault.
    pub fn faults(&self) -> impl Iterator<Item = (&ReportRow, &Fault)> {
        self.rows.iter().filter_map(|row| match &row.outcome {
            Outcome::Fault(fault) => Some((row, fault)),
            _ => None,
        })
    }

    /// The row of `extension`, if it ran (or was skipped) in this run.
    pub fn row(&self, extension: &str) -> Option<&ReportRow> {
        self.rows.iter().find(|row| row.extension == extension)
    }
}

/// What happened to one extension in a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportRow {
    pub extension: String,
    pub hook: Hook,
    /// For the tag hook, the tag name of the block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    pub outcome: Outcome,
    #[serde(rename = "duration_us", serialize_with = "micros")]
    pub duration: Duration,
    /// Fuel consumed by instantiation and the callback.
    pub fuel_used: u64,
    /// Bytes of stdout/stderr/log output dropped beyond the per-callback caps.
    pub output_dropped_bytes: u64,
    /// Log records (output lines, `host.log` calls) dropped beyond the per-callback record cap.
    pub output_dropped_records: u64,
}

fn micros<S: serde::Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(duration.as_micros()).unwrap_or(u64::MAX))
}

/// How a callback ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Outcome {
    /// The callback returned `ok`; its output fed the next extension and its state was committed.
    Ok,
    /// The callback faulted; its output and state writes were discarded.
    Fault(Fault),
    /// The extension is in quarantine and was not called.
    Quarantined {
        /// Milliseconds until it is called again.
        remaining_ms: u64,
    },
}

impl Outcome {
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Ok)
    }

    pub fn fault(&self) -> Option<&Fault> {
        match self {
            Outcome::Fault(fault) => Some(fault),
            _ => None,
        }
    }
}

/// A fault of one callback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub kind: FaultKind,
    /// For `ext-error`, the guest's code; otherwise absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(code) => write!(f, "{} ({code}): {}", self.kind, self.message),
            None => write!(f, "{}: {}", self.kind, self.message),
        }
    }
}

/// Why a callback faulted. Each kind is distinct so operators can tell a hostile extension from a
/// merely slow one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// The guest trapped (a panic, `unreachable`, an out-of-bounds access…).
    Trap,
    /// The guest recursed past the wasm stack limit.
    StackOverflow,
    /// The callback ran past its wall-clock deadline.
    Timeout,
    /// The callback used up its fuel.
    FuelExhausted,
    /// The guest trapped after linear memory growth was refused at the memory cap.
    MemoryLimit,
    /// The guest returned `ext-error`.
    ExtError,
    /// The guest called `exit` (`wasi:cli/exit`, `std::process::exit`, `sys.exit`…).
    Exit,
    /// The guest handed the host a value it cannot accept: a result or an import argument that
    /// breaks the canonical ABI (a string that is not UTF-8, a pointer or length outside its
    /// memory, a bad `realloc`), or a request over a host bound (such as too many random bytes).
    InvalidOutput,
    /// The callback's output would have taken the run past its output bound
    /// ([`HostConfig::max_run_output_bytes`](crate::HostConfig::max_run_output_bytes)); it was
    /// refused before the host copied it.
    OutputLimit,
    /// The host could not run the callback (no free instance slot, state store failure…): not
    /// the extension's fault.
    Host,
    /// A fail-closed extension is in quarantine, so its chain cannot run (never a callback's own
    /// fault; only seen in [`ChainStopped`](crate::ChainStopped)).
    Quarantined,
}

impl FaultKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Trap => "trap",
            FaultKind::StackOverflow => "stack-overflow",
            FaultKind::Timeout => "timeout",
            FaultKind::FuelExhausted => "fuel-exhausted",
            FaultKind::MemoryLimit => "memory-limit",
            FaultKind::ExtError => "ext-error",
            FaultKind::Exit => "exit",
            FaultKind::InvalidOutput => "invalid-output",
            FaultKind::OutputLimit => "output-limit",
            FaultKind::Host => "host",
            FaultKind::Quarantined => "quarantined",
        }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
