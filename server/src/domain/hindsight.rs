//! Hindsight Learning's operations behind the `hindsight_*` MCP tools: argument types (with the
//! JSON schemas agents see) and plain async functions over [`HindsightService`].

use aeterna_hindsight::{
    ApproveRequest, CaptureOutcome, CaptureRequest, Changes, ErrorSignature, FeedbackOutcome,
    FeedbackRequest, FileChange, HindsightError, HindsightService, Language, Promotion,
    PromotionStatus, QueryForm, QueryOutcome, QueryRequest, ResolveOutcome, ResolveRequest,
};
use aeterna_memory::Layer;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::memory::parse_layer;
use crate::auth::Principal;
use crate::config::IdentityFields;

/// Promotions listed when the caller does not say.
pub const DEFAULT_PROMOTIONS_LIMIT: usize = 20;

/// Arguments of `hindsight_capture`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CaptureArgs {
    /// The raw output of the failing compiler, test run, program or shell command. Several
    /// errors in it become several signatures; secrets and e-mail addresses are redacted.
    pub error_text: String,
    /// Where to record it (default `project`; its scope comes from the matching id).
    #[serde(default)]
    #[schemars(schema_with = "optional_layer_schema")]
    pub layer: Option<String>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// A signature given directly instead of raw error text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignatureArgs {
    /// `E0308`, `TS2322`, `ModuleNotFoundError`, `java.lang.NullPointerException`…
    pub error_type: String,
    /// The message with varying parts as placeholders (`<Q>`, `<PATH>`, `<N>`…).
    pub message_pattern: String,
    /// rust, python, javascript, typescript, java, kotlin, go, c, cpp, shell or unknown.
    pub language: String,
    #[serde(default)]
    pub stack_patterns: Vec<String>,
    #[serde(default)]
    pub context_patterns: Vec<String>,
}

/// Arguments of `hindsight_query`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct QueryArgs {
    /// What to look up: the raw output of the failing tool, the error message alone (its
    /// code may be missing), or a sentence describing the error. Or pass `signature`.
    #[serde(default)]
    pub error_text: Option<String>,
    /// A signature to look up (or pass `error_text`).
    #[serde(default)]
    pub signature: Option<SignatureArgs>,
    /// How to read `error_text`: `tool_output`, `error_message` or `description`; understood
    /// from the text when left out.
    #[serde(default)]
    #[schemars(schema_with = "form_schema")]
    pub form: Option<String>,
    /// Most answers to return, `matched` and `related` together (default 5).
    #[serde(default)]
    pub limit: Option<usize>,
    /// The score an answer needs to be `matched`, 0 to 1 (default: the calibrated threshold).
    #[serde(default)]
    pub threshold: Option<f32>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// One changed file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileChangeArgs {
    pub file: String,
    /// What was changed in it.
    pub summary: String,
}

/// Arguments of `hindsight_resolve`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ResolveArgs {
    /// The signature to attach the fix to (from `hindsight_capture` or `hindsight_query`).
    #[serde(default)]
    pub signature_id: Option<String>,
    /// Or the raw error text; it is captured first.
    #[serde(default)]
    pub error_text: Option<String>,
    /// A fix already recorded (from `hindsight_query`) that fixed this error too, when it is
    /// another wording of the same error: the error joins that fix's lineage. Leave
    /// `description`, `diff` and `files` out then.
    #[serde(default)]
    pub resolution_id: Option<String>,
    /// What fixed the error, for the next one who meets it (required unless
    /// `resolution_id` is given).
    #[serde(default)]
    pub description: Option<String>,
    /// The change as a unified diff.
    #[serde(default)]
    pub diff: Option<String>,
    /// Or the files changed, with a summary each.
    #[serde(default)]
    pub files: Vec<FileChangeArgs>,
    /// Where the resolution lives (default: the signature's layer).
    #[serde(default)]
    #[schemars(schema_with = "optional_layer_schema")]
    pub layer: Option<String>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `hindsight_feedback`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct FeedbackArgs {
    /// The resolution that was applied.
    pub resolution_id: String,
    /// Whether it fixed the error.
    pub success: bool,
    #[serde(default)]
    pub comment: Option<String>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `hindsight_approve`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ApproveArgs {
    /// The pending promotion (from `hindsight_feedback` or `hindsight_promotions`).
    pub promotion_id: String,
    /// `false` rejects it (default `true`).
    #[serde(default)]
    pub approve: Option<bool>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `hindsight_promotions`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PromotionsArgs {
    /// `pending`, `promoted` or `rejected`; every status when left out.
    #[serde(default)]
    #[schemars(schema_with = "status_schema")]
    pub status: Option<String>,
    /// Most promotions to list, 1 to 100 (default 20).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// The result of `hindsight_promotions`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PromotionList {
    /// Promotions into the caller's scopes, newest first.
    pub promotions: Vec<Promotion>,
}

fn optional_layer_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = Layer::ALL.iter().map(|layer| layer.as_str()).collect();
    json_schema!({ "type": ["string", "null"], "enum": names })
}

fn form_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["string", "null"], "enum": ["tool_output", "error_message", "description"] })
}

