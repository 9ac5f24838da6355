//! IMPROVE: what to do after a failed iteration.
//!
//! The rules, in order (the first that applies decides):
//! 1. iterations exhausted → `escalate` (with the closest known fixes in the report);
//! 2. the same failure (equal fingerprint) in this and the two previous iterations — it
//!    repeated unchanged twice — → `escalate`;
//! 3. flaky or transient: a failing test that passed in an earlier iteration after failing
//!    before it, or output that says the failure was transient (timeouts of the network,
//!    connection refused, resource temporarily unavailable…) → `retry`;
//! 4. Hindsight has a `matched` error with a fix → `refine`, passing the fixes on (they are
//!    marked as applied, for feedback when the loop ends);
//! 5. otherwise → `refine`: the agent fixes the failure itself (no known fix).
//!
//! An [`Analyzer`] (an LLM, through `aeterna-llm`'s `analyze` role) may decide rules 3–5
//! instead; when it declines (no provider, every provider down) the rules decide. Rules 1–2
//! always apply: a loop never runs past its limits because a model said so.

use aeterna_hindsight::{QueryOutcome, extract};
use aeterna_notes::distill::signals;
use digest::fingerprint_of;
use uuid::Uuid;

use crate::model::{Action, HindsightHit, IterationSummary, KnownFix};

/// What IMPROVE looks at.
#[derive(Debug)]
pub struct Evidence<'a> {
    pub task: &'a str,
    pub iteration: u32,
    pub max_iterations: u32,
    /// The failing phase's output (redacted).
    pub failure: &'a str,
    pub failing_tests: &'a [String],
    /// Earlier iterations, oldest first; the current one last, with its fingerprint set.
    pub history: &'a [IterationSummary],
    pub hindsight: Option<&'a QueryOutcome>,
}

/// An IMPROVE decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub action: Action,
    pub reason: String,
    pub decided_by: String,
    pub applied: Vec<Uuid>,
}

