//! Hindsight Learning's tools: `hindsight_capture`, `hindsight_query`, `hindsight_resolve`,
//! `hindsight_feedback`, `hindsight_approve` and `hindsight_promotions`. Each builds the
//! caller's identity, calls [`crate::domain::hindsight`] and shapes the result.

use aeterna_hindsight::{
    CaptureOutcome, FeedbackOutcome, HindsightError, Promotion, QueryOutcome, ResolveOutcome,
};
use rmcp::handler::server::common::schema_for_output;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::params::Parameters;
use super::{AeternaMcp, AgentError, Caller, answer};
use crate::domain::hindsight::{
    self, ApproveArgs, CaptureArgs, FeedbackArgs, PromotionList, PromotionsArgs, QueryArgs,
    ResolveArgs,
};
use aeterna_memory::MemoryError;

impl AgentError for HindsightError {
    fn into_memory(self) -> Result<MemoryError, Self> {
        match self {
            HindsightError::Memory(error) => Ok(error),
            other => Err(other),
        }
    }

    fn is_callers(&self) -> bool {
        self.is_caller_error()
    }
}

#[tool_router(router = hindsight_router, vis = "pub(crate)")]
impl AeternaMcp {
    /// Record a failure: pass the raw output of the failing compiler, test run, program or
    /// shell command. Each error in it becomes a normalised signature (paths, lines, ids and
    /// identifiers replaced by placeholders); a repeat of a known error raises its
    /// `occurrence_count`. Secrets are redacted before storage.
    #[tool(
        name = "hindsight_capture",
        output_schema = schema_for_output::<CaptureOutcome>(),
        annotations(
            title = "Record an error",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn hindsight_capture(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<CaptureArgs>,
    ) -> CallToolResult {
        answer(
            "hindsight_capture",
            hindsight::capture(&self.state.hindsight, &caller, args).await,
        )
    }

    /// Look up how an error was fixed before. Pass the raw error output, just the error
    /// message (its code may be missing), or a sentence describing the error; the answer's
    /// `form` says how the text was read. `matched` lists stored errors scoring at least the
    /// calibrated threshold, whose fixes are safe to apply; `related` lists the next best
    /// candidates with their evidence (worth a look, not proven). Each comes with its
    /// resolutions ranked by confidence-adjusted success rate. Use it when a build or test
    /// fails.
    #[tool(
        name = "hindsight_query",
        output_schema = schema_for_output::<QueryOutcome>(),
        annotations(
            title = "Find known fixes",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn hindsight_query(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<QueryArgs>,
    ) -> CallToolResult {
        answer(
            "hindsight_query",
            hindsight::query(&self.state.hindsight, &caller, args).await,
        )
    }

    /// Attach what fixed an error: a description plus the change (a unified `diff`, or
    /// `files` with a summary each), to a `signature_id` or to raw `error_text`. The fix is
    /// also stored as a Markdown memory of kind `hindsight`. When the error is another wording
    /// of one whose fix you applied, pass that fix's `resolution_id` instead of a description:
    /// the error joins its lineage (a near-duplicate description does the same).
    #[tool(
        name = "hindsight_resolve",
        output_schema = schema_for_output::<ResolveOutcome>(),
        annotations(
            title = "Record a fix",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn hindsight_resolve(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<ResolveArgs>,
    ) -> CallToolResult {
        answer(
            "hindsight_resolve",
            hindsight::resolve(&self.state.hindsight, &caller, args).await,
        )
    }

    /// Report that a resolution was applied and whether it worked. Updates its success rate;
    /// a resolution that keeps working is promoted to the next broader layer (project → team
    /// → org → company), or queued for approval where that layer requires it.
    #[tool(
        name = "hindsight_feedback",
        output_schema = schema_for_output::<FeedbackOutcome>(),
        annotations(
            title = "Report a fix's outcome",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn hindsight_feedback(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<FeedbackArgs>,
    ) -> CallToolResult {
        answer(
            "hindsight_feedback",
            hindsight::feedback(&self.state.hindsight, &caller, args).await,
        )
    }

    /// Approve (or, with `approve: false`, reject) a pending promotion. Needs the target
    /// layer's scope (`team_id` for a promotion into a team). Deciding twice changes nothing.
    #[tool(
        name = "hindsight_approve",
        output_schema = schema_for_output::<Promotion>(),
        annotations(
            title = "Decide a promotion",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn hindsight_approve(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<ApproveArgs>,
    ) -> CallToolResult {
        answer(
            "hindsight_approve",
            hindsight::approve(&self.state.hindsight, &caller, args).await,
        )
    }

    /// List promotions into your scopes, newest first; `status: "pending"` shows what awaits
    /// approval.
    #[tool(
        name = "hindsight_promotions",
        output_schema = schema_for_output::<PromotionList>(),
        annotations(
            title = "List promotions",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn hindsight_promotions(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<PromotionsArgs>,
    ) -> CallToolResult {
        answer(
            "hindsight_promotions",
            hindsight::promotions(&self.state.hindsight, &caller, args).await,
        )
    }
}
