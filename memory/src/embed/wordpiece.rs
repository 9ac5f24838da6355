//! A BERT WordPiece tokenizer for uncased models, equivalent to the HF `tokenizers` pipeline
//! `BertNormalizer` (clean text, CJK padding, strip accents, lowercase) + `BertPreTokenizer` +
//! `WordPiece` (`##` continuations, at most 100 characters a word), without special tokens.
//!
//! Shared by the sentence-transformers embedder ([`super::LocalModelEmbedder`]) and by
//! embedders that look tokens up in a table over the same vocabulary.
//!
//! The pipeline, per character, in HF's order:
//! 1. clean: NUL, U+FFFD and control characters (`Cc`, `Cf`, `Co`, except `\t \n \r`) are
//!    dropped; whitespace becomes a space;
//! 2. CJK ideographs get a space on each side;
//! 3. NFD, then nonspacing marks (`Mn`) are dropped;
//! 4. each character is lowercased on its own (`char::to_lowercase`: no final-sigma rule);
//! 5. words are split at whitespace and at punctuation (ASCII punctuation and `P*`), each
//!    punctuation character its own word;
//! 6. each word is split greedily, longest vocabulary match first, into a piece and `##`
//!    continuations; a word of more than 100 characters, or one that cannot be split, is
//!    `[UNK]`.
//!
//! The character classes (control, nonspacing mark, punctuation) are tables generated from
//! the HF library itself (`wordpiece_tables.rs`, by `tests/fixtures/embed/
//! make_wordpiece_tables.py`), not a Unicode crate: HF classifies with the Unicode 9-era
//! tables of `unicode_categories`, and a current database (e.g. `unicode-properties`, Unicode
//! 18) differs on ~700 code points assigned or recategorised since, so only HF's own classes
//! give the same ids for every character. They are 446 ranges, 9 KB of source, binary-searched
//! only for non-ASCII characters. NFD (`unicode-normalization`) and lowercasing (`std`) are
//! the ones HF uses too; an exhaustive check of `a{c}a` for every code point `c` found no
//! other difference, and the committed parity fixture (327 texts) agrees id for id.
//!
//! One difference on purpose: HF's `Tokenizer` also matches its added tokens (`[CLS]`,
//! `[SEP]`, `[MASK]`…) verbatim inside the raw text. Here they are ordinary text (`[`, `cl`,
//! `##s`, `]`), so a stored memory cannot inject a separator.
//!
//! Speed: ASCII text (most memories and queries) takes a byte loop with no Unicode tables; any
//! other text streams through the same steps as iterator adaptors. Either way one reused
//! buffer holds the current word, the vocabulary is looked up by `&str` slices (two maps, so a
//! continuation needs no `##` prefix string), no candidate piece is longer than the longest
//! vocabulary entry, and work stops once `max_tokens` ids are out: the cost of a huge input
//! is bounded by what is kept of it.

use std::collections::HashMap;

use anyhow::{Context, bail};
use unicode_normalization::UnicodeNormalization;

use super::wordpiece_tables::{CONTROL, NONSPACING, PUNCTUATION};

/// Words longer than this, in characters, are `[UNK]` (HF's `max_input_chars_per_word`).
pub const MAX_WORD_CHARS: usize = 100;
/// Longest vocabulary line accepted, in bytes.
const MAX_TOKEN_BYTES: usize = 200;
/// Most vocabulary lines accepted.
const MAX_VOCAB: usize = 1 << 20;

type Map = HashMap<Box<str>, u32, foldhash::fast::RandomState>;

/// The ids of the special tokens a BERT model needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Special {
    pub cls: u32,
    pub sep: u32,
    pub pad: u32,
    pub unk: u32,
}

