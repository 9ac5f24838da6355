//! Text primitives shared by summarisation and deduplication: words, sentences and shingles.

use std::hash::BuildHasher;
use std::sync::LazyLock;

/// Lower-cased alphanumeric words (Unicode-aware); `_` joins words as in identifiers.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    word_spans(text).map(str::to_lowercase)
}

/// The words of `text` as they are written.
fn word_spans(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
}

/// Words that carry content: no stop words, no single characters.
pub fn terms(text: &str) -> impl Iterator<Item = String> + '_ {
    words(text).filter(|word| word.chars().count() > 1 && !is_stop_word(word))
}

/// Common English function words, which say nothing about what a sentence is about.
pub fn is_stop_word(word: &str) -> bool {
    const STOP: &[&str] = &[
        "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
        "before", "being", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had",
        "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is", "it", "its",
        "just", "may", "me", "more", "most", "must", "my", "no", "not", "of", "on", "or", "our",
        "out", "over", "she", "should", "so", "some", "such", "than", "that", "the", "their",
        "them", "then", "there", "these", "they", "this", "those", "to", "up", "us", "use", "used",
        "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "will",
        "with", "would", "you", "your",
    ];
    STOP.binary_search(&word).is_ok()
}

/// Splits text into sentences: at `.`, `!` or `?` followed by whitespace, and at line breaks
/// (memories are often bullet lists or log lines). Markdown bullets and headings are stripped;
/// empty pieces are dropped.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = strip_list_marker(line.trim());
        let mut start = 0;
        let mut chars = line.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if matches!(c, '.' | '!' | '?' | '。' | '！' | '？') {
                let next_is_break = match chars.peek() {
                    None => true,
                    Some((_, next)) => next.is_whitespace() || matches!(c, '。' | '！' | '？'),
                };
                if next_is_break {
                    let end = at + c.len_utf8();
                    push_sentence(&mut out, &line[start..end]);
                    start = end;
                }
            }
        }
        push_sentence(&mut out, &line[start..]);
    }
    out
}

fn push_sentence<'a>(out: &mut Vec<&'a str>, piece: &'a str) {
    let piece = piece.trim();
    if piece.chars().any(char::is_alphanumeric) {
        out.push(piece);
    }
}

fn strip_list_marker(line: &str) -> &str {
    let line = line.trim_start_matches('#').trim_start();
    for marker in ["- [ ] ", "- [x] ", "- ", "* ", "+ ", "> "] {
        if let Some(rest) = line.strip_prefix(marker) {
            return rest.trim_start();
        }
    }
    line
}

/// Hashed word shingles of `text`: overlapping runs of [`SHINGLE_WORDS`] words, or the whole
/// text when it is shorter. Two texts sharing most shingles say the same thing in the same
/// words, whatever their layer.
///
/// Each word is hashed once, lower-cased as [`words`] does it, and a shingle is the hash of its
/// words' hashes: no word is copied into a `String` (that allocation per word was most of
/// what shingles cost in a profile of `context_assemble`).
///
/// ASCII text (nearly all memories) is split byte by byte: for ASCII the word characters are
/// exactly `[A-Za-z0-9_]`, and skipping the UTF-8 decoding of [`word_spans`] takes a quarter
/// to a third off (0.44–0.50 µs instead of 0.58–0.82 µs for a memory of 20 words).
pub fn shingles(text: &str) -> Vec<u64> {
    let words = if text.is_ascii() {
        ascii_word_hashes(text)
    } else {
        word_hashes(text)
    };
    if words.is_empty() {
        return Vec::new();
    }
    let width = SHINGLE_WORDS.min(words.len());
    let mut out: Vec<u64> = words
        .windows(width)
        .map(|window| SHINGLE_HASHER.hash_one(window))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The [`hash_word`] of each of the [`word_spans`] of `text`.
fn word_hashes(text: &str) -> Vec<u64> {
    word_spans(text).map(hash_word).collect()
}

/// [`word_hashes`] of ASCII text.
fn ascii_word_hashes(text: &str) -> Vec<u64> {
    text.as_bytes()
        .split(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))
        .filter(|word| !word.is_empty())
        .map(hash_ascii_word)
        .collect()
}

