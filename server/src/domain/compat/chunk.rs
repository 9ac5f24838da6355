//! Chunking a long text by tokens, with overlap, never inside a word.
//!
//! Tokens are counted with the Context Architect's tokenizer ([`Tokenizer`], the real
//! `o200k_base` BPE), so a chunk's size means what it means in a context budget. Words are
//! runs of non-whitespace; a chunk is a slice of the original text from the start of one word
//! to the end of another (the whitespace between them kept as it was), of at most
//! `max_tokens` tokens. The next chunk starts with the last words of the previous one, as many
//! as fit in `overlap_tokens`. The one exception to "never inside a word": a single word longer
//! than `max_tokens` on its own (a long URL, a base64 blob) is cut at character boundaries.

use aeterna_context::Tokenizer;

/// How to chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkParams {
    pub max_tokens: usize,
    pub overlap_tokens: usize,
}

/// The fewest chunks a text of `tokens` tokens can make: a cheap bound checked before a job is
/// queued (the real split, at word boundaries, may make a few more).
pub fn min_chunks(tokens: usize, params: ChunkParams) -> usize {
    if tokens <= params.max_tokens {
        return 1;
    }
    let fresh = params
        .max_tokens
        .saturating_sub(params.overlap_tokens)
        .max(1);
    1 + (tokens - params.max_tokens).div_ceil(fresh)
}

/// The chunks of `text`, in order; none when it holds no word.
pub fn chunk_text(tokenizer: Tokenizer, text: &str, params: ChunkParams) -> Vec<String> {
    let max = params.max_tokens.max(1);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Vec::new();
    }
    if tokenizer.count(trimmed) <= max {
        return vec![trimmed.to_owned()];
    }
    let words = words(tokenizer, text, max);
    // What each word adds to a chunk it does not start: itself with the whitespace before it.
    let cost: Vec<usize> = words
        .iter()
        .enumerate()
        .map(|(i, &(start, end))| {
            let from = if i == 0 { start } else { words[i - 1].1 };
            tokenizer.count(&text[from..end])
        })
        .collect();
    let mut chunks = Vec::new();
    let mut start = 0;
    while start < words.len() {
        // The first word of a chunk counts without the whitespace before it.
        let mut sum = tokenizer.count(&text[words[start].0..words[start].1]);
        let mut end = start + 1;
        while end < words.len() && sum + cost[end] <= max {
            sum += cost[end];
            end += 1;
        }
        // Per-word counts approximate the count of the whole slice; the real count decides.
        let slice = |end: usize| &text[words[start].0..words[end - 1].1];
        while end > start + 1 && tokenizer.count(slice(end)) > max {
            end -= 1;
        }
        chunks.push(slice(end).to_owned());
        if end == words.len() {
            break;
        }
        let mut next = end;
        let mut overlap = 0;
        while next > start + 1 && overlap + cost[next - 1] <= params.overlap_tokens {
            overlap += cost[next - 1];
            next -= 1;
        }
        start = next;
    }
    chunks
}

/// The byte ranges of the words of `text`; a word over `max` tokens on its own comes as
/// several pieces that fit.
fn words(tokenizer: Tokenizer, text: &str, max: usize) -> Vec<(usize, usize)> {
    let mut words = Vec::new();
    let mut start = None;
    for (at, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        match (start, c.is_whitespace()) {
            (None, false) => start = Some(at),
            (Some(from), true) => {
                split_long_word(tokenizer, text, from, at, max, &mut words);
                start = None;
            }
            _ => {}
        }
    }
    words
}

