//! [`MemoryConfig`]: limits, retrieval tuning and storage settings. Every field has a default.

use crate::follow::FollowConfig;
use crate::retrieval::SignalWeights;
use crate::storage::postgres::PostgresConfig;
use crate::storage::sqlite::SqliteConfig;
use crate::vector::{QdrantConfig, VectorIndexConfig};

/// Limits and defaults of the memory service. Every field is configurable.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Largest accepted content, in bytes (64 KiB).
    pub max_content_bytes: usize,
    /// Largest page for listings and searches (100).
    pub max_page_size: usize,
    /// Most tags per record (32), each at most `max_tag_bytes` (128).
    pub max_tags: usize,
    pub max_tag_bytes: usize,
    /// Largest metadata object as JSON text, in bytes (16 KiB).
    pub max_metadata_bytes: usize,
    /// Largest search query, in bytes (8 KiB).
    pub max_query_bytes: usize,
    /// Longest scope id (session, project, … id) and kind, in bytes (256).
    pub max_id_bytes: usize,
    /// Replace secrets (API keys, tokens, private keys, passwords in assignments…) in content
    /// and metadata with `[REDACTED:<kind>]` before anything is stored or embedded (true).
    pub redact_secrets: bool,
    /// What to do when the configured embedder differs from the one that made the stored
    /// vectors (`auto`).
    pub on_embedder_change: EmbedderChange,
    /// Records re-embedded per batch (256).
    pub reembed_batch: usize,
    /// Closed versions a memory keeps (100); a supersede past it deletes the oldest.
    pub max_versions_per_memory: usize,
    /// Most memories one `memory_forget` (or one layer's retention pass) removes (10 000);
    /// the answer says when more match.
    pub max_forget_per_call: usize,
    /// How long each layer's memories live.
    pub retention: RetentionConfig,
    pub retrieval: RetrievalConfig,
    pub vectors: VectorIndexConfig,
    pub sqlite: SqliteConfig,
    /// The scale-out profile's database, used when the server has a `database_url`.
    pub postgres: PostgresConfig,
    /// How instances sharing a database follow each other's writes.
    pub follow: FollowConfig,
    /// The vector store of the scale-out profile, used when the server has a `qdrant_url`.
    pub qdrant: QdrantConfig,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            max_content_bytes: 64 * 1024,
            max_page_size: 100,
            max_tags: 32,
            max_tag_bytes: 128,
            max_metadata_bytes: 16 * 1024,
            max_query_bytes: 8 * 1024,
            max_id_bytes: 256,
            redact_secrets: true,
            on_embedder_change: EmbedderChange::Auto,
            reembed_batch: 256,
            max_versions_per_memory: 100,
            max_forget_per_call: 10_000,
            retention: RetentionConfig::default(),
            retrieval: RetrievalConfig::default(),
            vectors: VectorIndexConfig::default(),
            sqlite: SqliteConfig::default(),
            postgres: PostgresConfig::default(),
            follow: FollowConfig::default(),
            qdrant: QdrantConfig::default(),
        }
    }
}

/// Per-layer retention: memories of a layer with a retention are forgotten (audited as
/// `expire`) once they were last changed longer ago than its days.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetentionConfig {
    /// Days per layer (`session = 30` by default; other layers keep their memories until
    /// forgotten). `[memory.retention.days]` replaces the whole map: `{}` keeps everything.
    pub days: std::collections::BTreeMap<crate::model::Layer, u32>,
    /// How often the retention pass runs, in seconds (3600).
    pub interval_secs: u64,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        RetentionConfig {
            days: [(crate::model::Layer::Session, 30)].into_iter().collect(),
            interval_secs: 3600,
        }
    }
}

/// The policy for a changed embedder. Vectors of different embedders are never mixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbedderChange {
    /// Re-embed when the new embedder runs in this process (the static table, hashing, a local
    /// model: no cost but CPU, and an upgrade that changes the default embedder just works);
    /// refuse when it is a remote API, whose calls cost money and time.
    #[default]
    Auto,
    /// Fail to open, saying how to proceed.
    Refuse,
    /// Re-embed every stored record with the new embedder (batched, resumable) while opening.
    Reembed,
}

/// Retrieval tuning (see [`crate::retrieval`]).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalConfig {
    /// The `k` of reciprocal rank fusion: `Σ 1 / (k + rank)` (60).
    pub rrf_k: f32,
    /// Each retriever returns `limit × candidates_per_hit` candidates (4) ...
    pub candidates_per_hit: usize,
    /// ... and at least this many (40).
    pub min_candidates: usize,
    /// The best this many fused candidates (or `limit`, if larger) are rescored (60).
    pub rerank_depth: usize,
    /// Query words beyond this many are ignored by the lexical retriever (32).
    pub max_query_terms: usize,
    /// The memories written just before and after the best this many candidates join the
    /// candidates, and lend them their score as the `neighbour` signal (10; 0 turns it off).
    pub neighbours: usize,
    /// Hits this similar to a better one (static embedding cosine) and with the same details
    /// (numbers, names, identifiers) fold onto the oldest of them (0.92); 1 or more turns
    /// folding off.
    pub duplicate_similarity: f32,
    /// The weights of the final score; the defaults are fitted (see
    /// [`crate::retrieval::rank`]).
    pub weights: SignalWeights,
    /// A search `as_of` a past time reads at most this many past versions valid then, the
    /// most recently closed first (5 000).
    pub as_of_versions: usize,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig {
            rrf_k: 60.0,
            candidates_per_hit: 4,
            min_candidates: 40,
            rerank_depth: 60,
            max_query_terms: 32,
            neighbours: 10,
            duplicate_similarity: 0.92,
            weights: SignalWeights::default(),
            as_of_versions: 5_000,
        }
    }
}
