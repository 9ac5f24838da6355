//! The local command runner: the Meta-Agent's command-driven mode on the developer's machine.
//!
//! `meta_run_local` runs one BUILD or TEST command of a client-driven loop where the code is —
//! next to the agent, not next to the server — and reports the outcome to the server's loop
//! with `meta_loop_step`, whose answer (the next action, Hindsight's fixes, notes, context) it
//! returns beside the run.
//!
//! The commands come only from the bridge's own allow-list (`--commands FILE`, the server's
//! `[meta]` table: `allowed_roots`, `[commands.NAME] argv = […]`, the phase timeouts and the
//! output cap), by name: nothing an agent sends reaches a shell. The run itself is the
//! Meta-Agent's [`runner`](aeterna_meta::runner): its own process group, killed whole at the
//! timeout or when the request is cancelled, output kept head + tail within the cap.

use std::time::Duration;

use aeterna_meta::MetaConfig;
use aeterna_meta::runner::{self, RunEnd, RunOutcome};
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject, Tool,
    ToolAnnotations,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::forward::{Forwarder, result_text};
use crate::tools::error_result;

pub const RUN_LOCAL: &str = "meta_run_local";
/// The server tool the outcome is reported with.
const STEP: &str = "meta_loop_step";

/// The phase a command runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Build,
    Test,
}

/// Arguments of `meta_run_local`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RunLocalArgs {
    /// The loop (from meta_loop_start without commands: a client-driven loop).
    pub loop_id: String,
    /// `build` or `test`: the phase the loop's last answer asked for.
    pub phase: Phase,
    /// The name of a command in the bridge's allow-list (its `--commands` file).
    pub command: String,
    /// The directory to run it in (inside the allow-list's `allowed_roots`).
    pub working_dir: String,
    /// Timeout in ms (default: the allow-list's `build_timeout_ms` or `test_timeout_ms`; at
    /// most its `max_phase_timeout_ms`).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Any other argument (`project_id`, …) is passed on to `meta_loop_step`.
    #[serde(flatten)]
    pub step_arguments: JsonObject,
}

/// What ran and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocalRun {
    pub command: String,
    pub argv: Vec<String>,
    pub working_dir: String,
    pub success: bool,
    /// `None` when the command could not start, timed out or was cancelled.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub cancelled: bool,
    pub duration_ms: u64,
    /// Output bytes left out between the kept head and tail.
    pub omitted_bytes: u64,
}

/// The tool's definition.
pub fn definition() -> Tool {
    Tool::new(
        RUN_LOCAL,
        "Run a build or test command of a client-driven Meta-Agent loop on this machine and \
         report it to the loop (meta_loop_step); returns the run and the loop's answer (next \
         action, known fixes, notes). `command` names an entry of the bridge's allow-list \
         (started with --commands); the command runs without a shell in `working_dir` (inside \
         the allow-list's roots), its whole process group killed at the phase timeout.",
        schema_for_type::<RunLocalArgs>(),
    )
    .annotate(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(false)
            .open_world(true),
    )
}

/// Runs `meta_run_local`; `commands` is the bridge's allow-list (`None`: not configured).
pub async fn run_local(
    commands: Option<&MetaConfig>,
    forwarder: &Forwarder,
    arguments: Option<JsonObject>,
    cancel: &CancellationToken,
) -> CallToolResult {
    let Some(config) = commands else {
        return error_result(format!(
            "{RUN_LOCAL}: the bridge has no command allow-list; start it with --commands FILE \
             (allowed_roots and [commands.NAME] argv, as the server's [meta] table)"
        ));
    };
    let args: RunLocalArgs =
        match serde_json::from_value(serde_json::Value::Object(arguments.unwrap_or_default())) {
            Ok(args) => args,
            Err(error) => {
                return error_result(format!(
                    "{RUN_LOCAL}: invalid arguments: {error}; the tool's inputSchema lists them"
                ));
            }
        };
    let (command, timeout) = match prepare(config, &args) {
        Ok(prepared) => prepared,
        Err(error) => return error_result(format!("{RUN_LOCAL}: {error}")),
    };
    let span = tracing::info_span!(
        "local_command",
        command = %command.name,
        phase = ?args.phase,
        dir = %command.working_dir.display(),
    );
    let outcome = runner::run(&command, timeout, config.max_output_bytes, cancel)
        .instrument(span)
        .await;
    let run = local_run(&command, &outcome);
    if run.cancelled {
        return error_result(format!(
            "{RUN_LOCAL}: cancelled; `{}` was killed with its process group and nothing was \
             reported to the loop",
            command.display()
        ));
    }
    report(forwarder, &args, run, outcome).await
}

