//! The MCP Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) over the Meta-Agent's
//! command-driven loops, so that a client that speaks Tasks needs no custom tools to follow
//! background work:
//! - `meta_loop_start` with commands, from a client that declared the extension, answers with
//!   a task handle (`resultType: "task"`) whose id is the loop id;
//! - `tasks/get` answers the loop's state: `working` while it is queued or running, then
//!   `completed` with the loop record as the tool result (`isError` unless it succeeded), or
//!   `cancelled`;
//! - `tasks/cancel` cancels the loop (its commands are killed with their process group).
//!
//! Client-driven loops are answered at once, as without the extension: their work is the
//! client's. Loops stay reachable through `meta_loop_*` either way, and through `tasks/*`
//! only for the caller's tenant and grants (the same lookups as `meta_loop_status`).

use aeterna_meta::{Driver, LoopRecord, LoopState, MetaError};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ContentBlock, CreateTaskResult, DetailedTask, GetTaskResult, Task, TaskPayload,
    TaskStatus,
};
use tokio_util::sync::CancellationToken;

use crate::auth::Principal;
use crate::config::IdentityFields;
use crate::domain::meta::{self, CancelArgs, StatusArgs};
use crate::state::AppState;

/// How often a client should poll `tasks/get` for a loop, in milliseconds.
pub const POLL_INTERVAL_MS: u64 = 1_000;

/// The task handle for a loop, when it is background work (command-driven).
pub fn handle(record: &LoopRecord) -> Option<CreateTaskResult> {
    (record.driver == Driver::Command).then(|| CreateTaskResult::new(task(record)))
}

/// `tasks/get`: the loop's state, and its record once it has ended.
pub async fn get(
    state: &AppState,
    caller: &Principal,
    task_id: &str,
) -> Result<GetTaskResult, ErrorData> {
    let args = StatusArgs {
        loop_id: task_id.to_owned(),
        wait_ms: None,
        identity: IdentityFields::default(),
    };
    let record = meta::status(&state.meta, caller, args, &CancellationToken::new(), |_| {
        std::future::ready(())
    })
    .await
    .map_err(|error| task_error(task_id, error))?;
    Ok(GetTaskResult::new(detailed(&record)?))
}

/// `tasks/cancel`: cancels the loop; an ended loop is left as it is.
pub async fn cancel(state: &AppState, caller: &Principal, task_id: &str) -> Result<(), ErrorData> {
    let args = CancelArgs {
        loop_id: task_id.to_owned(),
        identity: IdentityFields::default(),
    };
    meta::cancel(&state.meta, caller, args)
        .await
        .map(drop)
        .map_err(|error| task_error(task_id, error))
}

/// Where a loop stands, in one line: the task's status message and the progress notification of
/// `meta_loop_status`.
pub(super) fn progress_line(record: &LoopRecord) -> String {
    format!(
        "{}: iteration {} of {}{}",
        record.state.as_str(),
        record.iteration,
        record.limits.max_iterations,
        record
            .phase
            .map(|phase| format!(", {}", phase.as_str()))
            .unwrap_or_default()
    )
}

fn task(record: &LoopRecord) -> Task {
    let status = match record.state {
        LoopState::Queued | LoopState::Running => TaskStatus::Working,
        LoopState::Cancelled => TaskStatus::Cancelled,
        LoopState::Succeeded | LoopState::Failed | LoopState::Escalated | LoopState::TimedOut => {
            TaskStatus::Completed
        }
    };
    let message = progress_line(record);
    Task::new(
        record.loop_id.to_string(),
        status,
        iso8601(record.created_at),
        iso8601(record.updated_at),
    )
    .with_status_message(message)
    .with_poll_interval_ms(POLL_INTERVAL_MS)
}

fn detailed(record: &LoopRecord) -> Result<DetailedTask, ErrorData> {
    let task = task(record);
    let payload = match task.status {
        TaskStatus::Working => TaskPayload::Working,
        TaskStatus::Cancelled => TaskPayload::Cancelled,
        _ => {
            let value = serde_json::to_value(record).map_err(|error| {
                ErrorData::internal_error(format!("cannot encode the loop: {error}"), None)
            })?;
            let mut result = CallToolResult::structured(value);
            if record.state != LoopState::Succeeded {
                result.is_error = Some(true);
                result.content = vec![ContentBlock::text(format!(
                    "the loop ended {}: {}",
                    record.state.as_str(),
                    record.reason.as_deref().unwrap_or("see the loop record")
                ))];
            }
            let result = match serde_json::to_value(result) {
                Ok(serde_json::Value::Object(result)) => result,
                _ => {
                    return Err(ErrorData::internal_error(
                        "a tool result did not encode as an object",
                        None,
                    ));
                }
            };
            TaskPayload::Completed { result }
        }
    };
    Ok(DetailedTask::new(task, payload))
}

/// The JSON-RPC error for a `tasks/*` request that failed: an unknown or unreachable task is
/// invalid params (the spec's answer for an unknown task id), a caller's mistake likewise.
fn task_error(task_id: &str, error: MetaError) -> ErrorData {
    if error.is_caller_error() {
        ErrorData::invalid_params(
            format!("task `{task_id}`: {error}"),
            Some(serde_json::json!({ "taskId": task_id })),
        )
    } else {
        tracing::warn!(task_id, %error, "a task request failed");
        ErrorData::internal_error(format!("task `{task_id}`: {error}"), None)
    }
}

/// A timestamp in milliseconds as ISO 8601 (UTC), as tasks carry them.
fn iso8601(millis: i64) -> String {
    chrono::DateTime::from_timestamp_millis(millis)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601_utc() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_764_700_000_123), "2025-12-02T18:26:40.123Z");
    }
}
