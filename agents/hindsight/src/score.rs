//! How well a stored signature answers a query, in 0..1: the evidence and how it combines.
//!
//! The score is a weighted mean of the components that are present, each in 0..1:
//! * **error type**: 1 when both sides carry a real class (a compiler code, an exception
//!   class, a Node error code) and it is the same (in the same language, when both are
//!   known), 0 when both carry one and they differ; absent when either side has only a slug of its
//!   message (a code-less message or a description), since a slug is not a class;
//! * **message**: IDF-weighted similarity of the stemmed words and word pairs of the two
//!   messages ([`crate::terms`]). For a description, the share of the stored message's weight
//!   (with the words of its class's name: `ZeroDivisionError` says `zero` and `division`
//!   where the message says `divided by 0`) that the description mentions (a description is
//!   longer and worded otherwise, so it is not expected to look like the message);
//! * **embedding**: cosine of the two embeddings, mapped through the embedder's calibration
//!   (0: as similar as unrelated texts, 1: as a close paraphrase), whose unrelated level is
//!   raised to the query's median cosine to the store when that is higher (`search`); absent
//!   without embeddings;
//! * **context**: overlap coefficient of the stack and context patterns (file names, quoted
//!   identifiers, tools, hints), `|A ∩ B| / min(|A|, |B|)`; absent when either side has none;
//! * **language**: 1 for the same language, 0.5 for kin (C/C++, JavaScript/TypeScript,
//!   Java/Kotlin), 0 otherwise. It is what tells apart classes that share a message
//!   (`undefined reference to …` from gcc and g++). When either language is unknown (a
//!   toolchain the language list does not name), the extensions of the source files the
//!   errors' locations name and the tool that printed them (`src:`, `tool:` context) stand in
//!   for it: 1 when they share one, 0 when both name some and share none, and 1 for a
//!   description that names the tool or the file type (`the sqlite3 query`); absent
//!   otherwise;
//! * **resolution** (descriptions only): the share of the description's weight found in the
//!   stored error's message and fix texts, since a description of an error often shares words
//!   with its fix.
//!
//! Languages reuse class names (`KeyError`, `TypeError`, `ArgumentError` exist in several), so
//! a class shared by two errors whose ecosystems are both unknown counts half
//! ([`UNPLACED_SPECIFICITY`]), and not at all when their source files say the ecosystems
//! differ. Two errors of unknown ecosystems that nothing ties together score at most
//! [`UNPLACED_CAP`] unless their messages are nearly the same and, without classes, not as
//! short as `syntax error`, which many tools print.
//!
//! A missing component spreads its weight over the others. Term weights come from the
//! tenant's stored signatures (inverse document frequency), so an exact match scores 1 in
//! any store and a word every stored error shares counts for little. What the score means
//! for a decision — the threshold above which an answer is presented as `matched` — is
//! calibrated on held-out data (see `tests/recall.rs` and the crate's calibration notes).

mod ecosystem;

use ecosystem::{dialect_similarity, ecosystem_names, mentions_ecosystem};
use serde::{Deserialize, Serialize};

use crate::model::QueryForm;
use crate::signature::{ErrorSignature, Language, slug};
use crate::terms;

/// Weights of the score components. They need not sum to 1: the score divides by the sum of
/// the weights of the components present.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScoreWeights {
    pub error_type: f32,
    pub message: f32,
    pub embedding: f32,
    pub context: f32,
    pub language: f32,
    pub resolution: f32,
}

impl Default for ScoreWeights {
    fn default() -> Self {
        ScoreWeights {
            error_type: 1.0,
            message: 0.35,
            embedding: 0.15,
            context: 0.05,
            language: 0.25,
            resolution: 0.4,
        }
    }
}

/// A score and the components it was made of, for callers who want to see why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScoreBreakdown {
    /// The weighted score, 0..1.
    pub total: f32,
    /// 1 when both sides carry the same error class (code or exception), 0 when the classes
    /// differ; `null` when either side has no class (a message without its code, a
    /// description).
    pub error_type: Option<f32>,
    /// IDF-weighted similarity of the stemmed messages, 0..1 (for a description: the share of
    /// the stored message it mentions).
    pub message: f32,
    /// Cosine of the embeddings mapped through the embedder's calibration, 0..1; `null`
    /// without embeddings.
    pub embedding: Option<f32>,
    /// Overlap of the stack and context patterns, 0..1; `null` when either side has none.
    pub context: Option<f32>,
    /// 1 for the same language, 0.5 for kin languages, 0 otherwise; `null` when either is
    /// unknown.
    pub language: Option<f32>,
    /// Descriptions only: the share of the description found in the stored error's message
    /// and fixes, 0..1.
    pub resolution: Option<f32>,
}

