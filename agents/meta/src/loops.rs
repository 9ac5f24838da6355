//! A loop's transitions, shared by both drivers: a phase outcome goes in (`advance`), the
//! record moves to the next phase, the next iteration or its end, and IMPROVE decides after a
//! failure. The command driver (`drive`) is the background task that runs the allowed
//! commands and feeds their outcomes through the same path.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aeterna_hindsight::{QueryOutcome, QueryRequest};
use aeterna_memory::{Identity, now_millis};
use aeterna_notes::distill::signals;
use tokio_util::sync::CancellationToken;

use crate::analysis::{self, Evidence, fingerprint, hits};
use crate::learning::{PhaseEvent, note_error};
use crate::model::{
    Action, BuildReport, HindsightHit, ImproveReport, LoopRecord, LoopState, Phase, TestReport,
    TestStatus,
};
use crate::runner::{self, PreparedCommand, RunEnd};
use crate::service::MetaService;

/// Most failing-test names kept per iteration, and characters per name.
pub const MAX_FAILING_TESTS: usize = 50;
const MAX_TEST_NAME_CHARS: usize = 200;

/// What a phase produced.
#[derive(Debug, Clone)]
pub enum PhaseOutcome {
    Build(BuildReport),
    Test(TestReport),
}

/// The failing tests named by `output` (the notes agent's readers), plus `reported`, bounded.
pub fn failing_tests(output: &str, reported: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in reported
        .iter()
        .cloned()
        .chain(signals::failing_tests(output))
    {
        let name = analysis::clip(name.trim(), MAX_TEST_NAME_CHARS);
        if !name.is_empty() && !names.contains(&name) && names.len() < MAX_FAILING_TESTS {
            names.push(name);
        }
    }
    names
}

impl MetaService {
    /// Applies `outcome` to `record`; returns the Hindsight hits IMPROVE used, if it ran.
    pub(crate) async fn advance(
        &self,
        who: &Identity,
        record: &mut LoopRecord,
        outcome: PhaseOutcome,
        command: Option<&str>,
    ) -> Vec<HindsightHit> {
        record.state = LoopState::Running;
        match outcome {
            PhaseOutcome::Build(report) => {
                self.metrics
                    .phase(Phase::Build, Duration::from_millis(report.duration_ms));
                self.learning.capture(
                    who,
                    record,
                    PhaseEvent {
                        phase: Phase::Build,
                        command,
                        description: format!("BUILD, iteration {}", record.iteration),
                        output: &report.output,
                        success: report.success,
                        duration_ms: report.duration_ms,
                    },
                );
                record.current_iteration().build_success = Some(report.success);
                let success = report.success;
                let output = report.output.clone();
                record.last_build = Some(report);
                if success {
                    record.phase = Some(Phase::Test);
                    record.updated_at = now_millis();
                    Vec::new()
                } else {
                    self.improve(who, record, &output, &[]).await
                }
            }
            PhaseOutcome::Test(report) => {
                self.metrics
                    .phase(Phase::Test, Duration::from_millis(report.duration_ms));
                let passed = report.status == TestStatus::Passed;
                self.learning.capture(
                    who,
                    record,
                    PhaseEvent {
                        phase: Phase::Test,
                        command,
                        description: format!("TEST, iteration {}", record.iteration),
                        output: &report.output,
                        success: passed,
                        duration_ms: report.duration_ms,
                    },
                );
                let summary = record.current_iteration();
                summary.test_status = Some(report.status);
                summary.failing_tests = report.failing_tests.clone();
                let output = report.output.clone();
                let failing = report.failing_tests.clone();
                record.last_test = Some(report);
                if passed {
                    record.current_iteration().action = Some(Action::Exit);
                    record.last_improve = Some(ImproveReport {
                        iteration: record.iteration,
                        action: Action::Exit,
                        reason: "the tests passed".into(),
                        decided_by: "rules".into(),
                        matches: Vec::new(),
                        applied_resolutions: Vec::new(),
                        signatures: Vec::new(),
                    });
                    let reason = format!("the tests passed at iteration {}", record.iteration);
                    self.finish(who, record, LoopState::Succeeded, reason, None, &[])
                        .await;
                    Vec::new()
                } else {
                    self.improve(who, record, &output, &failing).await
                }
            }
        }
    }

