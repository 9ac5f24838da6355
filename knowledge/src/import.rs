//! What teams already wrote down, as knowledge items: `AGENTS.md` and `CLAUDE.md` (one item per
//! `##` section), `.claude/rules/*.md` and `.cursor/rules/*.md|mdc` (one item per file), and
//! ADR folders (`docs/adr/NNNN-*.md`, also `doc/adr` and `docs/decisions`). Each item keeps
//! where it came from in `sources` (`kind: file`). The section an export wrote is never
//! imported back.

use std::path::{Path, PathBuf};

use aeterna_memory::Layer;

use crate::error::{Result, io};
use crate::export::is_exported_section_line;
use crate::item::{ItemType, KnowledgeItem, Source, Status, slug};
use crate::repo::Limits;

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Imported {
    pub items: Vec<KnowledgeItem>,
    /// Files left out, each with the reason.
    pub skipped: Vec<String>,
}

/// Where imported items live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub layer: Layer,
    pub scope: Option<String>,
}

const ADR_FOLDERS: [&str; 3] = ["docs/adr", "doc/adr", "docs/decisions"];

/// Scans the repository checked out at `root`.
pub fn scan(root: &Path, target: &Target, limits: &Limits) -> Result<Imported> {
    let mut imported = Imported::default();
    for name in ["AGENTS.md", "CLAUDE.md"] {
        if let Some(text) = read(root, Path::new(name), limits, &mut imported)? {
            let prefix = name.trim_end_matches(".md");
            for (heading, body) in sections(&text) {
                let id = slug(&format!(
                    "{prefix} {}",
                    heading.as_deref().unwrap_or("introduction")
                ));
                let title = heading.unwrap_or_else(|| format!("{name} (introduction)"));
                imported
                    .items
                    .push(item(&id, ItemType::Policy, &title, body, name, target));
            }
        }
    }
    for (folder, prefix) in [(".claude/rules", "rule"), (".cursor/rules", "cursor-rule")] {
        for path in files(&root.join(folder), &["md", "mdc"])? {
            let relative = relative(root, &path);
            let Some(text) = read(root, &relative, limits, &mut imported)? else {
                continue;
            };
            let stem = stem(&path);
            let body = without_front_matter(&text);
            let title = first_heading(body).unwrap_or_else(|| stem.replace(['-', '_'], " "));
            let id = slug(&format!("{prefix} {stem}"));
            let origin = relative.to_string_lossy();
            imported.items.push(item(
                &id,
                ItemType::Policy,
                &title,
                body.to_owned(),
                &origin,
                target,
            ));
        }
    }
    for folder in ADR_FOLDERS {
        for path in files(&root.join(folder), &["md"])? {
            let stem = stem(&path);
            if !stem.starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            let relative = relative(root, &path);
            let Some(text) = read(root, &relative, limits, &mut imported)? else {
                continue;
            };
            let body = without_front_matter(&text);
            let title = first_heading(body)
                .map(|heading| strip_number(&heading).to_owned())
                .unwrap_or_else(|| stem.clone());
            let mut adr = item(
                &slug(&stem),
                ItemType::Adr,
                &title,
                body.to_owned(),
                &relative.to_string_lossy(),
                target,
            );
            adr.front.status = adr_status(body);
            imported.items.push(adr);
        }
    }
    if imported.items.len() > limits.max_items {
        imported
            .skipped
            .extend(imported.items[limits.max_items..].iter().map(|item| {
                format!(
                    "{}: more than `knowledge.max_items` ({})",
                    item.id(),
                    limits.max_items
                )
            }));
        imported.items.truncate(limits.max_items);
    }
    dedupe_ids(&mut imported.items);
    Ok(imported)
}

fn item(
    id: &str,
    kind: ItemType,
    title: &str,
    body: String,
    origin: &str,
    target: &Target,
) -> KnowledgeItem {
    let mut item = KnowledgeItem::new(id, kind, title, target.layer, target.scope.clone(), body);
    item.front.sources.push(Source {
        kind: "file".into(),
        id: origin.to_owned(),
    });
    item
}

/// A file's text, or `None` (with the reason recorded) when it is missing, too big or not text.
fn read(
    root: &Path,
    relative: &Path,
    limits: &Limits,
    imported: &mut Imported,
) -> Result<Option<String>> {
    let path = root.join(relative);
    let metadata = match std::fs::metadata(&path) {
        Ok(metadata) if metadata.is_file() => metadata,
        Ok(_) => return Ok(None),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io(&path)(error)),
    };
    if metadata.len() > limits.max_item_bytes as u64 {
        imported.skipped.push(format!(
            "{}: {} bytes, more than `knowledge.max_item_bytes` ({})",
            relative.display(),
            metadata.len(),
            limits.max_item_bytes
        ));
        return Ok(None);
    }
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
            imported
                .skipped
                .push(format!("{}: not UTF-8 text", relative.display()));
            Ok(None)
        }
        Err(error) => Err(io(&path)(error)),
    }
}

