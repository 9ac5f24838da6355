//! Words for matching: lower-cased, stemmed, without stop words.
//!
//! Error messages and the sentences people write about them use different forms of the same
//! words (`cast` / `casting`, `moved` / `move`, `declared` / `declaration`), so every text the
//! matcher compares — message patterns, descriptions, resolution texts — goes through
//! [`terms`]: split into words, lower-cased, English function words dropped, and each word
//! reduced by a light suffix stemmer ([`stem`]). Placeholders (`<Q>`, `<N>`, …) are one term,
//! [`PLACEHOLDER`], since which kind of value was elided says little about the error.
//!
//! The stemmer is deliberately conservative (plural and verb endings, a few derivational
//! suffixes, a final `e`): it must conflate the forms a compiler and a person use for one
//! concept, and must not merge unrelated words. Both sides of a comparison are stemmed the
//! same way, so a stem need not be a word.

/// The term every placeholder (`<Q>`, `<PATH>`, `<N>`, …) becomes.
pub const PLACEHOLDER: &str = "<v>";

/// Longest word stemmed and kept; longer runs (hashes, base64) are noise.
const MAX_WORD: usize = 40;

/// Function words that carry no meaning on their own in messages or descriptions. `not`,
/// `no`, `never` and similar stay: they are what distinguishes many diagnostics.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "been", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "for",
    "from", "had", "has", "have", "having", "he", "her", "here", "him", "his", "how", "i", "if",
    "in", "into", "is", "it", "its", "itself", "just", "me", "my", "of", "on", "once", "or", "our",
    "ours", "she", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "through", "to", "too", "us", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
    "you", "your",
];

/// Irregular forms that matter in diagnostics.
const IRREGULAR: &[(&str, &str)] = &[
    ("found", "find"),
    ("thrown", "throw"),
    ("threw", "throw"),
    ("ran", "run"),
    ("made", "make"),
    ("built", "build"),
    ("written", "write"),
    ("wrote", "write"),
    ("given", "give"),
    ("gave", "give"),
    ("taken", "take"),
    ("took", "take"),
    ("went", "go"),
    ("gone", "go"),
    ("children", "child"),
    ("indices", "index"),
    ("indexes", "index"),
];

/// Suffixes removed (longest first) when at least three letters remain.
const SUFFIXES: &[&str] = &[
    "izations", "isations", "ization", "isation", "ational", "ations", "itions", "ements", "ingly",
    "ation", "ition", "ement", "ments", "ness", "ment", "able", "ible", "ions", "ings", "edly",
    "ing", "ion", "ive", "ers", "ies", "ed", "er", "ly", "es", "s",
];

/// Whether a word is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// The stem of a lower-case word (see the module documentation).
pub fn stem(word: &str) -> String {
    if let Some((_, base)) = IRREGULAR.iter().find(|(form, _)| *form == word) {
        return stem(base);
    }
    if word.len() <= 2 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word.to_string();
    }
    let mut stem = word.to_string();
    if stem.ends_with("ss") || stem.ends_with("us") || stem.ends_with("is") {
        // `class`, `status`, `analysis`: not plurals.
    } else if let Some(base) = stem.strip_suffix("ies").filter(|b| b.len() >= 3) {
        stem = format!("{base}y");
    } else if let Some(suffix) = SUFFIXES.iter().find(|suffix| {
        // Inflections may leave two letters (`used` → `us`); derivations need three.
        let keep = if matches!(**suffix, "ed" | "ing" | "es" | "s") {
            2
        } else {
            3
        };
        stem.len() >= suffix.len() + keep && stem.ends_with(*suffix)
    }) {
        stem.truncate(stem.len() - suffix.len());
        // `mapped` → `map`, `running` → `run`; `call`, `pass`, `fizz` keep their double letter.
        let bytes = stem.as_bytes();
        let n = bytes.len();
        if n >= 4
            && bytes[n - 1] == bytes[n - 2]
            && !b"aeiouylsz".contains(&bytes[n - 1])
            && matches!(*suffix, "ed" | "ing" | "er" | "ers" | "edly" | "ingly")
        {
            stem.truncate(n - 1);
        }
    }
    // `use`/`used`, `move`/`moving`, `type`/`types` all end without their `e`.
    if stem.len() >= 3 && stem.ends_with('e') {
        stem.pop();
    }
    stem
}