    /// IMPROVE after a failed phase.
    async fn improve(
        &self,
        who: &Identity,
        record: &mut LoopRecord,
        failure: &str,
        failing_tests: &[String],
    ) -> Vec<HindsightHit> {
        let started = Instant::now();
        let (failure_fingerprint, signatures) = fingerprint(failure, failing_tests);
        let summary = record.current_iteration();
        summary.failure_fingerprint = Some(failure_fingerprint);
        summary.error_line = signals::error_line(failure).map(|l| analysis::clip(&l, 300));
        let outcome = self
            .query_hindsight(who, record, failure, failing_tests)
            .await;
        let found = outcome
            .as_ref()
            .map(|o| hits(o, self.config.max_matches))
            .unwrap_or_default();
        let evidence = Evidence {
            task: &record.task,
            iteration: record.iteration,
            max_iterations: record.limits.max_iterations,
            failure,
            failing_tests,
            history: &record.iterations,
            hindsight: outcome.as_ref(),
        };
        let decision = match analysis::limits(&evidence) {
            Some(decision) => decision,
            None => {
                let analyzed = match &self.analyzer {
                    Some(analyzer) => analyzer.analyze(&who.tenant_id, &evidence).await,
                    None => None,
                };
                analyzed.unwrap_or_else(|| analysis::decide(&evidence))
            }
        };
        record.current_iteration().action = Some(decision.action);
        for id in &decision.applied {
            if !record.applied_resolutions.contains(id) {
                record.applied_resolutions.push(*id);
            }
        }
        record.last_improve = Some(ImproveReport {
            iteration: record.iteration,
            action: decision.action,
            reason: decision.reason.clone(),
            decided_by: decision.decided_by.clone(),
            matches: found.clone(),
            applied_resolutions: decision.applied.clone(),
            signatures,
        });
        self.learning.capture(
            who,
            record,
            PhaseEvent {
                phase: Phase::Improve,
                command: None,
                description: format!(
                    "IMPROVE, iteration {}: {} — {}",
                    record.iteration,
                    decision.action.as_str(),
                    decision.reason
                ),
                output: "",
                success: decision.action != Action::Escalate,
                duration_ms: started.elapsed().as_millis() as u64,
            },
        );
        self.metrics.phase(Phase::Improve, started.elapsed());
        match decision.action {
            Action::Retry | Action::Refine => {
                record.iteration += 1;
                record.phase = Some(Phase::Build);
                record.reason = Some(decision.reason);
                record.updated_at = now_millis();
            }
            Action::Escalate | Action::Exit => {
                self.finish(
                    who,
                    record,
                    LoopState::Escalated,
                    decision.reason,
                    Some(failure),
                    &found,
                )
                .await;
            }
        }
        found
    }

    async fn query_hindsight(
        &self,
        who: &Identity,
        record: &mut LoopRecord,
        failure: &str,
        failing_tests: &[String],
    ) -> Option<QueryOutcome> {
        let text = if failure.trim().is_empty() {
            failing_tests.join("\n")
        } else {
            runner::cap_text(failure, self.learning.hindsight.config().max_error_bytes).0
        };
        if text.trim().is_empty() {
            return None;
        }
        let request = QueryRequest {
            error_text: Some(text),
            limit: Some(self.config.max_matches),
            ..QueryRequest::default()
        };
        match self.learning.hindsight.query(who, request).await {
            Ok(outcome) => Some(outcome),
            Err(error) => {
                note_error(record, "querying Hindsight", error);
                None
            }
        }
    }

    /// Ends the loop in `state` and runs what it teaches.
    pub(crate) async fn finish(
        &self,
        who: &Identity,
        record: &mut LoopRecord,
        state: LoopState,
        reason: String,
        failure: Option<&str>,
        hits: &[HindsightHit],
    ) {
        record.state = state;
        record.phase = None;
        record.reason = Some(reason);
        self.learning.finish(who, record, failure, hits).await;
        let now = now_millis();
        record.finished_at = Some(now);
        record.updated_at = now;
        self.metrics.finished(state, record.iteration);
    }

