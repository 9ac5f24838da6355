//! The second stage's evidence: what each candidate has for the query, as numbers in 0..1.
//!
//! The first stage (BM25 and the vector index) finds candidates cheaply and ranks each list on
//! one kind of evidence. Here every candidate gets all of them, read from its text and metadata:
//!
//! | signal | what it measures |
//! |---|---|
//! | `semantic` | the embedding's cosine, through the embedder's calibration |
//! | `lexical` | BM25 coverage of the query terms (first stage; 0 when BM25 did not return it) |
//! | `fused` | reciprocal-rank fusion of the two first-stage ranks, 1 for first in both |
//! | `coverage` | the share of the query's words the text contains, stems matched (`painted` = `paint`), each word weighted by its rarity in English |
//! | `proximity` | the share of the query's adjacent word pairs that stand within two words of each other in the text (phrases, word order) |
//! | `interaction` | late interaction over the static embedding table: each query token's closest text token ("dog" ~ "puppy"), weighted by rarity |
//! | `entity` | the share of the query's names, acronyms and identifiers the text mentions |
//! | `speaker` | 1 when the text is said by someone the query names (`Ana: …`, or metadata `speaker`/`author`/`user`) |
//! | `time` | how close the memory's date is to the time the query names (0 when it names none) |
//! | `brevity` | 1 for texts of at most three words, 0 from ten words: a bare "Haha, yes!" rarely answers anything |
//! | `neighbour` | for a conversational turn, the first-pass score of the best adjacent turn in the same scope: the reply after a matching question |
//!
//! [`super::rank`] weighs them (weights fitted on the fixture sets) into the final score.

use serde::{Deserialize, Serialize};

use super::query::{QueryAnalysis, stem};
use super::time::record_day;
use crate::embed::StaticModel;
use crate::model::MemoryRecord;
use crate::text::words;

/// A candidate text's words past this many are not read by the second stage.
pub const MAX_TEXT_WORDS: usize = 1024;
/// Nor its tokens past this many (late interaction).
pub const MAX_TEXT_TOKENS: usize = 512;
/// Nor its characters past this many bytes (entity and speaker matching).
const MAX_TEXT_BYTES: usize = 16 * 1024;

/// Every signal of one candidate, each in 0..1; see the module documentation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Signals {
    pub semantic: f32,
    pub lexical: f32,
    pub fused: f32,
    pub coverage: f32,
    pub proximity: f32,
    pub interaction: f32,
    pub entity: f32,
    pub speaker: f32,
    pub time: f32,
    pub brevity: f32,
    pub neighbour: f32,
}

impl Signals {
    /// Names of the signals, in [`Signals::values`] order.
    pub const NAMES: [&'static str; 11] = [
        "semantic",
        "lexical",
        "fused",
        "coverage",
        "proximity",
        "interaction",
        "entity",
        "speaker",
        "time",
        "brevity",
        "neighbour",
    ];

    pub fn values(&self) -> [f32; 11] {
        [
            self.semantic,
            self.lexical,
            self.fused,
            self.coverage,
            self.proximity,
            self.interaction,
            self.entity,
            self.speaker,
            self.time,
            self.brevity,
            self.neighbour,
        ]
    }
}

/// The query, prepared once for scoring every candidate.
pub struct PreparedQuery<'a> {
    pub analysis: &'a QueryAnalysis,
    /// The query's tokens in the static table (late interaction).
    tokens: Vec<u32>,
    /// The rarity weight of each stem of `analysis.stems` (0 for names).
    stem_weights: Vec<f32>,
    model: &'a StaticModel,
}

impl<'a> PreparedQuery<'a> {
    pub fn new(analysis: &'a QueryAnalysis, model: &'a StaticModel) -> Self {
        let mut tokens = Vec::new();
        let mut stem_weights = Vec::with_capacity(analysis.terms.len());
        for term in &analysis.terms {
            // Names are matched by the entity and speaker signals, not by meaning.
            if analysis.names.contains(term) {
                stem_weights.push(0.0);
                continue;
            }
            model.tokenizer().encode_into(term, 16, &mut tokens);
            stem_weights.push(rarity(model, term));
        }
        PreparedQuery {
            analysis,
            tokens,
            stem_weights,
            model,
        }
    }
}

/// How rare `word` is in English, 0..1: the largest weight of its tokens in the static table
/// (a smooth inverse frequency; names and technical words are near 1, "thing" is low).
fn rarity(model: &StaticModel, word: &str) -> f32 {
    let mut ids = Vec::new();
    model.tokenizer().encode_into(word, 8, &mut ids);
    ids.iter()
        .map(|&id| model.weight(id))
        .fold(0.0f32, f32::max)
        .max(0.05)
}

/// What the first stage knew of a candidate.
#[derive(Debug, Clone, Copy, Default)]
pub struct FirstStage {
    pub semantic: f32,
    pub lexical: f32,
    pub fused: f32,
}

