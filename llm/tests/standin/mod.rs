//! A stand-in for a paid LLM API, served over real HTTP by the test: OpenAI-compatible
//! `POST /v1/chat/completions` and Anthropic-shaped `POST /v1/messages`. It can be told to
//! answer, fail with a status (and `Retry-After`), hang, send a body that is not the API's, or
//! answer with any text (fenced, malformed…); it records every request it saw.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use parking_lot::Mutex;
use serde_json::{Value, json};

/// What the stand-in does with one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A well-formed answer whose message text is `text`, reporting this usage.
    Answer {
        text: String,
        input_tokens: u64,
        output_tokens: u64,
    },
    /// A well-formed answer without a usage field.
    AnswerWithoutUsage(String),
    /// An HTTP error with an API-shaped error body, and `Retry-After` when given.
    Status {
        status: u16,
        retry_after: Option<String>,
        message: String,
    },
    /// Never answers (the client's timeout ends it).
    Hang,
    /// 200 with a body that is not the API's response.
    Garbage(String),
    /// Waits, then does the inner reply.
    Delayed(Duration, Box<Reply>),
}

impl Reply {
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::Answer {
            text: text.into(),
            input_tokens: 100,
            output_tokens: 50,
        }
    }

    pub fn json(value: Value) -> Reply {
        Reply::text(value.to_string())
    }

    pub fn status(status: u16) -> Reply {
        Reply::Status {
            status,
            retry_after: None,
            message: format!("stand-in error {status}"),
        }
    }

    pub fn rate_limited(retry_after: &str) -> Reply {
        Reply::Status {
            status: 429,
            retry_after: Some(retry_after.to_owned()),
            message: "slow down".into(),
        }
    }
}

/// A request the stand-in received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub at: Instant,
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Seen {
    /// The system prompt and the user messages, as one text.
    pub fn prompt(&self) -> String {
        let mut text = String::new();
        if let Some(system) = self.body.get("system").and_then(Value::as_str) {
            text.push_str(system);
        }
        for message in self.body["messages"].as_array().into_iter().flatten() {
            text.push('\n');
            text.push_str(message["content"].as_str().unwrap_or_default());
        }
        text
    }
}

type Responder = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

struct Inner {
    script: Mutex<VecDeque<Reply>>,
    fallback: Mutex<Responder>,
    seen: Mutex<Vec<Seen>>,
}

/// A running stand-in; stops when dropped.
pub struct StandIn {
    pub addr: SocketAddr,
    inner: Arc<Inner>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl StandIn {
    /// Starts on an ephemeral port, answering `default` to anything not scripted.
    pub async fn start(default: Reply) -> StandIn {
        let inner = Arc::new(Inner {
            script: Mutex::new(VecDeque::new()),
            fallback: Mutex::new(Arc::new(move |_: &Seen| default.clone())),
            seen: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(openai))
            .route("/v1/messages", post(anthropic))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        StandIn {
            addr,
            inner,
            server,
        }
    }

    /// The API root to configure: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The next requests get these replies, in order; then the default again.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.script.lock().extend(replies);
    }

    /// What unscripted requests get from now on.
    pub fn set_default(&self, reply: Reply) {
        *self.inner.fallback.lock() = Arc::new(move |_: &Seen| reply.clone());
    }

    /// Unscripted requests get what `respond` makes of them.
    pub fn respond_with(&self, respond: impl Fn(&Seen) -> Reply + Send + Sync + 'static) {
        *self.inner.fallback.lock() = Arc::new(respond);
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.inner.seen.lock().clone()
    }

    pub fn requests(&self) -> usize {
        self.inner.seen.lock().len()
    }
}

async fn decide(inner: &Inner, path: &str, headers: HeaderMap, body: Value) -> Reply {
    let seen = Seen {
        at: Instant::now(),
        path: path.to_owned(),
        headers,
        body,
    };
    let scripted = inner.script.lock().pop_front();
    let reply = match scripted {
        Some(reply) => reply,
        None => {
            let respond = inner.fallback.lock().clone();
            respond(&seen)
        }
    };
    inner.seen.lock().push(seen);
    let mut reply = reply;
    while let Reply::Delayed(delay, inner_reply) = reply {
        tokio::time::sleep(delay).await;
        reply = *inner_reply;
    }
    if let Reply::Hang = reply {
        std::future::pending::<()>().await;
    }
    reply
}

async fn openai(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    body: axum::Json<Value>,
) -> Response {
    let model = body["model"].as_str().unwrap_or("model").to_owned();
    match decide(&inner, "/v1/chat/completions", headers, body.0).await {
        Reply::Answer {
            text,
            input_tokens,
            output_tokens,
        } => axum::Json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                      "total_tokens": input_tokens + output_tokens}
        }))
        .into_response(),
        Reply::AnswerWithoutUsage(text) => axum::Json(json!({
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
        }))
        .into_response(),
        other => error_reply(other, |message| {
            json!({"error": {"message": message, "type": "stand_in_error"}})
        }),
    }
}

async fn anthropic(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    body: axum::Json<Value>,
) -> Response {
    let model = body["model"].as_str().unwrap_or("model").to_owned();
    match decide(&inner, "/v1/messages", headers, body.0).await {
        Reply::Answer {
            text,
            input_tokens,
            output_tokens,
        } => axum::Json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}
        }))
        .into_response(),
        Reply::AnswerWithoutUsage(text) => axum::Json(json!({
            "type": "message", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"
        }))
        .into_response(),
        other => error_reply(
            other,
            |message| json!({"type": "error", "error": {"type": "stand_in_error", "message": message}}),
        ),
    }
}

fn error_reply(reply: Reply, body: impl Fn(&str) -> Value) -> Response {
    match reply {
        Reply::Status {
            status,
            retry_after,
            message,
        } => {
            let mut response = (
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                axum::Json(body(&message)),
            )
                .into_response();
            if let Some(retry_after) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", retry_after.parse().unwrap());
            }
            response
        }
        Reply::Garbage(text) => (StatusCode::OK, text).into_response(),
        _ => unreachable!("answers are handled by the caller"),
    }
}
