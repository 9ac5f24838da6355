//! Token counting with a real BPE (`o200k_base`, the encoding of current OpenAI models), loaded
//! once per process.
//!
//! Counts decide what fits in a budget, so they must match what a model will see: an estimate
//! such as "four characters per token" is off by 2× on code and non-English text.

use std::hash::{Hash, Hasher};
use std::num::NonZeroUsize;
use std::sync::OnceLock;

use lru::LruCache;
use parking_lot::Mutex;
use tiktoken_rs::CoreBPE;

use crate::error::ContextError;

/// The name of the encoding, reported in errors and docs.
pub const ENCODING: &str = "o200k_base";

static BPE: OnceLock<Result<CoreBPE, String>> = OnceLock::new();

/// Token counts of recently counted chunks (see [`Tokenizer::count_chunked`]), by a 128-bit
/// hash of their text. Bounded: about 3 MiB.
const CACHED_CHUNKS: usize = 1 << 16;
static CHUNK_COUNTS: OnceLock<Mutex<LruCache<u128, usize>>> = OnceLock::new();

/// A handle to the process-wide BPE. Cheap to copy.
#[derive(Clone, Copy)]
pub struct Tokenizer {
    bpe: &'static CoreBPE,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("encoding", &ENCODING)
            .finish()
    }
}

impl Tokenizer {
    /// The shared tokenizer; the first call parses the embedded BPE ranks (tens of ms).
    pub fn get() -> Result<Tokenizer, ContextError> {
        let loaded = BPE.get_or_init(|| tiktoken_rs::o200k_base().map_err(|e| format!("{e:#}")));
        match loaded {
            Ok(bpe) => Ok(Tokenizer { bpe }),
            Err(message) => Err(ContextError::Tokenizer(format!(
                "cannot load the {ENCODING} BPE: {message}"
            ))),
        }
    }

    /// How many tokens `text` encodes to. Special-token markers in the text count as plain
    /// text, as they would when a client sends the text to a model.
    pub fn count(&self, text: &str) -> usize {
        self.bpe.encode_ordinary(text).len()
    }

    /// The same as [`count`](Self::count), computed as the sum over the [`forced_chunks`] of
    /// `text`, each counted once and then remembered: an assembled context is made of
    /// memories that recur from one assembly to the next, so only new text is encoded.
    pub fn count_chunked(&self, text: &str) -> usize {
        let cache = CHUNK_COUNTS.get_or_init(|| {
            Mutex::new(LruCache::new(
                NonZeroUsize::new(CACHED_CHUNKS).expect("non-zero"),
            ))
        });
        forced_chunks(text)
            .map(|chunk| {
                let key = text_key(chunk);
                if let Some(&count) = cache.lock().get(&key) {
                    return count;
                }
                let count = self.count(chunk);
                cache.lock().put(key, count);
                count
            })
            .sum()
    }

    /// The longest prefix of `text` that fits in `max_tokens` together with a trailing `…`,
    /// cut at a word boundary where one is near. Returns `text` unchanged when it already fits.
    pub fn truncate(&self, text: &str, max_tokens: usize) -> String {
        let tokens = self.bpe.encode_ordinary(text);
        if tokens.len() <= max_tokens {
            return text.to_owned();
        }
        const ELLIPSIS: &str = "…";
        let mut keep = max_tokens.saturating_sub(self.count(ELLIPSIS));
        while keep > 0 {
            let bytes = self.bpe.decode_bytes(&tokens[..keep]).unwrap_or_default();
            let prefix = valid_utf8_prefix(&bytes);
            let cut = word_boundary(prefix);
            let candidate = format!("{}{ELLIPSIS}", cut.trim_end());
            if self.count(&candidate) <= max_tokens {
                return candidate;
            }
            keep -= 1;
        }
        String::new()
    }
}

/// Pieces of `text` split where the `o200k_base` pre-tokenizer always splits, whatever the text
/// around: after a line break and before a character that is neither whitespace nor `/`. Its
/// pattern's alternatives either never contain a line break (words, numbers), end their
/// punctuation run with `[\r\n/]*`, or are whitespace runs; none can continue past a line
/// break into such a character or start with a line break and go on into one, and its only
/// look-ahead (`\s+(?!\S)`) comes after `\s*[\r\n]+`, which already takes any whitespace run
/// ending in a line break. BPE never merges across pre-tokens, so the counts of the pieces add
/// up to the count of `text` (a property test checks it).
pub fn forced_chunks(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            at += 1;
            let splits = at < bytes.len()
                && bytes[at - 1] == b'\n'
                && bytes[at] != b'/'
                && !text[at..].chars().next().is_some_and(char::is_whitespace);
            if splits {
                let chunk = &text[start..at];
                start = at;
                return Some(chunk);
            }
        }
        (start < bytes.len()).then(|| {
            let chunk = &text[start..];
            start = bytes.len();
            chunk
        })
    })
}

