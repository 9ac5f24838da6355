//! Memory → repository: what the agents learn becomes a proposal for review, by the rules of
//! the repository that holds the learned thing's scope (`[knowledge.repositories.capture]`).
//!
//! A lesson (a fix Hindsight promoted) or a note (distilled from a session) becomes one item,
//! committed on its review branch `aeterna/proposals/<id>` and pushed to the repository's
//! remote when it has one — never the protected branch: a person merges it, and the merge is
//! synced back into memory like any other edit. Announcing the same thing again (a lesson
//! promoted again, its track record grown) updates that branch; an unchanged item makes no
//! commit. A failure never reaches the agent that learned: it is logged and kept in the
//! repository's status (`last_capture_error`).

use aeterna_memory::learned::{Learned, LearnedKind, LearnedSink};

use crate::error::Result;
use crate::item::{ItemType, KnowledgeItem, MAX_ID_BYTES, Source, Status, slug};
use crate::repo::Author;
use crate::service::{KnowledgeService, Repository};
use crate::tools::{ProposalReceipt, commit_proposal, repository_scope};

#[async_trait::async_trait]
impl LearnedSink for KnowledgeService {
    async fn learned(&self, learned: Learned) {
        let Some(repository) = self.capturing(&learned) else {
            return;
        };
        let result = capture(repository, &learned).await;
        match &result {
            Ok(receipt) => tracing::info!(
                tenant = %learned.tenant_id,
                repository = %repository.config.path.display(),
                branch = %receipt.branch,
                commit = %receipt.commit,
                "learned {} proposed for review",
                kind_name(learned.kind)
            ),
            Err(error) => tracing::warn!(
                tenant = %learned.tenant_id,
                repository = %repository.config.path.display(),
                %error,
                "cannot propose a learned {}; it stays in memory only",
                kind_name(learned.kind)
            ),
        }
        repository.record_capture(result.map_err(|error| error.to_string()));
    }
}

impl KnowledgeService {
    /// The repository whose rules take `learned`, if any.
    fn capturing(&self, learned: &Learned) -> Option<&Repository> {
        self.repositories().iter().find(|repository| {
            let rules = &repository.config.capture;
            let wanted = match learned.kind {
                LearnedKind::Lesson => rules.lessons,
                LearnedKind::Note => {
                    rules.notes && learned.quality.unwrap_or(0.0) >= rules.min_note_quality
                }
            };
            wanted
                && repository.config.tenant == learned.tenant_id
                && repository_scope(repository) == learned.scope
        })
    }
}

async fn capture(repository: &Repository, learned: &Learned) -> Result<ProposalReceipt> {
    let item = item_for(repository, learned)?;
    let agent = match learned.kind {
        LearnedKind::Lesson => "Hindsight",
        LearnedKind::Note => "Note-Taking",
    };
    let author = Author {
        name: format!("Aeterna {agent}"),
        email: format!("{}@{}.aeterna", slug(agent), slug(&learned.tenant_id)),
    };
    let message = format!(
        "propose {}: {}\n\n{}\n\nLearned by the {agent} agent ({}).",
        item.front.kind,
        learned.title.trim(),
        learned.why.trim(),
        learned.by
    );
    commit_proposal(repository, item, author, message).await
}

fn item_for(repository: &Repository, learned: &Learned) -> Result<KnowledgeItem> {
    let kind = match learned.kind {
        LearnedKind::Lesson => ItemType::Lesson,
        LearnedKind::Note => ItemType::Note,
    };
    let mut item = KnowledgeItem::new(
        item_id(&learned.title, &learned.key),
        kind,
        learned.title.trim(),
        repository.config.layer,
        repository.config.scope.clone(),
        format!("{}\n", learned.body.trim_end()),
    );
    item.front.description = learned.description.clone();
    item.front.tags = learned.tags.clone();
    item.front.sources = learned
        .sources
        .iter()
        .map(|source| Source {
            kind: source.kind.to_owned(),
            id: source.id.clone(),
        })
        .collect();
    item.front.status = Status::Accepted;
    item.validate()?;
    Ok(item)
}

/// The title's slug and 8 hex digits of the key: readable, and stable for one learned thing.
fn item_id(title: &str, key: &str) -> String {
    let mut id = slug(title);
    id.truncate(MAX_ID_BYTES - 9);
    let id = id.trim_end_matches(['-', '_', '.']);
    format!("{id}-{:08x}", fnv1a(key.as_bytes()))
}

/// 32-bit FNV-1a: a stable hash (std's hashers may change between releases).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, byte| {
        (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
    })
}

fn kind_name(kind: LearnedKind) -> &'static str {
    match kind {
        LearnedKind::Lesson => "lesson",
        LearnedKind::Note => "note",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::check_id;

    #[test]
    fn ids_are_valid_stable_and_differ_by_key() {
        let a = item_id("E0308: mismatched types — expected `u32`", "0190-a");
        assert_eq!(
            a,
            item_id("E0308: mismatched types — expected `u32`", "0190-a")
        );
        assert_ne!(
            a,
            item_id("E0308: mismatched types — expected `u32`", "0190-b")
        );
        assert!(a.starts_with("e0308-mismatched-types-expected-u32-"), "{a}");
        check_id(&a).unwrap();
        let long = item_id(&"word ".repeat(100), "k");
        check_id(&long).unwrap();
        check_id(&item_id("", "k")).unwrap();
        check_id(&item_id("—", "k")).unwrap();
    }
}
