//! [`HindsightService::query`]: find what fixed an error before, from raw tool output, a bare
//! message or a description in words, as a two-tier answer (`matched`, safe to apply, and
//! `related`, worth a look).

use std::collections::{HashMap, HashSet};

use aeterna_memory::{Identity, Scope};
use tracing::instrument;
use uuid::Uuid;

use crate::error::{HindsightError, Result};
use crate::model::*;
use crate::search::{self, Candidate};
use crate::service::{HindsightService, check_tenant, rank_resolutions};
use crate::store::resolutions;
use crate::understand::understand;

/// Answers returned when the query does not say.
const DEFAULT_LIMIT: usize = 5;

/// One answer being assembled: the match, the signature ids it stands for (copies of one
/// signature in several scopes are one answer) and its fused rank.
struct Answer {
    found: Match,
    ids: Vec<Uuid>,
    fused: f32,
}

impl HindsightService {
    /// Finds stored errors answering a query (raw tool output, a bare message, a description
    /// or a signature), with their resolutions ranked by confidence. Answers scoring at least
    /// the threshold are `matched`; the next best are `related`. A text is never refused for
    /// not looking like tool output: it is read as a message or a description, and the
    /// outcome says which.
    #[instrument(skip_all, fields(tenant = %who.tenant_id))]
    pub async fn query(&self, who: &Identity, request: QueryRequest) -> Result<QueryOutcome> {
        check_tenant(who)?;
        let threshold = request.threshold.unwrap_or(self.config.match_threshold);
        if !(0.0..=1.0).contains(&threshold) {
            return Err(HindsightError::invalid(format!(
                "`threshold` is {threshold}; pass a value within 0..1"
            )));
        }
        let limit = request.limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 || limit > self.config.max_matches {
            return Err(HindsightError::invalid(format!(
                "`limit` is {limit}; ask for 1 to {} answers",
                self.config.max_matches
            )));
        }
        let (form, mut queried) = match (request.error_text, request.signature) {
            (Some(text), None) => {
                let redacted = self.checked_text(&text)?;
                let understood = understand(&redacted, request.form).ok_or_else(|| {
                    HindsightError::invalid(
                        "`form` is `tool_output` but no error was recognised in `error_text`; \
                         leave `form` out (or pass `error_message` or `description`)",
                    )
                })?;
                let mut signatures = understood.signatures;
                signatures.truncate(self.config.max_signatures_per_text);
                (understood.form, signatures)
            }
            (None, Some(signature)) => (
                request.form.unwrap_or(QueryForm::ToolOutput),
                vec![self.clean_signature(signature)?],
            ),
            (Some(_), Some(_)) => {
                return Err(HindsightError::invalid(
                    "pass either `error_text` or `signature`, not both",
                ));
            }
            (None, None) => {
                return Err(HindsightError::invalid(
                    "pass `error_text` (raw error output, an error message or a description) \
                     or `signature`",
                ));
            }
        };
        self.embed(&mut queried).await;

        let visible: HashSet<Scope> = who.visible_scopes().into_iter().collect();
        let loaded = self.index(&who.tenant_id).await?;
        let settings = self.search_settings();
        let mut answers: HashMap<String, Answer> = HashMap::new();
        let mut closest: Option<f32> = None;
        {
            let index = loaded.index.read();
            for (query_index, signature) in queried.iter().enumerate() {
                let hits =
                    search::search(&index, signature, form, &settings, |s| visible.contains(s));
                for Candidate {
                    position,
                    breakdown,
                    ranks,
                    fused,
                    ..
                } in hits
                {
                    closest = Some(closest.map_or(breakdown.total, |c| c.max(breakdown.total)));
                    if breakdown.total < self.config.related_floor && breakdown.total < threshold {
                        continue;
                    }
                    let entry = index.entry(position);
                    let candidate = Match {
                        signature_id: entry.id,
                        layer: entry.scope.layer,
                        scope_id: entry.scope.scope_id.clone(),
                        language: entry.signature.language,
                        error_type: entry.signature.error_type.clone(),
                        message_pattern: entry.signature.message_pattern.clone(),
                        occurrence_count: entry.occurrence_count,
                        score: breakdown.total,
                        breakdown,
                        ranks,
                        query_index,
                        resolutions: Vec::new(),
                    };
                    let slot = answers
                        .entry(entry.fingerprint.clone())
                        .or_insert_with(|| Answer {
                            found: candidate.clone(),
                            ids: Vec::new(),
                            fused,
                        });
                    slot.ids.push(entry.id);
                    let better = (candidate.score, fused) > (slot.found.score, slot.fused)
                        || (candidate.score == slot.found.score
                            && candidate.layer < slot.found.layer);
                    if better {
                        slot.found = candidate;
                        slot.fused = slot.fused.max(fused);
                    }
                }
            }
        }
        let mut answers: Vec<Answer> = answers.into_values().collect();
        answers.sort_by(|a, b| {
            b.fused
                .total_cmp(&a.fused)
                .then(b.found.score.total_cmp(&a.found.score))
                .then(b.found.occurrence_count.cmp(&a.found.occurrence_count))
                .then(a.found.signature_id.cmp(&b.found.signature_id))
        });
        // Resolutions for a generous head of the list: answers whose fixes all appear in a
        // better answer (another example of the same lineage) are folded into it.
        answers.truncate(limit * 4);
        let ids: Vec<Uuid> = answers.iter().flat_map(|a| a.ids.iter().copied()).collect();
        let scopes: Vec<Scope> = visible.iter().cloned().collect();
        let all = resolutions::for_signatures(&self.db, &who.tenant_id, &ids, &scopes).await?;
        let mut shown_lineages: HashSet<Uuid> = HashSet::new();
        let (mut matched, mut related) = (Vec::new(), Vec::new());
        for Answer { mut found, ids, .. } in answers {
            let mine: Vec<Resolution> = all
                .iter()
                .filter(|r| {
                    ids.contains(&r.signature_id) || r.examples.iter().any(|e| ids.contains(e))
                })
                .cloned()
                .collect();
            found.resolutions = rank_resolutions(mine);
            let lineages: Vec<Uuid> = found.resolutions.iter().map(|r| r.origin_id).collect();
            if !lineages.is_empty() && lineages.iter().all(|l| shown_lineages.contains(l)) {
                continue;
            }
            shown_lineages.extend(lineages);
            if matched.len() + related.len() == limit {
                break;
            }
            if found.score >= threshold {
                matched.push(found);
            } else {
                related.push(found);
            }
        }
        // `matched` is safe to apply: best score first.
        matched.sort_by(|a, b| b.score.total_cmp(&a.score));
        for signature in &mut queried {
            signature.embedding = None;
        }
        let status = if matched.is_empty() {
            QueryStatus::NoKnownResolution
        } else {
            QueryStatus::Matched
        };
        tracing::debug!(
            form = form.as_str(),
            matched = matched.len(),
            related = related.len(),
            "hindsight query"
        );
        Ok(QueryOutcome {
            status,
            form,
            threshold,
            matched,
            related,
            queried,
            closest_score: closest,
        })
    }
}
