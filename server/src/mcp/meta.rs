//! The Meta-Agent's tools: `meta_loop_start`, `meta_loop_step`, `meta_loop_status`,
//! `meta_loop_cancel` and `meta_loop_list`. Each builds the caller's identity, calls
//! [`crate::domain::meta`] and shapes the result.

use aeterna_meta::{LoopList, LoopRecord, MetaError, StepAnswer};
use rmcp::handler::server::common::schema_for_output;
use rmcp::model::{CallToolResponse, CallToolResult};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, tool, tool_router};

use super::params::Parameters;
use super::progress::{Cancellation, Progress};
use super::{AeternaMcp, AgentError, Caller, answer, tasks};
use crate::domain::meta::{self, CancelArgs, ListArgs, StartArgs, StatusArgs, StepArgs};
use aeterna_memory::MemoryError;

impl AgentError for MetaError {
    fn into_memory(self) -> Result<MemoryError, Self> {
        match self {
            MetaError::Memory(error) => Ok(error),
            other => Err(other),
        }
    }

    fn is_callers(&self) -> bool {
        self.is_caller_error()
    }
}

#[tool_router(router = meta_router, vis = "pub(crate)")]
impl AeternaMcp {
    /// Start a build → test → improve loop for a task; returns its `loop_id` at once.
    /// Client-driven (no commands): run the build and the tests yourself and report each with
    /// meta_loop_step; every answer says what to do next, with Hindsight's known fixes for the
    /// failure, relevant notes and an assembled context. Command-driven (`test_command`,
    /// optional `build_command`, `working_dir`): the server runs the operator's allowed
    /// commands in the background (BUILD 120 s, TEST 60 s, 3 iterations by default); follow it
    /// with meta_loop_status (or, when your client declares the MCP Tasks extension, the task
    /// this call returns: tasks/get, tasks/cancel). A loop ends `succeeded`, `escalated` (with
    /// a report for a person), `failed`, `cancelled` or `timed_out`.
    #[tool(
        name = "meta_loop_start",
        output_schema = schema_for_output::<StepAnswer>(),
        annotations(
            title = "Start a build/test/improve loop",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn meta_loop_start(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<StartArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let started = meta::start(&self.state.meta, &caller, args).await;
        let speaks_tasks = context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks());
        if speaks_tasks
            && let Ok(first) = &started
            && let Some(task) = tasks::handle(&first.record)
        {
            return CallToolResponse::Task(task);
        }
        answer("meta_loop_start", started).into()
    }

    /// Report the outcome of a phase you ran in a client-driven loop (`build` or `test`, with
    /// `success` and the `output`). The answer's `next` says what to do: build, test, or done;
    /// after a failure the loop's `last_improve` says `retry`, `refine` (apply the fix in
    /// `hindsight`, or fix the failure) or `escalate` (see `escalation_report`).
    #[tool(
        name = "meta_loop_step",
        output_schema = schema_for_output::<StepAnswer>(),
        annotations(
            title = "Report a loop phase",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn meta_loop_step(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<StepArgs>,
    ) -> CallToolResult {
        answer(
            "meta_loop_step",
            meta::step(&self.state.meta, &caller, args).await,
        )
    }

    /// A loop's state, iterations and last BUILD, TEST and IMPROVE. With `wait_ms`, waits up
    /// to that long for the loop to end (progress notifications meanwhile when you send a
    /// progress token; cancelling the request stops the wait).
    #[tool(
        name = "meta_loop_status",
        output_schema = schema_for_output::<LoopRecord>(),
        annotations(
            title = "Loop status",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn meta_loop_status(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<StatusArgs>,
        progress: Progress,
        Cancellation(cancel): Cancellation,
    ) -> CallToolResult {
        let progress = &progress;
        let result = meta::status(
            &self.state.meta,
            &caller,
            args,
            &cancel,
            |record| async move {
                let message = tasks::progress_line(&record);
                let done = record.iteration.saturating_sub(1) as usize;
                progress
                    .report(done, record.limits.max_iterations as usize, message)
                    .await;
            },
        )
        .await;
        answer("meta_loop_status", result)
    }

    /// Cancel a loop: a running command is killed with its whole process group. A loop that
    /// has already ended is returned unchanged.
    #[tool(
        name = "meta_loop_cancel",
        output_schema = schema_for_output::<LoopRecord>(),
        annotations(
            title = "Cancel a loop",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn meta_loop_cancel(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<CancelArgs>,
    ) -> CallToolResult {
        answer(
            "meta_loop_cancel",
            meta::cancel(&self.state.meta, &caller, args).await,
        )
    }

    /// Your loops, newest first, optionally only those in one `state`.
    #[tool(
        name = "meta_loop_list",
        output_schema = schema_for_output::<LoopList>(),
        annotations(
            title = "List loops",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    async fn meta_loop_list(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<ListArgs>,
    ) -> CallToolResult {
        answer(
            "meta_loop_list",
            meta::list(&self.state.meta, &caller, args).await,
        )
    }
}
