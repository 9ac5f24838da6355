//! Text embedders. Every stored vector records the id of the embedder that made it.

/// Turns texts into unit-length vectors.
#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    /// Identifies the vector space: model name, dimensions and any parameter that changes
    /// the output, such as `hash-v1-384`. Vectors from different ids are never compared.
    fn id(&self) -> &str;
    fn dimensions(&self) -> usize;
    async fn embed(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>>;
}
