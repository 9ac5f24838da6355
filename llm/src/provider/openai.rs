//! OpenAI-compatible chat: `POST {base_url}/chat/completions`. Spoken by OpenAI and by the
//! servers people run locally (Ollama, vLLM, llama.cpp's server, LM Studio).

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde::{Deserialize, Serialize};

use super::http::Endpoint;
use super::{ChatProvider, ChatRequest, ChatResponse, Finish, Speaker, Usage};
use crate::config::ProviderConfig;
use crate::error::LlmError;

pub struct OpenAiChat {
    endpoint: Endpoint,
    model: String,
    max_output_tokens: u32,
    temperature: f32,
    json_mode: bool,
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<Message<'a>>,
    max_tokens: u32,
    temperature: f32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat>,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'a str,
    content: &'a str,
}

#[derive(Serialize)]
struct ResponseFormat {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<CompletionUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChoiceMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct CompletionUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

impl OpenAiChat {
    pub(crate) fn new(endpoint: Endpoint, config: &ProviderConfig) -> Self {
        OpenAiChat {
            endpoint,
            model: config.model.trim().to_owned(),
            max_output_tokens: config.max_output_tokens,
            temperature: config.temperature,
            json_mode: config.json_mode,
        }
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.endpoint.key
            && let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
        {
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        headers
    }
}

#[async_trait::async_trait]
impl ChatProvider for OpenAiChat {
    fn name(&self) -> &str {
        &self.endpoint.name
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if !request.system.is_empty() {
            messages.push(Message {
                role: "system",
                content: &request.system,
            });
        }
        messages.extend(request.messages.iter().map(|message| Message {
            role: match message.speaker {
                Speaker::User => "user",
                Speaker::Assistant => "assistant",
            },
            content: &message.content,
        }));
        let body = Body {
            model: &self.model,
            messages,
            max_tokens: request.max_tokens.min(self.max_output_tokens),
            temperature: self.temperature,
            stream: false,
            response_format: (request.json && self.json_mode).then_some(ResponseFormat {
                kind: "json_object",
            }),
        };
        const PATH: &str = "/chat/completions";
        let bytes = self.endpoint.post(PATH, self.headers(), &body).await?;
        let malformed = |why: &dyn std::fmt::Display| {
            self.endpoint
                .malformed(PATH, "an OpenAI chat completion", why)
        };
        let completion: Completion =
            serde_json::from_slice(&bytes).map_err(|error| malformed(&error))?;
        let Some(choice) = completion.choices.into_iter().next() else {
            return Err(malformed(&"no choices"));
        };
        let text = choice.message.content.unwrap_or_default();
        if text.trim().is_empty() {
            return Err(malformed(&"the message has no text"));
        }
        let reported = completion
            .usage
            .map(|usage| (usage.prompt_tokens, usage.completion_tokens));
        let usage = Usage::reported_or_estimated(reported, request, &text);
        Ok(ChatResponse {
            text,
            usage,
            model: completion.model.unwrap_or_else(|| self.model.clone()),
            finish: match choice.finish_reason.as_deref() {
                Some("stop") | None => Finish::Stop,
                Some("length") => Finish::Length,
                Some(_) => Finish::Other,
            },
        })
    }
}
