//! The memory server's tools over HTTP, one stateless request per call (the 2026-07-28
//! protocol's core: no `initialize`, no session), which is what a process that lives for one
//! hook can afford.
//!
//! Every call is bounded: the connection by `connect_timeout`, the whole call by its own
//! timeout, the answer by [`MAX_RESPONSE_BYTES`] (counted as it arrives).

use std::time::Duration;

use serde_json::{Value, json};

/// The protocol revision the requests speak.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The largest answer read from the server; a longer one is an error, not a truncation.
pub const MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;

/// How a call failed. The variants tell whether the server can have acted on it.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// Not delivered: nothing was carried out, so a write may be queued and sent later.
    #[error("the memory server at {url} is unreachable ({reason})")]
    Unreachable { url: String, reason: String },
    /// Sent but not answered in time: it may have been carried out.
    #[error("the memory server at {url} did not answer {tool} within {timeout_ms} ms")]
    Timeout {
        url: String,
        tool: String,
        timeout_ms: u128,
    },
    /// The server answered with an error: sending it again will not help.
    #[error("{tool}: {message}")]
    Refused { tool: String, message: String },
}

/// A client of one memory server.
#[derive(Clone)]
pub struct McpClient {
    http: reqwest::Client,
    url: String,
    token: Option<String>,
}

impl McpClient {
    /// A client of the MCP endpoint at `url` (`http://127.0.0.1:7878/mcp`), sending `token` as
    /// a Bearer token when given.
    pub fn new(url: &str, token: Option<String>, connect_timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(connect_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            http,
            url: url.to_owned(),
            token,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Calls `tool` with `arguments`; the tool's structured result on success.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Value,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        let timed_out = || CallError::Timeout {
            url: self.url.clone(),
            tool: tool.to_owned(),
            timeout_ms: timeout.as_millis(),
        };
        match tokio::time::timeout(timeout, self.exchange(tool, arguments)).await {
            Ok(Ok(body)) => parse_answer(tool, &body),
            Ok(Err(error)) => Err(self.classify(tool, error, timed_out)),
            Err(_) => Err(timed_out()),
        }
    }

    async fn exchange(&self, tool: &str, arguments: Value) -> Result<Vec<u8>, Failure> {
        let message = json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": tool,
                "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                    "io.modelcontextprotocol/clientInfo": {
                        "name": "aeterna-hook",
                        "version": env!("CARGO_PKG_VERSION"),
                    },
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        });
        let mut request = self
            .http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", PROTOCOL_VERSION)
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", tool)
            .json(&message);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let mut response = request.send().await.map_err(Failure::Transport)?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(Failure::Transport)? {
            if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(Failure::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            return Err(Failure::Status(status, excerpt(&body)));
        }
        Ok(body)
    }

    fn classify(
        &self,
        tool: &str,
        failure: Failure,
        timed_out: impl Fn() -> CallError,
    ) -> CallError {
        match failure {
            Failure::Transport(error) if error.is_connect() => CallError::Unreachable {
                url: self.url.clone(),
                reason: root_cause(&error),
            },
            Failure::Transport(error) if error.is_timeout() => timed_out(),
            Failure::Transport(error) => CallError::Unreachable {
                url: self.url.clone(),
                reason: root_cause(&error),
            },
            // Turned away before it was carried out (shutting down, over capacity): like
            // unreachable, a write may be queued and sent again.
            Failure::Status(status, body) if matches!(status.as_u16(), 429 | 503) => {
                CallError::Unreachable {
                    url: self.url.clone(),
                    reason: format!("HTTP {status}: {body}"),
                }
            }
            Failure::Status(status, body) => CallError::Refused {
                tool: tool.to_owned(),
                message: format!("HTTP {status} from {}: {body}", self.url),
            },
            Failure::TooLarge => CallError::Refused {
                tool: tool.to_owned(),
                message: format!("the answer is over {MAX_RESPONSE_BYTES} bytes"),
            },
        }
    }
}

