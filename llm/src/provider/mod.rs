//! [`ChatProvider`]: one model behind one API. [`OpenAiChat`] speaks OpenAI's
//! `/chat/completions` (Ollama, vLLM, llama.cpp's server, LM Studio, OpenAI…),
//! [`AnthropicChat`] the Messages API. Both share [`http`]: bounded bodies, timeouts, and the
//! mapping of HTTP failures onto [`ErrorKind`](crate::ErrorKind)s.

mod anthropic;
pub(crate) mod http;
mod openai;

use std::sync::Arc;

use serde::Serialize;

pub use anthropic::AnthropicChat;
pub use openai::OpenAiChat;

use crate::config::{Api, LimitsConfig, ProviderConfig};
use crate::error::LlmError;

/// Who speaks in a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub speaker: Speaker,
    pub content: String,
}

/// One chat call.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub system: String,
    pub messages: Vec<ChatMessage>,
    /// Output tokens at most (the provider's `max_output_tokens` caps it further).
    pub max_tokens: u32,
    /// Ask for a JSON object (OpenAI's `json_object` mode where the provider allows it).
    pub json: bool,
}

impl ChatRequest {
    /// A system prompt and one user message.
    pub fn new(system: impl Into<String>, user: impl Into<String>, max_tokens: u32) -> Self {
        ChatRequest {
            system: system.into(),
            messages: vec![ChatMessage {
                speaker: Speaker::User,
                content: user.into(),
            }],
            max_tokens,
            json: true,
        }
    }

    /// Bytes of text sent.
    pub fn prompt_bytes(&self) -> usize {
        self.system.len() + self.messages.iter().map(|m| m.content.len()).sum::<usize>()
    }

    /// A pessimistic token estimate of the prompt (about 3 bytes per token; BPE tokenizers
    /// average about 4 on English and code), used to reserve budget before the call.
    pub fn estimated_prompt_tokens(&self) -> u64 {
        (self.prompt_bytes() as u64).div_ceil(3) + 8 * (self.messages.len() as u64 + 1)
    }
}

/// Tokens a call used, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// False when the provider reported no usage and these are estimates from byte counts.
    pub reported: bool,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// The usage a provider reported as (input, output), or an estimate from byte counts
    /// when it reported none (some local servers do not).
    pub(crate) fn reported_or_estimated(
        reported: Option<(u64, u64)>,
        request: &ChatRequest,
        answer: &str,
    ) -> Usage {
        match reported {
            Some((input_tokens, output_tokens)) => Usage {
                input_tokens,
                output_tokens,
                reported: true,
            },
            None => Usage {
                input_tokens: request.estimated_prompt_tokens(),
                output_tokens: (answer.len() as u64).div_ceil(3),
                reported: false,
            },
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// It finished its answer.
    Stop,
    /// It hit `max_tokens`: the answer is cut.
    Length,
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    pub text: String,
    pub usage: Usage,
    /// The model that answered, as the provider names it.
    pub model: String,
    pub finish: Finish,
}

/// One model behind one API.
#[async_trait::async_trait]
pub trait ChatProvider: Send + Sync {
    /// The provider's name in the configuration.
    fn name(&self) -> &str;
    fn model(&self) -> &str;
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError>;
}

/// Builds the chat client of a configured provider; reads its key from the environment.
pub fn build_chat(
    name: &str,
    config: &ProviderConfig,
    limits: &LimitsConfig,
) -> anyhow::Result<Arc<dyn ChatProvider>> {
    let endpoint = http::Endpoint::new(name, config, limits)?;
    Ok(match config.api {
        Api::OpenAi => Arc::new(OpenAiChat::new(endpoint, config)),
        Api::Anthropic => Arc::new(AnthropicChat::new(endpoint, config)),
    })
}