/// A signature's sets for scoring, computed once (the index keeps one per entry): sorted,
/// de-duplicated 64-bit hashes of its message terms, words and context.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// Stemmed terms and bigrams of the message.
    pub message: Vec<u64>,
    /// Stemmed terms of the message without placeholders: what a description can mention.
    pub words: Vec<u64>,
    pub context: Vec<u64>,
    /// How specific the error type is ([`type_specificity`]); 0 when it names no class.
    pub specificity: f32,
    /// Whether the error type is a real class rather than a slug of the message.
    pub coded: bool,
    /// The stemmed words of its class's name (`ZeroDivisionError` → `zero`, `divis`): what a
    /// description says of an error whose message is terse (`divided by 0`).
    pub class_words: Vec<u64>,
    /// The extensions of the source files its location names and the tool that printed it
    /// (`src:` and `tool:` context): its ecosystem when the language is unknown.
    pub dialects: Vec<u64>,
    /// The same as names a description can use (`tool:sqlite3` → `sqlite`, `src:tcl` →
    /// `tcl`), lower case.
    pub ecosystem_names: Vec<String>,
}

impl Prepared {
    pub fn new(signature: &ErrorSignature) -> Prepared {
        let message = terms::terms_and_bigrams(&signature.message_pattern);
        Prepared {
            message: hashed(message.iter().map(String::as_str)),
            words: hashed(
                message
                    .iter()
                    .filter(|t| !t.contains(' ') && *t != terms::PLACEHOLDER)
                    .map(String::as_str),
            ),
            context: hashed(
                signature
                    .context_patterns
                    .iter()
                    .chain(&signature.stack_patterns)
                    .map(String::as_str),
            ),
            specificity: type_specificity(signature),
            coded: is_coded(signature),
            class_words: if is_coded(signature) {
                let words: Vec<String> = type_words(&signature.error_type)
                    .iter()
                    .filter(|w| w.len() >= 3 && w.bytes().all(|b| b.is_ascii_lowercase()))
                    .map(|w| terms::stem(w))
                    .collect();
                hashed(words.iter().map(String::as_str))
            } else {
                Vec::new()
            },
            dialects: hashed(
                signature
                    .context_patterns
                    .iter()
                    .map(String::as_str)
                    .filter(|c| c.starts_with("src:") || c.starts_with("tool:")),
            ),
            ecosystem_names: ecosystem_names(signature),
        }
    }
}

/// Types that name no class of error at all: every Rust or Go panic is a `panic`, every
/// failed make recipe a `make-error`, every failed test assertion an `AssertionError`.
const UMBRELLA_TYPES: &[&str] = &[
    "panic",
    "error",
    "exception",
    "throwable",
    "runtimeerror",
    "runtimeexception",
    "assertionerror",
    "make-error",
    "java.lang.exception",
    "java.lang.runtimeexception",
    "java.lang.throwable",
    "java.lang.error",
    "java.lang.assertionerror",
];

/// Classes that cover many unrelated errors (`TypeError` is raised for a bad operand, a
/// missing argument and an unsubscriptable object alike): sharing one is weaker evidence.
const BROAD_TYPES: &[&str] = &[
    "typeerror",
    "valueerror",
    "attributeerror",
    "syntaxerror",
    "oserror",
    "ioerror",
    "lookuperror",
    "rangeerror",
    "java.lang.illegalargumentexception",
    "java.lang.illegalstateexception",
    "illegalargumentexception",
    "illegalstateexception",
];

/// The weight of two equal slugs (message heads such as `incompatible-types`) relative to two
/// equal specific classes.
const SLUG_SPECIFICITY: f32 = 0.5;

/// A message of at most this many distinct words (placeholders aside) is short: see
/// [`UNPLACED_CAP`].
pub const SHORT_MESSAGE_WORDS: usize = 3;
/// The message similarity at which two messages are nearly the same.
pub const NEAR_SAME_MESSAGE: f32 = 0.8;
/// The highest score of two errors of unknown ecosystems that nothing ties to one ecosystem,
/// unless their messages are nearly the same and not short: below the default threshold, so
/// they are `related` at best.
pub const UNPLACED_CAP: f32 = 0.7;