/// The files of `dir` (not recursive) with one of `extensions`, sorted.
fn files(dir: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(io(dir)(error)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(io(dir))?.path();
        let wanted = path
            .extension()
            .and_then(|extension| extension.to_str())
            .is_some_and(|extension| extensions.contains(&extension));
        if wanted && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The `##` sections of an instructions file (with the text before the first as a section
/// without a heading), leaving out the section an export wrote.
fn sections(text: &str) -> Vec<(Option<String>, String)> {
    let mut sections: Vec<(Option<String>, String)> = vec![(None, String::new())];
    let mut fenced = false;
    let mut exported = false;
    for line in text.lines() {
        if is_exported_section_line(line) {
            exported = !exported;
            continue;
        }
        if exported {
            continue;
        }
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        match line.strip_prefix("## ") {
            Some(heading) if !fenced => {
                sections.push((Some(heading.trim().to_owned()), String::new()))
            }
            _ => {
                let body = &mut sections.last_mut().expect("one section").1;
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    sections
        .into_iter()
        .filter_map(|(heading, body)| {
            let body = body.trim().to_owned();
            // A file's `# Title` line alone is not knowledge.
            let meaningful = body
                .lines()
                .any(|line| !line.trim().is_empty() && !line.starts_with("# "));
            (heading.is_some() || meaningful).then(|| (heading, format!("{body}\n")))
        })
        .collect()
}

fn without_front_matter(text: &str) -> &str {
    text.strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n").map(|(_, body)| body))
        .unwrap_or(text)
}

fn first_heading(body: &str) -> Option<String> {
    body.lines()
        .find_map(|line| line.strip_prefix("# "))
        .map(|heading| heading.trim().to_owned())
        .filter(|heading| !heading.is_empty())
}

/// `7. Use SQLite`, `ADR 0007: Use SQLite` and `ADR-7 - Use SQLite` → `Use SQLite`; a heading
/// without a numbering is kept as it is.
fn strip_number(heading: &str) -> &str {
    let rest = match heading.get(..3) {
        Some(prefix) if prefix.eq_ignore_ascii_case("adr") => &heading[3..],
        _ => heading,
    };
    let rest = rest.trim_start_matches([' ', '-']);
    let number = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if number == 0 {
        return heading;
    }
    // A number is a numbering only when punctuation follows it (`7.`, `0007:`, `7 -`).
    let after = rest[number..].trim_start();
    if !after.starts_with([':', '.', '-']) {
        return heading;
    }
    let title = after.trim_start_matches([':', '.', '-', ' ']).trim();
    if title.is_empty() { heading } else { title }
}

/// The status an ADR declares (`Status: Accepted`, or a `## Status` section), as ours.
fn adr_status(body: &str) -> Status {
    let mut lines = body.lines().map(str::trim);
    let mut declared = None;
    while let Some(line) = lines.next() {
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("status:") {
            declared = Some(value.trim().to_owned());
            break;
        }
        if lower == "## status" {
            declared = lines
                .find(|line| !line.is_empty())
                .map(str::to_ascii_lowercase);
            break;
        }
    }
    match declared
        .as_deref()
        .map(|status| status.trim_matches(['*', '_']))
    {
        Some(status) if status.starts_with("proposed") || status.starts_with("draft") => {
            Status::Proposed
        }
        Some(status) if status.starts_with("deprecated") || status.starts_with("rejected") => {
            Status::Deprecated
        }
        Some(status) if status.starts_with("superseded") => Status::Superseded,
        _ => Status::Accepted,
    }
}

/// Makes ids unique by numbering repeats (two sections with the same heading).
fn dedupe_ids(items: &mut [KnowledgeItem]) {
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for item in items {
        let count = seen.entry(item.front.id.clone()).or_default();
        *count += 1;
        if *count > 1 {
            item.front.id = format!("{}-{count}", item.front.id);
        }
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adr_numbers_leave_the_title_and_other_headings_are_kept() {
        for (heading, title) in [
            (
                "1. Record architecture decisions",
                "Record architecture decisions",
            ),
            ("ADR 0007: Use SQLite", "Use SQLite"),
            ("adr-7 - Use SQLite", "Use SQLite"),
            ("Use SQLite", "Use SQLite"),
            ("Adopt Rust", "Adopt Rust"),
            ("2024 roadmap", "2024 roadmap"),
            ("42", "42"),
            ("ADR", "ADR"),
        ] {
            assert_eq!(strip_number(heading), title, "{heading}");
        }
    }
}
