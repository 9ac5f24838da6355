//! The knowledge section of `AGENTS.md` / `CLAUDE.md`: between two marker lines, rewritten
//! whole; everything outside them is kept byte for byte.

use std::path::Path;

use super::{ExportOptions, FileChange, Plan, read_existing};
use crate::error::{KnowledgeError, Result};
use crate::item::{ItemType, KnowledgeItem};

const BEGIN: &str = "<!-- aeterna:knowledge:begin — written by `aeterna knowledge export`; \
                     edit the knowledge repository, not this section -->";
/// What identifies the opening marker (its wording may change between versions).
const BEGIN_PREFIX: &str = "<!-- aeterna:knowledge:begin";
const END: &str = "<!-- aeterna:knowledge:end -->";

pub(super) fn is_marker(line: &str) -> bool {
    line.starts_with(BEGIN_PREFIX) || line.starts_with(END)
}

pub(super) fn plan(path: &Path, items: &[&KnowledgeItem], options: &ExportOptions) -> Result<Plan> {
    let existing = read_existing(path)?.unwrap_or_default();
    let (before, after) = outside_markers(&existing, path)?;
    let budget = options
        .max_bytes
        .saturating_sub(before.len() + after.len() + 2);
    let (section, left_out) = section(items, budget);
    let contents = format!("{before}{section}{after}");
    let mut plan = Plan {
        changes: Vec::new(),
        left_out,
    };
    if contents.len() > options.max_bytes {
        plan.left_out.push(format!(
            "{}: the text outside the section is {} bytes, so the file is {} bytes, over \
             `--max-bytes` ({}); agents may not read all of it",
            path.display(),
            before.len() + after.len(),
            contents.len(),
            options.max_bytes
        ));
    }
    if contents != existing {
        plan.changes.push(FileChange {
            path: path.to_owned(),
            contents: Some(contents),
        });
    }
    Ok(plan)
}

/// The text before the section (with the blank line that separates them) and after it.
fn outside_markers<'a>(existing: &'a str, path: &Path) -> Result<(String, &'a str)> {
    let Some(begin) = find_line(existing, BEGIN_PREFIX, 0) else {
        let kept = existing.trim_end_matches(['\n', '\r']);
        let before = if kept.is_empty() {
            String::new()
        } else {
            format!("{kept}\n\n")
        };
        return Ok((before, "\n"));
    };
    let Some(end) = find_line(existing, END, begin) else {
        return Err(KnowledgeError::Invalid(format!(
            "{}: the knowledge section opens (`{BEGIN_PREFIX} …`) but never closes \
             (`{END}`); restore the closing line or remove the section",
            path.display()
        )));
    };
    Ok((existing[..begin].to_owned(), &existing[end + END.len()..]))
}

/// The byte offset of the first line at or after `from` that starts with `prefix`.
fn find_line(text: &str, prefix: &str, from: usize) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if offset >= from && line.starts_with(prefix) {
            return Some(offset);
        }
        offset += line.len();
    }
    None
}

/// The section, markers included, within `budget` bytes: whole items, in order, until the next
/// does not fit; a closing line says how many were left out.
fn section(items: &[&KnowledgeItem], budget: usize) -> (String, Vec<String>) {
    let head = format!("{BEGIN}\n## Team knowledge\n");
    let mut text = head;
    let mut left_out = Vec::new();
    let reserve = END.len() + 160;
    for (index, item) in items.iter().enumerate() {
        let entry = entry(item);
        if text.len() + entry.len() + reserve > budget {
            left_out.extend(items[index..].iter().map(|item| {
                format!(
                    "{}: the section is full (`--max-bytes` {budget} for the section)",
                    item.id()
                )
            }));
            break;
        }
        text.push_str(&entry);
    }
    if items.is_empty() {
        text.push_str("\nNo knowledge items are in force yet.\n");
    }
    if !left_out.is_empty() {
        text.push_str(&format!(
            "\n_{} more item(s) are in the knowledge repository: `knowledge_search` finds them._\n",
            left_out.len()
        ));
    }
    text.push_str(END);
    (text, left_out)
}

fn entry(item: &KnowledgeItem) -> String {
    let kind = match item.front.kind {
        ItemType::Adr => "Decision",
        ItemType::Policy => "Policy",
        ItemType::Pattern => "Pattern",
        ItemType::Spec => "Spec",
        ItemType::Lesson => "Lesson",
        ItemType::Note => "Note",
    };
    let title = item.front.title.replace('\n', " ");
    let body = item.body.trim();
    let mut entry = format!("\n### {kind}: {title}\n");
    if let Some(description) = &item.front.description {
        entry.push_str(&format!("\n_{}_\n", description.replace('\n', " ")));
    }
    if !body.is_empty() {
        entry.push('\n');
        entry.push_str(&demote_headings(body));
        entry.push('\n');
    }
    entry
}

/// An item's own headings, moved below the section's `###` so they nest under it.
fn demote_headings(body: &str) -> String {
    let mut fenced = false;
    let lines: Vec<String> = body
        .lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            if !fenced && line.starts_with('#') {
                let level = line.chars().take_while(|&c| c == '#').count();
                if line[level..].starts_with(' ') {
                    return format!("{}{}", "#".repeat((level + 3).min(6)), &line[level..]);
                }
            }
            line.to_owned()
        })
        .collect();
    lines.join("\n")
}
