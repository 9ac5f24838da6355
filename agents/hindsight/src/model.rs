//! What the Hindsight service takes and returns. These types serialise to the JSON the MCP
//! tools return; they carry no storage or transport concerns.

use aeterna_memory::{Layer, Timestamp};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::score::ScoreBreakdown;
use crate::signature::ErrorSignature;

/// What a resolution changed: a unified diff, a list of files with a summary each, or both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Changes {
    /// The change as a unified diff (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The files changed, with a summary each; left out when none were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
}

/// One changed file and what was done to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileChange {
    /// The file's path.
    pub file: String,
    /// What was changed in it.
    pub summary: String,
}

/// A stored signature and its bookkeeping.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredSignature {
    pub id: Uuid,
    pub layer: Layer,
    pub scope_id: String,
    #[serde(flatten)]
    pub signature: ErrorSignature,
    pub fingerprint: String,
    pub occurrence_count: u64,
    /// The redacted, truncated text of the first occurrence.
    pub sample: String,
    pub first_seen_at: Timestamp,
    pub last_seen_at: Timestamp,
}

/// A fix that was applied to a signature, with its track record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Resolution {
    /// The resolution's id, for `hindsight_feedback`.
    pub id: Uuid,
    /// The error signature it fixes.
    pub signature_id: Uuid,
    /// The layer it lives in.
    pub layer: Layer,
    /// The scope within that layer.
    pub scope_id: String,
    /// What fixed the error.
    pub description: String,
    /// What was changed: a diff, files with a summary each, or both.
    pub changes: Changes,
    /// Applications reported as successful.
    pub success_count: u64,
    /// Applications reported, successful or not.
    pub application_count: u64,
    /// `success_count / application_count`, 0 before the first application.
    pub success_rate: f64,
    /// The Wilson lower bound of the success rate (95%): what resolutions are ranked by.
    pub confidence: f64,
    /// Further signatures this fix resolved: other wordings of the same error that joined its
    /// lineage (`hindsight_resolve` with this resolution's id, or a near-duplicate fix).
    /// Queries matching any of them find this resolution.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Uuid>,
    /// The first resolution of its promotion lineage (its own id unless promoted).
    pub origin_id: Uuid,
    /// The resolution this one is a promoted copy of; left out unless promoted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promoted_from: Option<Uuid>,
    /// Applications carried over from the narrower layer when promoted.
    pub baseline_applications: u64,
    /// Who recorded it (the caller's user or agent id).
    pub created_by: String,
    /// When it was recorded, in milliseconds since the Unix epoch (UTC).
    pub created_at: Timestamp,
    /// When its track record last changed, in milliseconds since the Unix epoch (UTC).
    pub updated_at: Timestamp,
    /// The `hindsight` memory rendered for this resolution.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note_id: Option<Uuid>,
}

/// Record a failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureRequest {
    /// Raw compiler, test or runtime output.
    pub error_text: String,
    /// Where to record it; the configured default (project) when absent.
    #[serde(default)]
    pub layer: Option<Layer>,
}

/// One signature recorded by a capture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CapturedSignature {
    /// The stored signature's id, for `hindsight_resolve`.
    pub signature_id: Uuid,
    /// True when it merged into an existing (near-duplicate) signature.
    pub merged: bool,
    /// How often this error has been seen, this occurrence included.
    pub occurrence_count: u64,
    /// The layer it was recorded in.
    pub layer: Layer,
    /// The scope within that layer.
    pub scope_id: String,
    /// The most specific stable class of the error (`E0308`, `ModuleNotFoundError`, …).
    pub error_type: String,
    /// The ecosystem the error comes from.
    pub language: crate::signature::Language,
    /// The message with its varying parts replaced by placeholders (`<Q>`, `<PATH>`, `<N>`…).
    pub message_pattern: String,
}

/// The result of `hindsight_capture`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaptureOutcome {
    /// One entry per error found in the text, in order; empty when none was recognised.
    pub signatures: Vec<CapturedSignature>,
}

