//! A readable export: one Markdown file per memory (its current version), with YAML front
//! matter, in a folder per layer and scope:
//!
//! ```text
//! DIR/project/aeterna/the-canary-runs-before-every-deploy-3f9c2a1b.md
//! ```
//!
//! ```markdown
//! ---
//! id: "0199…"
//! layer: "project"
//! scope: "aeterna"
//! kind: "memory"
//! tags: ["deploy"]
//! created_at: "2026-01-05T10:00:00.000Z"
//! updated_at: "2026-01-05T10:00:00.000Z"
//! valid_from: "2026-01-05T10:00:00.000Z"
//! version: 1
//! metadata: {}
//! ---
//! The canary runs before every deploy.
//! ```
//!
//! Every front-matter value is written as JSON, which is YAML too, so any YAML reader parses
//! it and no content can break out of it. Pages of [`super::BATCH`] memories are read and
//! written in turn (never the whole tenant), into `DIR.partial`, renamed to `DIR` at the end.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::export::{begin_snapshot, memory_page};
use super::{MEMORIES, Phase, Progress};
use crate::error::{MemoryError, Result};
use crate::model::{MemoryRecord, Timestamp};
use crate::storage::Database;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkdownReport {
    pub files: u64,
    pub dir: PathBuf,
}

/// Writes the memories of `tenant_id` in `db` as Markdown files under `to`, which must not
/// exist (or be empty).
pub async fn export_markdown(
    db: &Database,
    tenant_id: &str,
    to: &Path,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<MarkdownReport> {
    if tenant_id.trim().is_empty() {
        return Err(MemoryError::invalid("the tenant to export is empty"));
    }
    let io = |what: String| {
        move |error: std::io::Error| MemoryError::invalid(format!("{what}: {error}"))
    };
    if to.exists() {
        let empty = std::fs::read_dir(to)
            .map_err(io(format!("cannot read {}", to.display())))?
            .next()
            .is_none();
        if !empty {
            return Err(MemoryError::invalid(format!(
                "{} already exists and is not empty; export to a new folder",
                to.display()
            )));
        }
    }
    let partial = super::partial_path(to);
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(io(format!(
            "cannot remove the unfinished {}",
            partial.display()
        )))?;
    }
    std::fs::create_dir_all(&partial)
        .map_err(io(format!("cannot create {}", partial.display())))?;

    let mut tx = begin_snapshot(db).await?;
    let (mut after, mut files) = (0, 0u64);
    loop {
        let page = memory_page(&mut tx, tenant_id, after).await?;
        let Some(&(last, _, _)) = page.last() else {
            break;
        };
        after = last;
        let documents: Vec<(PathBuf, String)> = page
            .into_iter()
            .map(|(_, record, _)| (partial.join(file_path(&record)), document(&record)))
            .collect();
        files += documents.len() as u64;
        tokio::task::spawn_blocking(move || -> std::io::Result<()> {
            for (path, text) in documents {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::write(path, text)?;
            }
            Ok(())
        })
        .await
        .map_err(|error| MemoryError::storage("writing Markdown files", error))?
        .map_err(io(format!("cannot write into {}", partial.display())))?;
        progress(Progress {
            phase: Phase::Export,
            table: MEMORIES,
            done: files,
            total: files,
        });
    }
    let _ = tx.rollback().await;
    if to.exists() {
        std::fs::remove_dir(to).map_err(io(format!("cannot replace {}", to.display())))?;
    }
    std::fs::rename(&partial, to).map_err(io(format!(
        "cannot rename {} to {}",
        partial.display(),
        to.display()
    )))?;
    Ok(MarkdownReport {
        files,
        dir: to.to_path_buf(),
    })
}

/// `<layer>/<scope>/<slug>-<id suffix>.md`.
pub(crate) fn file_path(record: &MemoryRecord) -> PathBuf {
    let suffix = record.id.simple().to_string();
    let suffix = &suffix[suffix.len() - 8..];
    let content = record.content.as_deref().unwrap_or_default();
    PathBuf::from(record.layer.as_str())
        .join(folder_name(&record.scope_id))
        .join(format!("{}-{suffix}.md", slug(content, 8, 60)))
}

/// The first `words` words of `text`, lower-cased ASCII letters and digits joined by `-`, at
/// most `max` bytes; `memory` when none.
pub(crate) fn slug(text: &str, words: usize, max: usize) -> String {
    let mut out = String::new();
    for word in text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(words)
    {
        let word = word.to_ascii_lowercase();
        if out.len() + word.len() + 1 > max {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word);
    }
    if out.is_empty() {
        out.push_str("memory");
    }
    out
}

/// A scope id as one folder name: kept when it is plain (letters, digits, `.`, `_`, `-`, not
/// starting with `.`), else made plain and suffixed with a hash so two scopes never share one.
fn folder_name(scope_id: &str) -> String {
    let plain = !scope_id.is_empty()
        && scope_id.len() <= 80
        && !scope_id.starts_with('.')
        && scope_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if plain {
        return scope_id.to_owned();
    }
    let hash = hex::encode(&Sha256::digest(scope_id.as_bytes())[..4]);
    format!("{}-{hash}", slug(scope_id, 8, 60))
}

fn time(ms: Timestamp) -> Value {
    match chrono::DateTime::from_timestamp_millis(ms) {
        Some(at) => Value::String(at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        None => Value::from(ms),
    }
}

/// The file of one memory: front matter and content.
pub(crate) fn document(record: &MemoryRecord) -> String {
    let json = |value: Value| value.to_string();
    let mut out = String::from("---\n");
    for (key, value) in [
        ("id", Value::String(record.id.to_string())),
        ("layer", Value::String(record.layer.as_str().into())),
        ("scope", Value::String(record.scope_id.clone())),
        ("kind", Value::String(record.kind.clone())),
        ("tags", Value::from(record.tags.clone())),
        ("created_at", time(record.created_at)),
        ("updated_at", time(record.updated_at)),
        ("valid_from", time(record.valid_from)),
        ("version", Value::from(record.version)),
        ("metadata", record.metadata.clone()),
    ] {
        out.push_str(key);
        out.push_str(": ");
        out.push_str(&json(value));
        out.push('\n');
    }
    out.push_str("---\n");
    let content = record.content.as_deref().unwrap_or_default();
    out.push_str(content);
    if !content.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_folders_are_plain_and_distinct() {
        assert_eq!(
            slug("The canary runs, before: deploys!", 8, 60),
            "the-canary-runs-before-deploys"
        );
        assert_eq!(slug("ÄÖÜ ...", 8, 60), "memory");
        assert_eq!(slug("aaaa bbbb cccc", 8, 9), "aaaa-bbbb");
        assert_eq!(folder_name("aeterna"), "aeterna");
        assert_ne!(folder_name("a/b"), folder_name("a b"));
        assert!(!folder_name("../etc").contains('/'));
        assert!(!folder_name("..").starts_with('.'));
    }
}