/// Checks the command and the directory against the allow-list and picks the timeout.
fn prepare(
    config: &MetaConfig,
    args: &RunLocalArgs,
) -> aeterna_meta::Result<(runner::PreparedCommand, Duration)> {
    let dir = runner::allowed_working_dir(config, &args.working_dir)?;
    let command = runner::allowed_command(config, "command", &args.command, &dir)?;
    let default = match args.phase {
        Phase::Build => config.build_timeout_ms,
        Phase::Test => config.test_timeout_ms,
    };
    let timeout_ms = args.timeout_ms.unwrap_or(default);
    if timeout_ms == 0 || timeout_ms > config.max_phase_timeout_ms {
        return Err(aeterna_meta::MetaError::invalid(format!(
            "`timeout_ms` is {timeout_ms}; it must be 1..={} (the allow-list's \
             max_phase_timeout_ms)",
            config.max_phase_timeout_ms
        )));
    }
    Ok((command, Duration::from_millis(timeout_ms)))
}

fn local_run(command: &runner::PreparedCommand, outcome: &RunOutcome) -> LocalRun {
    LocalRun {
        command: command.name.clone(),
        argv: command.argv.clone(),
        working_dir: command.working_dir.display().to_string(),
        success: outcome.success(),
        exit_code: match outcome.end {
            RunEnd::Exited(code) => code,
            RunEnd::TimedOut | RunEnd::Cancelled => None,
        },
        timed_out: outcome.end == RunEnd::TimedOut,
        cancelled: outcome.end == RunEnd::Cancelled,
        duration_ms: outcome.duration.as_millis() as u64,
        omitted_bytes: outcome.omitted_bytes,
    }
}

/// Sends the outcome with `meta_loop_step` and combines the run with the loop's answer. When
/// the server cannot take it, the answer is a tool error that still carries the whole run, so
/// the agent can report it itself: nothing is lost.
async fn report(
    forwarder: &Forwarder,
    args: &RunLocalArgs,
    run: LocalRun,
    outcome: RunOutcome,
) -> CallToolResult {
    let mut step = args.step_arguments.clone();
    step.insert("loop_id".into(), args.loop_id.clone().into());
    step.insert(
        "phase".into(),
        serde_json::to_value(args.phase).unwrap_or_default(),
    );
    step.insert("success".into(), run.success.into());
    step.insert("output".into(), outcome.output.clone().into());
    step.insert("duration_ms".into(), run.duration_ms.into());
    // The agent's own notes win; otherwise the step says where it ran.
    step.entry("notes").or_insert_with(|| {
        format!("ran `{}` locally through the bridge", outcome_command(&run)).into()
    });
    let request = CallToolRequestParams::new(STEP).with_arguments(step);
    let failure = match forwarder.remote().call_tool(request).await {
        Ok(CallToolResponse::Complete(answer)) if answer.is_error != Some(true) => {
            let value = serde_json::json!({
                "run": run,
                "step": answer.structured_content,
            });
            let mut result = CallToolResult::structured(value);
            result
                .content
                .push(ContentBlock::text(format!("output:\n{}", outcome.output)));
            return result;
        }
        Ok(CallToolResponse::Complete(answer)) => result_text(&answer),
        Ok(_) => "the server answered with a task instead of a result".to_owned(),
        Err(error) => error.to_string(),
    };
    let mut result = error_result(format!(
        "{RUN_LOCAL}: `{}` ran ({}), but {STEP} failed: {failure}. Report the run below with \
         {STEP} yourself once that is fixed.",
        outcome_command(&run),
        if run.success { "succeeded" } else { "failed" },
    ));
    result.content.push(ContentBlock::text(
        serde_json::to_string(&run).unwrap_or_default(),
    ));
    result
        .content
        .push(ContentBlock::text(format!("output:\n{}", outcome.output)));
    result
}

fn outcome_command(run: &LocalRun) -> String {
    run.argv.join(" ")
}
