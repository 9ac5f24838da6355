//! Budget fitting: from scored candidates and layer summaries to an [`AssembledContext`] whose
//! BPE token count never exceeds the budget.
//!
//! The policy, in order:
//! 1. Drop candidates under `min_relevance`; rank the rest by priority (relevance scaled by
//!    recency). **Knowledge pass**: reviewed knowledge items take what they need of
//!    `knowledge_share` of the budget first, in rank order.
//! 2. **High-relevance pass.** Take items at or above `high_relevance` in rank order while they
//!    fit. If they alone fill the budget, stop here (early termination): nothing less relevant
//!    could displace them.
//! 3. **Item pass.** Take the remaining items in rank order while they fit, leaving
//!    `summary_share` of the budget free when the relevant items cannot all fit.
//! 4. **Summary pass.** Each layer whose relevant items did not all fit is represented by its
//!    summary at the deepest depth that fits its fair share of what is left — the per-layer
//!    choice between full items and a summary depth.
//! 5. **Backfill.** Leftover budget takes further items that fit, in rank order.
//!
//! Every pass skips near-duplicates of what is already selected ([`Redundancy`]). Costs are
//! counted per piece with the BPE; the final Markdown is counted again and the lowest-priority
//! piece dropped until it fits, so `total_tokens <= token_budget` holds exactly.

use foldhash::{HashSet, HashSetExt};

use aeterna_memory::{Layer, Timestamp};

use crate::dedup::Redundancy;
use crate::model::{AssembledContext, Depth, Source, SourceDepth};
use crate::render;
use crate::tokens::Tokenizer;

/// A memory that may go into the context.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub id: String,
    pub layer: Layer,
    pub scope_id: String,
    pub content: String,
    pub content_hash: Option<String>,
    /// Relevance to the query, 0..1.
    pub score: f32,
    pub updated_at: Timestamp,
    /// Tokens of [`render::item`] of the content.
    pub tokens: usize,
    /// An item of a knowledge repository: it may use the knowledge share of the budget.
    pub knowledge: bool,
}

/// A stored summary that may stand in for a layer.
#[derive(Debug, Clone)]
pub struct SummaryOption {
    pub layer: Layer,
    pub scope_id: String,
    pub depth: Depth,
    pub content: String,
    /// Tokens of [`render::summary`] of the content.
    pub tokens: usize,
}

/// The knobs of one fitting, from [`crate::ContextConfig`] and the request.
#[derive(Debug, Clone, Copy)]
pub struct FitParams {
    pub budget: usize,
    pub min_relevance: f32,
    pub high_relevance: f32,
    pub recency_weight: f32,
    pub recency_half_life_ms: f64,
    pub dedup_containment: f32,
    pub summary_share: f32,
    pub knowledge_share: f32,
    pub now: Timestamp,
}

impl FitParams {
    /// Relevance scaled by recency: `score × (1 − w + w·2^(−age/half-life))`.
    pub fn priority(&self, score: f32, updated_at: Timestamp) -> f32 {
        let age = (self.now - updated_at).max(0) as f64;
        let freshness = 0.5f64.powf(age / self.recency_half_life_ms) as f32;
        score * (1.0 - self.recency_weight + self.recency_weight * freshness)
    }

    /// The budget counts as filled when less than this is left (a tenth, at least 16 tokens).
    fn slack(&self) -> usize {
        (self.budget / 10).max(16)
    }
}

/// What a fitting chose; rendered by [`Fitted::into_context`].
#[derive(Debug, Default)]
pub struct Fitted {
    pieces: Vec<Piece>,
    /// Relevant, non-redundant material was left out.
    pub truncated: bool,
    /// True when the high-relevance pass filled the budget.
    pub terminated_early: bool,
    /// Candidates dropped as near-duplicates.
    pub duplicates: usize,
}

#[derive(Debug, Clone)]
struct Piece {
    source: Source,
    priority: f32,
    text: String,
    /// Where it sorts inside its layer's section: the summary first.
    summary: bool,
}

