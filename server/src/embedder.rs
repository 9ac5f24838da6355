//! Builds the configured [`Embedder`](aeterna_memory::embed::Embedder).

use std::sync::Arc;

use aeterna_memory::embed::{Embedder, HashingEmbedder};

use crate::config::EmbedderConfig;

pub fn build(config: &EmbedderConfig) -> anyhow::Result<Arc<dyn Embedder>> {
    match config {
        EmbedderConfig::Hash { dimensions } => {
            if !(8..=8192).contains(dimensions) {
                anyhow::bail!(
                    "invalid configuration: embedder.dimensions = {dimensions}; use 8 to 8192"
                );
            }
            Ok(Arc::new(HashingEmbedder::new(*dimensions)))
        }
    }
}
