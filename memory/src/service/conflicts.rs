//! Conflicts of a new memory with what its scope already holds:
//! [`MemoryService::conflicts`], which `memory_add` answers with.
//!
//! Candidates are the best lexical matches in the new memory's own scope and kind; each is
//! then judged by [`judge`], word by word (stemmed, stopwords left out):
//! * **contradicts**: the two talk about the same subject (most of the shorter one's words are
//!   shared) and differ where a fact changes: one is negated and the other not, they hold
//!   different numbers, or a few words of one stand where a few others stood;
//! * **repeats**: nearly every word is shared, nothing negated or renumbered.
//!
//! Invariant: this only reports. Nothing is superseded or forgotten here; the caller decides
//! (`memory_update` with `mode: "supersede"`, or `memory_add` with `supersedes`). Memories of
//! other scopes, layers or kinds are never candidates, so unrelated subjects are never flagged.

use std::collections::BTreeSet;

use uuid::Uuid;

use super::MemoryService;
use crate::error::Result;
use crate::model::{Conflict, ConflictRelation, Identity, MemoryFilter, MemoryRecord, now_millis};
use crate::retrieval::query::{QueryAnalysis, stem};
use crate::text::{is_stopword, words};
use crate::validate;

/// Memories of the scope compared with a new one.
const CANDIDATES: usize = 8;
/// Conflicts reported at most.
const MAX_CONFLICTS: usize = 3;
/// Share of the shorter text's words the two must have in common to be on one subject.
const SAME_SUBJECT: f32 = 0.5;
/// Share of words in common from which two texts say the same thing.
const SAME_STATEMENT: f32 = 0.8;
/// The most words on each side that may differ for a changed value ("Tuesday" → "Thursday").
const MAX_CHANGED_WORDS: usize = 3;
/// Characters of the existing memory's content quoted in a conflict.
const EXCERPT_CHARS: usize = 200;

/// Words that negate a statement. `n't` splits into `t`.
const NEGATIONS: &[&str] = &[
    "cannot", "never", "no", "none", "nobody", "not", "nothing", "nowhere", "t", "without",
];

impl MemoryService {
    /// The memories of `record`'s scope that it probably contradicts or repeats, most likely
    /// first (at most three). `record` is one the caller just stored.
    ///
    /// The candidates are the scope's best lexical matches only: a pair [`judge`] accepts
    /// shares at least half of the shorter text's terms, so the lexical side finds it, and the
    /// add pays for no second embedding.
    pub async fn conflicts(&self, who: &Identity, record: &MemoryRecord) -> Result<Vec<Conflict>> {
        let tenant_id = validate::tenant(who)?;
        let Some(content) = record.content.as_deref() else {
            return Ok(Vec::new());
        };
        let scope = record.scope();
        if !who.reaches(&scope) {
            return Ok(Vec::new());
        }
        let config = &self.config.retrieval;
        // The words and their stems: the lexical index holds words as written, so "Deploys"
        // finds "deploy" through its stem.
        let analysis = QueryAnalysis::new(content, now_millis(), config.max_query_terms);
        let mut terms = analysis.terms;
        for stem in analysis.stems {
            if !terms.contains(&stem) {
                terms.push(stem);
            }
        }
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let filter = MemoryFilter {
            scopes: vec![scope],
            tags: Vec::new(),
            kinds: vec![record.kind.clone()],
        };
        let ids: Vec<Uuid> = self
            .records
            .lexical_search(tenant_id, &terms, &filter, CANDIDATES + 1)
            .await?
            .into_iter()
            .map(|hit| hit.id)
            .filter(|id| *id != record.id)
            .collect();
        let mut conflicts: Vec<Conflict> = self
            .records
            .get_many(tenant_id, &ids)
            .await?
            .into_iter()
            .filter(|existing| existing.scope() == record.scope() && existing.kind == record.kind)
            .filter_map(|existing| {
                let text = existing.content.as_deref()?;
                let (relation, score, reason) = judge(content, text)?;
                Some(Conflict {
                    id: existing.id,
                    relation,
                    score,
                    reason,
                    content: excerpt(text),
                    valid_from: existing.valid_from,
                })
            })
            .collect();
        conflicts.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(b.valid_from.cmp(&a.valid_from))
        });
        conflicts.truncate(MAX_CONFLICTS);
        Ok(conflicts)
    }
}

/// The words of a text as [`judge`] compares them.
struct Statement {
    /// Stems of the content words that are not numbers.
    terms: BTreeSet<String>,
    /// Words holding a digit, as written (lowercase).
    numbers: BTreeSet<String>,
    negated: bool,
}

impl Statement {
    fn new(text: &str) -> Statement {
        let mut statement = Statement {
            terms: BTreeSet::new(),
            numbers: BTreeSet::new(),
            negated: false,
        };
        for word in words(text, false) {
            if NEGATIONS.contains(&word.as_str()) {
                statement.negated = true;
            } else if word.chars().any(|c| c.is_ascii_digit()) {
                statement.numbers.insert(word);
            } else if !is_stopword(&word) {
                statement.terms.insert(stem(&word).into_owned());
            }
        }
        statement
    }
}