/// Fits `candidates` and `summaries` into `params.budget` tokens. `saturated` names the scopes
/// whose search returned as many hits as it asked for: they may hold more relevant memories
/// than were fetched, so their summaries are eligible even when every fetched item fits.
pub fn fit(
    mut candidates: Vec<Candidate>,
    summaries: &[SummaryOption],
    saturated: &[(Layer, String)],
    params: &FitParams,
    tokenizer: Tokenizer,
) -> Fitted {
    candidates.retain(|c| c.score.is_finite() && c.score >= params.min_relevance);
    let mut ranked: Vec<(f32, Candidate)> = candidates
        .into_iter()
        .map(|c| (params.priority(c.score, c.updated_at), c))
        .collect();
    ranked.sort_by(|(pa, a), (pb, b)| {
        pb.total_cmp(pa)
            .then(b.score.total_cmp(&a.score))
            .then_with(|| a.id.cmp(&b.id))
    });
    let mut seen_ids = HashSet::new();
    ranked.retain(|(_, c)| seen_ids.insert(c.id.clone()));

    let mut state = State::new(params, tokenizer);
    let mut left_out: Vec<usize> = Vec::new();
    // Each candidate's shingles, computed when first needed: one left out by a pass for lack
    // of room is checked again in the backfill.
    let mut fingerprints: Vec<Option<Vec<u64>>> = vec![None; ranked.len()];

    // 1b. Knowledge pass: reviewed items first, within their share. One left out for lack of
    // room competes with everything else below.
    let knowledge_limit = (params.budget as f32 * params.knowledge_share) as usize;
    if knowledge_limit > 0 {
        for (index, candidate) in ranked.iter().enumerate() {
            if candidate.1.knowledge {
                state.try_item(candidate, &mut fingerprints[index], knowledge_limit);
            }
        }
    }

    // 2. High-relevance pass.
    let high = ranked
        .iter()
        .take_while(|(_, c)| c.score >= params.high_relevance)
        .count();
    for (index, candidate) in ranked.iter().enumerate().take(high) {
        if !state.try_item(candidate, &mut fingerprints[index], params.budget) {
            left_out.push(index);
        }
    }
    if state.remaining() < params.slack() {
        state.fitted.terminated_early = true;
        state.fitted.truncated = high < ranked.len()
            || !saturated.is_empty()
            || left_out.iter().any(|&i| !state.is_duplicate(&ranked[i].1));
        return state.finish();
    }

    // 3. Item pass, keeping room for summaries when the items cannot all fit.
    let demand: usize = ranked[high..].iter().map(|(_, c)| c.tokens).sum();
    let has_summary = |layer: Layer, scope_id: &str| {
        summaries
            .iter()
            .any(|s| s.layer == layer && s.scope_id == scope_id)
    };
    let saturated_with_summary = saturated
        .iter()
        .any(|(layer, scope)| has_summary(*layer, scope));
    let reserve = if (demand > state.remaining() && !summaries.is_empty()) || saturated_with_summary
    {
        (params.budget as f32 * params.summary_share) as usize
    } else {
        0
    };
    let item_limit = params.budget.saturating_sub(reserve);
    for (index, candidate) in ranked.iter().enumerate().skip(high) {
        if !state.try_item(candidate, &mut fingerprints[index], item_limit) {
            left_out.push(index);
        }
    }

    // 4. Summary pass for layers with relevant items left out.
    let mut overflowed: Vec<(Layer, String, f32, f32)> = Vec::new();
    for &index in &left_out {
        let (priority, c) = &ranked[index];
        if state.is_duplicate(c) {
            continue;
        }
        if !overflowed
            .iter()
            .any(|(layer, scope, ..)| *layer == c.layer && *scope == c.scope_id)
        {
            overflowed.push((c.layer, c.scope_id.clone(), *priority, c.score));
        }
    }
    for (layer, scope_id) in saturated {
        if overflowed
            .iter()
            .any(|(l, s, ..)| l == layer && s == scope_id)
        {
            continue;
        }
        // Stand in for the unseen memories, which rank below the weakest one fetched.
        let weakest = state
            .fitted
            .pieces
            .iter()
            .filter(|p| p.source.layer == *layer && p.source.scope_id == *scope_id)
            .map(|p| (p.priority, p.source.score))
            .reduce(|a, b| (a.0.min(b.0), a.1.min(b.1)));
        if let Some((priority, score)) = weakest {
            overflowed.push((*layer, scope_id.clone(), priority, score));
        }
    }
    for (position, (layer, scope_id, priority, score)) in overflowed.iter().enumerate() {
        let share = state.remaining() / (overflowed.len() - position);
        let header = state.header_cost(*layer, scope_id);
        let options = summaries
            .iter()
            .filter(|s| s.layer == *layer && s.scope_id == *scope_id);
        let fitting = options
            .filter(|s| !s.content.trim().is_empty() && s.tokens + header <= share)
            .max_by_key(|s| s.depth);
        if let Some(option) = fitting {
            state.try_summary(option, *priority, *score);
        }
    }

    // 5. Backfill.
    let mut still_out = false;
    for index in left_out {
        let candidate = &ranked[index];
        if !state.is_duplicate(&candidate.1)
            && !state.try_item(candidate, &mut fingerprints[index], params.budget)
        {
            still_out |= !state.is_duplicate(&candidate.1);
        }
    }
    // A saturated scope holds memories that were never fetched: the fetch size follows the
    // budget, so they too were left out for lack of room.
    state.fitted.truncated = still_out || !saturated.is_empty();
    state.finish()
}

