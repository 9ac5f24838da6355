//! Progress notifications for long tool calls. A client that wants them sends
//! `_meta.progressToken` with its `tools/call`; [`Progress`] then sends
//! `notifications/progress` for that token, and does nothing otherwise.

use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{ErrorData, Peer, RoleServer};

/// Where to report a tool call's progress, if the caller asked for it.
pub struct Progress {
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
}

impl Progress {
    /// Reports `done` of `total` steps. A client that went away is not an error of the call.
    pub async fn report(&self, done: usize, total: usize, message: impl Into<String>) {
        let Some(token) = &self.token else {
            return;
        };
        let notification = ProgressNotificationParam::new(token.clone(), done as f64)
            .with_total(total as f64)
            .with_message(message);
        if let Err(error) = self.peer.notify_progress(notification).await {
            tracing::debug!(%error, "cannot send a progress notification");
        }
    }
}

impl<S> FromContextPart<ToolCallContext<'_, S>> for Progress {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let request = &context.request_context;
        Ok(Progress {
            peer: request.peer.clone(),
            token: request.meta.get_progress_token(),
        })
    }
}

/// The cancellation of a tool call: fires when the client sends `notifications/cancelled` for
/// the request, so a long wait can stop.
pub struct Cancellation(pub tokio_util::sync::CancellationToken);

impl<S> FromContextPart<ToolCallContext<'_, S>> for Cancellation {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        Ok(Cancellation(context.request_context.ct.clone()))
    }
}
