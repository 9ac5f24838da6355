//! Deterministic extractive summarisation: score every sentence by how central it is to the
//! layer, then pick sentences by maximal marginal relevance (MMR) until a depth's budget is
//! spent.
//!
//! * Centrality is the cosine between a sentence's TF-IDF vector and the centroid of all
//!   sentences: what the layer keeps talking about scores high, one-off remarks low.
//! * Newer memories and the first sentence of each memory (usually its topic) get a small boost.
//! * MMR picks `λ·score − (1−λ)·max similarity to what is already picked`, so a summary does not
//!   repeat one fact in three phrasings.

use std::collections::HashMap;

use super::{DepthTexts, Drafted, SourceDoc, Summarizer, SummaryInput};
use crate::text;
use crate::tokens::Tokenizer;

/// Relevance vs novelty in MMR.
const LAMBDA: f32 = 0.7;
/// A sentence this similar (cosine) to one already picked says nothing new.
const NEAR_DUPLICATE: f32 = 0.8;
/// Sentences considered at most, so a huge layer costs a bounded time.
const MAX_SENTENCES: usize = 5000;
/// Score boost of a memory's first sentence.
const LEAD_BOOST: f32 = 1.15;
/// Score boost of the newest memory, falling linearly to none for the oldest.
const RECENCY_BOOST: f32 = 0.2;

/// The default summarizer: no network, same output for the same input.
#[derive(Debug, Clone, Copy)]
pub struct ExtractiveSummarizer {
    tokenizer: Tokenizer,
}

impl ExtractiveSummarizer {
    pub const ID: &'static str = "extractive-v1";

    pub fn new(tokenizer: Tokenizer) -> Self {
        ExtractiveSummarizer { tokenizer }
    }

    /// The three depths, each within its budget.
    pub fn summarize_now(&self, input: &SummaryInput<'_>) -> DepthTexts {
        let candidates = Candidates::build(input.docs, self.tokenizer);
        input
            .budgets
            .map(|budget| candidates.select(budget, self.tokenizer))
    }
}

#[async_trait::async_trait]
impl Summarizer for ExtractiveSummarizer {
    fn id(&self) -> &str {
        Self::ID
    }

    async fn summarize(&self, input: &SummaryInput<'_>) -> anyhow::Result<Drafted> {
        Ok(Drafted {
            texts: self.summarize_now(input),
            generator: Self::ID.to_owned(),
            skipped: Vec::new(),
        })
    }
}

/// A sparse, L2-normalised TF-IDF vector, sorted by term id.
type Vector = Vec<(u32, f32)>;

struct Sentence<'a> {
    text: &'a str,
    tokens: usize,
    vector: Vector,
    score: f32,
}

struct Candidates<'a> {
    sentences: Vec<Sentence<'a>>,
}

