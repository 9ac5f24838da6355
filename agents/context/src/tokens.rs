//! Token counting with a real BPE (`o200k_base`, the encoding of current OpenAI models), loaded
//! once per process.
//!
//! Counts decide what fits in a budget, so they must match what a model will see: an estimate
//! such as "four characters per token" is off by 2× on code and non-English text.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

use crate::error::ContextError;

/// The name of the encoding, reported in errors and docs.
pub const ENCODING: &str = "o200k_base";

static BPE: OnceLock<Result<CoreBPE, String>> = OnceLock::new();

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
