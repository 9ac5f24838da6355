//! Aeterna's Meta-Agent: build → test → improve loops that learn, run as background tasks.
//!
//! [`MetaService`] is the entry point the MCP tools use. A loop is a stored row
//! ([`LoopRecord`], migration `0400_meta_loops`) that moves through iterations of
//! BUILD → TEST → IMPROVE until the tests pass (`succeeded`), iterations run out or the same
//! failure repeats (`escalated`), it is cancelled, or its cumulative timeout passes.
//!
//! * Two drivers, one set of transitions (`loops`): **client-driven** — the agent runs build
//!   and test and reports each outcome with [`MetaService::step`]; **command-driven** — the
//!   server runs the operator's allowed commands ([`runner`]: no shell, own process group,
//!   killed as a group at the phase timeout, output kept head + tail) on a background task.
//! * IMPROVE ([`analysis`]) extracts error signatures with Hindsight's extractor, queries
//!   Hindsight and decides `retry`, `refine` or `escalate` by rules; an [`Analyzer`] (an LLM)
//!   may decide within the limits.
//! * Learning ([`learning`]): every phase is a trajectory event (Note-Taking agent); success is
//!   distilled into a note and the applied resolutions get feedback; an escalation stores the
//!   failure in Hindsight and writes a report for a person.
//! * Failing tests are recognised by the Note-Taking agent's signal readers.

pub mod analysis;
mod answer;
pub mod config;
pub mod error;
pub mod learning;
mod loops;
mod metrics;
pub mod model;
pub mod runner;
mod service;
pub mod store;

pub use analysis::{Analyzer, Decision, Evidence};
pub use answer::{ContextBrief, NextAction, NextStep, NoteHint, StepAnswer};
pub use config::{CommandConfig, MetaConfig};
pub use error::{MetaError, Result};
pub use loops::MAX_FAILING_TESTS;
pub use metrics::MetaMetrics;
pub use model::*;
pub use service::{
    CommandsRequest, LoopList, MetaService, RESTART_REASON, StartRequest, StepRequest,
};