/// Words per shingle.
pub const SHINGLE_WORDS: usize = 3;

/// One hasher for every shingle of the process, so shingles of different texts compare;
/// randomly seeded, so nobody outside can aim texts at each other's shingles.
static SHINGLE_HASHER: LazyLock<foldhash::fast::RandomState> = LazyLock::new(Default::default);

/// The hash of `word` lower-cased: ASCII words (nearly all) are folded on the stack, others
/// through `str::to_lowercase`; both hash the same bytes a lower-cased copy would hold.
fn hash_word(word: &str) -> u64 {
    if word.is_ascii() {
        hash_ascii_word(word.as_bytes())
    } else {
        SHINGLE_HASHER.hash_one(word.to_lowercase().as_bytes())
    }
}

/// [`hash_word`] of an ASCII word, folded on the stack when it is short (nearly always).
fn hash_ascii_word(word: &[u8]) -> u64 {
    const STACK: usize = 64;
    if word.len() <= STACK {
        let mut folded = [0u8; STACK];
        let folded = &mut folded[..word.len()];
        folded.copy_from_slice(word);
        folded.make_ascii_lowercase();
        SHINGLE_HASHER.hash_one(&*folded)
    } else {
        SHINGLE_HASHER.hash_one(word.to_ascii_lowercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(is_stop_word("the") && is_stop_word("with") && is_stop_word("a"));
        assert!(!is_stop_word("cargo"));
    }

    #[test]
    fn sentences_split_at_terminators_and_lines() {
        let text = "# Notes\n- First point. Second point! Is it third?\n* version 1.2.3 is out\n\n";
        assert_eq!(
            sentences(text),
            vec![
                "Notes",
                "First point.",
                "Second point!",
                "Is it third?",
                "version 1.2.3 is out"
            ]
        );
    }

    #[test]
    fn terms_drop_stop_words_and_case() {
        let terms: Vec<String> = terms("The Cargo build of my_crate FAILED in CI").collect();
        assert_eq!(terms, vec!["cargo", "build", "my_crate", "failed", "ci"]);
    }

    #[test]
    fn shingles_ignore_case_and_punctuation() {
        assert_eq!(
            shingles("Run cargo test, then push."),
            shingles("run CARGO test then push")
        );
        assert_ne!(shingles("run cargo test"), shingles("test cargo run"));
        assert_eq!(shingles("two words").len(), 1);
        assert!(shingles("  ... ").is_empty());
    }

    #[test]
    fn the_ascii_split_finds_the_words_the_unicode_split_finds() {
        let long = "Y".repeat(70);
        for text in [
            "Run cargo_test, then PUSH.",
            "  --x-- a1 _b_ 9.9 (c)d\te\nf ",
            "",
            "!!!",
            "snake_case CamelCase kebab-case path/to/file.rs:42",
            long.as_str(),
        ] {
            assert!(text.is_ascii());
            assert_eq!(ascii_word_hashes(text), word_hashes(text), "{text:?}");
        }
    }

    #[test]
    fn shingles_fold_case_beyond_ascii_and_in_long_words() {
        assert_eq!(
            shingles("Über GRÖSSE straße"),
            shingles("über grösse straße")
        );
        let long = "a".repeat(100);
        assert_eq!(
            shingles(&format!("{} b c", long.to_uppercase())),
            shingles(&format!("{long} B C"))
        );
        // A word folded on the stack and the same word folded through `to_lowercase` agree.
        assert_eq!(hash_word("CargoTest"), hash_word("cargotest"));
        assert_eq!(
            hash_word("Ünïcode"),
            SHINGLE_HASHER.hash_one("ünïcode".as_bytes())
        );
        assert_eq!(
            hash_word("Cargo"),
            SHINGLE_HASHER.hash_one("cargo".as_bytes())
        );
    }
}