impl<'a> Candidates<'a> {
    fn build(docs: &'a [SourceDoc<'a>], tokenizer: Tokenizer) -> Self {
        let mut vocabulary: HashMap<String, u32> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        // (text, term counts, boost)
        let mut raw: Vec<(&str, HashMap<u32, f32>, f32)> = Vec::new();
        let newest_rank = docs.len().max(2) as f32 - 1.0;
        'docs: for (rank, doc) in docs.iter().enumerate() {
            let recency = 1.0 + RECENCY_BOOST * (1.0 - rank as f32 / newest_rank).max(0.0);
            for (position, sentence) in text::sentences(doc.text).into_iter().enumerate() {
                if raw.len() == MAX_SENTENCES {
                    break 'docs;
                }
                let normalised: Vec<String> = text::words(sentence).collect();
                if !seen.insert(normalised) {
                    continue;
                }
                let mut counts = HashMap::new();
                for term in text::terms(sentence) {
                    let next = vocabulary.len() as u32;
                    let id = *vocabulary.entry(term).or_insert(next);
                    *counts.entry(id).or_insert(0.0) += 1.0;
                }
                let lead = if position == 0 { LEAD_BOOST } else { 1.0 };
                raw.push((sentence, counts, recency * lead));
            }
        }

        let total = raw.len() as f32;
        let mut document_frequency = vec![0u32; vocabulary.len()];
        for (_, counts, _) in &raw {
            for id in counts.keys() {
                document_frequency[*id as usize] += 1;
            }
        }
        let idf: Vec<f32> = document_frequency
            .iter()
            .map(|df| ((total + 1.0) / (*df as f32 + 1.0)).ln() + 1.0)
            .collect();

        let mut centroid = vec![0.0f32; vocabulary.len()];
        let mut sentences: Vec<Sentence<'a>> = raw
            .into_iter()
            .map(|(text, counts, boost)| {
                let mut vector: Vector = counts
                    .into_iter()
                    .map(|(id, tf)| (id, (1.0 + tf.ln()) * idf[id as usize]))
                    .collect();
                vector.sort_unstable_by_key(|(id, _)| *id);
                normalise(&mut vector);
                for (id, weight) in &vector {
                    centroid[*id as usize] += weight;
                }
                // Fragments of one or two terms rarely stand alone in a summary.
                let brevity = if vector.len() < 3 { 0.5 } else { 1.0 };
                Sentence {
                    text,
                    tokens: tokenizer.count(text),
                    vector,
                    score: boost * brevity,
                }
            })
            .collect();

        let norm = centroid
            .iter()
            .map(|w| w * w)
            .sum::<f32>()
            .sqrt()
            .max(f32::MIN_POSITIVE);
        for sentence in &mut sentences {
            let centrality: f32 = sentence
                .vector
                .iter()
                .map(|(id, w)| w * centroid[*id as usize] / norm)
                .sum();
            sentence.score *= centrality;
        }
        let best = sentences.iter().map(|s| s.score).fold(0.0f32, f32::max);
        if best > 0.0 {
            for sentence in &mut sentences {
                sentence.score /= best;
            }
        }
        Candidates { sentences }
    }

    /// MMR selection within `budget` tokens, in order of selection (most central first).
    fn select(&self, budget: usize, tokenizer: Tokenizer) -> String {
        let mut chosen: Vec<usize> = Vec::new();
        let mut max_similarity = vec![0.0f32; self.sentences.len()];
        let mut picked = vec![false; self.sentences.len()];
        // Sentences are joined by one space, which BPE merges into the next word: the sum of
        // sentence counts is a close upper bound, checked exactly at the end.
        let mut used = 0usize;
        loop {
            let mut best: Option<(usize, f32)> = None;
            for (index, sentence) in self.sentences.iter().enumerate() {
                if picked[index]
                    || used + sentence.tokens > budget
                    || max_similarity[index] >= NEAR_DUPLICATE
                {
                    continue;
                }
                let value = LAMBDA * sentence.score - (1.0 - LAMBDA) * max_similarity[index];
                if best.is_none_or(|(_, top)| value > top) {
                    best = Some((index, value));
                }
            }
            let Some((index, _)) = best else { break };
            picked[index] = true;
            chosen.push(index);
            used += self.sentences[index].tokens;
            let vector = &self.sentences[index].vector;
            for (other, sentence) in self.sentences.iter().enumerate() {
                if !picked[other] {
                    let similarity = dot(vector, &sentence.vector);
                    max_similarity[other] = max_similarity[other].max(similarity);
                }
            }
        }

        if chosen.is_empty() {
            // Every sentence is longer than the budget: cut the most central one.
            return self
                .sentences
                .iter()
                .enumerate()
                .max_by(|(ia, a), (ib, b)| a.score.total_cmp(&b.score).then(ib.cmp(ia)))
                .map(|(_, sentence)| tokenizer.truncate(sentence.text, budget))
                .unwrap_or_default();
        }
        loop {
            let summary = chosen
                .iter()
                .map(|i| self.sentences[*i].text)
                .collect::<Vec<_>>()
                .join(" ");
            if tokenizer.count(&summary) <= budget || chosen.len() == 1 {
                return tokenizer.truncate(&summary, budget);
            }
            chosen.pop();
        }
    }
}

