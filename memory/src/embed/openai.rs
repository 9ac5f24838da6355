//! An OpenAI-compatible `/v1/embeddings` client: OpenAI, Ollama, vLLM, LM Studio, TEI…
//!
//! Texts are sent in batches of `batch_size`; responses are checked (count, order, dimensions,
//! finite values) and L2-normalised, since not every server normalises. Rate limits (429),
//! server errors (5xx), timeouts and connection failures are retried with exponential backoff;
//! other errors fail at once with a message saying what to check.

use std::time::Duration;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};

use super::{Calibration, Embedder, normalize};

/// Settings of an OpenAI-compatible embeddings endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiConfig {
    /// The API root, such as `https://api.openai.com/v1` or `http://localhost:11434/v1`
    /// (Ollama); `/embeddings` is appended.
    pub base_url: String,
    /// The model name, such as `text-embedding-3-small` or `nomic-embed-text`.
    pub model: String,
    /// Dimensions of the model's vectors; every response is checked against it.
    pub dimensions: usize,
    /// Sent as a bearer token when set.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Also send `dimensions` in the request, for models that can shorten their vectors
    /// (OpenAI's `text-embedding-3-*`). Off by default: some servers reject the field.
    #[serde(default)]
    pub request_dimensions: bool,
    /// Per-request timeout, in milliseconds (30 000).
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Texts per request (64).
    #[serde(default = "default_batch_size")]
    pub batch_size: usize,
    /// Retries of a failed request that may succeed later (2).
    #[serde(default = "default_retries")]
    pub max_retries: u32,
    /// Where this model's cosines sit for unrelated and related texts (default 0 and 1).
    #[serde(default)]
    pub calibration: Option<Calibration>,
}

fn default_timeout_ms() -> u64 {
    30_000
}
fn default_batch_size() -> usize {
    64
}
fn default_retries() -> u32 {
    2
}

impl OpenAiConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>, dimensions: usize) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            dimensions,
            api_key: None,
            request_dimensions: false,
            timeout_ms: default_timeout_ms(),
            batch_size: default_batch_size(),
            max_retries: default_retries(),
            calibration: None,
        }
    }
}

/// The embeddings client; see the module documentation.
pub struct OpenAiEmbedder {
    config: OpenAiConfig,
    url: String,
    id: String,
    client: reqwest::Client,
}

#[derive(Serialize)]
struct EmbeddingsRequest<'a> {
    model: &'a str,
    input: &'a [&'a str],
    encoding_format: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    dimensions: Option<usize>,
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

/// Why a request failed, and whether trying again may help.
struct Failure {
    error: anyhow::Error,
    retryable: bool,
}

