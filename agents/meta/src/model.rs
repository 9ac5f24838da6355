//! A loop and what it records. These types serialise to the JSON the MCP tools return; they
//! carry no storage or transport concerns.

use aeterna_memory::Timestamp;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Where a loop stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LoopState {
    /// Accepted, not started yet.
    Queued,
    /// A phase runs, or (client-driven) the loop waits for the agent's next report.
    Running,
    /// The tests passed.
    Succeeded,
    /// The loop could not go on (a store failed, the server restarted under a command-driven
    /// loop); `reason` says why.
    Failed,
    /// Iterations ran out, or the same failure repeated: a person is needed
    /// (`escalation_report`).
    Escalated,
    /// Cancelled with `meta_loop_cancel`.
    Cancelled,
    /// The loop's cumulative timeout passed.
    TimedOut,
}

impl LoopState {
    pub const ALL: [LoopState; 7] = [
        LoopState::Queued,
        LoopState::Running,
        LoopState::Succeeded,
        LoopState::Failed,
        LoopState::Escalated,
        LoopState::Cancelled,
        LoopState::TimedOut,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LoopState::Queued => "queued",
            LoopState::Running => "running",
            LoopState::Succeeded => "succeeded",
            LoopState::Failed => "failed",
            LoopState::Escalated => "escalated",
            LoopState::Cancelled => "cancelled",
            LoopState::TimedOut => "timed_out",
        }
    }

    pub fn parse(text: &str) -> Option<LoopState> {
        LoopState::ALL
            .into_iter()
            .find(|state| state.as_str() == text)
    }

    /// True once the loop has ended; a final state never changes again.
    pub fn is_final(self) -> bool {
        !matches!(self, LoopState::Queued | LoopState::Running)
    }
}

/// A phase of an iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Build,
    Test,
    Improve,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Build => "build",
            Phase::Test => "test",
            Phase::Improve => "improve",
        }
    }
}

/// What IMPROVE decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The failure looks transient or flaky: run the iteration again unchanged.
    Retry,
    /// Change the code: apply the known resolution (`matches`), or fix the failure.
    Refine,
    /// A person is needed: see the loop's `escalation_report`.
    Escalate,
    /// The tests passed: the loop is done.
    Exit,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Retry => "retry",
            Action::Refine => "refine",
            Action::Escalate => "escalate",
            Action::Exit => "exit",
        }
    }
}

/// Who runs the phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Driver {
    /// The agent runs build and test and reports each outcome with `meta_loop_step`.
    Client,
    /// The server runs the operator's allowed commands itself.
    Command,
}

/// A loop's limits (each at most the operator's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LoopLimits {
    /// Iterations before the loop escalates.
    pub max_iterations: u32,
    /// BUILD timeout, in ms.
    pub build_timeout_ms: u64,
    /// TEST timeout, in ms.
    pub test_timeout_ms: u64,
    /// Cumulative timeout of the whole loop, in ms.
    pub loop_timeout_ms: u64,
}

/// The commands of a command-driven loop: names from the operator's allow-list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LoopCommands {
    /// The BUILD command's name; no BUILD phase when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// The TEST command's name.
    pub test: String,
    /// Where they run (inside one of the operator's allowed roots).
    pub working_dir: String,
}

/// The last BUILD phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BuildReport {
    pub iteration: u32,
    pub success: bool,
    /// The command's exit code (command-driven, when it exited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// True when the phase timeout killed it.
    pub timed_out: bool,
    /// The output, head and tail kept within `meta.max_output_bytes`, secrets redacted.
    pub output: String,
    /// Bytes of output left out between head and tail.
    pub output_omitted_bytes: u64,
    pub duration_ms: u64,
    /// What the agent said about the build (client-driven).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// LLM tokens the agent spent on this iteration (client-driven, as reported).
    pub tokens_used: u64,
}

/// How the last TEST phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Passed,
    Failed,
    /// Killed at the TEST timeout.
    TimedOut,
}

/// The last TEST phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestReport {
    pub iteration: u32,
    pub status: TestStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The output, head and tail kept within `meta.max_output_bytes`, secrets redacted.
    pub output: String,
    pub output_omitted_bytes: u64,
    pub duration_ms: u64,
    /// Tests the output reports as failing (cargo, pytest, unittest, go test, jest/vitest,
    /// JUnit), plus those the agent named.
    pub failing_tests: Vec<String>,
}

