//! [`EmbedderConfig`]: which embedder to use, as configuration.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Embedder, HashingEmbedder, OpenAiConfig, OpenAiEmbedder};

/// The embedder, selected by `provider`:
///
/// ```toml
/// provider = "static"           # the default: compiled in, no download, no network
///
/// provider = "hashing"          # feature hashing
/// dimensions = 384
///
/// provider = "openai"           # any OpenAI-compatible /v1/embeddings endpoint
/// base_url = "http://localhost:11434/v1"
/// model = "nomic-embed-text"
/// dimensions = 768
///
/// provider = "local_model"      # a sentence-transformers directory (feature `local-model`)
/// path = "/models/all-MiniLM-L6-v2"
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "provider", rename_all = "snake_case")]
pub enum EmbedderConfig {
    Static,
    Hashing {
        #[serde(default = "default_hashing_dimensions")]
        dimensions: usize,
    },
    #[serde(rename = "openai")]
    OpenAi(OpenAiConfig),
    LocalModel {
        /// A directory with `config.json`, `tokenizer.json` and `model.safetensors`.
        path: PathBuf,
    },
}

fn default_hashing_dimensions() -> usize {
    384
}

impl Default for EmbedderConfig {
    fn default() -> Self {
        EmbedderConfig::Static
    }
}

/// Builds the configured embedder.
pub fn build_embedder(config: &EmbedderConfig) -> anyhow::Result<Arc<dyn Embedder>> {
    Ok(match config {
        EmbedderConfig::Static => Arc::new(super::StaticEmbedder::new()),
        EmbedderConfig::Hashing { dimensions } => Arc::new(HashingEmbedder::new(*dimensions)),
        EmbedderConfig::OpenAi(openai) => Arc::new(OpenAiEmbedder::new(openai.clone())?),
        #[cfg(feature = "local-model")]
        EmbedderConfig::LocalModel { path } => Arc::new(super::LocalModelEmbedder::load(path)?),
        #[cfg(not(feature = "local-model"))]
        EmbedderConfig::LocalModel { path } => anyhow::bail!(
            "the local model embedder ({}) is not compiled in; build with `--features aeterna-memory/local-model`, \
             or use provider = \"hashing\" or \"openai\"",
            path.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(not(feature = "tls"))]
    #[test]
    fn https_without_the_tls_feature_is_a_clear_error() {
        let config = OpenAiConfig::new("https://api.openai.com/v1", "text-embedding-3-small", 1536);
        let error = build_embedder(&EmbedderConfig::OpenAi(config))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("aeterna-memory/tls"), "{error}");
    }

    #[cfg(not(feature = "local-model"))]
    #[test]
    fn a_local_model_without_the_feature_is_a_clear_error() {
        let config = EmbedderConfig::LocalModel {
            path: "/models/minilm".into(),
        };
        let error = build_embedder(&config).err().unwrap().to_string();
        assert!(error.contains("local-model"), "{error}");
    }

    #[test]
    fn configs_parse_from_json_with_defaults() {
        let hashing: EmbedderConfig = serde_json::from_str(r#"{"provider": "hashing"}"#).unwrap();
        assert_eq!(hashing, EmbedderConfig::Hashing { dimensions: 384 });
        let default: EmbedderConfig = serde_json::from_str(r#"{"provider": "static"}"#).unwrap();
        assert_eq!(default, EmbedderConfig::default());
        let openai: EmbedderConfig = serde_json::from_str(
            r#"{"provider": "openai", "base_url": "http://localhost:11434/v1", "model": "nomic-embed-text", "dimensions": 768}"#,
        )
        .unwrap();
        let EmbedderConfig::OpenAi(openai) = openai else {
            panic!("{openai:?}")
        };
        assert_eq!(
            (
                openai.batch_size,
                openai.timeout_ms,
                openai.api_key.as_deref()
            ),
            (64, 30_000, None)
        );
        let embedder = build_embedder(&EmbedderConfig::OpenAi(openai)).unwrap();
        assert_eq!(embedder.id(), "openai:nomic-embed-text:768");
        assert!(serde_json::from_str::<EmbedderConfig>(r#"{"provider": "magic"}"#).is_err());
        let bad = OpenAiConfig::new("localhost:11434", "m", 8);
        let error = build_embedder(&EmbedderConfig::OpenAi(bad)).err().unwrap();
        assert!(error.to_string().contains("http://"), "{error}");
    }
}
