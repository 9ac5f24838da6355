//! What a loop teaches the other agents.
//!
//! * Every phase becomes a trajectory event of the loop's own session (`meta-loop-<id>` in the
//!   caller's project), through the Note-Taking agent's capture queue (never waits).
//! * On success the session is distilled into a note, and every resolution the loop applied
//!   gets positive Hindsight feedback; a loop that ends otherwise after applying one gives
//!   negative feedback.
//! * On escalation the failure is stored in Hindsight (its signatures, for the next loop that
//!   meets it) and the loop carries a Markdown report for a person.
//!
//! Learning never changes a loop's outcome: a step that fails is logged and listed in the
//! loop's `learning_errors`.

use std::fmt::Write as _;
use std::sync::Arc;

use aeterna_hindsight::{CaptureRequest, FeedbackRequest, HindsightService};
use aeterna_memory::Identity;
use aeterna_notes::{NotesService, TrajectoryEvent};
use uuid::Uuid;

use crate::analysis::clip;
use crate::model::{HindsightHit, LoopRecord, LoopState, Phase};

/// Most learning errors a loop keeps.
const MAX_LEARNING_ERRORS: usize = 10;

/// The identity a loop's trajectory is captured under: the caller's, in a session of its own.
pub fn loop_session(who: &Identity, loop_id: Uuid) -> Identity {
    let mut identity = who.clone();
    identity.session_id = Some(format!("meta-loop-{loop_id}"));
    identity
}

pub fn note_error(record: &mut LoopRecord, what: &str, error: impl std::fmt::Display) {
    tracing::warn!(loop_id = %record.loop_id, what, %error, "meta-loop learning step failed");
    if record.learning_errors.len() < MAX_LEARNING_ERRORS {
        record.learning_errors.push(format!("{what}: {error}"));
    }
}

/// One phase, as a trajectory event.
pub struct PhaseEvent<'a> {
    pub phase: Phase,
    pub command: Option<&'a str>,
    pub description: String,
    pub output: &'a str,
    pub success: bool,
    pub duration_ms: u64,
}

#[derive(Clone)]
pub struct Learning {
    pub hindsight: Arc<HindsightService>,
    pub notes: Arc<NotesService>,
}

impl Learning {
    pub fn capture(&self, who: &Identity, record: &mut LoopRecord, event: PhaseEvent<'_>) {
        let input = match event.command {
            Some(command) => serde_json::json!({ "command": command }),
            None => serde_json::json!({ "task": clip(&record.task, 200) }),
        };
        let mut metadata = serde_json::Map::new();
        metadata.insert("loop_id".into(), record.loop_id.to_string().into());
        metadata.insert("iteration".into(), record.iteration.into());
        let trajectory = TrajectoryEvent {
            tool_name: format!("meta_{}", event.phase.as_str()),
            description: event.description,
            input,
            output: event.output.into(),
            success: event.success,
            duration_ms: event.duration_ms,
            tags: vec!["meta-loop".into()],
            metadata: Some(metadata),
        };
        let session = loop_session(who, record.loop_id);
        if let Err(error) = self.notes.capture(vec![(session, trajectory)]) {
            note_error(record, "capturing the phase as a trajectory event", error);
        }
    }

    /// The loop ended: distil (on success), feedback for the resolutions it applied, and on
    /// escalation the failure stored in Hindsight and the report written.
    pub async fn finish(
        &self,
        who: &Identity,
        record: &mut LoopRecord,
        failure: Option<&str>,
        hits: &[HindsightHit],
    ) {
        let succeeded = record.state == LoopState::Succeeded;
        if succeeded {
            match self.notes.distill(&loop_session(who, record.loop_id)).await {
                Ok(outcome) => record.note_id = outcome.notes.first().map(|note| note.id),
                Err(error) => note_error(record, "distilling the loop into a note", error),
            }
        }
        for resolution_id in record.applied_resolutions.clone() {
            let comment = format!(
                "meta-loop {} {} at iteration {}",
                record.loop_id,
                record.state.as_str(),
                record.iteration
            );
            let request = FeedbackRequest {
                resolution_id,
                success: succeeded,
                comment: Some(comment),
            };
            if let Err(error) = self.hindsight.feedback(who, request).await {
                note_error(record, "recording Hindsight feedback", error);
            }
        }
        if record.state == LoopState::Escalated {
            if let Some(failure) = failure.filter(|f| !f.trim().is_empty()) {
                let max = self.hindsight.config().max_error_bytes;
                let (text, _) = crate::runner::cap_text(failure, max);
                let request = CaptureRequest {
                    error_text: text,
                    layer: None,
                };
                match self.hindsight.capture(who, request).await {
                    Ok(outcome) => {
                        record.stored_signatures =
                            outcome.signatures.iter().map(|s| s.signature_id).collect()
                    }
                    Err(error) => note_error(record, "storing the failure in Hindsight", error),
                }
            }
            record.escalation_report = Some(escalation_report(record, hits));
        }
    }
}