fn normalise(vector: &mut Vector) {
    let norm = vector.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
    if norm > 0.0 {
        for (_, weight) in vector.iter_mut() {
            *weight /= norm;
        }
    }
}

fn dot(a: &Vector, b: &Vector) -> f32 {
    let (mut i, mut j, mut sum) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                sum += a[i].1 * b[j].1;
                i += 1;
                j += 1;
            }
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use aeterna_memory::Layer;

    use super::*;

    fn summarize(texts: &[&str], budgets: [usize; 3]) -> DepthTexts {
        let tokenizer = Tokenizer::get().expect("bpe");
        let docs: Vec<SourceDoc<'_>> = texts
            .iter()
            .map(|text| SourceDoc {
                text,
                updated_at: 0,
            })
            .collect();
        let input = SummaryInput {
            tenant_id: "t",
            layer: Layer::Project,
            scope_id: "p",
            docs: &docs,
            budgets,
        };
        ExtractiveSummarizer::new(tokenizer).summarize_now(&input)
    }

    const CORPUS: &[&str] = &[
        "The build uses cargo with the sqlx offline mode. Run cargo test before pushing.",
        "Cargo test runs the sqlx migrations against a temporary SQLite database.",
        "Lunch is at noon on Fridays.",
        "The sqlx migrations live in migrations/sqlite and run at start-up with cargo.",
        "Run cargo test before pushing; CI runs cargo test too.",
        "The vector index is persisted in the data directory on shutdown.",
    ];

    #[test]
    fn depths_fit_their_budgets_and_grow_with_them() {
        let tokenizer = Tokenizer::get().expect("bpe");
        let [sentence, paragraph, detailed] = summarize(CORPUS, [20, 45, 500]);
        assert!(tokenizer.count(&sentence) <= 20, "{sentence}");
        assert!(tokenizer.count(&paragraph) <= 45, "{paragraph}");
        assert!(tokenizer.count(&detailed) <= 500, "{detailed}");
        assert!(sentence.len() < paragraph.len() && paragraph.len() < detailed.len());
    }

    #[test]
    fn the_central_topic_leads_and_off_topic_remarks_come_last() {
        let [sentence, _, detailed] = summarize(CORPUS, [25, 200, 500]);
        assert!(sentence.to_lowercase().contains("cargo"), "{sentence}");
        assert!(!sentence.contains("Lunch"), "{sentence}");
        let lunch = detailed.find("Lunch").unwrap_or(detailed.len());
        let cargo = detailed
            .find("cargo")
            .expect("cargo is in the detailed summary");
        assert!(cargo < lunch, "{detailed}");
    }

    #[test]
    fn redundant_sentences_are_not_picked_twice() {
        let repeated = [
            "Deploys go through the staging cluster first.",
            "Deploys go through the staging cluster first!",
            "All deploys go through the staging cluster first.",
            "Backups run nightly at 02:00 UTC.",
        ];
        let [_, paragraph, _] = summarize(&repeated, [50, 30, 500]);
        assert_eq!(
            paragraph.matches("staging cluster").count(),
            1,
            "{paragraph}"
        );
        assert!(paragraph.contains("Backups"), "{paragraph}");
    }

    #[test]
    fn an_overlong_sentence_is_cut_to_the_budget() {
        let tokenizer = Tokenizer::get().expect("bpe");
        let long = "word ".repeat(300);
        let [sentence, ..] = summarize(&[&long], [12, 200, 500]);
        assert!(!sentence.is_empty());
        assert!(tokenizer.count(&sentence) <= 12);
    }

    #[test]
    fn empty_input_gives_empty_summaries() {
        assert_eq!(
            summarize(&[], [50, 200, 500]),
            [String::new(), String::new(), String::new()]
        );
        assert_eq!(summarize(&["...", "  "], [50, 200, 500])[0], "");
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(
            summarize(CORPUS, [50, 200, 500]),
            summarize(CORPUS, [50, 200, 500])
        );
    }
}
