//! What a query asks for, read once per search: the words worth matching, the names in it and
//! the time it names.
//!
//! * **Terms** — lowercase words without stopwords, question scaffolding ("do you remember",
//!   "can you tell me", "what kind of") or the words of a time phrase, de-duplicated: what the
//!   lexical retriever looks for. The time words are matched against dates instead (see
//!   [`super::time`]), where "May" and "2023" mean something.
//! * **Stems** of the terms (Snowball English), for the second stage's word matching, so that
//!   "painted" finds "paint" and "moving" finds "moved".
//! * **Entities** — proper names ("Ana", "Biscuit"), acronyms ("TLS") and identifiers
//!   (`max_connections`, `E0502`, `parser.rs`): the words a person uses to say *which* thing
//!   they mean. A memory that names them is a better answer than one that only shares the
//!   topic, and a memory *said by* the person named (a speaker prefix `Ana: …` or metadata) is
//!   better still.
//!
//! Only words are ever read; user text is never parsed as a query language.

use std::borrow::Cow;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use super::time::{QueryTime, query_time, tokens};
use crate::text::is_stopword;

/// A query, analysed; see the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryAnalysis {
    /// Terms for the lexical retriever, in query order.
    pub terms: Vec<String>,
    /// The stem of each term (same order; stems may repeat).
    pub stems: Vec<String>,
    /// Names, acronyms and identifiers, lowercase, de-duplicated.
    pub entities: Vec<String>,
    /// The entities that are names of people, pets, places… (capitalised words): they say
    /// *who*, not *what*, so they are matched by the entity and speaker signals and left out of
    /// the meaning signals. In a static embedding a rare name would otherwise outweigh every
    /// other word: "Finn: …" would be close to any question about Finn.
    pub names: Vec<String>,
    /// The query without its names, for the embedder (the query itself when nothing else is
    /// left).
    pub semantic_text: String,
    /// The time the query names, if any.
    pub time: Option<QueryTime>,
}

/// Words that ask rather than say: left out of the terms when the query is a question. The
/// stopword list already holds `what`, `when`, `who`, `how`…
const SCAFFOLDING: &[&str] = &[
    "anything",
    "ever",
    "kind",
    "know",
    "mention",
    "mentioned",
    "recall",
    "remember",
    "sort",
    "tell",
    "type",
];

/// Words that start a sentence with a capital without being names.
const NOT_NAMES: &[&str] = &[
    "also",
    "anything",
    "april",
    "august",
    "can",
    "could",
    "december",
    "did",
    "does",
    "february",
    "friday",
    "had",
    "has",
    "have",
    "hey",
    "hi",
    "how",
    "i",
    "is",
    "january",
    "july",
    "june",
    "march",
    "may",
    "monday",
    "november",
    "october",
    "ok",
    "please",
    "saturday",
    "september",
    "should",
    "so",
    "sunday",
    "tell",
    "thursday",
    "tuesday",
    "was",
    "wednesday",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "why",
    "will",
    "would",
    "yes",
];

/// The stem of a lowercase word.
pub fn stem(word: &str) -> Cow<'_, str> {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER
        .get_or_init(|| Stemmer::create(Algorithm::English))
        .stem(word)
}

impl QueryAnalysis {
    /// Analyses `query`; relative time phrases count from `now_ms`. At most `max_terms` terms.
    pub fn new(query: &str, now_ms: i64, max_terms: usize) -> Self {
        let time = query_time(query, now_ms);
        let words = tokens(query);
        let question = query.trim_end().ends_with('?')
            || words
                .first()
                .is_some_and(|w| is_stopword(&w.text) && is_question_word(&w.text));
        let mut terms: Vec<String> = Vec::new();
        for (i, word) in words.iter().enumerate() {
            let text = word.text.as_str();
            if is_stopword(text)
                || (question && SCAFFOLDING.binary_search(&text).is_ok())
                || time.as_ref().is_some_and(|t| t.words.contains(&i))
                || terms.iter().any(|t| t == text)
            {
                continue;
            }
            terms.push(text.to_owned());
            if terms.len() == max_terms {
                break;
            }
        }
        if terms.is_empty() {
            // A query of only function words (or only a date) still searches for its words.
            for word in &words {
                if !terms.contains(&word.text) && terms.len() < max_terms {
                    terms.push(word.text.clone());
                }
            }
        }
        let stems = terms.iter().map(|t| stem(t).into_owned()).collect();
        let found = entity_words(query);
        let names: Vec<String> = found
            .iter()
            .filter(|e| e.name)
            .map(|e| e.text.clone())
            .collect();
        let semantic_text = without_names(query, &names);
        QueryAnalysis {
            terms,
            stems,
            entities: found.into_iter().map(|e| e.text).collect(),
            names,
            semantic_text,
            time,
        }
    }
}

fn is_question_word(word: &str) -> bool {
    matches!(
        word,
        "what"
            | "when"
            | "where"
            | "which"
            | "who"
            | "whom"
            | "why"
            | "how"
            | "did"
            | "does"
            | "do"
            | "is"
            | "are"
            | "was"
            | "were"
            | "can"
            | "could"
            | "has"
            | "have"
    )
}