/// The Markdown a person reads when a loop escalates: what was tried, what failed, the
/// closest known fixes.
pub fn escalation_report(record: &LoopRecord, hits: &[HindsightHit]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Meta-loop escalated: {}",
        flatten(&clip(&record.task, 200))
    );
    let _ = writeln!(
        out,
        "\n{} iteration(s) of at most {}. {}\n",
        record.iteration,
        record.limits.max_iterations,
        flatten(record.reason.as_deref().unwrap_or("")),
    );
    let _ = writeln!(out, "## What was tried\n");
    let _ = writeln!(
        out,
        "| iteration | build | test | failing tests | decision |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for i in &record.iterations {
        let build = match i.build_success {
            Some(true) => "ok",
            Some(false) => "failed",
            None => "-",
        };
        let test = i
            .test_status
            .map(|s| match s {
                crate::model::TestStatus::Passed => "passed",
                crate::model::TestStatus::Failed => "failed",
                crate::model::TestStatus::TimedOut => "timed out",
            })
            .unwrap_or("-");
        let tests = if i.failing_tests.is_empty() {
            "-".to_owned()
        } else {
            flatten(&clip(&i.failing_tests.join(", "), 200)).replace('|', "/")
        };
        let action = i.action.map(|a| a.as_str()).unwrap_or("-");
        let _ = writeln!(
            out,
            "| {} | {build} | {test} | {tests} | {action} |",
            i.iteration
        );
    }
    let _ = writeln!(out, "\n## What failed\n");
    match record
        .iterations
        .last()
        .and_then(|i| i.error_line.as_deref())
    {
        Some(line) => {
            let _ = writeln!(out, "`{}`", flatten(line).replace('`', "'"));
        }
        None => {
            let _ = writeln!(out, "(no error line recognised)");
        }
    }
    if let Some(improve) = &record.last_improve
        && !improve.signatures.is_empty()
    {
        let _ = writeln!(out, "\nError signatures:");
        for signature in &improve.signatures {
            let _ = writeln!(out, "- {}", flatten(signature));
        }
    }
    let _ = writeln!(out, "\n## Closest known fixes\n");
    let fixes: Vec<_> = hits
        .iter()
        .flat_map(|hit| hit.fixes.iter().map(move |fix| (hit, fix)))
        .take(5)
        .collect();
    if fixes.is_empty() {
        let _ = writeln!(
            out,
            "Hindsight knows no fix for this failure yet. Once it is fixed, record the fix with `hindsight_resolve`."
        );
    } else {
        for (hit, fix) in fixes {
            let _ = writeln!(
                out,
                "- {} (for `{}: {}`, score {:.2}, {} of {} applications succeeded; resolution `{}`)",
                flatten(&clip(&fix.description, 300)),
                hit.error_type,
                flatten(&clip(&hit.message_pattern, 120)).replace('`', "'"),
                hit.score,
                fix.success_count,
                fix.application_count,
                fix.resolution_id
            );
        }
    }
    if !record.stored_signatures.is_empty() {
        let _ = writeln!(
            out,
            "\nThe failure is stored in Hindsight (signatures {}): record the fix with \
             `hindsight_resolve` so the next loop applies it.",
            record
                .stored_signatures
                .iter()
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out
}

/// Captured text on one line, so it cannot add Markdown structure.
fn flatten(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
