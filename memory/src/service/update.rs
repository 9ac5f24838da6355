//! [`MemoryService::update`] and [`MemoryService::history`]: facts that change over time.
//!
//! A supersede keeps what it replaces: the current version closes at the time the change took
//! effect (`valid_from`, now unless the caller says when) and stays readable through
//! [`MemoryService::history`] and searches `as_of` an earlier time; a fix rewrites in place.
//! Without a `mode`, a client's facts (kind `memory`) whose content or metadata change are
//! superseded and everything else is fixed: the agents' own kinds (notes, lessons, knowledge)
//! keep their lineage elsewhere.

use uuid::Uuid;

use super::{MemoryService, entry_of};
use crate::error::{MemoryError, Result};
use crate::model::{
    Identity, MemoryHistory, MemoryPatch, MemoryRecord, UpdateMode, kind, now_millis,
};
use crate::storage::{ContentChange, NewVersion, RecordChange, UpdateOutcome};
use crate::validate;

impl MemoryService {
    /// Applies `patch`, re-embedding when the content changes; see the module documentation
    /// for what is kept.
    pub async fn update(
        &self,
        who: &Identity,
        id: Uuid,
        patch: MemoryPatch,
    ) -> Result<MemoryRecord> {
        let tenant_id = validate::tenant(who)?;
        if patch.content.is_none() && patch.tags.is_none() && patch.metadata.is_none() {
            return Err(MemoryError::invalid(
                "nothing to update: pass at least one of `content`, `tags` or `metadata`",
            ));
        }
        let current = self.get(who, id).await?;
        let now = now_millis();
        let content = match patch.content {
            Some(content) => {
                validate::content("content", &content, &self.config)?;
                let content = if self.config.redact_secrets {
                    validate::redacted("content", content)
                } else {
                    content
                };
                let content_hash = validate::content_hash(&content);
                if content_hash == current.content_hash {
                    None
                } else {
                    let vector = self
                        .embed(&[content.as_str()])
                        .await?
                        .pop()
                        .expect("one vector");
                    Some(ContentChange {
                        content_hash,
                        content,
                        vector,
                    })
                }
            }
            None => None,
        };
        let metadata = patch
            .metadata
            .map(|m| validate::metadata("metadata", m, &self.config))
            .transpose()?
            .map(|m| {
                if self.config.redact_secrets {
                    validate::redacted_metadata(m)
                } else {
                    m
                }
            })
            .filter(|m| *m != current.metadata);
        let changes_the_fact = content.is_some() || metadata.is_some();
        let mode = patch.mode.unwrap_or(if current.kind == kind::MEMORY {
            UpdateMode::Supersede
        } else {
            UpdateMode::Fix
        });
        let new_version = match mode {
            UpdateMode::Supersede if changes_the_fact => Some(NewVersion {
                valid_from: valid_from(patch.valid_from, &current, now)?,
                keep: self.config.max_versions_per_memory,
            }),
            UpdateMode::Supersede => None,
            UpdateMode::Fix if patch.valid_from.is_some() => {
                return Err(MemoryError::invalid(
                    "`valid_from` says when a superseding change took effect; a `fix` keeps \
                     the version's time. Leave `valid_from` out or use `mode: \"supersede\"`",
                ));
            }
            UpdateMode::Fix => None,
        };
        let change = RecordChange {
            tags: patch
                .tags
                .map(|tags| validate::tags("tags", &tags, &self.config))
                .transpose()?,
            metadata,
            updated_at: now,
            content,
            new_version,
        };
        let new_vector = change.content.as_ref().map(|c| c.vector.clone());

        let _write = self.writes.lock().await;
        let record = match self.records.update(tenant_id, id, change).await? {
            UpdateOutcome::Updated(record) => *record,
            UpdateOutcome::NotFound => return Err(MemoryError::NotFound(id.to_string())),
            UpdateOutcome::Duplicate { existing } => {
                return Err(MemoryError::invalid(format!(
                    "`content` is identical to memory `{existing}` in the same scope; update or delete that one instead"
                )));
            }
        };
        let vectors = self.vectors.as_ref();
        let indexed = async {
            match new_vector {
                Some(vector) => {
                    vectors
                        .upsert(tenant_id, vec![entry_of(&record, vector)])
                        .await
                }
                None => vectors.retag(tenant_id, id, record.tags.clone()).await,
            }
        };
        self.writes.apply_to_vectors(indexed).await;
        drop(_write);
        self.notify(&record);
        Ok(record)
    }

    /// Every version of memory `id`: the current one, then each closed version, newest first
    /// (at most `max_versions_per_memory` of them are kept).
    pub async fn history(&self, who: &Identity, id: Uuid) -> Result<MemoryHistory> {
        let tenant_id = validate::tenant(who)?;
        let current = self.get(who, id).await?;
        let past = self
            .records
            .versions(tenant_id, id, self.config.max_versions_per_memory)
            .await?;
        let mut versions = Vec::with_capacity(past.len() + 1);
        versions.push(current);
        versions.extend(past);
        Ok(MemoryHistory { id, versions })
    }
}

/// When a supersede takes effect: `asked` when it lies between the current version's start and
/// now, now when not asked.
fn valid_from(asked: Option<i64>, current: &MemoryRecord, now: i64) -> Result<i64> {
    let Some(at) = asked else {
        return Ok(now.max(current.valid_from + 1));
    };
    if at <= current.valid_from || at > now {
        return Err(MemoryError::invalid(format!(
            "`valid_from` is {at}; a change takes effect after the current version's \
             `valid_from` ({}) and no later than now ({now}), in ms since the epoch",
            current.valid_from
        )));
    }
    Ok(at)
}