/// What a query's text was understood to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueryForm {
    /// Raw output of a compiler, test run, program or shell, with the error's class (code or
    /// exception) where the tool prints one.
    ToolOutput,
    /// A bare error message without its code (`use of moved value: `x``).
    ErrorMessage,
    /// A description of the error in words (`how did we fix the borrowed-value-moved error?`).
    Description,
}

impl QueryForm {
    pub fn as_str(self) -> &'static str {
        match self {
            QueryForm::ToolOutput => "tool_output",
            QueryForm::ErrorMessage => "error_message",
            QueryForm::Description => "description",
        }
    }
}

/// Look for known resolutions, by text (raw tool output, a bare message or a description) or
/// by signature.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryRequest {
    /// Raw tool output, an error message or a description in words.
    #[serde(default)]
    pub error_text: Option<String>,
    #[serde(default)]
    pub signature: Option<ErrorSignature>,
    /// How to read `error_text`; understood from the text when absent.
    #[serde(default)]
    pub form: Option<QueryForm>,
    /// Most answers to return, `matched` and `related` together (default 5, at most the
    /// configured maximum).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Overrides the configured match threshold for this query (0..1).
    #[serde(default)]
    pub threshold: Option<f32>,
}

/// Where a candidate stood in each ranking that was fused into its order (1 is first; absent
/// when that source did not propose it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ranks {
    /// By exact score.
    pub score: u32,
    /// By BM25 over the stored signatures (message words and type).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical: Option<u32>,
    /// By BM25 over the texts of the fixes recorded for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixes: Option<u32>,
    /// By embedding similarity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<u32>,
}

/// A stored error that answers the query, with its resolutions, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Match {
    /// The stored signature's id.
    pub signature_id: Uuid,
    /// The layer it was recorded in.
    pub layer: Layer,
    /// The scope within that layer.
    pub scope_id: String,
    /// The ecosystem the error comes from.
    pub language: crate::signature::Language,
    /// The most specific stable class of the error.
    pub error_type: String,
    /// The message with its varying parts replaced by placeholders.
    pub message_pattern: String,
    /// How often this error has been seen.
    pub occurrence_count: u64,
    /// How well it answers the query, 0..1; `matched` answers score at least the threshold.
    pub score: f32,
    /// The components of `score`.
    pub breakdown: ScoreBreakdown,
    /// Where it stood in each ranking fused into the order of the answers.
    pub ranks: Ranks,
    /// Which of the queried signatures (in `queried`) this answers.
    pub query_index: usize,
    /// The fixes recorded for it, best first (one per lineage), ranked by the Wilson lower
    /// bound of their success rate.
    pub resolutions: Vec<Resolution>,
}

/// Whether a query found a stored error at or above the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QueryStatus {
    /// At least one stored error scored at or above the threshold: `matched` is not empty.
    Matched,
    /// Nothing did: there is no known resolution safe to apply (`related` may still list
    /// candidates worth a look).
    NoKnownResolution,
}

/// The result of `hindsight_query`: a two-tier answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct QueryOutcome {
    /// `matched`, or `no_known_resolution` when nothing scored at least `threshold`.
    pub status: QueryStatus,
    /// What the query's text was understood to be.
    pub form: QueryForm,
    /// The score an answer needed to be `matched`, 0..1.
    pub threshold: f32,
    /// Stored errors scoring at least `threshold`, best first: their resolutions are safe to
    /// apply (the threshold is calibrated to keep wrong answers here rare).
    pub matched: Vec<Match>,
    /// Further candidates below the threshold, best first, with the evidence for each: worth
    /// a look, not safe to apply blindly.
    pub related: Vec<Match>,
    /// What was looked up: the signatures extracted from tool output, or the one made of a
    /// message or description (without embeddings).
    pub queried: Vec<ErrorSignature>,
    /// The best score seen, also when below the threshold, so callers can tell "nothing like
    /// it" from "something close".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closest_score: Option<f32>,
}

