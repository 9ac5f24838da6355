//! What the Hindsight service takes and returns. These types serialise to the JSON the MCP
//! tools return; they carry no storage or transport concerns.

use aeterna_memory::{Layer, Timestamp};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::score::ScoreBreakdown;
use crate::signature::ErrorSignature;

/// What a resolution changed: a unified diff, a list of files with a summary each, or both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Changes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileChange>,
}

/// One changed file and what was done to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileChange {
    pub file: String,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolution {
    pub id: Uuid,
    pub signature_id: Uuid,
    pub layer: Layer,
    pub scope_id: String,
    pub description: String,
    pub changes: Changes,
    pub success_count: u64,
    pub application_count: u64,
    /// `success_count / application_count`, 0 before the first application.
    pub success_rate: f64,
    /// The Wilson lower bound of the success rate (95%): what resolutions are ranked by.
    pub confidence: f64,
    /// The first resolution of its promotion lineage (its own id unless promoted).
    pub origin_id: Uuid,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promoted_from: Option<Uuid>,
    /// Applications carried over from the narrower layer when promoted.
    pub baseline_applications: u64,
    pub created_by: String,
    pub created_at: Timestamp,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapturedSignature {
    pub signature_id: Uuid,
    /// True when it merged into an existing (near-duplicate) signature.
    pub merged: bool,
    pub occurrence_count: u64,
    pub layer: Layer,
    pub scope_id: String,
    pub error_type: String,
    pub language: crate::signature::Language,
    pub message_pattern: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureOutcome {
    pub signatures: Vec<CapturedSignature>,
}

/// Look for known resolutions, by raw error text or by signature.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryRequest {
    #[serde(default)]
    pub error_text: Option<String>,
    #[serde(default)]
    pub signature: Option<ErrorSignature>,
    /// Most matches to return (default 5, at most the configured maximum).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Overrides the configured match threshold for this query (0..1).
    #[serde(default)]
    pub threshold: Option<f32>,
}

/// A stored signature that matched, with its resolutions, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Match {
    pub signature_id: Uuid,
    pub layer: Layer,
    pub scope_id: String,
    pub language: crate::signature::Language,
    pub error_type: String,
    pub message_pattern: String,
    pub occurrence_count: u64,
    /// Similarity to the queried error, 0..1 (at least the threshold).
    pub score: f32,
    pub breakdown: ScoreBreakdown,
    /// Which of the queried signatures (in `queried`) this matches.
    pub query_index: usize,
    pub resolutions: Vec<Resolution>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryStatus {
    /// At least one stored signature scored at or above the threshold.
    Matched,
    /// Nothing did: there is no known resolution (not a weak guess).
    NoKnownResolution,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryOutcome {
    pub status: QueryStatus,
    pub threshold: f32,
    pub matches: Vec<Match>,
    /// The signatures extracted from the query (without embeddings).
    pub queried: Vec<ErrorSignature>,
    /// The best score seen, also when below the threshold, so callers can tell "nothing like
    /// it" from "something close".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closest_score: Option<f32>,
}

/// Attach a fix to a signature (by id, or by the error text, which is captured first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolveRequest {
    #[serde(default)]
    pub signature_id: Option<Uuid>,
    #[serde(default)]
    pub error_text: Option<String>,
    pub description: String,
    #[serde(default)]
    pub changes: Changes,
    /// Where the resolution lives; the signature's layer when absent.
    #[serde(default)]
    pub layer: Option<Layer>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolveOutcome {
    pub resolution: Resolution,
}

/// Report that a resolution was applied and whether it worked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackRequest {
    pub resolution_id: Uuid,
    pub success: bool,
    #[serde(default)]
    pub comment: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PromotionStatus {
    Pending,
    Promoted,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Promotion {
    pub id: Uuid,
    pub resolution_id: Uuid,
    pub from_layer: Layer,
    pub from_scope: String,
    pub to_layer: Layer,
    pub to_scope: String,
    pub status: PromotionStatus,
    pub success_rate: f64,
    pub application_count: u64,
    pub requested_by: String,
    pub requested_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<Timestamp>,
    /// The copy of the resolution in the broader layer, once promoted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promoted_resolution_id: Option<Uuid>,
}

/// What a feedback did to promotion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum PromotionStep {
    /// Promoted now.
    Promoted { promotion: Promotion },
    /// Queued for `hindsight_approve`.
    Pending { promotion: Promotion },
    /// Qualifies, but the caller has no scope for the target layer.
    NeedsScope { layer: Layer, field: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackOutcome {
    pub resolution: Resolution,
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