/// A WordPiece vocabulary and the tokenizer over it; see the module documentation.
#[derive(Debug, Clone)]
pub struct WordPiece {
    /// Every vocabulary entry verbatim (word starts, and `##…` entries for [`Self::token_id`]).
    tokens: Map,
    /// `##x` entries under `x`.
    continuations: Map,
    /// Longest key of `tokens` / `continuations`, in bytes: no longer candidate can match.
    longest_start: usize,
    longest_continuation: usize,
    special: Special,
    len: usize,
}

impl WordPiece {
    /// Reads a `vocab.txt`: one token per line, its id the line number (trailing whitespace
    /// trimmed and a repeated token taking its last line, as HF reads it).
    pub fn from_vocab(vocab_txt: &str) -> anyhow::Result<Self> {
        let mut tokens = Map::default();
        let mut continuations = Map::default();
        let mut len = 0;
        for (id, line) in vocab_txt.lines().enumerate() {
            if id >= MAX_VOCAB {
                bail!("the vocabulary has more than {MAX_VOCAB} lines");
            }
            let token = line.trim_end();
            if token.len() > MAX_TOKEN_BYTES {
                bail!(
                    "vocabulary line {} is {} bytes long; at most {MAX_TOKEN_BYTES} are accepted",
                    id + 1,
                    token.len()
                );
            }
            let id = u32::try_from(id).context("vocabulary id")?;
            if let Some(rest) = token.strip_prefix("##") {
                continuations.insert(rest.into(), id);
            }
            tokens.insert(token.into(), id);
            len += 1;
        }
        let find = |name: &str| {
            tokens.get(name).copied().with_context(|| {
                format!("the vocabulary has no {name} token: not a BERT WordPiece vocab.txt")
            })
        };
        let special = Special {
            cls: find("[CLS]")?,
            sep: find("[SEP]")?,
            pad: find("[PAD]")?,
            unk: find("[UNK]")?,
        };
        Ok(WordPiece {
            longest_start: tokens.keys().map(|t| t.len()).max().unwrap_or(0),
            longest_continuation: continuations.keys().map(|t| t.len()).max().unwrap_or(0),
            tokens,
            continuations,
            special,
            len,
        })
    }

    /// The id of a vocabulary entry, written as in `vocab.txt` (`##ing` for a continuation).
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.tokens.get(token).copied()
    }

    pub fn special(&self) -> Special {
        self.special
    }

    /// Lines read from `vocab.txt` (ids are below this).
    pub fn vocab_len(&self) -> usize {
        self.len
    }

    /// Appends the ids of `text` (no special tokens) to `out`, stopping after `max_tokens`;
    /// returns how many were appended.
    pub fn encode_into(&self, text: &str, max_tokens: usize, out: &mut Vec<u32>) -> usize {
        let mut sink = Sink {
            vocab: self,
            out,
            start: 0,
            max_tokens,
            word: String::new(),
            word_chars: 0,
        };
        sink.start = sink.out.len();
        if max_tokens == 0 {
            return 0;
        }
        if text.is_ascii() {
            sink.ascii(text.as_bytes());
        } else {
            sink.unicode(text);
        }
        sink.out.len() - sink.start
    }

    /// Appends the pieces of one normalised word; false once `max_tokens` are out.
    fn word(&self, word: &str, chars: usize, out: &mut Vec<u32>, limit: usize) -> bool {
        if out.len() >= limit {
            return false;
        }
        if chars > MAX_WORD_CHARS {
            out.push(self.special.unk);
            return out.len() < limit;
        }
        if let Some(&id) = self.tokens.get(word) {
            out.push(id);
            return out.len() < limit;
        }
        let first = out.len();
        let mut start = 0;
        while start < word.len() {
            let (map, longest) = if start == 0 {
                (&self.tokens, self.longest_start)
            } else {
                (&self.continuations, self.longest_continuation)
            };
            let mut end = floor_char_boundary(word, (start + longest).min(word.len()));
            let mut found = None;
            while end > start {
                if let Some(&id) = map.get(&word[start..end]) {
                    found = Some(id);
                    break;
                }
                end = floor_char_boundary(word, end - 1);
            }
            match found {
                Some(id) => out.push(id),
                None => {
                    out.truncate(first);
                    out.push(self.special.unk);
                    break;
                }
            }
            start = end;
        }
        // A word's pieces past the limit are cut, as HF truncates an encoding.
        out.truncate(limit);
        out.len() < limit
    }
}