/// The factor on a shared class's weight when neither side's ecosystem is known: the same
/// name may be two languages' different classes.
pub const UNPLACED_SPECIFICITY: f32 = 0.5;

/// How specific an error type is: 0 for a type that names no class (an umbrella such as
/// `panic`, or a slug of the message), 0.5 for a broad class (`TypeError`), 1 for a specific
/// class (`E0308`, `TS2322`, `ZeroDivisionError`, `MODULE_NOT_FOUND`).
pub fn type_specificity(signature: &ErrorSignature) -> f32 {
    let error_type = signature.error_type.trim();
    let lower = error_type.to_ascii_lowercase();
    if error_type.is_empty()
        || error_type == slug(&signature.message_pattern)
        || UMBRELLA_TYPES.contains(&lower.as_str())
    {
        0.0
    } else if BROAD_TYPES.contains(&lower.as_str()) {
        0.5
    } else {
        1.0
    }
}

/// Whether a signature's type is a class of its own (`E0308`, `KeyError`) rather than the slug
/// of its message that extraction falls back to (`cannot-find-symbol`) or an umbrella that
/// names no class (`panic`).
pub fn is_coded(signature: &ErrorSignature) -> bool {
    type_specificity(signature) > 0.0
}

/// Sorted, de-duplicated hashes.
pub fn hashed<'a>(items: impl Iterator<Item = &'a str>) -> Vec<u64> {
    let mut hashes: Vec<u64> = items.map(|item| fnv1a(item.as_bytes())).collect();
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// 64-bit FNV-1a.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Visits the common items of two sorted, de-duplicated lists.
fn for_common(a: &[u64], b: &[u64], mut visit: impl FnMut(u64)) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                visit(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
}

/// Size of the intersection of two sorted, de-duplicated lists.
pub fn common(a: &[u64], b: &[u64]) -> usize {
    let mut n = 0;
    for_common(a, b, |_| n += 1);
    n
}

/// IDF-weighted Dice coefficient of two term sets; 1 for two empty sets.
pub fn weighted_dice(a: &[u64], b: &[u64], weight: &dyn Fn(u64) -> f32) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let mut shared = 0.0;
    for_common(a, b, |t| shared += weight(t));
    let total: f32 = a.iter().chain(b).map(|t| weight(*t)).sum();
    if total <= 0.0 {
        0.0
    } else {
        (2.0 * shared / total).min(1.0)
    }
}

/// The share of `of`'s weight that is also in `by`; 0 when `of` is empty.
pub fn coverage(of: &[u64], by: &[u64], weight: &dyn Fn(u64) -> f32) -> f32 {
    let total: f32 = of.iter().map(|t| weight(*t)).sum();
    if total <= 0.0 {
        return 0.0;
    }
    let mut shared = 0.0;
    for_common(of, by, |t| shared += weight(t));
    (shared / total).min(1.0)
}

/// What a query brings to scoring, besides its signature.
pub struct QueryEvidence<'a> {
    pub signature: &'a ErrorSignature,
    pub sets: &'a Prepared,
    pub form: QueryForm,
    /// A description's terms that the store knows (its words found in no stored message or
    /// fix cannot tell candidates apart), sorted and de-duplicated.
    pub known_terms: &'a [u64],
}

/// What a stored entry brings to scoring.
pub struct EntryEvidence<'a> {
    pub signature: &'a ErrorSignature,
    pub sets: &'a Prepared,
    /// The stemmed terms of its resolutions' texts, sorted and de-duplicated.
    pub fix_terms: &'a [u64],
    /// The calibrated embedding similarity, when both sides have embeddings.
    pub embedding: Option<f32>,
}

/// The score of a stored entry as an answer to a query.
pub fn score(
    query: &QueryEvidence<'_>,
    entry: &EntryEvidence<'_>,
    weight: &dyn Fn(u64) -> f32,
    weights: &ScoreWeights,
) -> ScoreBreakdown {
    score_ranked(query, entry, weight, weights).0
}