/// The words of a text, lower-cased, in order: letters, digits and `_` make up a word; a
/// placeholder (`<Q>`, `<PATH>`) is one word, [`PLACEHOLDER`].
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '<' || c == '>' || c == '_'))
        .flat_map(|chunk| {
            // `<Q>` stays whole; `a<b` splits at the bracket.
            let whole = chunk.len() > 2
                && chunk.starts_with('<')
                && chunk.ends_with('>')
                && chunk[1..chunk.len() - 1]
                    .chars()
                    .all(|c| c.is_ascii_uppercase());
            let parts: Vec<&str> = if whole {
                vec![chunk]
            } else {
                chunk.split(['<', '>']).collect()
            };
            parts.into_iter()
        })
        .filter(|w| !w.is_empty() && w.len() <= MAX_WORD)
        .map(|w| {
            if w.starts_with('<') {
                PLACEHOLDER.to_string()
            } else {
                w.to_lowercase()
            }
        })
}

/// The matching terms of a text: [`words`] without stop words, stemmed, in order.
pub fn terms(text: &str) -> Vec<String> {
    words(text)
        .filter(|w| !is_stop_word(w))
        .map(|w| stem(&w))
        .collect()
}

/// Terms and the bigrams of consecutive terms, as one list (bigrams joined by a space).
pub fn terms_and_bigrams(text: &str) -> Vec<String> {
    let terms = terms(text);
    let mut out = terms.clone();
    out.extend(
        terms
            .windows(2)
            .map(|pair| format!("{} {}", pair[0], pair[1])),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn forms_of_one_word_share_a_stem() {
        for group in [
            &["cast", "casting", "casts"][..],
            &["move", "moved", "moving", "moves"],
            &["borrow", "borrowed", "borrowing", "borrows"],
            &["declare", "declared", "declaration"],
            &["define", "defined", "definition"],
            &["type", "types", "typed"],
            &["value", "values"],
            &["assign", "assignable", "assignment"],
            &["map", "mapped", "mapping"],
            &["run", "running", "ran"],
            &["find", "found", "finds"],
            &["use", "used", "using"],
            &["import", "imported", "imports"],
            &["property", "properties"],
            &["recurse", "recursion", "recursive"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(
                stems.windows(2).all(|s| s[0] == s[1]),
                "{group:?} → {stems:?}"
            );
        }
    }

    #[test]
    fn unrelated_words_and_short_words_stay_apart() {
        assert_ne!(stem("class"), stem("clas"));
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("null"), "null");
        assert_eq!(stem("call"), "call");
        assert_eq!(stem("called"), "call");
        assert_ne!(stem("index"), stem("indent"));
        assert_eq!(stem("e0308"), "e0308");
        assert_eq!(stem("is"), "is");
    }

    #[test]
    fn terms_drop_stop_words_and_fold_placeholders() {
        assert_eq!(
            terms("Use of moved value: `<Q>` in this scope"),
            ["us", "mov", "valu", "<v>", "scop"]
        );
        assert_eq!(
            terms("cannot find <ID> in <PATH>"),
            ["cannot", "find", "<v>", "<v>"]
        );
        assert_eq!(terms("Vec<{integer}>"), ["vec", "integ"]);
        assert!(terms("how did we fix it?").contains(&"fix".to_string()));
        assert_eq!(
            terms_and_bigrams("borrow of moved value"),
            ["borrow", "mov", "valu", "borrow mov", "mov valu"]
        );
    }
}
