//! Writes that survive an outage: a write the server did not receive goes to the bridge's
//! durable queue ([`aeterna_bridge::queue::WriteQueue`], under `<data dir>/queue`) and is sent,
//! oldest first, by the next hook that finds the server up — before its own write, so writes
//! arrive in the order they were made.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use aeterna_bridge::queue::{QueueLimits, WriteQueue};
use serde_json::{Map, Value};

use crate::client::{CallError, McpClient};

/// What became of one write.
#[derive(Debug)]
pub enum Written {
    /// The server stored it; its structured answer.
    Stored(Value),
    /// Kept in the queue for later; `why` says what failed.
    Queued { why: String, position: usize },
    /// Not stored and not queued (refused, timed out, or the queue is full): `why` says which.
    Lost { why: String },
}

/// Delivers writes through the queue.
pub struct Writer {
    client: McpClient,
    dir: PathBuf,
    limits: QueueLimits,
    timeout: Duration,
    /// How long one hook may spend sending what earlier hooks queued.
    drain_budget: Duration,
}

impl Writer {
    pub fn new(client: McpClient, dir: PathBuf, limits: QueueLimits, timeout: Duration) -> Self {
        Self {
            client,
            dir,
            limits,
            timeout,
            drain_budget: Duration::from_secs(2),
        }
    }

    /// Sends `tool(arguments)`, queueing it when the server cannot be reached.
    pub async fn write(&self, tool: &str, arguments: Map<String, Value>) -> Written {
        let queue = match WriteQueue::open(&self.dir, self.limits) {
            Ok(queue) => queue,
            // Without a queue the write is still attempted; only its fallback is gone.
            Err(error) => {
                return match self.send(tool, arguments).await {
                    Ok(answer) => Written::Stored(answer),
                    Err(why) => Written::Lost {
                        why: format!("{why}; {error}"),
                    },
                };
            }
        };
        if !queue.is_empty() {
            self.drain(&queue).await;
        }
        if !queue.is_empty() {
            return enqueue(
                &queue,
                tool,
                arguments,
                "earlier writes are still waiting".into(),
            );
        }
        match self.send(tool, arguments.clone()).await {
            Ok(answer) => Written::Stored(answer),
            Err(error @ CallError::Unreachable { .. }) => {
                enqueue(&queue, tool, arguments, error.to_string())
            }
            // Timed out: it may have been stored, so it is not sent again.
            Err(error) => Written::Lost {
                why: error.to_string(),
            },
        }
    }

    async fn send(&self, tool: &str, arguments: Map<String, Value>) -> Result<Value, CallError> {
        self.client
            .call(tool, Value::Object(arguments), self.timeout)
            .await
    }

    /// Sends queued entries oldest first while the server answers and the budget lasts; only
    /// one process delivers at a time.
    async fn drain(&self, queue: &WriteQueue) {
        let Some(_delivering) = queue.try_deliver() else {
            return;
        };
        let deadline = Instant::now() + self.drain_budget;
        while Instant::now() < deadline {
            let Some(entry) = queue.front() else { return };
            let arguments = Value::Object(entry.call.arguments.clone());
            match self
                .client
                .call(&entry.call.tool, arguments, self.timeout)
                .await
            {
                Ok(_) => queue.remove(&entry),
                Err(CallError::Refused { message, .. }) => queue.refuse(&entry, &message),
                Err(_) => return,
            }
        }
    }
}

fn enqueue(queue: &WriteQueue, tool: &str, arguments: Map<String, Value>, why: String) -> Written {
    match queue.push(tool, arguments) {
        Ok(position) => Written::Queued { why, position },
        Err(error) => Written::Lost {
            why: format!("{why}; {error}"),
        },
    }
}