/// [`score`], and the score before the cap on unplaced errors ([`UNPLACED_CAP`]): what
/// candidates are ordered by, since the cap limits what is presented as `matched` but must
/// not reorder an exact message below a partial one.
pub fn score_ranked(
    query: &QueryEvidence<'_>,
    entry: &EntryEvidence<'_>,
    weight: &dyn Fn(u64) -> f32,
    weights: &ScoreWeights,
) -> (ScoreBreakdown, f32) {
    let (q, e) = (query.signature, entry.signature);
    let known_languages = language_similarity(q.language, e.language);
    let language = known_languages
        .or_else(|| dialect_similarity(&query.sets.dialects, &entry.sets.dialects))
        .or_else(|| {
            // A description naming the error's tool or file type (`the sqlite3 query`).
            (query.form == QueryForm::Description
                && mentions_ecosystem(&q.message_pattern, &entry.sets.ecosystem_names))
            .then_some(1.0)
        });
    // Neither language known: the source files say whether the ecosystems differ, or nothing.
    let ecosystems_differ = known_languages.is_none() && language == Some(0.0);
    let unplaced = q.language == Language::Unknown && e.language == Language::Unknown;
    // Two classes compare; two slugs of message heads agree or say nothing; a slug and a class
    // never compare (a message without its code is not evidence against the code).
    let slugs_agree = !query.sets.coded
        && !entry.sets.coded
        && query.form != QueryForm::Description
        && q.error_type.eq_ignore_ascii_case(&e.error_type)
        && !q.error_type.is_empty()
        && type_similarity(q, e) > 0.0;
    let error_type = if query.sets.coded && entry.sets.coded {
        Some(if ecosystems_differ {
            0.0
        } else {
            type_similarity(q, e)
        })
    } else if slugs_agree && !ecosystems_differ {
        Some(1.0)
    } else {
        None
    };
    // A shared broad class says less than a shared specific one; a differing class says as
    // much whatever the classes.
    let placed = if unplaced && language.is_none() {
        UNPLACED_SPECIFICITY
    } else {
        1.0
    };
    let type_weight = match error_type {
        Some(v) if v > 0.0 && slugs_agree => SLUG_SPECIFICITY * placed,
        Some(v) if v > 0.0 => query.sets.specificity.min(entry.sets.specificity) * placed,
        _ => 1.0,
    };
    let description = query.form == QueryForm::Description;
    // What a description can mention of the stored error: its message's and class's words.
    let mentionable = || {
        let mut all: Vec<u64> = entry
            .sets
            .words
            .iter()
            .chain(&entry.sets.class_words)
            .copied()
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    let message = if q.message_pattern == e.message_pattern && !description {
        1.0
    } else if description {
        coverage(&mentionable(), &query.sets.words, weight)
    } else {
        weighted_dice(&query.sets.message, &entry.sets.message, weight)
    };
    let resolution = description.then(|| {
        let mut found: Vec<u64> = mentionable()
            .iter()
            .chain(entry.fix_terms)
            .copied()
            .collect();
        found.sort_unstable();
        found.dedup();
        coverage(query.known_terms, &found, weight)
    });
    let context = overlap(&query.sets.context, &entry.sets.context);
    let mut breakdown = combine(
        Components {
            error_type,
            type_weight,
            message,
            embedding: entry.embedding,
            context,
            language,
            resolution,
        },
        weights,
    );
    // With nothing saying the two come from one ecosystem, only the message can vouch for a
    // match: it must be nearly the same, and — without a class on both sides — longer than
    // `syntax error` or `divide by zero`, which many tools print for unrelated problems.
    let short = |sets: &Prepared| sets.words.len() <= SHORT_MESSAGE_WORDS;
    let uncapped = breakdown.total;
    let unvouched = message < NEAR_SAME_MESSAGE
        || !(query.sets.coded && entry.sets.coded) && short(query.sets) && short(entry.sets);
    if unplaced && language.is_none() && unvouched {
        breakdown.total = breakdown.total.min(UNPLACED_CAP);
    }
    (breakdown, uncapped)
}

/// The components of a score, before weighting.
#[derive(Debug, Clone, Copy, Default)]
pub struct Components {
    pub error_type: Option<f32>,
    /// Scales the error type's weight (its specificity when the types agree); 1 by default.
    pub type_weight: f32,
    pub message: f32,
    pub embedding: Option<f32>,
    pub context: Option<f32>,
    pub language: Option<f32>,
    pub resolution: Option<f32>,
}

/// The weighted mean of the components that are present.
pub fn combine(c: Components, weights: &ScoreWeights) -> ScoreBreakdown {
    let mut sum = weights.message * c.message;
    let mut total_weight = weights.message;
    let type_weight = if c.type_weight > 0.0 {
        c.type_weight
    } else {
        1.0
    };
    for (value, weight) in [
        (c.error_type, weights.error_type * type_weight),
        (c.embedding, weights.embedding),
        (c.context, weights.context),
        (c.language, weights.language),
        (c.resolution, weights.resolution),
    ] {
        if let Some(value) = value {
            sum += weight * value;
            total_weight += weight;
        }
    }
    let total = if total_weight > 0.0 {
        (sum / total_weight).clamp(0.0, 1.0)
    } else {
        0.0
    };
    ScoreBreakdown {
        total,
        error_type: c.error_type,
        message: c.message,
        embedding: c.embedding,
        context: c.context,
        language: c.language,
        resolution: c.resolution,
    }
}

/// How alike two error types are: 1 for the same type, else the Dice coefficient of their
/// distinctive words (`ERR_MODULE_NOT_FOUND` and `MODULE_NOT_FOUND` are one class to a
/// person; `E0308` and `E0382`, `KeyError` and `IndexError` share nothing). 0 when both
/// languages are known and differ (`TypeError` of Python is not `TypeError` of JavaScript);
/// whether the languages agree is otherwise the language component's business.
pub fn type_similarity(a: &ErrorSignature, b: &ErrorSignature) -> f32 {
    let languages_differ = a.language != b.language
        && a.language != Language::Unknown
        && b.language != Language::Unknown;
    if languages_differ {
        return 0.0;
    }
    if a.error_type.eq_ignore_ascii_case(&b.error_type) {
        return 1.0;
    }
    // Kin names are kin only within one known language (`ModuleNotFoundError` of Python is no
    // `MODULE_NOT_FOUND` of Node).
    if a.language == Language::Unknown || a.language != b.language {
        return 0.0;
    }
    let (x, y) = (type_words(&a.error_type), type_words(&b.error_type));
    if x.is_empty() || y.is_empty() {
        return 0.0;
    }
    let shared = x.iter().filter(|w| y.contains(w)).count();
    2.0 * shared as f32 / (x.len() + y.len()) as f32
}

/// The distinctive words of a type name: split at punctuation and case changes, lower-cased,
/// without the words every class name has (`Error`, `Exception`, `ERR_`, `java.lang.`).
fn type_words(error_type: &str) -> Vec<String> {
    const GENERIC: &[&str] = &[
        "error",
        "exception",
        "err",
        "java",
        "javax",
        "lang",
        "kotlin",
    ];
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in error_type.chars() {
        if !c.is_alphanumeric() {
            words.push(std::mem::take(&mut current));
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    words.push(current);
    words.retain(|w| !w.is_empty() && !GENERIC.contains(&w.as_str()));
    words.sort();
    words.dedup();
    words
}

/// 1 for the same language, 0.5 for kin, 0 otherwise; `None` when either is unknown.
pub fn language_similarity(a: Language, b: Language) -> Option<f32> {
    use Language::*;
    if a == Unknown || b == Unknown {
        return None;
    }
    let kin = |x, y| matches!((x, y), (C, Cpp) | (JavaScript, TypeScript) | (Java, Kotlin));
    Some(if a == b {
        1.0
    } else if kin(a, b) || kin(b, a) {
        0.5
    } else {
        0.0
    })
}

/// Unweighted similarity of two message patterns (stemmed words and word pairs, Dice); 1 for
/// two equal patterns.
pub fn message_similarity(a: &str, b: &str) -> f32 {
    if a == b {
        return 1.0;
    }
    let set = |text: &str| hashed(terms::terms_and_bigrams(text).iter().map(String::as_str));
    weighted_dice(&set(a), &set(b), &|_| 1.0)
}

/// Overlap coefficient of stack and context patterns; `None` when either side has none.
pub fn context_similarity(a: &ErrorSignature, b: &ErrorSignature) -> Option<f32> {
    overlap(&Prepared::new(a).context, &Prepared::new(b).context)
}

/// Overlap coefficient; `None` when either list is empty.
fn overlap(a: &[u64], b: &[u64]) -> Option<f32> {
    let smaller = a.len().min(b.len());
    (smaller > 0).then(|| common(a, b) as f32 / smaller as f32)
}

/// Cosine similarity; 0 when either vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

#[cfg(test)]
mod tests;
