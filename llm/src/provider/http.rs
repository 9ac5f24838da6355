//! The HTTP side every provider shares: one `reqwest` client per provider (rustls, so HTTPS
//! works in the default build), the API key from the environment, bodies read within
//! `max_response_bytes`, and failures mapped onto [`ErrorKind`]s.

use std::fmt;
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use serde::Serialize;

use crate::config::{LimitsConfig, ProviderConfig};
use crate::error::{ErrorKind, LlmError};
use crate::retry::parse_retry_after;

/// Characters of a provider's error message kept in our error.
const ERROR_SNIPPET_CHARS: usize = 300;

/// An API key read from the environment; never printed.
#[derive(Clone)]
pub(crate) struct ApiKey(String);

impl ApiKey {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// One provider's base URL, client and key.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub name: String,
    base: String,
    client: reqwest::Client,
    pub key: Option<ApiKey>,
    timeout: Duration,
    max_response_bytes: usize,
}

impl Endpoint {
    pub fn new(name: &str, config: &ProviderConfig, limits: &LimitsConfig) -> anyhow::Result<Self> {
        let key = match config.api_key_env.as_deref() {
            None => None,
            Some(variable) => match std::env::var(variable) {
                Ok(value) if !value.trim().is_empty() => Some(ApiKey(value.trim().to_owned())),
                Ok(_) | Err(std::env::VarError::NotPresent) => bail!(
                    "llm.providers.{name}.api_key_env names {variable}, which is not set (or \
                     empty) in the server's environment; export the provider's API key as \
                     {variable}"
                ),
                Err(std::env::VarError::NotUnicode(_)) => {
                    bail!(
                        "the environment variable {variable} (llm.providers.{name}.api_key_env) is not UTF-8"
                    )
                }
            },
        };
        let client = reqwest::Client::builder()
            .timeout(config.timeout())
            .connect_timeout(Duration::from_millis(config.connect_timeout_ms))
            .pool_idle_timeout(Duration::from_secs(60))
            .user_agent(concat!("aeterna/", env!("CARGO_PKG_VERSION")))
            .build()
            .with_context(|| format!("building the HTTP client of llm.providers.{name}"))?;
        Ok(Endpoint {
            name: name.to_owned(),
            base: config.base_url.trim().trim_end_matches('/').to_owned(),
            client,
            key,
            timeout: config.timeout(),
            max_response_bytes: limits.max_response_bytes,
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn error(&self, kind: ErrorKind, message: impl Into<String>) -> LlmError {
        LlmError::new(self.name.clone(), kind, message)
    }

    /// A 2xx answer at `path` that is not the `api`'s response.
    pub fn malformed(&self, path: &str, api: &str, why: impl fmt::Display) -> LlmError {
        self.error(
            ErrorKind::MalformedOutput,
            format!("{} did not answer like {api}: {why}", self.url(path)),
        )
    }

    /// POSTs `body` as JSON to `path` and returns the body of a 2xx answer.
    pub async fn post(
        &self,
        path: &str,
        headers: HeaderMap,
        body: &impl Serialize,
    ) -> Result<Vec<u8>, LlmError> {
        let url = self.url(path);
        let response = self
            .client
            .post(&url)
            .headers(headers)
            .json(body)
            .send()
            .await
            .map_err(|error| self.transport_error(&url, &error))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| parse_retry_after(value, SystemTime::now()));
        let bytes = self.read_body(&url, response).await?;
        if status.is_success() {
            return Ok(bytes);
        }
        Err(self.status_error(&url, status, &bytes, retry_after))
    }

    /// The body, refused once it passes `max_response_bytes` (before buffering more).
    async fn read_body(
        &self,
        url: &str,
        mut response: reqwest::Response,
    ) -> Result<Vec<u8>, LlmError> {
        let limit = self.max_response_bytes;
        let too_large = || {
            self.error(
                ErrorKind::Upstream,
                format!(
                    "{url} sent a response over {limit} bytes (llm.limits.max_response_bytes); \
                     lower the model's output or raise the limit"
                ),
            )
            .not_retryable()
        };
        if response
            .content_length()
            .is_some_and(|length| length > limit as u64)
        {
            return Err(too_large());
        }
        let mut body = Vec::with_capacity(
            response
                .content_length()
                .map_or(8 * 1024, |length| length as usize),
        );
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| self.transport_error(url, &error))?
        {
            if body.len() + chunk.len() > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    fn transport_error(&self, url: &str, error: &reqwest::Error) -> LlmError {
        if error.is_timeout() {
            self.error(
                ErrorKind::Timeout,
                format!(
                    "{url} did not answer within {} ms (timeout_ms)",
                    self.timeout.as_millis()
                ),
            )
        } else if error.is_connect() {
            self.error(
                ErrorKind::Connection,
                format!(
                    "cannot connect to {url}: {}; is the server running?",
                    source_chain(error)
                ),
            )
        } else {
            self.error(
                ErrorKind::Connection,
                format!("request to {url} failed: {}", source_chain(error)),
            )
        }
    }

    fn status_error(
        &self,
        url: &str,
        status: StatusCode,
        body: &[u8],
        retry_after: Option<Duration>,
    ) -> LlmError {
        let said = provider_message(body, self.key.as_ref());
        let (kind, hint) = match status.as_u16() {
            401 | 403 => (
                ErrorKind::Auth,
                "check the API key in the variable named by api_key_env, and its access to the model",
            ),
            404 => (
                ErrorKind::Validation,
                "check base_url (it usually ends in /v1) and that the model exists there",
            ),
            408 => (ErrorKind::Timeout, "the provider timed out the request"),
            413 => (
                ErrorKind::Validation,
                "the prompt is too large for the provider; lower llm.limits.max_prompt_bytes",
            ),
            429 => (ErrorKind::RateLimited, "the provider is rate limiting"),
            400..=499 => (ErrorKind::Validation, "the provider refused the request"),
            _ if status.is_server_error() => (ErrorKind::Upstream, "the provider failed"),
            _ => (ErrorKind::Upstream, "unexpected status"),
        };
        let mut error = self
            .error(
                kind,
                format!("{url} answered {status}: {hint}; it said: {said}"),
            )
            .with_status(status.as_u16())
            .with_retry_after(retry_after);
        if kind == ErrorKind::Upstream && !status.is_server_error() {
            error = error.not_retryable();
        }
        error
    }
}

/// The error message in a provider's error body (`{"error": {"message": …}}` for both APIs),
/// or the start of the body; our key and anything that looks like a secret redacted, one line,
/// bounded.
fn provider_message(body: &[u8], key: Option<&ApiKey>) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let message = parsed.as_ref().and_then(|value| {
        let error = value.get("error")?;
        error
            .get("message")
            .and_then(|m| m.as_str())
            .or_else(|| error.as_str())
            .map(str::to_owned)
    });
    let mut text = message.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    if let Some(key) = key.filter(|key| key.expose().len() >= 8) {
        text = text.replace(key.expose(), "[REDACTED:api-key]");
    }
    let redacted = aeterna_redact::redact(&text);
    let text = redacted.text();
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.is_empty() {
        return "(empty body)".to_owned();
    }
    let mut clipped: String = one_line.chars().take(ERROR_SNIPPET_CHARS).collect();
    if clipped.len() < one_line.len() {
        clipped.push('…');
    }
    clipped
}

/// The error and its sources, `a: b: c` (reqwest's own message is often just "error sending
/// request").
fn source_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_messages_are_extracted_redacted_and_bounded() {
        let key = ApiKey("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD".into());
        let openai = br#"{"error": {"message": "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD", "type": "invalid_request_error"}}"#;
        let message = provider_message(openai, Some(&key));
        assert_eq!(message, "Incorrect API key provided: [REDACTED:api-key]");
        let echoed =
            br#"{"error": "bad header Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345"}"#;
        assert!(!provider_message(echoed, None).contains("abcdefghijklmnop"));
        let anthropic =
            br#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
        assert_eq!(provider_message(anthropic, None), "Overloaded");
        assert_eq!(provider_message(b"", None), "(empty body)");
        let long = "x ".repeat(1000);
        assert!(provider_message(long.as_bytes(), None).chars().count() <= ERROR_SNIPPET_CHARS + 1);
    }
}