/// Selection in progress.
struct State<'p> {
    params: &'p FitParams,
    tokenizer: Tokenizer,
    fitted: Fitted,
    used: usize,
    layers: Vec<(Layer, String)>,
    redundancy: Redundancy,
    duplicate_ids: HashSet<String>,
    selected_ids: HashSet<String>,
}

impl<'p> State<'p> {
    fn new(params: &'p FitParams, tokenizer: Tokenizer) -> Self {
        State {
            params,
            tokenizer,
            fitted: Fitted::default(),
            used: 0,
            layers: Vec::new(),
            redundancy: Redundancy::new(),
            duplicate_ids: HashSet::new(),
            selected_ids: HashSet::new(),
        }
    }

    fn is_duplicate(&self, candidate: &Candidate) -> bool {
        self.duplicate_ids.contains(&candidate.id)
    }

    fn remaining(&self) -> usize {
        self.params.budget.saturating_sub(self.used)
    }

    fn header_cost(&self, layer: Layer, scope_id: &str) -> usize {
        if self
            .layers
            .iter()
            .any(|(l, s)| *l == layer && s == scope_id)
        {
            0
        } else {
            // The section break before every section but the first, plus the heading.
            self.tokenizer.count(&render::header(layer, scope_id)) + 1
        }
    }

    /// Selects the item if it is new, not redundant and fits under `limit` total tokens.
    /// `fingerprint` is the candidate's memo of its shingles, filled on first use.
    fn try_item(
        &mut self,
        (priority, c): &(f32, Candidate),
        fingerprint: &mut Option<Vec<u64>>,
        limit: usize,
    ) -> bool {
        if self.selected_ids.contains(&c.id) || self.duplicate_ids.contains(&c.id) {
            return self.selected_ids.contains(&c.id);
        }
        let fingerprint = fingerprint.get_or_insert_with(|| Redundancy::fingerprint(&c.content));
        let threshold = self.params.dedup_containment;
        if self
            .redundancy
            .is_redundant(c.content_hash.as_deref(), fingerprint, threshold)
        {
            self.duplicate_ids.insert(c.id.clone());
            self.fitted.duplicates += 1;
            return false;
        }
        let cost = c.tokens + self.header_cost(c.layer, &c.scope_id);
        if self.used + cost > limit {
            return false;
        }
        self.used += cost;
        self.note_layer(c.layer, &c.scope_id);
        self.redundancy.add(c.content_hash.as_deref(), fingerprint);
        self.selected_ids.insert(c.id.clone());
        self.fitted.pieces.push(Piece {
            source: Source {
                id: c.id.clone(),
                layer: c.layer,
                scope_id: c.scope_id.clone(),
                score: c.score,
                depth: SourceDepth::Full,
            },
            priority: *priority,
            text: render::item(&c.content),
            summary: false,
        });
        true
    }

