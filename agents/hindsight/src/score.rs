//! How similar two signatures are, in 0..1.
//!
//! The score is a weighted mean of four components, each in 0..1:
//! * **error type**: 1 when language and type are equal (0.5 when one side's language is
//!   unknown), else 0;
//! * **message**: Dice coefficient over the word unigrams and bigrams of the normalised message
//!   patterns (lexical similarity carries real weight: on compiler diagnostics it beats hashing
//!   embeddings);
//! * **embedding**: cosine of the signatures' embeddings, clamped at 0; when either side has no
//!   embedding its weight is spread over the other components;
//! * **context**: overlap coefficient of the stack and context patterns (file names, quoted
//!   identifiers, tools, hints), `|A ∩ B| / min(|A|, |B|)`, since a stored signature accumulates
//!   context from every occurrence; when either side has none its weight is spread too.
//!
//! The score does not depend on what else is stored, so a threshold means the same thing in
//! every tenant.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::signature::{ErrorSignature, Language};

/// Weights of the score components. They need not sum to 1: the score divides by their sum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScoreWeights {
    pub error_type: f32,
    pub message: f32,
    pub embedding: f32,
    pub context: f32,
}

impl Default for ScoreWeights {
    fn default() -> Self {
        ScoreWeights {
            error_type: 0.35,
            message: 0.35,
            embedding: 0.2,
            context: 0.1,
        }
    }
}

/// A score and the components it was made of, for callers who want to see why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScoreBreakdown {
    /// The weighted score, 0..1.
    pub total: f32,
    /// 1 when language and error type are equal (0.5 when one side's language is unknown),
    /// else 0.
    pub error_type: f32,
    /// Dice similarity of the messages' word unigrams and bigrams, 0..1.
    pub message: f32,
    /// Cosine of the embeddings, clamped at 0; `null` when either side has no embedding (or
    /// they differ in length).
    pub embedding: Option<f32>,
    /// Overlap of the stack and context patterns, 0..1; `null` when either side has none.
    pub context: Option<f32>,
}

/// A signature with the sets scoring needs, computed once (the index keeps one per entry):
/// sorted, de-duplicated 64-bit hashes of the message shingles and of the stack and context
/// patterns, which intersect by a linear merge.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    pub shingles: Vec<u64>,
    pub context: Vec<u64>,
}

impl Prepared {
    pub fn new(signature: &ErrorSignature) -> Prepared {
        let hashed = |items: &mut dyn Iterator<Item = &String>| -> Vec<u64> {
            let mut hashes: Vec<u64> = items.map(|item| fnv1a(item.as_bytes())).collect();
            hashes.sort_unstable();
            hashes.dedup();
            hashes
        };
        let shingles = shingles(&signature.message_pattern);
        Prepared {
            shingles: hashed(&mut shingles.iter()),
            context: hashed(
                &mut signature
                    .context_patterns
                    .iter()
                    .chain(&signature.stack_patterns),
            ),
        }
    }
}

/// 64-bit FNV-1a.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Size of the intersection of two sorted, de-duplicated lists.
fn common(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// The score of `candidate` as a match for `query`.
pub fn score(
    query: &ErrorSignature,
    candidate: &ErrorSignature,
    weights: &ScoreWeights,
) -> ScoreBreakdown {
    score_prepared(
        query,
        &Prepared::new(query),
        candidate,
        &Prepared::new(candidate),
        weights,
    )
}

/// [`score`] with the sets already computed.
pub fn score_prepared(
    query: &ErrorSignature,
    query_sets: &Prepared,
    candidate: &ErrorSignature,
    candidate_sets: &Prepared,
    weights: &ScoreWeights,
) -> ScoreBreakdown {
    let error_type = type_similarity(query, candidate);
    let message = if query.message_pattern == candidate.message_pattern {
        1.0
    } else {
        dice_sorted(&query_sets.shingles, &candidate_sets.shingles)
    };
    let embedding = match (&query.embedding, &candidate.embedding) {
        (Some(a), Some(b)) if a.len() == b.len() && !a.is_empty() => Some(cosine(a, b).max(0.0)),
        _ => None,
    };
    let context = overlap(&query_sets.context, &candidate_sets.context);
    combine(error_type, message, embedding, context, weights)
}

/// The weighted mean of the components that are present.
pub fn combine(
    error_type: f32,
    message: f32,
    embedding: Option<f32>,
    context: Option<f32>,
    weights: &ScoreWeights,
) -> ScoreBreakdown {
    let mut sum = weights.error_type * error_type + weights.message * message;
    let mut total_weight = weights.error_type + weights.message;
    for (value, weight) in [(embedding, weights.embedding), (context, weights.context)] {
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
        error_type,
        message,
        embedding,
        context,
    }
}

/// 1 for the same language and type; 0.5 for the same type when one language is unknown.
pub fn type_similarity(a: &ErrorSignature, b: &ErrorSignature) -> f32 {
    if !a.error_type.eq_ignore_ascii_case(&b.error_type) {
        return 0.0;
    }
    if a.language == b.language {
        1.0
    } else if a.language == Language::Unknown || b.language == Language::Unknown {
        0.5
    } else {
        0.0
    }
}

/// Lower-case word tokens of a pattern. Placeholders are tokens too; those standing for a
/// value of the code at hand (`<Q>`, `<N>`, `<ID>`, `<T>`, `<HEX>`…) are one token, `<v>`,
/// since whether a literal was quoted or a number says nothing about the error.
pub fn tokens(pattern: &str) -> Vec<String> {
    pattern
        .split(|c: char| !(c.is_alphanumeric() || c == '<' || c == '>' || c == '_'))
        .filter(|t| !t.is_empty() && *t != "<" && *t != ">")
        .map(|t| match t {
            "<PATH>" | "<URL>" => t.to_lowercase(),
            _ if t.starts_with('<') && t.ends_with('>') => "<v>".to_string(),
            _ => t.to_lowercase(),
        })
        .collect()
}

/// Unigrams and bigrams of a pattern, as a set.
pub fn shingles(pattern: &str) -> HashSet<String> {
    let words = tokens(pattern);
    let mut set: HashSet<String> = words.iter().cloned().collect();
    for pair in words.windows(2) {
        set.insert(format!("{} {}", pair[0], pair[1]));
    }
    set
}

/// Dice coefficient of the two patterns' shingles; 1 for two empty messages.
pub fn message_similarity(a: &str, b: &str) -> f32 {
    if a == b {
        return 1.0;
    }
    dice(&shingles(a), &shingles(b))
}

/// Dice coefficient of two sorted hash lists; 1 for two empty lists.
fn dice_sorted(a: &[u64], b: &[u64]) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    2.0 * common(a, b) as f32 / (a.len() + b.len()) as f32
}