/// Two independent 64-bit hashes of `text`, so collisions are out of the question: the key of
/// the token-count caches, 16 bytes however long the text.
pub(crate) fn text_key(text: &str) -> u128 {
    let hash = |salt: u8| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        salt.hash(&mut hasher);
        text.hash(&mut hasher);
        hasher.finish()
    };
    (u128::from(hash(0)) << 64) | u128::from(hash(1))
}

/// The longest prefix of `bytes` that is valid UTF-8 (a token may end inside a character).
fn valid_utf8_prefix(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or_default(),
    }
}

/// Cuts back to the last whitespace when that loses less than a fifth of the text, so a
/// truncated sentence does not end in half a word.
fn word_boundary(text: &str) -> &str {
    match text.rfind(char::is_whitespace) {
        Some(at) if at * 5 >= text.len() * 4 => &text[..at],
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_reference_encoding() {
        let tokenizer = Tokenizer::get().expect("bpe loads");
        // Reference values from OpenAI's tiktoken for o200k_base.
        assert_eq!(tokenizer.count(""), 0);
        assert_eq!(tokenizer.count("hello world"), 2);
        assert!(tokenizer.count("fn main() { println!(\"hi\"); }") > 5);
    }

    #[test]
    fn chunked_counts_equal_whole_counts() {
        let tokenizer = Tokenizer::get().expect("bpe loads");
        let pieces = [
            "## Project · p 1\n\n",
            "- A memory.\n",
            "- Ends with spaces   \n",
            "\n",
            "> A summary line\n> second\n\n",
            "- 12345 numbers 678\n",
            "/path/at/line/start\n",
            "- trailing punctuation...\n\n\n",
            "\u{3000}ideographic space first\n",
            "- CRLF line\r\n",
            "- über straße 日本語\n",
            "- 'quoted' it's\n",
            "\t- tab first\n",
        ];
        let mut state = 17u64;
        for _ in 0..300 {
            let mut text = String::new();
            for _ in 0..(state % 9) {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(pieces[(state >> 33) as usize % pieces.len()]);
            }
            let chunks: Vec<&str> = forced_chunks(&text).collect();
            assert_eq!(chunks.concat(), text);
            assert_eq!(
                tokenizer.count_chunked(&text),
                tokenizer.count(&text),
                "{text:?}"
            );
            state = state.wrapping_add(0x9E37_79B9);
        }
        assert_eq!(
            forced_chunks("- a\n- b\n\n## H\n\n- c").collect::<Vec<_>>(),
            ["- a\n", "- b\n\n", "## H\n\n", "- c"]
        );
    }

    #[test]
    fn special_token_text_is_counted_as_text() {
        let tokenizer = Tokenizer::get().expect("bpe loads");
        assert!(tokenizer.count("<|endoftext|>") > 1);
    }

    #[test]
    fn truncate_respects_the_limit_and_keeps_short_text() {
        let tokenizer = Tokenizer::get().expect("bpe loads");
        let text = "The quick brown fox jumps over the lazy dog. ".repeat(40);
        for limit in [1, 2, 5, 17, 50, 120] {
            let cut = tokenizer.truncate(&text, limit);
            assert!(tokenizer.count(&cut) <= limit, "limit {limit}: {cut:?}");
            assert!(text.starts_with(cut.trim_end_matches('…')), "{cut:?}");
        }
        assert_eq!(tokenizer.truncate("short", 10), "short");
    }

    #[test]
    fn truncate_never_splits_a_character() {
        let tokenizer = Tokenizer::get().expect("bpe loads");
        let text = "日本語のテキストを要約します。".repeat(20);
        for limit in 2..30 {
            let cut = tokenizer.truncate(&text, limit);
            assert!(tokenizer.count(&cut) <= limit);
            assert!(!cut.contains('\u{FFFD}'));
        }
    }
}
