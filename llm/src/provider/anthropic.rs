//! Anthropic's Messages API: `POST {base_url}/messages` with `x-api-key` and
//! `anthropic-version`.

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};

use super::http::Endpoint;
use super::{ChatProvider, ChatRequest, ChatResponse, Finish, Speaker, Usage};
use crate::config::ProviderConfig;
use crate::error::LlmError;

/// The API version every request pins.
const API_VERSION: &str = "2023-06-01";

pub struct AnthropicChat {
    endpoint: Endpoint,
    model: String,
    max_output_tokens: u32,
    temperature: f32,
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    temperature: f32,
    #[serde(skip_serializing_if = "str::is_empty")]
    system: &'a str,
    messages: Vec<Message<'a>>,
}

#[derive(Serialize)]
struct Message<'a> {
    role: Speaker,
    content: &'a str,
}

#[derive(Deserialize)]
struct MessageResponse {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    content: Vec<ContentBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: Option<MessageUsage>,
}

#[derive(Deserialize)]
struct ContentBlock {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct MessageUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

impl AnthropicChat {
    pub(crate) fn new(endpoint: Endpoint, config: &ProviderConfig) -> Self {
        AnthropicChat {
            endpoint,
            model: config.model.trim().to_owned(),
            max_output_tokens: config.max_output_tokens,
            temperature: config.temperature.min(1.0),
        }
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(API_VERSION),
        );
        if let Some(key) = &self.endpoint.key
            && let Ok(mut value) = HeaderValue::from_str(key.expose())
        {
            value.set_sensitive(true);
            headers.insert(HeaderName::from_static("x-api-key"), value);
        }
        headers
    }
}

#[async_trait::async_trait]
impl ChatProvider for AnthropicChat {
    fn name(&self) -> &str {
        &self.endpoint.name
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let body = Body {
            model: &self.model,
            max_tokens: request.max_tokens.min(self.max_output_tokens),
            temperature: self.temperature,
            system: &request.system,
            messages: request
                .messages
                .iter()
                .map(|message| Message {
                    role: message.speaker,
                    content: &message.content,
                })
                .collect(),
        };
        const PATH: &str = "/messages";
        let bytes = self.endpoint.post(PATH, self.headers(), &body).await?;
        let malformed =
            |why: &dyn std::fmt::Display| self.endpoint.malformed(PATH, "the Messages API", why);
        let response: MessageResponse =
            serde_json::from_slice(&bytes).map_err(|error| malformed(&error))?;
        let text: String = response
            .content
            .iter()
            .filter(|block| block.kind == "text")
            .filter_map(|block| block.text.as_deref())
            .collect();
        if text.trim().is_empty() {
            return Err(malformed(&"no text content"));
        }
        let reported = response
            .usage
            .map(|usage| (usage.input_tokens, usage.output_tokens));
        let usage = Usage::reported_or_estimated(reported, request, &text);
        Ok(ChatResponse {
            text,
            usage,
            model: response.model.unwrap_or_else(|| self.model.clone()),
            finish: match response.stop_reason.as_deref() {
                Some("end_turn" | "stop_sequence") | None => Finish::Stop,
                Some("max_tokens") => Finish::Length,
                Some(_) => Finish::Other,
            },
        })
    }
}