/// Dice coefficient of two sets; 1 for two empty sets.
fn dice(a: &HashSet<String>, b: &HashSet<String>) -> f32 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let common = a.intersection(b).count();
    2.0 * common as f32 / (a.len() + b.len()) as f32
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
mod tests {
    use super::*;

    fn sig(
        language: Language,
        error_type: &str,
        message: &str,
        context: &[&str],
    ) -> ErrorSignature {
        ErrorSignature {
            error_type: error_type.to_string(),
            message_pattern: message.to_string(),
            stack_patterns: Vec::new(),
            context_patterns: context.iter().map(|c| c.to_string()).collect(),
            language,
            embedding: None,
        }
    }

    #[test]
    fn identical_signatures_score_one() {
        let a = sig(
            Language::Rust,
            "E0308",
            "mismatched types",
            &["tool:rustc", "ext:rs"],
        );
        let breakdown = score(&a, &a.clone(), &ScoreWeights::default());
        assert_eq!(breakdown.total, 1.0);
        assert_eq!(breakdown.context, Some(1.0));
        assert_eq!(breakdown.embedding, None);
    }

    #[test]
    fn a_different_type_caps_the_score_below_the_default_threshold() {
        let a = sig(Language::Python, "KeyError", "<Q>", &[]);
        let b = sig(Language::Python, "IndexError", "<Q>", &[]);
        let breakdown = score(&a, &b, &ScoreWeights::default());
        assert_eq!(breakdown.error_type, 0.0);
        assert_eq!(breakdown.message, 1.0);
        assert!(breakdown.total < 0.8, "{breakdown:?}");
    }

    #[test]
    fn same_type_with_an_unrelated_message_is_not_a_match() {
        let a = sig(
            Language::Python,
            "TypeError",
            "unsupported operand type(s) for +: <Q> and <Q>",
            &[],
        );
        let b = sig(
            Language::Python,
            "TypeError",
            "<Q> object is not subscriptable",
            &[],
        );
        let breakdown = score(&a, &b, &ScoreWeights::default());
        assert!(breakdown.message < 0.3, "{breakdown:?}");
        assert!(breakdown.total < 0.8, "{breakdown:?}");
    }

    #[test]
    fn dice_counts_unigrams_and_bigrams() {
        // {use, of, moved, value, <q>} + 4 bigrams vs {borrow, …}: 7 shared of 9 + 9.
        let similarity =
            message_similarity("use of moved value: <Q>", "borrow of moved value: <Q>");
        assert!((similarity - 14.0 / 18.0).abs() < 1e-6, "{similarity}");
        assert_eq!(message_similarity("", ""), 1.0);
        assert_eq!(message_similarity("abc", ""), 0.0);
    }

    #[test]
    fn unknown_language_gets_half_type_credit() {
        let a = sig(Language::Unknown, "ENOENT", "no such file", &[]);
        let b = sig(Language::JavaScript, "ENOENT", "no such file", &[]);
        assert_eq!(type_similarity(&a, &b), 0.5);
        let c = sig(Language::Python, "ENOENT", "no such file", &[]);
        assert_eq!(type_similarity(&b, &c), 0.0);
    }

    #[test]
    fn missing_components_spread_their_weight() {
        let weights = ScoreWeights::default();
        let without = combine(1.0, 1.0, None, None, &weights);
        assert_eq!(without.total, 1.0);
        let with = combine(1.0, 1.0, Some(0.0), None, &weights);
        assert!((with.total - 0.7 / 0.9).abs() < 1e-6, "{with:?}");
    }

    #[test]
    fn context_uses_the_smaller_set() {
        let stored = sig(
            Language::Go,
            "undefined",
            "undefined: <ID>",
            &["a", "b", "c", "d"],
        );
        let query = sig(Language::Go, "undefined", "undefined: <ID>", &["a", "b"]);
        assert_eq!(context_similarity(&query, &stored), Some(1.0));
        let bare = sig(Language::Go, "undefined", "undefined: <ID>", &[]);
        assert_eq!(context_similarity(&query, &bare), None);
    }

    #[test]
    fn cosine_of_zero_vector_is_zero() {
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert!((cosine(&[1.0, 1.0], &[2.0, 2.0]) - 1.0).abs() < 1e-6);
    }
}