impl OpenAiEmbedder {
    pub fn new(config: OpenAiConfig) -> anyhow::Result<Self> {
        let base = config.base_url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            bail!(
                "embeddings `base_url` {:?} must start with http:// or https://",
                config.base_url
            );
        }
        if base.starts_with("https://") && !cfg!(feature = "tls") {
            bail!(
                "embeddings `base_url` {:?} needs HTTPS, which this build lacks: build with \
                 `--features aeterna-memory/tls`, or use an http:// endpoint",
                config.base_url
            );
        }
        if config.model.trim().is_empty() {
            bail!("embeddings `model` is empty; name the embedding model to use");
        }
        if config.dimensions == 0 {
            bail!(
                "embeddings `dimensions` is 0; give the model's vector size (such as 768 or 1536)"
            );
        }
        if config.batch_size == 0 {
            bail!("embeddings `batch_size` is 0; use at least 1");
        }
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(config.timeout_ms))
            .connect_timeout(Duration::from_millis(config.timeout_ms.min(10_000)))
            .build()
            .context("building the embeddings HTTP client")?;
        Ok(OpenAiEmbedder {
            url: format!("{base}/embeddings"),
            id: format!("openai:{}:{}", config.model.trim(), config.dimensions),
            config,
            client,
        })
    }

    async fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Failure> {
        let body = EmbeddingsRequest {
            model: &self.config.model,
            input: texts,
            encoding_format: "float",
            dimensions: self
                .config
                .request_dimensions
                .then_some(self.config.dimensions),
        };
        let mut request = self.client.post(&self.url).json(&body);
        if let Some(key) = self.config.api_key.as_deref().filter(|key| !key.is_empty()) {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|error| self.transport_failure(error))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|error| self.transport_failure(error))?;
        if !status.is_success() {
            let body = String::from_utf8_lossy(&bytes);
            let body: String = body.chars().take(300).collect();
            let hint = match status.as_u16() {
                401 | 403 => "check the API key",
                404 => "check `base_url` (it usually ends in /v1) and that the model exists there",
                400 | 422 => "check the model name and that it is an embedding model",
                429 => "the server is rate limiting; retry later or lower the load",
                _ => "the embeddings server failed",
            };
            return Err(Failure {
                error: anyhow::anyhow!("{} answered {status}: {hint}; it said: {body}", self.url),
                retryable: status.as_u16() == 429 || status.is_server_error(),
            });
        }
        let parsed: EmbeddingsResponse =
            serde_json::from_slice(&bytes).map_err(|error| Failure {
                error: anyhow::anyhow!(
                    "{} answered with JSON that is not an embeddings response: {error}",
                    self.url
                ),
                retryable: false,
            })?;
        self.vectors_in_order(parsed, texts.len())
            .map_err(|error| Failure {
                error,
                retryable: false,
            })
    }

    fn transport_failure(&self, error: reqwest::Error) -> Failure {
        let error = if error.is_timeout() {
            anyhow::anyhow!(
                "{} did not answer within {} ms (timeout_ms)",
                self.url,
                self.config.timeout_ms
            )
        } else if error.is_connect() {
            anyhow::anyhow!(
                "cannot connect to {}: {error}; is the embeddings server running?",
                self.url
            )
        } else {
            anyhow::anyhow!("request to {} failed: {error}", self.url)
        };
        Failure {
            error,
            retryable: true,
        }
    }

    fn vectors_in_order(
        &self,
        response: EmbeddingsResponse,
        expected: usize,
    ) -> anyhow::Result<Vec<Vec<f32>>> {
        if response.data.len() != expected {
            bail!(
                "{} returned {} embeddings for {expected} texts",
                self.url,
                response.data.len()
            );
        }
        let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
        for (position, item) in response.data.into_iter().enumerate() {
            let index = item.index.unwrap_or(position);
            let Some(slot) = slots.get_mut(index).filter(|slot| slot.is_none()) else {
                bail!(
                    "{} returned an embedding with a bad or repeated index {index}",
                    self.url
                );
            };
            if item.embedding.len() != self.config.dimensions {
                bail!(
                    "{} returned {}-dimensional vectors, but `dimensions` is {}; set it to the model's size",
                    self.url,
                    item.embedding.len(),
                    self.config.dimensions
                );
            }
            if !item.embedding.iter().all(|x| x.is_finite()) {
                bail!("{} returned a vector with NaN or infinite values", self.url);
            }
            let mut vector = item.embedding;
            normalize(&mut vector);
            *slot = Some(vector);
        }
        Ok(slots
            .into_iter()
            .map(|slot| slot.expect("every index filled"))
            .collect())
    }
}

#[async_trait::async_trait]
impl Embedder for OpenAiEmbedder {
    fn is_local(&self) -> bool {
        false
    }

    fn id(&self) -> &str {
        &self.id
    }

    fn dimensions(&self) -> usize {
        self.config.dimensions
    }

    async fn embed(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.config.batch_size) {
            let mut attempt = 0;
            loop {
                match self.request(batch).await {
                    Ok(batch_vectors) => {
                        vectors.extend(batch_vectors);
                        break;
                    }
                    Err(failure) if failure.retryable && attempt < self.config.max_retries => {
                        attempt += 1;
                        let delay = Duration::from_millis(200 * 2u64.pow(attempt - 1));
                        tracing::warn!(error = %failure.error, attempt, ?delay, "embeddings request failed; retrying");
                        tokio::time::sleep(delay).await;
                    }
                    Err(failure) => return Err(failure.error),
                }
            }
        }
        Ok(vectors)
    }

    fn calibration(&self) -> Calibration {
        self.config.calibration.unwrap_or_default()
    }
}
