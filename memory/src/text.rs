//! Word-level text handling shared by the hashing embedder and the lexical query builder.

/// English function words that carry no topic: they are left out of lexical queries and of
/// the hashing embedder's features, where they would make unrelated texts look alike.
/// Sorted, for binary search.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Whether `word` (lowercase) is a stopword.
pub(crate) fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Lowercase words of `text`: maximal runs of alphanumeric characters. With `split_camel`,
/// `MemoryService` also splits into `memory` and `service`, which helps identifiers match
/// prose.
pub(crate) fn words(text: &str, split_camel: bool) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            if split_camel && previous_lower && ch.is_uppercase() && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = ch.is_lowercase() || ch.is_numeric();
            if ch.is_ascii() {
                current.push(ch.to_ascii_lowercase());
            } else {
                current.extend(ch.to_lowercase());
            }
        } else {
            previous_lower = false;
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(is_stopword("the"));
        assert!(!is_stopword("database"));
    }

    #[test]
    fn words_split_on_punctuation_and_optionally_camel_case() {
        assert_eq!(
            words("Hello, wörld! max_page_size", false),
            ["hello", "wörld", "max", "page", "size"]
        );
        assert_eq!(
            words("MemoryService HTTP2client", true),
            ["memory", "service", "http2client"]
        );
        assert_eq!(words("MemoryService", false), ["memoryservice"]);
        assert!(words("!!! ... ???", true).is_empty());
    }
}