fn split_long_word(
    tokenizer: Tokenizer,
    text: &str,
    mut from: usize,
    to: usize,
    max: usize,
    out: &mut Vec<(usize, usize)>,
) {
    while tokenizer.count(&text[from..to]) > max {
        // The longest prefix (at a character boundary) that fits: binary search.
        let boundaries: Vec<usize> = text[from..to]
            .char_indices()
            .map(|(at, _)| from + at)
            .skip(1)
            .collect();
        let (mut low, mut high) = (0, boundaries.len());
        while low < high {
            let mid = (low + high).div_ceil(2);
            if tokenizer.count(&text[from..boundaries[mid - 1]]) <= max {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        let cut = if low == 0 {
            boundaries[0]
        } else {
            boundaries[low - 1]
        };
        out.push((from, cut));
        from = cut;
    }
    out.push((from, to));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer() -> Tokenizer {
        Tokenizer::get().expect("bpe loads")
    }

    fn long_text(words: usize) -> String {
        let vocabulary = [
            "invoice",
            "ledger",
            "PostgreSQL",
            "retry",
            "the",
            "payment",
            "queue",
            "worker",
            "chunk",
            "tenant",
            "über-long",
            "naïve",
            "42",
            "migration",
            "rollback",
            "a",
        ];
        let mut state = 7u64;
        (0..words)
            .map(|i| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let word = vocabulary[(state >> 33) as usize % vocabulary.len()];
                if i % 17 == 16 {
                    format!("{word}.\n")
                } else {
                    format!("{word} ")
                }
            })
            .collect()
    }

    #[test]
    fn short_text_is_one_trimmed_chunk() {
        let params = ChunkParams {
            max_tokens: 256,
            overlap_tokens: 32,
        };
        assert_eq!(
            chunk_text(tokenizer(), "  hello world \n", params),
            ["hello world"]
        );
        assert!(chunk_text(tokenizer(), " \n\t ", params).is_empty());
    }

    #[test]
    fn long_text_makes_bounded_overlapping_chunks_of_whole_words() {
        let tokenizer = tokenizer();
        let text = long_text(3000);
        let params = ChunkParams {
            max_tokens: 64,
            overlap_tokens: 8,
        };
        let chunks = chunk_text(tokenizer, &text, params);
        assert!(chunks.len() > 10, "{}", chunks.len());
        let tokens = tokenizer.count(&text);
        assert!(chunks.len() >= min_chunks(tokens, params));
        let source_words: std::collections::HashSet<&str> = text.split_whitespace().collect();
        for chunk in &chunks {
            assert!(tokenizer.count(chunk) <= 64, "{chunk:?}");
            assert!(text.contains(chunk.as_str()), "a slice of the text");
            assert!(chunk.split_whitespace().all(|w| source_words.contains(w)));
        }
        for pair in chunks.windows(2) {
            let last: Vec<&str> = pair[0].split_whitespace().collect();
            let first: Vec<&str> = pair[1].split_whitespace().collect();
            // The next chunk begins with the previous chunk's last words.
            let shared = (1..=first.len().min(last.len()))
                .rev()
                .find(|&n| last[last.len() - n..] == first[..n])
                .unwrap_or(0);
            assert!(shared >= 1, "{:?} / {:?}", pair[0], pair[1]);
        }
        // Every word of the text is in some chunk, in order.
        let rejoined: Vec<&str> = chunks
            .iter()
            .flat_map(|chunk| chunk.split_whitespace())
            .collect();
        assert!(rejoined.len() >= text.split_whitespace().count());
    }

    #[test]
    fn no_overlap_means_disjoint_chunks_covering_the_text() {
        let text = long_text(800);
        let params = ChunkParams {
            max_tokens: 50,
            overlap_tokens: 0,
        };
        let chunks = chunk_text(tokenizer(), &text, params);
        let words: Vec<&str> = chunks.iter().flat_map(|c| c.split_whitespace()).collect();
        assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
    }

    #[test]
    fn a_word_longer_than_a_chunk_is_cut_at_character_boundaries() {
        let tokenizer = tokenizer();
        let blob = "Zm9vYmFyYmF6cXV4".repeat(200) + "日本語";
        let text = format!("before {blob} after");
        let params = ChunkParams {
            max_tokens: 20,
            overlap_tokens: 4,
        };
        let chunks = chunk_text(tokenizer, &text, params);
        assert!(chunks.len() > 5);
        for chunk in &chunks {
            assert!(tokenizer.count(chunk) <= 20, "{chunk:?}");
        }
        assert!(chunks[0].starts_with("before"));
        assert!(chunks.last().is_some_and(|c| c.ends_with("after")));
    }

    #[test]
    fn min_chunks_is_a_lower_bound() {
        let params = ChunkParams {
            max_tokens: 256,
            overlap_tokens: 32,
        };
        assert_eq!(min_chunks(0, params), 1);
        assert_eq!(min_chunks(256, params), 1);
        assert_eq!(min_chunks(257, params), 2);
        assert_eq!(min_chunks(256 + 224, params), 2);
        assert_eq!(min_chunks(256 + 225, params), 3);
    }
}