/// A pluggable IMPROVE decision (an LLM). `None` leaves the decision to the rules.
#[async_trait::async_trait]
pub trait Analyzer: Send + Sync {
    async fn analyze(&self, tenant: &str, evidence: &Evidence<'_>) -> Option<Decision>;
}

/// What identifies a failure across iterations: its error signatures, else its failing tests,
/// else its most telling line.
pub fn fingerprint(failure: &str, failing_tests: &[String]) -> (String, Vec<String>) {
    let signatures = extract(failure);
    let titles: Vec<String> = signatures.iter().map(|s| s.title()).collect();
    let mut parts: Vec<String> = signatures.iter().map(|s| s.fingerprint()).collect();
    if parts.is_empty() {
        parts = failing_tests.to_vec();
    }
    if parts.is_empty() {
        parts.extend(signals::error_line(failure));
    }
    parts.sort();
    parts.dedup();
    (fingerprint_of(&parts), titles)
}

/// Hindsight's answer as hits, matched first.
pub fn hits(outcome: &QueryOutcome, max: usize) -> Vec<HindsightHit> {
    let tiers = outcome
        .matched
        .iter()
        .map(|m| (m, true))
        .chain(outcome.related.iter().map(|m| (m, false)));
    tiers
        .take(max)
        .map(|(m, matched)| HindsightHit {
            signature_id: m.signature_id,
            error_type: m.error_type.clone(),
            message_pattern: m.message_pattern.clone(),
            score: m.score,
            matched,
            fixes: m
                .resolutions
                .iter()
                .map(|r| KnownFix {
                    resolution_id: r.id,
                    description: r.description.clone(),
                    confidence: r.confidence,
                    success_count: r.success_count,
                    application_count: r.application_count,
                })
                .collect(),
        })
        .collect()
}

/// Markers of a transient failure in output.
const TRANSIENT: [&str; 9] = [
    "connection refused",
    "connection reset",
    "temporary failure in name resolution",
    "resource temporarily unavailable",
    "network is unreachable",
    "503 service unavailable",
    "text file busy",
    "could not acquire lock",
    "etimedout",
];

/// Rules 1 and 2: the limits. `Some` ends the loop.
pub fn limits(evidence: &Evidence<'_>) -> Option<Decision> {
    if evidence.iteration >= evidence.max_iterations {
        return Some(rules(
            Action::Escalate,
            format!(
                "iterations exhausted ({} of {}) and the failure remains",
                evidence.iteration, evidence.max_iterations
            ),
        ));
    }
    let last: Vec<Option<&String>> = evidence
        .history
        .iter()
        .rev()
        .take(3)
        .map(|i| i.failure_fingerprint.as_ref())
        .collect();
    if last.len() == 3 && last[0].is_some() && last.iter().all(|f| *f == last[0]) {
        return Some(rules(
            Action::Escalate,
            "the same failure repeated unchanged twice".to_owned(),
        ));
    }
    None
}

/// Rules 3–5.
pub fn decide(evidence: &Evidence<'_>) -> Decision {
    if let Some(test) = flaky_test(evidence) {
        return rules(
            Action::Retry,
            format!("`{test}` failed, passed and failed again: it looks flaky; run it again"),
        );
    }
    let lower = evidence.failure.to_ascii_lowercase();
    if let Some(marker) = TRANSIENT.iter().find(|marker| lower.contains(*marker)) {
        return rules(
            Action::Retry,
            format!("the failure looks transient (`{marker}`); run again unchanged"),
        );
    }
    let known: Vec<(&aeterna_hindsight::Match, &aeterna_hindsight::Resolution)> = evidence
        .hindsight
        .map(|outcome| {
            outcome
                .matched
                .iter()
                .flat_map(|m| m.resolutions.first().map(|r| (m, r)))
                .collect()
        })
        .unwrap_or_default();
    if let Some((best, resolution)) = known.first() {
        let mut decision = rules(
            Action::Refine,
            format!(
                "Hindsight knows this error ({}: {}, score {:.2}): apply the fix \"{}\"",
                best.error_type,
                best.message_pattern,
                best.score,
                clip(&resolution.description, 200)
            ),
        );
        decision.applied = known.iter().map(|(_, r)| r.id).collect();
        decision.applied.dedup();
        return decision;
    }
    let what = match (
        evidence.failing_tests,
        signals::error_line(evidence.failure),
    ) {
        (tests, _) if !tests.is_empty() => format!("failing tests: {}", tests.join(", ")),
        (_, Some(line)) => format!("error: {line}"),
        _ => "the phase failed without output".to_owned(),
    };
    rules(
        Action::Refine,
        format!("no known fix; change the code to address the failure ({what})"),
    )
}

/// A test failing now that passed in an iteration after one where it failed.
fn flaky_test(evidence: &Evidence<'_>) -> Option<String> {
    let earlier = evidence.history.split_last().map(|(_, e)| e).unwrap_or(&[]);
    evidence.failing_tests.iter().find_map(|test| {
        let failed_at = earlier
            .iter()
            .position(|i| i.failing_tests.contains(test))?;
        earlier[failed_at + 1..]
            .iter()
            .any(|i| i.test_status.is_some() && !i.failing_tests.contains(test))
            .then(|| test.clone())
    })
}

fn rules(action: Action, reason: String) -> Decision {
    Decision {
        action,
        reason,
        decided_by: "rules".to_owned(),
        applied: Vec::new(),
    }
}

pub(crate) fn clip(text: &str, max_chars: usize) -> String {
    let mut cut: String = text.chars().take(max_chars).collect();
    if text.chars().count() > max_chars {
        cut.push('…');
    }
    cut
}

mod digest {
    /// A stable 64-bit FNV-1a hex digest of the parts (fingerprints compare iterations of
    /// one loop; they need stability, not cryptographic strength).
    pub fn fingerprint_of(parts: &[String]) -> String {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for part in parts {
            for byte in part.bytes().chain([0]) {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
        format!("{hash:016x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TestStatus;

    fn summary(iteration: u32, tests: &[&str], fingerprint: &str) -> IterationSummary {
        IterationSummary {
            iteration,
            build_success: None,
            test_status: Some(if tests.is_empty() {
                TestStatus::Passed
            } else {
                TestStatus::Failed
            }),
            failing_tests: tests.iter().map(|t| t.to_string()).collect(),
            failure_fingerprint: Some(fingerprint.to_owned()),
            error_line: None,
            action: None,
        }
    }

    fn evidence<'a>(
        iteration: u32,
        failing: &'a [String],
        history: &'a [IterationSummary],
        failure: &'a str,
    ) -> Evidence<'a> {
        Evidence {
            task: "fix the parser",
            iteration,
            max_iterations: 5,
            failure,
            failing_tests: failing,
            history,
            hindsight: None,
        }
    }

    #[test]
    fn exhaustion_and_unchanged_repeats_escalate() {
        let failing = vec!["t".to_owned()];
        let history = [summary(1, &["t"], "a")];
        let mut e = evidence(5, &failing, &history, "boom");
        assert_eq!(limits(&e).unwrap().action, Action::Escalate);
        e.iteration = 3;
        let repeated = [
            summary(1, &["t"], "a"),
            summary(2, &["t"], "a"),
            summary(3, &["t"], "a"),
        ];
        e.history = &repeated;
        let decision = limits(&e).unwrap();
        assert!(decision.reason.contains("unchanged twice"), "{decision:?}");
        let changed = [
            summary(1, &["t"], "a"),
            summary(2, &["t"], "b"),
            summary(3, &["t"], "a"),
        ];
        e.history = &changed;
        assert_eq!(limits(&e), None);
    }

    #[test]
    fn a_test_that_failed_passed_and_failed_again_is_retried() {
        let failing = vec!["t".to_owned()];
        let history = [
            summary(1, &["t"], "a"),
            summary(2, &["u"], "b"),
            summary(3, &["t"], "a"),
        ];
        let decision = decide(&evidence(3, &failing, &history, "boom"));
        assert_eq!(decision.action, Action::Retry, "{decision:?}");
        let steady = [summary(1, &["t"], "a"), summary(2, &["t"], "a")];
        let decision = decide(&evidence(2, &failing, &steady, "AssertionError"));
        assert_eq!(decision.action, Action::Refine, "{decision:?}");
        assert!(decision.reason.contains("no known fix"));
        let transient = decide(&evidence(1, &[], &[], "curl: Connection refused"));
        assert_eq!(transient.action, Action::Retry);
    }

    #[test]
    fn fingerprints_follow_the_error_not_its_line_numbers() {
        let a = "Traceback (most recent call last):\n  File \"/tmp/a/test_calc.py\", line 7, in test_add\n    self.assertEqual(add(1, 2), 4)\nAssertionError: 3 != 4\n";
        let b = a.replace("line 7", "line 9");
        assert_eq!(fingerprint(a, &[]).0, fingerprint(&b, &[]).0);
        assert_ne!(
            fingerprint(a, &[]).0,
            fingerprint("error: something else", &[]).0
        );
    }
}