fn floor_char_boundary(s: &str, mut index: usize) -> usize {
    while !s.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// One call's state: the word being gathered and where the ids go.
struct Sink<'a> {
    vocab: &'a WordPiece,
    out: &'a mut Vec<u32>,
    start: usize,
    max_tokens: usize,
    /// The current word, at most [`MAX_WORD_CHARS`] + 1 characters (a longer one is `[UNK]`
    /// whatever it holds).
    word: String,
    word_chars: usize,
}

impl Sink<'_> {
    fn limit(&self) -> usize {
        self.start + self.max_tokens
    }

    fn push_char(&mut self, c: char) {
        if self.word_chars <= MAX_WORD_CHARS {
            self.word.push(c);
        }
        self.word_chars += 1;
    }

    /// Ends the current word; false once `max_tokens` are out.
    fn flush(&mut self) -> bool {
        if self.word_chars == 0 {
            return true;
        }
        let limit = self.limit();
        let more = self
            .vocab
            .word(&self.word, self.word_chars, self.out, limit);
        self.word.clear();
        self.word_chars = 0;
        more
    }

    /// A punctuation character: a word of its own.
    fn punctuation(&mut self, c: char) -> bool {
        if !self.flush() {
            return false;
        }
        self.push_char(c);
        self.flush()
    }

    fn ascii(&mut self, bytes: &[u8]) {
        for &b in bytes {
            let more = match b {
                b' ' | b'\t' | b'\n' | b'\r' => self.flush(),
                // Every other ASCII control character (`Cc`) is dropped, joining its neighbours.
                0..=0x1f | 0x7f => true,
                _ if b.is_ascii_punctuation() => self.punctuation(b as char),
                _ => {
                    self.push_char(b.to_ascii_lowercase() as char);
                    true
                }
            };
            if !more {
                return;
            }
        }
        self.flush();
    }

    fn unicode(&mut self, text: &str) {
        let normalised = text
            .chars()
            .filter(|&c| !(c == '\0' || c == '\u{fffd}' || is_control(c)))
            .map(|c| if is_whitespace(c) { ' ' } else { c })
            .flat_map(|c| {
                let pad = is_chinese_char(c);
                [(' ', pad), (c, true), (' ', pad)]
                    .into_iter()
                    .filter_map(|(c, keep)| keep.then_some(c))
            })
            .nfd()
            .filter(|&c| !in_table(c, &NONSPACING))
            .flat_map(char::to_lowercase);
        for c in normalised {
            let more = if c.is_whitespace() {
                self.flush()
            } else if is_punctuation(c) {
                self.punctuation(c)
            } else {
                self.push_char(c);
                true
            };
            if !more {
                return;
            }
        }
        self.flush();
    }
}

/// HF's `is_whitespace`: `\t \n \r` and Unicode `White_Space`.
fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// HF's `is_control`: `Cc`, `Cf` and `Co` by its tables, except `\t \n \r` (whitespace).
fn is_control(c: char) -> bool {
    in_table(c, &CONTROL)
}

/// HF's `is_bert_punc`: ASCII punctuation (which includes symbols such as `$ + < = > ^ ` | ~`)
/// and the Unicode punctuation categories by its tables.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_ascii() && in_table(c, &PUNCTUATION))
}

fn in_table(c: char, table: &[(u32, u32)]) -> bool {
    let c = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// HF's `is_chinese_char`: the CJK Unified Ideographs blocks and their compatibility blocks
/// (not Hangul, kana or CJK punctuation).
fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

#[cfg(test)]
#[path = "wordpiece_tests.rs"]
mod tests;
