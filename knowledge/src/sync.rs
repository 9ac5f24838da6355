//! From the repository into memory: every item in force on the branch is one memory of kind
//! [`KIND`] in the repository's scope, so search, context assembly and Hindsight find it.
//!
//! A sync compares the branch's blobs with the `knowledge.blob` each memory records: a new
//! item is added, a changed one updated in place (same memory id; the memory's other metadata
//! — its statistics — is kept, the repository wins for content), an item deleted or no longer
//! in force retires its memory, and the rest is not touched. Running it twice changes nothing.

use std::collections::HashMap;

use aeterna_memory::{
    COMPANY_SCOPE, Identity, Layer, ListRequest, MemoryError, MemoryPatch, MemoryRecord,
    MemoryService, NewMemory, Scope,
};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::error::{KnowledgeError, Result};
use crate::item::KnowledgeItem;
use crate::repo::{Entry, Problem, Snapshot};

/// The memory kind of knowledge items.
pub const KIND: &str = aeterna_memory::kind::KNOWLEDGE;
/// The tag every knowledge memory carries.
pub const TAG: &str = "knowledge";
/// Memories written per batch.
const BATCH: usize = 256;

/// The scope a repository's items live in, in one tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncTarget {
    pub tenant_id: String,
    pub layer: Layer,
    /// The layer's scope id; `None` for `company`.
    pub scope: Option<String>,
}

impl SyncTarget {
    /// The identity the sync acts as: the repository's scope in its tenant.
    fn identity(&self) -> Identity {
        let scope_id = self
            .scope
            .clone()
            .unwrap_or_else(|| COMPANY_SCOPE.to_owned());
        Identity::owning(&self.tenant_id, &Scope::new(self.layer, scope_id))
    }
}

/// What a sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// The commit synced.
    pub commit: Option<String>,
    pub added: usize,
    pub updated: usize,
    pub retired: usize,
    pub unchanged: usize,
    /// Items left out of memory, each with the reason (the rest was synced).
    pub problems: Vec<Problem>,
}

/// A knowledge memory already stored, by item id.
struct Stored {
    id: Uuid,
    blob: String,
    metadata: Value,
}

/// Brings memory in line with `snapshot` (the repository's branch) for `target`.
pub async fn sync_into_memory(
    memory: &MemoryService,
    target: &SyncTarget,
    snapshot: &Snapshot,
    max_items: usize,
) -> Result<SyncReport> {
    let who = target.identity();
    let mut stored = stored_items(memory, &who, target.layer, max_items).await?;
    let mut report = SyncReport {
        commit: snapshot.commit.clone(),
        problems: snapshot.problems.clone(),
        ..SyncReport::default()
    };
    let max_content = memory.config().max_content_bytes;
    let mut new = Vec::new();
    for entry in &snapshot.entries {
        let item = &entry.item;
        if let Err(reason) = belongs(item, target) {
            report.problems.push(Problem {
                path: entry.path.clone(),
                message: reason,
            });
            continue;
        }
        if !item.front.status.in_force() {
            continue;
        }
        let content = memory_text(item);
        if content.len() > max_content {
            report.problems.push(Problem {
                path: entry.path.clone(),
                message: format!(
                    "{} bytes as a memory, more than `memory.max_content_bytes` ({max_content})",
                    content.len()
                ),
            });
            continue;
        }
        match stored.remove(item.id()) {
            Some(existing) if existing.blob == entry.blob => report.unchanged += 1,
            Some(existing) => {
                let patch = MemoryPatch {
                    content: Some(content),
                    tags: Some(tags(item)),
                    metadata: Some(with_link(existing.metadata, entry, snapshot)),
                    mode: None,
                    valid_from: None,
                };
                match memory.update(&who, existing.id, patch).await {
                    Ok(_) => report.updated += 1,
                    Err(MemoryError::InvalidInput(reason)) => {
                        report.problems.push(refused(entry, &reason));
                    }
                    Err(error) => return Err(memory_error("updating", item.id())(error)),
                }
            }
            None => new.push((
                entry,
                NewMemory {
                    layer: target.layer,
                    content,
                    tags: tags(item),
                    metadata: with_link(json!({}), entry, snapshot),
                    kind: Some(KIND.to_owned()),
                },
            )),
        }
    }
    for batch in new.chunks(BATCH) {
        let memories = batch.iter().map(|(_, new)| new.clone()).collect();
        let outcomes = match memory.add_batch(&who, memories).await {
            Ok(outcomes) => outcomes.into_iter().map(Ok).collect(),
            // One item memory refuses (a tag too long, say) must not keep the rest out: the
            // batch is added again item by item, and the refused ones reported.
            Err(MemoryError::InvalidInput(_)) => {
                let mut outcomes = Vec::with_capacity(batch.len());
                for (_, new) in batch {
                    outcomes.push(match memory.add(&who, new.clone()).await {
                        Ok(outcome) => Ok(outcome),
                        Err(MemoryError::InvalidInput(reason)) => Err(reason),
                        Err(error) => return Err(memory_error("adding", "an item")(error)),
                    });
                }
                outcomes
            }
            Err(error) => return Err(memory_error("adding", "a batch of items")(error)),
        };
        for ((entry, _), outcome) in batch.iter().zip(outcomes) {
            match outcome {
                Ok(outcome) if outcome.deduplicated => report.problems.push(Problem {
                    path: entry.path.clone(),
                    message: format!(
                        "says exactly what memory {} already says; it is not stored twice",
                        outcome.record.id
                    ),
                }),
                Ok(_) => report.added += 1,
                Err(reason) => report.problems.push(refused(entry, &reason)),
            }
        }
    }
    // What is left was deleted from the branch, or is no longer in force.
    for (item_id, gone) in stored {
        memory
            .delete(&who, gone.id)
            .await
            .map_err(memory_error("retiring", &item_id))?;
        report.retired += 1;
    }
    tracing::info!(
        tenant = %target.tenant_id,
        layer = target.layer.as_str(),
        added = report.added,
        updated = report.updated,
        retired = report.retired,
        unchanged = report.unchanged,
        problems = report.problems.len(),
        "knowledge synced into memory"
    );
    Ok(report)
}

