//! [`LlmDistiller`]: the Note-Taking agent's [`Distiller`] over the `distill` chain.
//!
//! The deterministic distiller's note is the scaffold: the model gets it with the trajectory
//! and condenses and corrects it, and what the model leaves out (context, patterns, tags,
//! keywords) is taken from it. The note's quality score is the scaffold's (it measures the
//! evidence in the session, which the model cannot add to). A note over `max_note_tokens` is
//! unusable, so the next provider, in the end the deterministic distiller, writes it. When no
//! provider serves, the error lists why and [`aeterna_notes::DistillerChain`] falls back.

use aeterna_context::Tokenizer;
use aeterna_notes::distill::{Declined, DistillInput, Distillation, DistilledNote, Distiller};
use aeterna_notes::{CapturedEvent, DeterministicDistiller};

use crate::chain::RoleChain;
use crate::prompts::{self, DISTILL, NoteAnswer, clip_middle, one_paragraph};

/// Bounds on what a model's note may hold: list items, characters per item.
const MAX_ITEMS: usize = 12;
const MAX_ITEM_CHARS: usize = 300;
const MAX_TITLE_CHARS: usize = 120;
const MAX_DESCRIPTION_CHARS: usize = 300;
const MAX_KEYWORDS: usize = 12;
const MAX_TAGS: usize = 16;
/// Bytes of one call's input and output shown to the model (the prompt fits them further).
const EVENT_INPUT_BYTES: usize = 800;
const EVENT_OUTPUT_BYTES: usize = 1_600;

pub struct LlmDistiller {
    chain: RoleChain,
    tokenizer: Tokenizer,
    max_note_tokens: usize,
    max_prompt_bytes: usize,
}

impl LlmDistiller {
    pub fn new(
        chain: RoleChain,
        tokenizer: Tokenizer,
        max_note_tokens: usize,
        max_prompt_bytes: usize,
    ) -> Self {
        LlmDistiller {
            chain,
            tokenizer,
            max_note_tokens,
            max_prompt_bytes,
        }
    }

    /// The model's note on the scaffold, or why it is unusable.
    fn note(&self, answer: NoteAnswer, scaffold: &DistilledNote) -> Result<DistilledNote, String> {
        let or = |items: Vec<String>, fallback: &[String]| {
            if items.is_empty() {
                fallback.to_vec()
            } else {
                bounded(items, MAX_ITEMS, MAX_ITEM_CHARS)
            }
        };
        let tags: Vec<String> = answer
            .tags
            .iter()
            .map(|tag| {
                tag.split_whitespace()
                    .collect::<Vec<_>>()
                    .join("-")
                    .to_lowercase()
            })
            .filter(|tag| !tag.is_empty())
            .take(MAX_TAGS)
            .collect();
        let note = DistilledNote {
            title: clip(&answer.title, MAX_TITLE_CHARS),
            description: if answer.description.is_empty() {
                scaffold.description.clone()
            } else {
                clip(&answer.description, MAX_DESCRIPTION_CHARS)
            },
            keywords: or(
                bounded(answer.keywords, MAX_KEYWORDS, 60),
                &scaffold.keywords,
            ),
            context: or(answer.context, &scaffold.context),
            problem: bounded(answer.problem, MAX_ITEMS, MAX_ITEM_CHARS),
            solution: bounded(answer.solution, MAX_ITEMS, MAX_ITEM_CHARS),
            patterns: or(answer.patterns, &scaffold.patterns),
            tags: if tags.is_empty() {
                scaffold.tags.clone()
            } else {
                tags
            },
            quality: scaffold.quality,
            distiller: String::new(),
            fallbacks: Vec::new(),
        };
        let tokens = self.tokenizer.count(&note.to_markdown());
        if tokens > self.max_note_tokens {
            return Err(format!(
                "the note is {tokens} tokens, over its budget of {} (llm.limits.max_note_tokens)",
                self.max_note_tokens
            ));
        }
        Ok(note)
    }
}

#[async_trait::async_trait]
impl Distiller for LlmDistiller {
    fn id(&self) -> &str {
        "llm-distill"
    }

    async fn distill(&self, input: DistillInput<'_>) -> anyhow::Result<Distillation> {
        self.chain.precheck()?;
        let scaffold = DeterministicDistiller.distill_now(input);
        let events: Vec<String> = input
            .events
            .iter()
            .enumerate()
            .map(|(n, event)| render_event(n + 1, event))
            .collect();
        let request = prompts::distill(
            &scaffold.to_markdown(),
            &events,
            self.max_note_tokens,
            self.max_prompt_bytes,
        );
        let served = self
            .chain
            .run(&input.session.tenant_id, &request, |response| {
                let answer = prompts::read_note(&response.text)?;
                if answer.worth_a_note == Some(false) {
                    return Ok(Err(answer.reason));
                }
                self.note(answer, &scaffold).map(Ok)
            })
            .await?;
        let distiller = format!("llm:{}/{} {DISTILL}", served.provider, served.model);
        Ok(match served.value {
            Ok(mut note) => {
                note.distiller = distiller;
                note.fallbacks = served.skipped.iter().map(ToString::to_string).collect();
                Distillation::Note(note)
            }
            Err(reason) => Distillation::Declined(Declined {
                reason: if reason.is_empty() {
                    "the model found nothing worth a note".to_owned()
                } else {
                    clip(&reason, MAX_DESCRIPTION_CHARS)
                },
                distiller,
            }),
        })
    }
}

/// One call as the model sees it: number, tool, outcome, duration, purpose, input, output.
fn render_event(number: usize, event: &CapturedEvent) -> String {
    let outcome = if event.success { "ok" } else { "FAILED" };
    let mut text = format!(
        "#{number} {} {outcome} ({} ms)",
        one_paragraph(&event.tool_name),
        event.duration_ms
    );
    if !event.description.trim().is_empty() {
        text.push_str(&format!(" — {}", one_paragraph(&event.description)));
    }
    text.push_str(&format!(
        "\ninput: {}\noutput: {}",
        clip_middle(&event.input, EVENT_INPUT_BYTES),
        clip_middle(&event.output, EVENT_OUTPUT_BYTES)
    ));
    text
}

fn bounded(items: Vec<String>, max_items: usize, max_chars: usize) -> Vec<String> {
    items
        .iter()
        .map(|item| clip(item, max_chars))
        .filter(|item| !item.is_empty())
        .take(max_items)
        .collect()
}

/// One line of at most `max_chars` characters, with an ellipsis when cut.
fn clip(text: &str, max_chars: usize) -> String {
    let line = one_paragraph(text);
    if line.chars().count() <= max_chars {
        return line;
    }
    let mut cut: String = line.chars().take(max_chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}
