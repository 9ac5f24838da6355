//! The Context Architect's tools: `context_assemble`, `summary_get` and `summary_refresh`.
//! Each builds the caller's identity, calls [`crate::domain::context`] and shapes the result.

use aeterna_context::{AssembledContext, ContextError, LayerSummary};
use rmcp::handler::server::common::schema_for_output;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::params::Parameters;
use super::progress::Progress;
use super::{AeternaMcp, AgentError, Caller, answer};
use crate::domain::context::{self, AssembleArgs, Refreshed, SummaryGetArgs, SummaryRefreshArgs};
use aeterna_memory::MemoryError;

impl AgentError for ContextError {
    fn into_memory(self) -> Result<MemoryError, Self> {
        match self {
            ContextError::Memory(error) => Ok(error),
            other => Err(other),
        }
    }

    fn is_callers(&self) -> bool {
        !matches!(
            self,
            ContextError::Storage { .. } | ContextError::Tokenizer(_)
        )
    }
}

#[tool_router(router = context_router, vis = "pub(crate)")]
impl AeternaMcp {
    /// Assemble the context for a task: the most relevant memories of every layer you can see
    /// (and layer summaries where a layer has more than fits), deduplicated, as Markdown grouped
    /// by layer, within `token_budget` tokens. `sources` lists what went in, most relevant first.
    #[tool(
        name = "context_assemble",
        output_schema = schema_for_output::<AssembledContext>(),
        annotations(
            title = "Assemble context",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn context_assemble(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<AssembleArgs>,
    ) -> CallToolResult {
        answer(
            "context_assemble",
            context::assemble(&self.state.context, &caller, args).await,
        )
    }

    /// Read the summary of one layer at a depth: `sentence` (~50 tokens), `paragraph` (~200)
    /// or `detailed` (~500). Generated on first use; kept fresh as the layer changes.
    #[tool(
        name = "summary_get",
        output_schema = schema_for_output::<LayerSummary>(),
        annotations(
            title = "Read a layer summary",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn summary_get(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<SummaryGetArgs>,
    ) -> CallToolResult {
        answer(
            "summary_get",
            context::summary_get(&self.state.context, &caller, args).await,
        )
    }

    /// Regenerate layer summaries now (every layer you can see, or only `layers`). A layer
    /// whose memories are unchanged since its last summary is skipped (`regenerated: false`).
    #[tool(
        name = "summary_refresh",
        output_schema = schema_for_output::<Refreshed>(),
        annotations(
            title = "Refresh layer summaries",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn summary_refresh(
        &self,
        Caller(caller): Caller,
        progress: Progress,
        Parameters(args): Parameters<SummaryRefreshArgs>,
    ) -> CallToolResult {
        let result = async {
            let (who, layers) = context::refresh_plan(&caller, args)?;
            let mut refreshed = Vec::with_capacity(layers.len());
            for (done, layer) in layers.iter().enumerate() {
                let message = format!("refreshing the {layer} layer");
                progress.report(done, layers.len(), message).await;
                let outcomes = context::refresh_layer(&self.state.context, &who, *layer).await?;
                refreshed.extend(outcomes);
            }
            progress.report(layers.len(), layers.len(), "done").await;
            Ok::<_, ContextError>(Refreshed { refreshed })
        };
        answer("summary_refresh", result.await)
    }
}
