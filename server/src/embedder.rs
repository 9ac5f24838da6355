//! Builds the configured [`Embedder`](aeterna_memory::embed::Embedder) (the `[embedder]`
//! section: `provider = "hashing"` by default, or `"openai"`, or `"local_model"`).

use std::sync::Arc;

use aeterna_memory::embed::{Embedder, EmbedderConfig, build_embedder};
use anyhow::Context;

pub fn build(config: &EmbedderConfig) -> anyhow::Result<Arc<dyn Embedder>> {
    build_embedder(config).context("invalid configuration: cannot build the [embedder]")
}