fn status_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": ["string", "null"], "enum": ["pending", "promoted", "rejected"] })
}

fn layer(field: &str, value: Option<&str>) -> Result<Option<Layer>, HindsightError> {
    value
        .map(|v| parse_layer(field, v).map_err(|e| HindsightError::invalid(e.to_string())))
        .transpose()
}

fn id(field: &str, value: &str) -> Result<Uuid, HindsightError> {
    value.trim().parse().map_err(|_| {
        HindsightError::invalid(format!("`{field}` is `{value}`, which is not a UUID"))
    })
}

impl SignatureArgs {
    fn into_signature(self) -> Result<ErrorSignature, HindsightError> {
        let language: Language = self
            .language
            .parse()
            .map_err(|e: String| HindsightError::invalid(format!("`signature.language`: {e}")))?;
        Ok(ErrorSignature {
            error_type: self.error_type,
            message_pattern: self.message_pattern,
            stack_patterns: self.stack_patterns,
            context_patterns: self.context_patterns,
            language,
            embedding: None,
        })
    }
}

pub async fn capture(
    hindsight: &HindsightService,
    caller: &Principal,
    args: CaptureArgs,
) -> Result<CaptureOutcome, HindsightError> {
    let who = &caller.identity(&args.identity)?;
    let layer = layer("layer", args.layer.as_deref())?;
    hindsight
        .capture(
            who,
            CaptureRequest {
                error_text: args.error_text,
                layer,
            },
        )
        .await
}

pub async fn query(
    hindsight: &HindsightService,
    caller: &Principal,
    args: QueryArgs,
) -> Result<QueryOutcome, HindsightError> {
    let who = &caller.identity(&args.identity)?;
    let signature = args
        .signature
        .map(SignatureArgs::into_signature)
        .transpose()?;
    let form = match args.form.as_deref().map(str::trim) {
        None | Some("") => None,
        Some("tool_output") => Some(QueryForm::ToolOutput),
        Some("error_message") => Some(QueryForm::ErrorMessage),
        Some("description") => Some(QueryForm::Description),
        Some(other) => {
            return Err(HindsightError::invalid(format!(
                "`form` is `{other}`; expected tool_output, error_message or description (or \
                 leave it out)"
            )));
        }
    };
    let request = QueryRequest {
        error_text: args.error_text,
        signature,
        form,
        limit: args.limit,
        threshold: args.threshold,
    };
    hindsight.query(who, request).await
}

pub async fn resolve(
    hindsight: &HindsightService,
    caller: &Principal,
    args: ResolveArgs,
) -> Result<ResolveOutcome, HindsightError> {
    let who = &caller.identity(&args.identity)?;
    let request = ResolveRequest {
        signature_id: args
            .signature_id
            .as_deref()
            .map(|v| id("signature_id", v))
            .transpose()?,
        error_text: args.error_text,
        resolution_id: args
            .resolution_id
            .as_deref()
            .map(|v| id("resolution_id", v))
            .transpose()?,
        description: args.description.unwrap_or_default(),
        changes: Changes {
            diff: args.diff,
            files: args
                .files
                .into_iter()
                .map(|f| FileChange {
                    file: f.file,
                    summary: f.summary,
                })
                .collect(),
        },
        layer: layer("layer", args.layer.as_deref())?,
    };
    hindsight.resolve(who, request).await
}

pub async fn feedback(
    hindsight: &HindsightService,
    caller: &Principal,
    args: FeedbackArgs,
) -> Result<FeedbackOutcome, HindsightError> {
    let who = &caller.identity(&args.identity)?;
    let request = FeedbackRequest {
        resolution_id: id("resolution_id", &args.resolution_id)?,
        success: args.success,
        comment: args.comment,
    };
    hindsight.feedback(who, request).await
}

pub async fn approve(
    hindsight: &HindsightService,
    caller: &Principal,
    args: ApproveArgs,
) -> Result<Promotion, HindsightError> {
    let who = &caller.identity(&args.identity)?;
    let request = ApproveRequest {
        promotion_id: id("promotion_id", &args.promotion_id)?,
        approve: args.approve.unwrap_or(true),
    };
    hindsight.approve(who, request).await
}

pub async fn promotions(
    hindsight: &HindsightService,
    caller: &Principal,
    args: PromotionsArgs,
) -> Result<PromotionList, HindsightError> {
    let who = &caller.identity(&args.identity)?;
    let status = match args.status.as_deref().map(str::trim) {
        None | Some("") => None,
        Some("pending") => Some(PromotionStatus::Pending),
        Some("promoted") => Some(PromotionStatus::Promoted),
        Some("rejected") => Some(PromotionStatus::Rejected),
        Some(other) => {
            return Err(HindsightError::invalid(format!(
                "`status` is `{other}`; expected pending, promoted or rejected"
            )));
        }
    };
    let limit = args.limit.unwrap_or(DEFAULT_PROMOTIONS_LIMIT);
    let promotions = hindsight.promotions(who, status, limit).await?;
    Ok(PromotionList { promotions })
}