enum Failure {
    Transport(reqwest::Error),
    Status(reqwest::StatusCode, String),
    TooLarge,
}

/// The JSON-RPC answer in `body` (plain JSON, or the message of an event stream) → the tool's
/// structured result.
fn parse_answer(tool: &str, body: &[u8]) -> Result<Value, CallError> {
    let refused = |message: String| CallError::Refused {
        tool: tool.to_owned(),
        message,
    };
    let text = std::str::from_utf8(body).map_err(|_| refused("the answer is not UTF-8".into()))?;
    let message = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .find(|data| data.contains("\"id\""))
        .unwrap_or(text);
    let message: Value = serde_json::from_str(message.trim())
        .map_err(|error| refused(format!("the answer is not JSON-RPC ({error})")))?;
    if let Some(error) = message.get("error") {
        let text = error["message"].as_str().unwrap_or("a JSON-RPC error");
        return Err(refused(text.to_owned()));
    }
    let result = &message["result"];
    if result["isError"] == true {
        let text: Vec<&str> = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .collect();
        return Err(refused(text.join("\n")));
    }
    Ok(result
        .get("structuredContent")
        .cloned()
        .unwrap_or(Value::Null))
}

/// The innermost cause of a transport error ("Connection refused (os error 111)").
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// At most 300 bytes of a body, for an error message.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(300)]);
    text.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_from_json_and_event_streams() {
        let plain =
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"n":1}}}"#;
        assert_eq!(parse_answer("t", plain).unwrap(), json!({"n": 1}));
        let stream = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"structuredContent\":{\"n\":2}}}\n\n";
        assert_eq!(parse_answer("t", stream).unwrap(), json!({"n": 2}));
    }

    #[test]
    fn tool_errors_and_protocol_errors_are_refusals_naming_the_tool() {
        let tool_error = br#"{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"memory_add: content is empty"}]}}"#;
        let error = parse_answer("memory_add", tool_error).unwrap_err();
        assert!(matches!(error, CallError::Refused { .. }));
        assert!(error.to_string().contains("content is empty"), "{error}");
        let rpc_error =
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}"#;
        let error = parse_answer("nope", rpc_error).unwrap_err().to_string();
        assert_eq!(error, "nope: unknown tool");
        assert!(parse_answer("t", b"<html>").is_err());
    }

    /// A one-request HTTP server answering `response`; its MCP URL.
    async fn answering(response: &'static str) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await;
            socket.write_all(response.as_bytes()).await.unwrap();
        });
        url
    }

    #[tokio::test]
    async fn a_server_turning_requests_away_is_unreachable_a_refusal_is_not() {
        let busy = answering(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 13\r\nconnection: close\r\n\r\nshutting_down",
        )
        .await;
        let client = McpClient::new(&busy, None, Duration::from_millis(200));
        let error = client
            .call("memory_add", json!({}), Duration::from_secs(2))
            .await
            .unwrap_err();
        assert!(matches!(error, CallError::Unreachable { .. }), "{error}");

        let forbidden = answering(
            "HTTP/1.1 401 Unauthorized\r\ncontent-length: 13\r\nconnection: close\r\n\r\ninvalid token",
        )
        .await;
        let client = McpClient::new(&forbidden, None, Duration::from_millis(200));
        let error = client
            .call("memory_add", json!({}), Duration::from_secs(2))
            .await
            .unwrap_err();
        assert!(matches!(error, CallError::Refused { .. }), "{error}");
        assert!(error.to_string().contains("401"), "{error}");
    }

    #[tokio::test]
    async fn a_closed_port_is_unreachable_not_a_timeout() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        drop(listener);
        let client = McpClient::new(&url, None, Duration::from_millis(200));
        let error = client
            .call("memory_search", json!({}), Duration::from_secs(2))
            .await
            .unwrap_err();
        assert!(matches!(error, CallError::Unreachable { .. }), "{error}");
        assert!(error.to_string().contains(&url), "{error}");
    }
}