/// `query` without the words that are `names` (and their possessives); `query` itself when
/// nothing but names and punctuation would be left.
fn without_names(query: &str, names: &[String]) -> String {
    if names.is_empty() {
        return query.to_owned();
    }
    let kept: Vec<&str> = query
        .split_whitespace()
        .filter(|raw| {
            let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
            let word = word
                .strip_suffix("'s")
                .or_else(|| word.strip_suffix("’s"))
                .unwrap_or(word);
            !names.contains(&word.to_lowercase())
        })
        .collect();
    let text = kept.join(" ");
    if text.chars().any(char::is_alphanumeric) {
        text
    } else {
        query.to_owned()
    }
}

/// Most entities taken from one query.
const MAX_ENTITIES: usize = 16;

/// An entity of a text: lowercase, and whether it is a name (a capitalised word) rather than
/// an acronym or identifier.
#[derive(Debug, Clone, PartialEq)]
struct Entity {
    text: String,
    name: bool,
}

/// Names, acronyms and identifiers of `text`, lowercase; see the module documentation.
pub(crate) fn entities(text: &str) -> Vec<String> {
    entity_words(text).into_iter().map(|e| e.text).collect()
}

fn entity_words(text: &str) -> Vec<Entity> {
    let mut found: Vec<Entity> = Vec::new();
    let mut sentence_start = true;
    for raw in text.split(|c: char| c.is_whitespace()) {
        let ends_sentence = raw.ends_with(['.', '?', '!', ':']);
        // Surrounding punctuation and a possessive go: `"Ana's,"` → `Ana`.
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let without_possessive = word.strip_suffix("'s").or_else(|| word.strip_suffix("’s"));
        let possessive = without_possessive.is_some();
        let word = without_possessive.unwrap_or(word);
        if word.is_empty() {
            continue;
        }
        let identifier = word.chars().any(|c| c.is_ascii_digit())
            && word.chars().any(char::is_alphabetic)
            || word.contains('_')
            || (word.contains('.') && !word.ends_with('.'))
            || has_inner_capital(word);
        let lower = word.to_lowercase();
        let capital = word.chars().next().is_some_and(char::is_uppercase);
        let acronym = word.chars().count() >= 2
            && word.chars().any(char::is_uppercase)
            && word.chars().all(|c| c.is_uppercase() || c.is_ascii_digit());
        // A capital starts every sentence: there, only a possessive says it is a name.
        let name = capital
            && !NOT_NAMES.contains(&lower.as_str())
            && (!sentence_start || possessive)
            && word.chars().count() >= 2;
        if (identifier || acronym || name) && !found.iter().any(|e| e.text == lower) {
            found.push(Entity {
                text: lower,
                name: name && !identifier && !acronym,
            });
            if found.len() == MAX_ENTITIES {
                break;
            }
        }
        sentence_start = ends_sentence;
    }
    found
}

/// `MemoryService`, `iPhone`: a capital after a lowercase letter.
fn has_inner_capital(word: &str) -> bool {
    let mut previous_lower = false;
    for c in word.chars() {
        if c.is_uppercase() && previous_lower {
            return true;
        }
        previous_lower = c.is_lowercase();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaffolding_and_time_words_leave_the_terms() {
        let q = QueryAnalysis::new(
            "Do you remember what kind of dog Maya adopted in March 2023?",
            0,
            32,
        );
        assert_eq!(q.terms, ["dog", "maya", "adopted"]);
        assert_eq!(q.stems, ["dog", "maya", "adopt"]);
        assert_eq!(q.entities, ["maya"]);
        assert_eq!(q.names, ["maya"]);
        assert_eq!(
            q.semantic_text,
            "Do you remember what kind of dog adopted in March 2023?"
        );
        assert!(q.time.is_some());
        // Not a question: `remember` is a word of the content.
        let q = QueryAnalysis::new("remember to rotate the TLS certificates", 0, 32);
        assert_eq!(q.terms, ["remember", "rotate", "tls", "certificates"]);
        assert_eq!(q.entities, ["tls"]);
        assert!(q.names.is_empty(), "an acronym is not a name");
        assert_eq!(q.semantic_text, "remember to rotate the TLS certificates");
        assert_eq!(
            QueryAnalysis::new("Maya's?", 0, 32).semantic_text,
            "Maya's?"
        );
    }

    #[test]
    fn a_query_of_function_words_keeps_them() {
        let q = QueryAnalysis::new("what was it?", 0, 32);
        assert_eq!(q.terms, ["what", "was", "it"]);
        assert!(QueryAnalysis::new("!!!", 0, 32).terms.is_empty());
    }

    #[test]
    fn entities_are_names_acronyms_and_identifiers() {
        assert_eq!(
            entities("What did Jon's sister Priya say about the CI job and max_connections?"),
            ["jon", "priya", "ci", "max_connections"]
        );
        assert_eq!(
            entities("Where is MemoryService defined? Check parser.rs for E0502."),
            ["memoryservice", "parser.rs", "e0502"]
        );
        // Sentence-initial function words and months are not names.
        assert!(entities("The pool. How big is it in May?").is_empty());
        assert_eq!(
            entities("Is Biscuit a beagle? Maya's dog."),
            ["biscuit", "maya"]
        );
        assert!(entities("Check the logs").is_empty());
        assert!(entities(&"Name ".repeat(1000)).len() <= MAX_ENTITIES);
    }

    #[test]
    fn stems_conflate_inflections() {
        for (a, b) in [
            ("painted", "painting"),
            ("moved", "moving"),
            ("cats", "cat"),
        ] {
            assert_eq!(stem(a), stem(b));
        }
    }
}
