//! Text embedders. Every stored vector records the id of the embedder that made it.
//!
//! * [`StaticEmbedder`]: the default; a static token-embedding table distilled from
//!   all-MiniLM-L6-v2 and compiled into the binary ([`StaticModel`], which also serves
//!   retrieval's late interaction). No download, no network.
//! * [`HashingEmbedder`]: feature hashing, the fallback and the tests' embedder.
//! * [`OpenAiEmbedder`]: any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, vLLM).
//! * `LocalModelEmbedder` (feature `local-model`): a sentence-transformers BERT directory run
//!   with candle.
//!
//! [`EmbedderConfig`] builds any of them from configuration.

mod config;
mod hashing;
#[cfg(feature = "local-model")]
mod local;
mod openai;
mod static_model;
pub mod wordpiece;
mod wordpiece_tables;

pub use config::{EmbedderConfig, build_embedder};
pub use hashing::HashingEmbedder;
#[cfg(feature = "local-model")]
pub use local::LocalModelEmbedder;
pub use openai::{OpenAiConfig, OpenAiEmbedder};
pub use static_model::{StaticEmbedder, StaticModel};

/// Turns texts into unit-length vectors.
#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    /// Identifies the vector space: model name, dimensions and any parameter that changes
    /// the output, such as `hash-v1-384`. Vectors from different ids are never compared.
    fn id(&self) -> &str;
    fn dimensions(&self) -> usize;
    async fn embed(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>>;

    /// Whether it runs in this process (no network, no per-call cost): then a data directory
    /// made by another embedder is re-embedded with it by default.
    fn is_local(&self) -> bool {
        true
    }

    /// How this embedder's cosine similarities map to relevance; see [`Calibration`].
    fn calibration(&self) -> Calibration {
        Calibration::default()
    }
}

/// Where an embedder's cosine similarities sit for unrelated and for clearly related texts.
///
/// Search scores map cosine `c` to `(c - unrelated) / (related - unrelated)`, clamped to 0..1,
/// so that a score means the same thing whichever embedder is configured: 0 is "no more similar
/// than two unrelated texts", 1 is "as similar as a close paraphrase".
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Calibration {
    /// Typical cosine of two unrelated texts.
    pub unrelated: f32,
    /// Typical cosine of a query and a passage that answers it.
    pub related: f32,
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration {
            unrelated: 0.0,
            related: 1.0,
        }
    }
}

impl Calibration {
    /// The relevance of cosine similarity `cosine`, in 0..1.
    pub fn relevance(&self, cosine: f32) -> f32 {
        let span = (self.related - self.unrelated).max(1e-3);
        ((cosine - self.unrelated) / span).clamp(0.0, 1.0)
    }
}

/// Checks what an embedder returned: one finite vector of the promised length per text.
pub(crate) fn check_vectors(
    embedder: &dyn Embedder,
    texts: usize,
    vectors: &[Vec<f32>],
) -> anyhow::Result<()> {
    anyhow::ensure!(
        vectors.len() == texts,
        "embedder `{}` returned {} vectors for {texts} texts",
        embedder.id(),
        vectors.len()
    );
    for vector in vectors {
        anyhow::ensure!(
            vector.len() == embedder.dimensions(),
            "embedder `{}` returned a vector of {} dimensions; it promised {}",
            embedder.id(),
            vector.len(),
            embedder.dimensions()
        );
        anyhow::ensure!(
            vector.iter().all(|x| x.is_finite()),
            "embedder `{}` returned a vector with NaN or infinite components",
            embedder.id()
        );
    }
    Ok(())
}

/// Scales `vector` to unit length (a zero vector stays zero).
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

/// The model directory of the tests that need a real model, from `AETERNA_TEST_MODEL_DIR`;
/// `None` (and a `SKIPPED` line) when it is not set.
#[cfg(test)]
pub(crate) fn test_model_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("AETERNA_TEST_MODEL_DIR").map(std::path::PathBuf::from);
    if dir.is_none() {
        eprintln!("SKIPPED: AETERNA_TEST_MODEL_DIR is not set");
    }
    dir
}