/// A fix Hindsight knows for the failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KnownFix {
    /// The resolution's id (`hindsight_feedback`).
    pub resolution_id: Uuid,
    pub description: String,
    /// Wilson lower bound of its success rate, 0..1.
    pub confidence: f64,
    pub success_count: u64,
    pub application_count: u64,
}

/// A stored error that answers the failure, with its fixes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HindsightHit {
    pub signature_id: Uuid,
    pub error_type: String,
    pub message_pattern: String,
    /// 0..1; `matched` hits scored at least Hindsight's calibrated threshold.
    pub score: f32,
    /// True when safe to apply (the `matched` tier), false for a related candidate.
    pub matched: bool,
    pub fixes: Vec<KnownFix>,
}

/// The last IMPROVE decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImproveReport {
    pub iteration: u32,
    pub action: Action,
    /// Why, in a sentence.
    pub reason: String,
    /// Who decided: `rules`, or the analyzer that did.
    pub decided_by: String,
    /// The Hindsight matches the decision used, best first.
    pub matches: Vec<HindsightHit>,
    /// Resolutions passed on to apply (`refine`), marked as applied by this loop.
    pub applied_resolutions: Vec<Uuid>,
    /// The failure's error signatures (`type: message pattern`).
    pub signatures: Vec<String>,
}

/// One iteration, in brief.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IterationSummary {
    pub iteration: u32,
    /// Whether BUILD succeeded; absent when there was no BUILD phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_success: Option<bool>,
    /// How TEST ended; absent when it did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_status: Option<TestStatus>,
    pub failing_tests: Vec<String>,
    /// Identifies the failure: equal fingerprints mean the same failure, unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_fingerprint: Option<String>,
    /// The most telling error line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_line: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
}

/// A loop as stored and shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoopRecord {
    pub loop_id: Uuid,
    pub task: String,
    pub driver: Driver,
    pub state: LoopState,
    /// The phase running (command-driven) or expected next (client-driven, where `build`
    /// means an iteration's start: report `build`, or `test` when there is nothing to build).
    /// Absent once the loop has ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// The current iteration, from 1.
    pub iteration: u32,
    pub limits: LoopLimits,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<LoopCommands>,
    pub iterations: Vec<IterationSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_build: Option<BuildReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_test: Option<TestReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_improve: Option<ImproveReport>,
    /// Every resolution this loop passed on to apply, for feedback when it ends.
    pub applied_resolutions: Vec<Uuid>,
    /// Signatures stored in Hindsight when the loop escalated.
    pub stored_signatures: Vec<Uuid>,
    /// The note distilled from the loop's trajectory when it succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note_id: Option<Uuid>,
    /// Why the loop ended (or what it waits for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For a person, when the loop escalated: what was tried, what failed, the closest known
    /// fixes (Markdown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalation_report: Option<String>,
    /// Learning steps that failed (the loop's outcome stands; these say what was not kept).
    pub learning_errors: Vec<String>,
    /// Milliseconds since the Unix epoch (UTC).
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// When the cumulative timeout passes.
    pub deadline_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Timestamp>,
}

impl LoopRecord {
    /// The summary of the current iteration, created on first use.
    pub fn current_iteration(&mut self) -> &mut IterationSummary {
        let iteration = self.iteration;
        if self.iterations.last().map(|i| i.iteration) != Some(iteration) {
            self.iterations.push(IterationSummary {
                iteration,
                build_success: None,
                test_status: None,
                failing_tests: Vec::new(),
                failure_fingerprint: None,
                error_line: None,
                action: None,
            });
        }
        self.iterations.last_mut().expect("pushed above")
    }
}

/// A loop in a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoopSummary {
    pub loop_id: Uuid,
    pub task: String,
    pub driver: Driver,
    pub state: LoopState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    pub iteration: u32,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl From<&LoopRecord> for LoopSummary {
    fn from(record: &LoopRecord) -> Self {
        LoopSummary {
            loop_id: record.loop_id,
            task: record.task.clone(),
            driver: record.driver,
            state: record.state,
            phase: record.phase,
            iteration: record.iteration,
            created_at: record.created_at,
            updated_at: record.updated_at,
        }
    }
}
