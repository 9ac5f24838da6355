//! Promoted fixes, announced as lessons to the learned sink (the knowledge repositories, when
//! the server has them): a fix that proved itself often enough to move into a broader layer is
//! what a team wants reviewed and kept in its repository. The announcement happens after the
//! promotion is committed and never fails it.

use std::fmt::Write;
use std::sync::Arc;

use aeterna_memory::learned::{Learned, LearnedKind, LearnedSink, LearnedSource};
use aeterna_memory::{Identity, Scope};

use crate::model::{Resolution, StoredSignature};
use crate::notes;
use crate::service::{HindsightService, actor};

/// Longest lesson title, in characters; the whole message is in the body.
const MAX_TITLE_CHARS: usize = 120;

/// Who decided a promotion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decided<'a> {
    /// It met the promotion rules and went straight through.
    Automatically,
    /// An approver approved it.
    ApprovedBy(&'a str),
}

impl HindsightService {
    /// Where promoted fixes are announced (once; later calls are ignored).
    pub fn set_learned_sink(&self, sink: Arc<dyn LearnedSink>) {
        let _ = self.learned.set(sink);
    }

    /// Announces `resolution`, a promoted copy, as a lesson of its (broader) scope.
    pub(crate) async fn announce_promoted(
        &self,
        who: &Identity,
        signature: &StoredSignature,
        resolution: &Resolution,
        decided: Decided<'_>,
    ) {
        let Some(sink) = self.learned.get() else {
            return;
        };
        sink.learned(lesson(who, signature, resolution, decided))
            .await;
    }
}

fn lesson(
    who: &Identity,
    signature: &StoredSignature,
    resolution: &Resolution,
    decided: Decided<'_>,
) -> Learned {
    let sig = &signature.signature;
    let scope = Scope::new(resolution.layer, resolution.scope_id.clone());
    let mut title = format!("{}: {}", sig.error_type, sig.message_pattern);
    if let Some((cut, _)) = title.char_indices().nth(MAX_TITLE_CHARS) {
        title.truncate(cut);
        title.push('…');
    }
    let mut why = format!(
        "A fix for {} `{}` proved itself and was promoted into {} `{}`: applied {} times, {:.0}% \
         successful",
        sig.language,
        sig.error_type,
        scope.layer,
        scope.scope_id,
        resolution.application_count,
        resolution.success_rate * 100.0
    );
    let by = match decided {
        Decided::Automatically => {
            why.push_str(" (promoted automatically by the promotion rules).");
            actor(who)
        }
        Decided::ApprovedBy(approver) => {
            let _ = write!(why, " (approved by {approver}).");
            approver.to_owned()
        }
    };
    let mut sources = vec![
        LearnedSource {
            kind: "resolution",
            id: resolution.id.to_string(),
        },
        LearnedSource {
            kind: "signature",
            id: signature.id.to_string(),
        },
    ];
    if let Some(from) = resolution.promoted_from {
        sources.push(LearnedSource {
            kind: "resolution",
            id: from.to_string(),
        });
    }
    Learned {
        kind: LearnedKind::Lesson,
        tenant_id: who.tenant_id.clone(),
        scope,
        key: resolution.origin_id.to_string(),
        title,
        description: Some(first_sentence(&resolution.description)),
        body: notes::render_sections(signature, resolution),
        tags: vec!["hindsight".into(), sig.language.to_string()],
        sources,
        why,
        by,
        quality: None,
    }
}

/// The fix's first sentence (or line), for the item's description.
fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let line = text.lines().next().unwrap_or_default();
    let end = line
        .find(". ")
        .map(|at| at + 1)
        .unwrap_or(line.len())
        .min(300);
    let end = (0..=end)
        .rev()
        .find(|at| line.is_char_boundary(*at))
        .unwrap_or(0);
    line[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn description_is_the_first_sentence() {
        assert_eq!(
            first_sentence("Borrow it. Then clone.\nMore."),
            "Borrow it."
        );
        assert_eq!(first_sentence("  one line  "), "one line");
        assert_eq!(first_sentence(""), "");
        let long = "é".repeat(400);
        assert!(first_sentence(&long).len() <= 300);
    }
}