/// Every signal but `neighbour` (which needs the other candidates' scores) for `record`.
pub fn signals(query: &PreparedQuery<'_>, record: &MemoryRecord, first: FirstStage) -> Signals {
    let text = record.content.as_deref().unwrap_or_default();
    let text = truncate(text, MAX_TEXT_BYTES);
    let text_words = words(text, false);
    let text_words = &text_words[..text_words.len().min(MAX_TEXT_WORDS)];
    let analysis = query.analysis;

    // Where each query stem occurs in the text (word positions).
    let mut positions: Vec<Vec<usize>> = vec![Vec::new(); analysis.stems.len()];
    for (at, word) in text_words.iter().enumerate() {
        for (i, query_stem) in analysis.stems.iter().enumerate() {
            // A stem is a prefix of its word up to a changed last letter (`happi`/`happy`), so
            // only words sharing the first two bytes are stemmed.
            let prefix = &query_stem.as_bytes()[..query_stem.len().min(2)];
            if word.as_bytes().starts_with(prefix)
                && (word == &analysis.terms[i] || stem(word) == query_stem.as_str())
            {
                positions[i].push(at);
            }
        }
    }
    let total: f32 = query.stem_weights.iter().sum();
    let found: f32 = positions
        .iter()
        .zip(&query.stem_weights)
        .filter(|(p, _)| !p.is_empty())
        .map(|(_, w)| *w)
        .sum();
    let coverage = if total > 0.0 { found / total } else { 0.0 };

    let pairs = analysis.stems.len().saturating_sub(1);
    let near = (0..pairs)
        .filter(|&i| {
            positions[i].iter().any(|&a| {
                positions[i + 1]
                    .iter()
                    .any(|&b| a != b && a.abs_diff(b) <= 2)
            })
        })
        .count();
    let proximity = if pairs > 0 {
        near as f32 / pairs as f32
    } else {
        0.0
    };

    let text_tokens = query.model.tokens(text, MAX_TEXT_TOKENS);
    let interaction = query.model.interaction(&query.tokens, &text_tokens);

    // A `Name:` label says who spoke; what they said is what can mention someone.
    let label = speaker_label(text);
    let said = label.map_or(text, |(_, body)| &text[body..]);
    let lower = said.to_lowercase();
    let entity = if analysis.entities.is_empty() {
        0.0
    } else {
        let named = analysis
            .entities
            .iter()
            .filter(|entity| contains_word(&lower, entity))
            .count();
        named as f32 / analysis.entities.len() as f32
    };
    let speaker = label
        .map(|(name, _)| name.to_lowercase())
        .or_else(|| metadata_speaker(&record.metadata))
        .map_or(0.0, |speaker| {
            if analysis.entities.contains(&speaker) {
                1.0
            } else {
                0.0
            }
        });
    let time = analysis.time.as_ref().map_or(0.0, |time| {
        time.constraint
            .closeness(record_day(&record.metadata, record.created_at))
    });
    let brevity = ((10.0 - text_words.len() as f32) / 7.0).clamp(0.0, 1.0);

    Signals {
        semantic: first.semantic,
        lexical: first.lexical,
        fused: first.fused,
        coverage,
        proximity,
        interaction,
        entity,
        speaker,
        time,
        brevity,
        neighbour: 0.0,
    }
}

/// At most `max` bytes of `text`, cut at a character boundary.
fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Whether `haystack` (lowercase) contains `needle` between non-alphanumeric characters.
fn contains_word(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(at, _)| {
        let before = haystack[..at].chars().next_back();
        let after = haystack[at + needle.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Metadata keys that say who said or wrote a memory (lowercase).
const SPEAKER_KEYS: &[&str] = &[
    "speaker", "author", "user", "from", "name", "sender", "role",
];

/// Whether a memory is a turn of a conversation: it says who spoke, with a `Name:` label or a
/// speaker in its metadata. Only turns have neighbours (`neighbour` signal).
pub(crate) fn is_turn(record: &MemoryRecord) -> bool {
    record
        .content
        .as_deref()
        .is_some_and(|text| speaker_label(text).is_some())
        || metadata_speaker(&record.metadata).is_some()
}

/// A leading `Name:` label of at most three capitalised words ("Jon:", "Mary Ann:"; not
/// "Database connection pool:"): the name, and the byte offset
/// where what was said begins.
fn speaker_label(text: &str) -> Option<(&str, usize)> {
    let (head, _) = text.split_once(':')?;
    let name = head.trim();
    let is_label = !name.is_empty()
        && name.len() <= 40
        && name.split_whitespace().count() <= 3
        && name
            .split_whitespace()
            .all(|word| word.chars().next().is_some_and(char::is_uppercase))
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == ' ' || c == '-' || c == '\'');
    is_label.then_some((name, head.len() + 1))
}

/// Who said or wrote a memory according to its metadata (lowercase).
fn metadata_speaker(metadata: &serde_json::Value) -> Option<String> {
    let serde_json::Value::Object(map) = metadata else {
        return None;
    };
    map.iter().find_map(|(key, value)| match value {
        serde_json::Value::String(name) if SPEAKER_KEYS.contains(&key.to_lowercase().as_str()) => {
            Some(name.trim().to_lowercase())
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests;