    fn try_summary(&mut self, option: &SummaryOption, priority: f32, score: f32) -> bool {
        let fingerprint = Redundancy::fingerprint(&option.content);
        if self
            .redundancy
            .is_redundant(None, &fingerprint, self.params.dedup_containment)
        {
            self.fitted.duplicates += 1;
            return false;
        }
        let cost = option.tokens + self.header_cost(option.layer, &option.scope_id);
        if self.used + cost > self.params.budget {
            return false;
        }
        self.used += cost;
        self.note_layer(option.layer, &option.scope_id);
        self.redundancy.add(None, &fingerprint);
        self.fitted.pieces.push(Piece {
            source: Source {
                id: summary_id(option.layer, &option.scope_id),
                layer: option.layer,
                scope_id: option.scope_id.clone(),
                score,
                depth: option.depth.into(),
            },
            priority,
            text: render::summary(&option.content),
            summary: true,
        });
        true
    }

    fn note_layer(&mut self, layer: Layer, scope_id: &str) {
        if !self
            .layers
            .iter()
            .any(|(l, s)| *l == layer && s == scope_id)
        {
            self.layers.push((layer, scope_id.to_owned()));
        }
    }

    fn finish(mut self) -> Fitted {
        self.fitted
            .pieces
            .sort_by(|a, b| b.priority.total_cmp(&a.priority));
        self.fitted
    }
}

/// The source id of a layer summary.
pub fn summary_id(layer: Layer, scope_id: &str) -> String {
    format!("summary:{layer}:{scope_id}")
}

impl Fitted {
    /// Renders the Markdown and counts it, dropping the lowest-priority piece until the count
    /// is within `budget`.
    pub fn into_context(mut self, budget: usize, tokenizer: Tokenizer) -> AssembledContext {
        loop {
            let (content, layers) = render_sections(&self.pieces);
            let total_tokens = tokenizer.count_chunked(&content);
            if total_tokens <= budget {
                let mut sources: Vec<Source> = self
                    .pieces
                    .iter()
                    .map(|piece| piece.source.clone())
                    .collect();
                sources.sort_by(|a, b| b.score.total_cmp(&a.score));
                return AssembledContext {
                    total_tokens,
                    token_budget: budget,
                    content,
                    layers_included: layers,
                    sources,
                    truncated: self.truncated,
                };
            }
            // Pieces are sorted by priority, so the last is the least valuable.
            self.pieces.pop();
            self.truncated = true;
        }
    }
}

/// Sections in order of their best piece; inside a section the summary, then items by priority.
fn render_sections(pieces: &[Piece]) -> (String, Vec<Layer>) {
    let mut sections: Vec<(Layer, &str, Vec<&Piece>)> = Vec::new();
    for piece in pieces {
        let key = (piece.source.layer, piece.source.scope_id.as_str());
        match sections.iter_mut().find(|(l, s, _)| (*l, *s) == key) {
            Some((_, _, members)) => members.push(piece),
            None => sections.push((key.0, key.1, vec![piece])),
        }
    }
    let mut content = String::new();
    let mut layers = Vec::new();
    for (index, (layer, scope_id, mut members)) in sections.into_iter().enumerate() {
        if index > 0 {
            content.push_str(render::SECTION_BREAK);
        }
        content.push_str(&render::header(layer, scope_id));
        members.sort_by_key(|piece| !piece.summary);
        for piece in members {
            content.push_str(&piece.text);
        }
        if !layers.contains(&layer) {
            layers.push(layer);
        }
    }
    (content, layers)
}

#[cfg(test)]
mod tests;