/// An item memory refused, with memory's reason (which names the limit).
fn refused(entry: &Entry, reason: &str) -> Problem {
    Problem {
        path: entry.path.clone(),
        message: format!("memory refuses it: {reason}"),
    }
}

/// The knowledge memories of the target's scope, by item id.
async fn stored_items(
    memory: &MemoryService,
    who: &Identity,
    layer: Layer,
    max_items: usize,
) -> Result<HashMap<String, Stored>> {
    let mut stored = HashMap::new();
    let mut cursor = None;
    loop {
        let page = memory
            .list(
                who,
                ListRequest {
                    layers: Some(vec![layer]),
                    tags: Vec::new(),
                    kinds: vec![KIND.to_owned()],
                    cursor,
                    limit: memory.config().max_page_size,
                    metadata_only: true,
                },
            )
            .await
            .map_err(memory_error("listing", "knowledge memories"))?;
        for record in page.items {
            if let Some((item_id, known)) = stored_item(record) {
                stored.insert(item_id, known);
            }
        }
        // Twice the repository's limit: what a sync may have to retire after a large delete.
        if stored.len() > max_items.saturating_mul(2) {
            return Err(KnowledgeError::Limit(format!(
                "memory holds more than {} knowledge items for this scope \
                 (twice `knowledge.max_items`)",
                max_items.saturating_mul(2)
            )));
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(stored),
        }
    }
}

fn stored_item(record: MemoryRecord) -> Option<(String, Stored)> {
    let link = record.metadata.get("knowledge")?;
    let item_id = link.get("id")?.as_str()?.to_owned();
    let blob = link.get("blob")?.as_str()?.to_owned();
    Some((
        item_id,
        Stored {
            id: record.id,
            blob,
            metadata: record.metadata,
        },
    ))
}

/// Whether an item on this repository's branch is in its scope.
fn belongs(item: &KnowledgeItem, target: &SyncTarget) -> std::result::Result<(), String> {
    if item.front.layer == target.layer && item.front.scope == target.scope {
        return Ok(());
    }
    let scope = |layer: Layer, scope: &Option<String>| match scope {
        Some(scope) => format!("{} `{scope}`", layer.as_str()),
        None => layer.as_str().to_owned(),
    };
    Err(format!(
        "it is for {} but this repository holds {}'s knowledge; move it to that repository",
        scope(item.front.layer, &item.front.scope),
        scope(target.layer, &target.scope)
    ))
}

/// What memory stores for an item: its title, description and body.
pub fn memory_text(item: &KnowledgeItem) -> String {
    let mut text = item.front.title.trim().to_owned();
    if let Some(description) = &item.front.description {
        text.push_str("\n\n");
        text.push_str(description.trim());
    }
    let body = item.body.trim();
    if !body.is_empty() {
        text.push_str("\n\n");
        text.push_str(body);
    }
    text
}

fn tags(item: &KnowledgeItem) -> Vec<String> {
    let mut tags = vec![TAG.to_owned(), format!("knowledge:{}", item.front.kind)];
    for tag in &item.front.tags {
        if !tags.contains(tag) {
            tags.push(tag.clone());
        }
    }
    tags
}

/// The memory's metadata with its link to the item replaced: everything else it holds (the
/// statistics other agents keep) stays.
fn with_link(metadata: Value, entry: &Entry, snapshot: &Snapshot) -> Value {
    let mut metadata = match metadata {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    metadata.insert(
        "knowledge".into(),
        json!({
            "id": entry.item.id(),
            "type": entry.item.front.kind.as_str(),
            "path": entry.path,
            "blob": entry.blob,
            "commit": snapshot.commit,
        }),
    );
    Value::Object(metadata)
}

fn memory_error(
    doing: &'static str,
    what: &str,
) -> impl FnOnce(aeterna_memory::MemoryError) -> KnowledgeError {
    let doing = format!("{doing} {what}");
    move |source| KnowledgeError::Memory { doing, source }
}