/// Whether `new` contradicts or repeats `existing`: the relation, a score in 0..1 (the share
/// of words in common) and the reason, in words a user reads.
pub fn judge(new: &str, existing: &str) -> Option<(ConflictRelation, f32, String)> {
    let (new, old) = (Statement::new(new), Statement::new(existing));
    let shared: Vec<&String> = new.terms.intersection(&old.terms).collect();
    let shorter = new.terms.len().min(old.terms.len());
    if shorter == 0 || shared.len() < 2.min(shorter) {
        return None;
    }
    let overlap = shared.len() as f32 / shorter as f32;
    if overlap < SAME_SUBJECT {
        return None;
    }
    let subject = quoted(shared.iter().map(|s| s.as_str()).take(4));
    let only_new: Vec<&str> = new
        .terms
        .difference(&old.terms)
        .map(String::as_str)
        .collect();
    let only_old: Vec<&str> = old
        .terms
        .difference(&new.terms)
        .map(String::as_str)
        .collect();
    if new.negated != old.negated {
        let (yes, no) = if new.negated {
            ("the existing memory", "this one")
        } else {
            ("this one", "the existing memory")
        };
        return Some((
            ConflictRelation::Contradicts,
            overlap,
            format!("same subject ({subject}), but {no} negates what {yes} states"),
        ));
    }
    // A number only one side has is a detail; one in place of another is a changed value.
    let new_numbers: Vec<&str> = new
        .numbers
        .difference(&old.numbers)
        .map(String::as_str)
        .collect();
    let old_numbers: Vec<&str> = old
        .numbers
        .difference(&new.numbers)
        .map(String::as_str)
        .collect();
    if !new_numbers.is_empty() && !old_numbers.is_empty() {
        return Some((
            ConflictRelation::Contradicts,
            overlap,
            format!(
                "same subject ({subject}), but {} here where it said {}",
                quoted(new_numbers.into_iter()),
                quoted(old_numbers.into_iter()),
            ),
        ));
    }
    if overlap >= SAME_STATEMENT && (only_new.is_empty() || only_old.is_empty()) {
        let reason = match (only_new.is_empty(), only_old.is_empty()) {
            (true, true) => format!("says the same ({subject})"),
            (false, _) => format!(
                "says the same ({subject}) and adds {}",
                quoted(only_new.iter().copied())
            ),
            (true, false) => {
                format!("says the same ({subject}), with less detail than the existing memory")
            }
        };
        return Some((ConflictRelation::Repeats, overlap, reason));
    }
    // A value that changed: a few words in place of a few others, most of the statement kept.
    let changed = |words: &[&str]| (1..=MAX_CHANGED_WORDS).contains(&words.len());
    if changed(&only_new)
        && changed(&only_old)
        && shared.len() >= 2
        && only_new.len() + only_old.len() <= shared.len()
    {
        return Some((
            ConflictRelation::Contradicts,
            overlap,
            format!(
                "same subject ({subject}), but {} where it said {}",
                quoted(only_new.iter().copied()),
                quoted(only_old.iter().copied()),
            ),
        ));
    }
    None
}

/// `a`, `b`, `c`.
fn quoted<'a>(words: impl Iterator<Item = &'a str>) -> String {
    words
        .map(|word| format!("`{word}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn excerpt(content: &str) -> String {
    match content.char_indices().nth(EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", &content[..end]),
        None => content.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relation(new: &str, old: &str) -> Option<ConflictRelation> {
        judge(new, old).map(|(relation, _, _)| relation)
    }

    #[test]
    fn a_changed_value_on_one_subject_contradicts() {
        let (relation, score, reason) = judge(
            "The deploy window is Thursday afternoon",
            "The deploy window is Tuesday afternoon",
        )
        .expect("a conflict");
        assert_eq!(relation, ConflictRelation::Contradicts);
        assert!(score > 0.5 && score < 1.0, "{score}");
        assert!(
            reason.contains("`thursday`") && reason.contains("`tuesday`"),
            "{reason}"
        );
    }

    #[test]
    fn negation_and_numbers_contradict() {
        assert_eq!(
            relation(
                "We do not use Redis for the session cache",
                "We use Redis for the session cache"
            ),
            Some(ConflictRelation::Contradicts)
        );
        assert_eq!(
            relation(
                "The API rate limit is 500 requests per minute",
                "The API rate limit is 100 requests per minute"
            ),
            Some(ConflictRelation::Contradicts)
        );
    }

    #[test]
    fn the_same_statement_reworded_repeats() {
        assert_eq!(
            relation("Deploys happen on Tuesdays", "We deploy on Tuesday"),
            Some(ConflictRelation::Repeats)
        );
        let (_, _, reason) = judge(
            "The staging database is PostgreSQL 15 on db-2",
            "The staging database is PostgreSQL 15",
        )
        .expect("a repeat");
        assert!(reason.contains("adds"), "{reason}");
    }

    #[test]
    fn different_subjects_are_not_flagged() {
        assert_eq!(
            relation(
                "The deploy window is Tuesday",
                "Alice prefers tabs over spaces"
            ),
            None
        );
        assert_eq!(
            relation("Use ripgrep to search the code", "The CI cache lives in S3"),
            None
        );
        assert_eq!(relation("", "anything at all"), None);
    }

    #[test]
    fn excerpts_are_bounded_on_a_char_boundary() {
        let long = "é".repeat(500);
        let quoted = excerpt(&long);
        assert_eq!(quoted.chars().count(), EXCERPT_CHARS + 1);
        assert!(quoted.ends_with('…'));
    }
}
