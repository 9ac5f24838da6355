//! Forwarding tool calls to the memory server, with the write queue behind it.
//!
//! * A call to a queued tool (`memory_add`, `trajectory_capture`) while the server is
//!   unreachable is written to the [`WriteQueue`] and answered with a tool error that says so
//!   (the write is not stored yet; do not retry it).
//! * While entries wait, a new write first drains the queue (so writes arrive in order) and is
//!   queued itself if the server drops again.
//! * [`Forwarder::drain`] delivers queued entries oldest first; each is removed only after the
//!   server answered it. It runs on every (re)connection and before a new write.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject};

use crate::queue::{QUEUED_TOOLS, WriteQueue};
use crate::remote::{Remote, RemoteError};
use crate::tools::error_result;

/// Forwards calls to the server and owns the write queue's delivery.
pub struct Forwarder {
    remote: Arc<Remote>,
    queue: Arc<WriteQueue>,
    /// One delivery at a time, so entries leave in order.
    draining: tokio::sync::Mutex<()>,
}

/// What one drain achieved.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    pub delivered: usize,
    pub refused: usize,
    /// Entries still waiting (the server dropped again, or did not answer in time).
    pub remaining: usize,
}

impl Forwarder {
    pub fn new(remote: Arc<Remote>, queue: Arc<WriteQueue>) -> Arc<Self> {
        Arc::new(Self {
            remote,
            queue,
            draining: tokio::sync::Mutex::new(()),
        })
    }

    pub fn remote(&self) -> &Arc<Remote> {
        &self.remote
    }

    pub fn queue(&self) -> &Arc<WriteQueue> {
        &self.queue
    }

    /// Delivers on every (re)connection, for as long as the forwarder lives.
    pub fn spawn_delivery(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let mut connections = self.remote.subscribe();
        tokio::spawn(async move {
            loop {
                let Some(this) = weak.upgrade() else { return };
                if this.remote.is_connected() && !this.queue.is_empty() {
                    let drained = this.drain().await;
                    tracing::info!(?drained, "queued writes delivered");
                }
                drop(this);
                if connections.changed().await.is_err() {
                    return;
                }
            }
        });
    }

    /// Sends queued entries, oldest first, until the queue is empty or the server fails.
    pub async fn drain(&self) -> Drained {
        let _draining = self.draining.lock().await;
        let mut drained = Drained::default();
        let Some(_delivering) = self.queue.try_deliver() else {
            // Another process sharing this data dir is delivering them.
            drained.remaining = self.queue.len();
            return drained;
        };
        while let Some(entry) = self.queue.front() {
            let params = CallToolRequestParams::new(entry.call.tool.clone())
                .with_arguments(entry.call.arguments.clone());
            match self.remote.call_tool(params).await {
                Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                    self.queue.refuse(&entry, &result_text(&result));
                    drained.refused += 1;
                }
                Ok(_) => {
                    tracing::debug!(tool = %entry.call.tool, key = %entry.call.key, "queued write delivered");
                    self.queue.remove(&entry);
                    drained.delivered += 1;
                }
                Err(RemoteError::Protocol(error)) => {
                    self.queue.refuse(&entry, &error.message);
                    drained.refused += 1;
                }
                Err(error) => {
                    tracing::warn!(%error, "delivery of queued writes paused");
                    break;
                }
            }
        }
        drained.remaining = self.queue.len();
        drained
    }

    /// Forwards a call to the server (queueing writes while it is unreachable).
    pub async fn call(
        &self,
        request: CallToolRequestParams,
    ) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        let queued_tool = QUEUED_TOOLS.contains(&tool.as_str());
        if queued_tool {
            if !self.queue.is_empty() && self.remote.is_connected() {
                self.drain().await;
            }
            if !self.queue.is_empty() || !self.remote.is_connected() {
                return Ok(self.enqueue(
                    &tool,
                    request.arguments.clone().unwrap_or_default(),
                    None,
                ));
            }
        }
        let arguments = request.arguments.clone();
        match self.remote.call_tool(request).await {
            // The server answered in the protocol revision it negotiated with the bridge; the
            // agent may speak a newer one, where a result says it is complete.
            Ok(CallToolResponse::Complete(mut result)) => {
                result
                    .result_type
                    .get_or_insert(rmcp::model::ResultType::COMPLETE);
                Ok(CallToolResponse::Complete(result))
            }
            Ok(response) => Ok(response),
            Err(RemoteError::Protocol(error)) => Err(error),
            Err(error @ RemoteError::Unreachable { .. }) if queued_tool => {
                Ok(self.enqueue(&tool, arguments.unwrap_or_default(), Some(&error)))
            }
            Err(error) => Ok(error_result(format!("{tool}: {error}")).into()),
        }
    }

    fn enqueue(
        &self,
        tool: &str,
        arguments: JsonObject,
        error: Option<&RemoteError>,
    ) -> CallToolResponse {
        let why = match error {
            Some(error) => error.to_string(),
            None if self.remote.is_connected() => format!(
                "earlier writes to the memory server at {} are still being delivered",
                self.remote.url()
            ),
            None => RemoteError::Unreachable {
                url: self.remote.url().to_owned(),
                reason: self.remote.last_error(),
            }
            .to_string(),
        };
        let text = match self.queue.push(tool, arguments) {
            Ok(position) => format!(
                "{tool}: {why}. The write is queued locally (position {position}) and will be \
                 sent, in order, when the server is back; do not send it again."
            ),
            Err(error) => format!("{tool}: {why}. {error}"),
        };
        error_result(text).into()
    }
}

/// The text blocks of a result, joined.
pub(crate) fn result_text(result: &CallToolResult) -> String {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    text.join("\n")
}