    /// The background task of a command-driven loop.
    pub(crate) async fn drive(
        self: Arc<Self>,
        who: Identity,
        mut record: LoopRecord,
        build: Option<PreparedCommand>,
        test: PreparedCommand,
        cancel: CancellationToken,
    ) {
        let id = record.loop_id;
        while !record.state.is_final() {
            let phase = match (&build, record.phase) {
                (Some(_), Some(Phase::Build)) => Phase::Build,
                _ => Phase::Test,
            };
            let command = if phase == Phase::Build {
                build.as_ref().expect("matched above")
            } else {
                &test
            };
            record.state = LoopState::Running;
            record.phase = Some(phase);
            record.updated_at = now_millis();
            self.save(&who, &record).await;
            let remaining = (record.deadline_at - now_millis()).max(0) as u64;
            let limit = match phase {
                Phase::Build => record.limits.build_timeout_ms,
                _ => record.limits.test_timeout_ms,
            };
            if cancel.is_cancelled() || remaining == 0 {
                self.end_early(&who, &mut record, cancel.is_cancelled())
                    .await;
                break;
            }
            let timeout = Duration::from_millis(limit.min(remaining));
            let run = runner::run(command, timeout, self.config.max_output_bytes, &cancel).await;
            match run.end {
                RunEnd::Cancelled => {
                    self.end_early(&who, &mut record, true).await;
                    break;
                }
                RunEnd::TimedOut if remaining < limit => {
                    self.end_early(&who, &mut record, false).await;
                    break;
                }
                _ => {}
            }
            let (output, omitted) = self.keep_output(&run.output);
            let omitted = omitted + run.omitted_bytes;
            let duration_ms = run.duration.as_millis() as u64;
            let exit_code = match run.end {
                RunEnd::Exited(code) => code,
                _ => None,
            };
            let timed_out = run.end == RunEnd::TimedOut;
            let outcome = if phase == Phase::Build {
                PhaseOutcome::Build(BuildReport {
                    iteration: record.iteration,
                    success: run.success(),
                    exit_code,
                    timed_out,
                    output,
                    output_omitted_bytes: omitted,
                    duration_ms,
                    notes: None,
                    tokens_used: 0,
                })
            } else {
                let status = if timed_out {
                    TestStatus::TimedOut
                } else if run.success() {
                    TestStatus::Passed
                } else {
                    TestStatus::Failed
                };
                PhaseOutcome::Test(TestReport {
                    iteration: record.iteration,
                    status,
                    exit_code,
                    failing_tests: failing_tests(&output, &[]),
                    output,
                    output_omitted_bytes: omitted,
                    duration_ms,
                })
            };
            let display = command.display();
            self.advance(&who, &mut record, outcome, Some(&display))
                .await;
            self.save(&who, &record).await;
        }
        self.deactivate(id);
        self.save(&who, &record).await;
    }

    /// Cancelled, or the cumulative timeout passed mid-loop.
    async fn end_early(&self, who: &Identity, record: &mut LoopRecord, cancelled: bool) {
        let (state, reason) = if cancelled {
            (
                LoopState::Cancelled,
                "cancelled with meta_loop_cancel".to_owned(),
            )
        } else {
            (
                LoopState::TimedOut,
                format!(
                    "the loop's cumulative timeout ({} ms) passed",
                    record.limits.loop_timeout_ms
                ),
            )
        };
        self.finish(who, record, state, reason, None, &[]).await;
    }

    /// Saves the record and wakes waiters; a failing store is logged (the loop goes on in
    /// memory and the next save retries).
    pub(crate) async fn save(&self, who: &Identity, record: &LoopRecord) {
        if let Err(error) = self.store.save(&who.tenant_id, record).await {
            tracing::warn!(loop_id = %record.loop_id, %error, "cannot save a meta-loop");
        }
        self.notify();
    }
}
