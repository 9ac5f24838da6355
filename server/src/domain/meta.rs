//! The Meta-Agent's operations behind the `meta_loop_*` MCP tools: argument types (with the
//! JSON schemas agents see) and plain async functions over [`MetaService`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use aeterna_meta::{
    CommandsRequest, LoopList, LoopRecord, LoopState, MetaError, MetaService, Phase, StartRequest,
    StepAnswer, StepRequest,
};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::auth::Principal;
use crate::config::IdentityFields;

/// Loops listed when the caller does not say.
pub const DEFAULT_LOOPS_LIMIT: usize = 20;

/// Arguments of `meta_loop_start`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct StartArgs {
    /// What the loop should achieve ("make the parser tests pass").
    pub task: String,
    /// Command-driven: the name of the BUILD command in the operator's allow-list (no BUILD
    /// phase when left out). Needs `test_command` and `working_dir`.
    #[serde(default)]
    pub build_command: Option<String>,
    /// Command-driven: the name of the TEST command in the operator's allow-list. Leave out
    /// for a client-driven loop, where you run build and test and report each with
    /// meta_loop_step.
    #[serde(default)]
    pub test_command: Option<String>,
    /// Command-driven: the directory the commands run in (inside the operator's allowed
    /// roots).
    #[serde(default)]
    pub working_dir: Option<String>,
    /// Iterations before the loop escalates (default 3).
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// BUILD timeout in ms (default 120000).
    #[serde(default)]
    pub build_timeout_ms: Option<u64>,
    /// TEST timeout in ms (default 60000).
    #[serde(default)]
    pub test_timeout_ms: Option<u64>,
    /// Cumulative timeout of the whole loop in ms (default 900000).
    #[serde(default)]
    pub loop_timeout_ms: Option<u64>,
    /// The project (`project_id`) the loop learns in: notes and Hindsight records go there.
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `meta_loop_step`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct StepArgs {
    /// The loop (from meta_loop_start).
    pub loop_id: String,
    /// The phase you ran: `build` or `test` (at an iteration's start, `test` when there is
    /// nothing to build).
    #[schemars(schema_with = "phase_schema")]
    pub phase: String,
    /// Whether it succeeded (the build compiled; every test passed).
    pub success: bool,
    /// Its output (compiler or test-runner output); long output keeps its head and tail.
    #[serde(default)]
    pub output: String,
    /// How long it took, in ms.
    #[serde(default)]
    pub duration_ms: u64,
    /// Tests that failed, if you know them (they are also read from `output`).
    #[serde(default)]
    pub failing_tests: Vec<String>,
    /// What you changed or noticed (BUILD).
    #[serde(default)]
    pub notes: Option<String>,
    /// LLM tokens you spent on this iteration.
    #[serde(default)]
    pub tokens_used: u64,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `meta_loop_status`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct StatusArgs {
    pub loop_id: String,
    /// Wait up to this many ms for the loop to end (default 0: answer at once; at most the
    /// server's `meta.max_wait_ms`, 30000 by default). Progress notifications are sent while
    /// waiting when the request carries a progress token.
    #[serde(default)]
    pub wait_ms: Option<u64>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `meta_loop_cancel`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CancelArgs {
    pub loop_id: String,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

/// Arguments of `meta_loop_list`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ListArgs {
    /// Only loops in this state.
    #[serde(default)]
    #[schemars(schema_with = "state_schema")]
    pub state: Option<String>,
    /// Most loops to list, newest first (default 20, at most `meta.max_listed`).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

fn phase_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": ["build", "test"] })
}

fn state_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = LoopState::ALL.iter().map(|s| s.as_str()).collect();
    json_schema!({ "type": ["string", "null"], "enum": names })
}

fn loop_id(value: &str) -> Result<Uuid, MetaError> {
    value.trim().parse().map_err(|_| {
        MetaError::invalid(format!(
            "`loop_id` is `{value}`, which is not a loop id; ids are UUIDs as meta_loop_start \
             returns them"
        ))
    })
}

pub async fn start(
    meta: &Arc<MetaService>,
    caller: &Principal,
    args: StartArgs,
) -> Result<StepAnswer, MetaError> {
    let who = caller.identity(&args.identity)?;
    let commands = match (args.test_command, args.working_dir) {
        (None, None) if args.build_command.is_none() => None,
        (Some(test), Some(working_dir)) => Some(CommandsRequest {
            build: args.build_command,
            test,
            working_dir,
        }),
        (None, _) => {
            return Err(MetaError::invalid(
                "`test_command` is missing: a command-driven loop needs `test_command` and \
                 `working_dir` (leave out all three for a client-driven loop)",
            ));
        }
        (Some(_), None) => {
            return Err(MetaError::invalid(
                "`working_dir` is missing: a command-driven loop runs its commands in a \
                 directory inside the operator's allowed roots",
            ));
        }
    };
    meta.start_loop(
        &who,
        StartRequest {
            task: args.task,
            commands,
            max_iterations: args.max_iterations,
            build_timeout_ms: args.build_timeout_ms,
            test_timeout_ms: args.test_timeout_ms,
            loop_timeout_ms: args.loop_timeout_ms,
        },
    )
    .await
}

pub async fn step(
    meta: &MetaService,
    caller: &Principal,
    args: StepArgs,
) -> Result<StepAnswer, MetaError> {
    let who = caller.identity(&args.identity)?;
    let phase = match args.phase.trim() {
        "build" => Phase::Build,
        "test" => Phase::Test,
        other => {
            return Err(MetaError::invalid(format!(
                "`phase` is `{other}`; report `build` or `test`"
            )));
        }
    };
    meta.step(
        &who,
        StepRequest {
            loop_id: loop_id(&args.loop_id)?,
            phase,
            success: args.success,
            output: args.output,
            duration_ms: args.duration_ms,
            failing_tests: args.failing_tests,
            notes: args.notes,
            tokens_used: args.tokens_used,
        },
    )
    .await
}

/// The loop's status, after waiting up to `wait_ms` for it to end; `on_update` hears each
/// change meanwhile, and `cancel` (the request was cancelled) stops the wait.
pub async fn status<F, Fut>(
    meta: &MetaService,
    caller: &Principal,
    args: StatusArgs,
    cancel: &CancellationToken,
    on_update: F,
) -> Result<LoopRecord, MetaError>
where
    F: FnMut(LoopRecord) -> Fut,
    Fut: Future<Output = ()>,
{
    let who = caller.identity(&args.identity)?;
    let id = loop_id(&args.loop_id)?;
    match args.wait_ms.unwrap_or(0) {
        0 => meta.status(&who, id).await,
        wait => {
            meta.wait(&who, id, Duration::from_millis(wait), cancel, on_update)
                .await
        }
    }
}

pub async fn cancel(
    meta: &MetaService,
    caller: &Principal,
    args: CancelArgs,
) -> Result<LoopRecord, MetaError> {
    let who = caller.identity(&args.identity)?;
    meta.cancel(&who, loop_id(&args.loop_id)?).await
}

pub async fn list(
    meta: &MetaService,
    caller: &Principal,
    args: ListArgs,
) -> Result<LoopList, MetaError> {
    let who = caller.identity(&args.identity)?;
    let state = match args.state.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(name) => Some(LoopState::parse(name).ok_or_else(|| {
            MetaError::invalid(format!(
                "`state` is `{name}`; expected one of queued, running, succeeded, failed, \
                 escalated, cancelled, timed_out (or leave it out)"
            ))
        })?),
    };
    meta.list(&who, state, args.limit.unwrap_or(DEFAULT_LOOPS_LIMIT))
        .await
}