impl QueryOutcome {
    /// The best answer: the first `matched`, else the first `related`.
    pub fn best(&self) -> Option<&Match> {
        self.matched.first().or_else(|| self.related.first())
    }
}

/// Attach a fix to a signature (by id, or by the error text, which is captured first): a new
/// fix, or, with `resolution_id`, one already recorded for another wording of the error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResolveRequest {
    #[serde(default)]
    pub signature_id: Option<Uuid>,
    #[serde(default)]
    pub error_text: Option<String>,
    /// An existing resolution that fixed this error too: the signature joins its lineage as
    /// another example (leave `description` and `changes` empty).
    #[serde(default)]
    pub resolution_id: Option<Uuid>,
    /// What fixed the error (required unless `resolution_id` is given).
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub changes: Changes,
    /// Where the resolution lives; the signature's layer when absent.
    #[serde(default)]
    pub layer: Option<Layer>,
}

/// The result of `hindsight_resolve`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResolveOutcome {
    /// The recorded fix (for a joined lineage: the existing one, with this signature among
    /// its `examples`).
    pub resolution: Resolution,
    /// True when the signature joined an existing fix's lineage (named by `resolution_id`, or
    /// found because the new fix's text nearly duplicated it) instead of recording a new one.
    pub joined: bool,
}

/// Report that a resolution was applied and whether it worked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackRequest {
    pub resolution_id: Uuid,
    pub success: bool,
    #[serde(default)]
    pub comment: Option<String>,
}

/// Where a promotion stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PromotionStatus {
    /// Awaiting `hindsight_approve`.
    Pending,
    /// Copied to the broader layer.
    Promoted,
    /// Refused by an approver.
    Rejected,
}

impl PromotionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            PromotionStatus::Pending => "pending",
            PromotionStatus::Promoted => "promoted",
            PromotionStatus::Rejected => "rejected",
        }
    }
}

/// A resolution's move to a broader layer: who asked, when, from and to where, and who decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Promotion {
    /// The promotion's id, for `hindsight_approve`.
    pub id: Uuid,
    /// The resolution being promoted.
    pub resolution_id: Uuid,
    /// The layer it comes from.
    pub from_layer: Layer,
    /// The scope within that layer.
    pub from_scope: String,
    /// The broader layer it goes to.
    pub to_layer: Layer,
    /// The scope within that layer.
    pub to_scope: String,
    /// Pending, promoted or rejected.
    pub status: PromotionStatus,
    /// The resolution's success rate when the promotion was requested, 0..1.
    pub success_rate: f64,
    /// Its applications when the promotion was requested.
    pub application_count: u64,
    /// Whose feedback triggered it.
    pub requested_by: String,
    /// When it was requested, in milliseconds since the Unix epoch (UTC).
    pub requested_at: Timestamp,
    /// Who approved or rejected it; left out while pending (and when promoted without
    /// approval).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// When it was decided, in milliseconds since the Unix epoch (UTC); left out while pending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<Timestamp>,
    /// The copy of the resolution in the broader layer, once promoted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promoted_resolution_id: Option<Uuid>,
}

/// What a feedback did to promotion, by `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum PromotionStep {
    /// Promoted now.
    Promoted { promotion: Promotion },
    /// Queued for `hindsight_approve`.
    Pending { promotion: Promotion },
    /// Qualifies, but the caller has no scope for the target layer: `field` names the
    /// identity argument to pass (`team_id`, …).
    NeedsScope { layer: Layer, field: String },
}

/// The result of `hindsight_feedback`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FeedbackOutcome {
    /// The resolution with its updated track record.
    pub resolution: Resolution,
    /// What the feedback did to promotion; left out when the resolution does not qualify (yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promotion: Option<PromotionStep>,
}

/// Decide a pending promotion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApproveRequest {
    pub promotion_id: Uuid,
    /// False rejects it (default true).
    #[serde(default = "yes")]
    pub approve: bool,
}

fn yes() -> bool {
    true
}
