//! Importers from other tools' memory (`aeterna import --format …`), one module each:
//!
//! * [`Source::McpMemory`] — the official MCP memory server's JSON Lines file
//!   (`@modelcontextprotocol/server-memory`, `memory.jsonl`): one memory per entity (its name
//!   and type, then one observation per line; the type as a tag) and one per relation
//!   (`from relationType to`, tagged `relation`).
//! * [`Source::BasicMemory`] — a basic-memory project folder: one memory per Markdown file
//!   (title, then the body as written); front matter `tags` become tags, and `title`,
//!   `type`, `permalink`, the path, the `- [category] observation` lines and the
//!   `- relation [[Target]]` lines go into metadata.
//! * [`Source::Mem0`] — Mem0's export JSON (`{"results": [...]}` or a bare list): one memory
//!   per entry, `categories` as tags, the entry's metadata kept and its `id`, `user_id`,
//!   `agent_id`, `created_at` and `updated_at` added to it. The record's own `created_at` is
//!   the time of the import; the original `created_at` in metadata dates the memory for
//!   time-aware search (`retrieval::time`).
//!
//! Each file is read on a blocking thread and streamed (lines, files, or array entries one
//! at a time) into [`MemoryService::add_batch`] in batches of [`ADD_BATCH`], under the
//! identity and layer the caller names: redaction, validation, deduplication and embedding
//! apply as to any add. Every memory's metadata says `"source"`. Errors name the file, the
//! line, entry or file, and the field; the first one stops the import (the batches before it
//! are stored, and importing the fixed file again stores only what is new).

mod basic_memory;
mod mcp_memory;
mod mem0;

use std::path::Path;

use tokio::sync::mpsc;

use crate::error::{MemoryError, Result};
use crate::model::{Identity, Layer, NewMemory};
use crate::service::MemoryService;

/// Memories added per call.
pub const ADD_BATCH: usize = 100;

/// Which tool wrote the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    McpMemory,
    BasicMemory,
    Mem0,
}

/// What an import from another tool did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ForeignReport {
    /// Entities, relations, files or entries read.
    pub read: u64,
    /// Memories stored.
    pub added: u64,
    /// Items whose content was already stored in the scope (nothing written).
    pub duplicates: u64,
}

/// One memory to add, and where it came from (`FILE line 3`, `FILE entry 2`, a file).
pub(crate) struct Entry {
    pub origin: String,
    pub memory: NewMemory,
}

/// A memory of the default kind in `layer`.
pub(crate) fn new_memory(
    layer: Layer,
    content: String,
    tags: Vec<String>,
    metadata: serde_json::Value,
) -> NewMemory {
    NewMemory {
        layer,
        content,
        tags,
        metadata,
        kind: None,
    }
}

/// Imports `from` (written by `source`) into `who`'s scope of `layer`; `progress` gets the
/// number of items read after every batch.
pub async fn import(
    service: &MemoryService,
    who: &Identity,
    layer: Layer,
    source: Source,
    from: &Path,
    mut progress: impl FnMut(u64),
) -> Result<ForeignReport> {
    let (sender, mut entries) = mpsc::channel::<Result<Entry>>(2 * ADD_BATCH);
    let path = from.to_path_buf();
    let reader = tokio::task::spawn_blocking(move || {
        let mut send = |entry: Entry| sender.blocking_send(Ok(entry)).is_ok();
        let read = match source {
            Source::McpMemory => mcp_memory::read(&path, layer, &mut send),
            Source::BasicMemory => basic_memory::read(&path, layer, &mut send),
            Source::Mem0 => mem0::read(&path, layer, &mut send),
        };
        if let Err(error) = read {
            let _ = sender.blocking_send(Err(error));
        }
    });
    let mut report = ForeignReport::default();
    let mut batch = Vec::with_capacity(ADD_BATCH);
    while let Some(entry) = entries.recv().await {
        batch.push(entry?);
        if batch.len() == ADD_BATCH {
            add(service, who, &mut batch, &mut report).await?;
            progress(report.read);
        }
    }
    add(service, who, &mut batch, &mut report).await?;
    progress(report.read);
    let _ = reader.await;
    Ok(report)
}

async fn add(
    service: &MemoryService,
    who: &Identity,
    batch: &mut Vec<Entry>,
    report: &mut ForeignReport,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let items = batch.iter().map(|e| e.memory.clone()).collect();
    let outcomes = service
        .add_batch(who, items)
        .await
        .map_err(|error| locate(error, batch))?;
    report.read += outcomes.len() as u64;
    for outcome in outcomes {
        if outcome.deduplicated {
            report.duplicates += 1;
        } else {
            report.added += 1;
        }
    }
    batch.clear();
    Ok(())
}

/// An `items[i].field` error of `add_batch`, told with the item's origin instead.
fn locate(error: MemoryError, batch: &[Entry]) -> MemoryError {
    let MemoryError::InvalidInput(message) = &error else {
        return error;
    };
    let Some(at) = message.find("items[") else {
        return error;
    };
    let rest = &message[at + "items[".len()..];
    let Some((index, _)) = rest.split_once(']') else {
        return error;
    };
    let Some(entry) = index.parse::<usize>().ok().and_then(|i| batch.get(i)) else {
        return error;
    };
    let message = message.replacen(&format!("items[{index}]."), "", 1);
    MemoryError::invalid(format!("{}: {message}", entry.origin))
}

/// The error for a missing or mistyped field of an item.
pub(crate) fn field_error(origin: &str, field: &str, expected: &str) -> MemoryError {
    MemoryError::invalid(format!("{origin}: `{field}` must be {expected}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_error_names_the_items_origin() {
        let entry = |origin: &str| Entry {
            origin: origin.into(),
            memory: new_memory(Layer::User, "x".into(), Vec::new(), serde_json::Value::Null),
        };
        let batch = [entry("a.jsonl line 1"), entry("a.jsonl line 2")];
        let error = locate(
            MemoryError::invalid("`items[1].content` is empty; a memory needs some text"),
            &batch,
        );
        assert_eq!(
            error.to_string(),
            "a.jsonl line 2: `content` is empty; a memory needs some text"
        );
    }
}
