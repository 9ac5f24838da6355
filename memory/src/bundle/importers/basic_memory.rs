//! A basic-memory project folder: Markdown files with YAML front matter (`title`, `type`,
//! `permalink`, `tags`), observations as `- [category] text #tag (context)` lines and
//! relations as `- relation_type [[Target]]` lines. Files are read one at a time, in path
//! order; hidden files and folders are left out.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{Entry, new_memory};
use crate::bundle::MAX_LINE_BYTES;
use crate::error::{MemoryError, Result};
use crate::model::Layer;

/// Observations and relations kept in a memory's metadata, at most.
const MAX_LISTED: usize = 200;

pub(super) fn read(root: &Path, layer: Layer, send: &mut dyn FnMut(Entry) -> bool) -> Result<()> {
    let io = |path: &Path, error: std::io::Error| {
        MemoryError::invalid(format!("cannot read {}: {error}", path.display()))
    };
    if root.is_file() {
        let base = root.parent().unwrap_or(Path::new(""));
        send(file(root, base, layer)?);
        return Ok(());
    }
    // Depth first, each folder's entries in name order.
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|error| io(&dir, error))?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<std::io::Result<_>>()
            .map_err(|error| io(&dir, error))?;
        entries.sort();
        let mut folders = Vec::new();
        for path in entries {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                folders.push(path);
            } else if name.ends_with(".md") && !send(file(&path, root, layer)?) {
                return Ok(());
            }
        }
        pending.extend(folders.into_iter().rev());
    }
    Ok(())
}

/// The memory of one note.
fn file(path: &Path, root: &Path, layer: Layer) -> Result<Entry> {
    let shown = path.display().to_string();
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if size > MAX_LINE_BYTES as u64 {
        return Err(MemoryError::invalid(format!(
            "{shown} is {size} bytes; notes over {MAX_LINE_BYTES} bytes are not imported"
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|error| MemoryError::invalid(format!("cannot read {shown}: {error}")))?;
    let relative = path
        .strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("note");
    let memory = note(&shown, &relative, stem, &text)?;
    Ok(Entry {
        origin: shown,
        memory: new_memory(layer, memory.content, memory.tags, memory.metadata),
    })
}

pub(super) struct Note {
    pub content: String,
    pub tags: Vec<String>,
    pub metadata: Value,
}

/// Reads one note's text (`origin` names it in errors).
pub(super) fn note(origin: &str, relative: &str, stem: &str, text: &str) -> Result<Note> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front, body) = split_front_matter(text);
    let mut metadata = Map::new();
    metadata.insert("source".into(), json!("basic-memory"));
    metadata.insert("path".into(), json!(relative));
    let mut tags = Vec::new();
    let mut title = stem.to_owned();
    if let Some(front) = front {
        let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(front).map_err(|error| {
            MemoryError::invalid(format!("{origin}: the front matter is not YAML ({error})"))
        })?;
        let mapping = match yaml {
            serde_yaml_ng::Value::Mapping(mapping) => mapping,
            serde_yaml_ng::Value::Null => Default::default(),
            _ => {
                return Err(MemoryError::invalid(format!(
                    "{origin}: the front matter must be a mapping of fields"
                )));
            }
        };
        let mut others = Map::new();
        for (key, value) in mapping {
            let Some(key) = key.as_str().map(str::to_owned) else {
                continue;
            };
            match (key.as_str(), &value) {
                ("title", serde_yaml_ng::Value::String(text)) if !text.trim().is_empty() => {
                    title = text.trim().to_owned();
                    metadata.insert("title".into(), json!(title));
                }
                ("type" | "permalink", serde_yaml_ng::Value::String(text)) => {
                    metadata.insert(key, json!(text));
                }
                ("tags", _) => tags = tags_of(&value),
                _ => {
                    if let Ok(value) = serde_json::to_value(&value) {
                        others.insert(key, value);
                    }
                }
            }
        }
        if !others.is_empty() {
            metadata.insert("front_matter".into(), Value::Object(others));
        }
    }
    let (observations, relations) = observations_and_relations(body);
    if !observations.is_empty() {
        metadata.insert("observations".into(), Value::Array(observations));
    }
    if !relations.is_empty() {
        metadata.insert("relations".into(), Value::Array(relations));
    }
    let body = body.trim();
    let content = if body.starts_with("# ") {
        body.to_owned()
    } else if body.is_empty() {
        format!("# {title}")
    } else {
        format!("# {title}\n\n{body}")
    };
    Ok(Note {
        content,
        tags,
        metadata: Value::Object(metadata),
    })
}

/// The front matter (between a first line `---` and the next `---` line) and the body.
fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (Some(&rest[..offset]), &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    (None, text)
}

/// Tags as a list (`[a, '#b']`) or a string (`a, #b`), without their `#`.
fn tags_of(value: &serde_yaml_ng::Value) -> Vec<String> {
    let clean = |tag: &str| {
        tag.trim()
            .trim_matches(|c| matches!(c, '[' | ']' | '\'' | '"'))
            .trim_start_matches('#')
            .trim()
            .to_owned()
    };
    let tags: Vec<String> = match value {
        serde_yaml_ng::Value::Sequence(items) => items
            .iter()
            .filter_map(|item| match item {
                serde_yaml_ng::Value::String(text) => Some(clean(text)),
                serde_yaml_ng::Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        serde_yaml_ng::Value::String(text) => text
            .split(|c: char| c == ',' || c.is_whitespace())
            .map(clean)
            .collect(),
        _ => Vec::new(),
    };
    let mut out: Vec<String> = Vec::new();
    for tag in tags {
        if !tag.is_empty() && !out.contains(&tag) {
            out.push(tag);
        }
    }
    out
}

/// `- [category] text` and `- relation_type [[Target]]` lines of a body.
fn observations_and_relations(body: &str) -> (Vec<Value>, Vec<Value>) {
    let (mut observations, mut relations) = (Vec::new(), Vec::new());
    for line in body.lines() {
        let Some(item) = line.trim_start().strip_prefix("- ") else {
            continue;
        };
        if let Some(rest) = item.strip_prefix('[')
            && !rest.starts_with('[')
            && let Some((category, text)) = rest.split_once(']')
        {
            if observations.len() < MAX_LISTED && !category.trim().is_empty() {
                observations.push(json!({"category": category.trim(), "content": text.trim()}));
            }
        } else if let Some(open) = item.find("[[")
            && let Some(close) = item[open..].find("]]")
        {
            let relation = item[..open].trim();
            let target = item[open + 2..open + close].trim();
            if relations.len() < MAX_LISTED
                && !relation.is_empty()
                && relation.len() <= 64
                && !target.is_empty()
            {
                relations.push(json!({"type": relation, "target": target}));
            }
        }
    }
    (observations, relations)
}

#[cfg(test)]
mod tests {
    use super::*;

    const COFFEE: &str = "---\ntitle: Coffee Brewing Methods\ntype: note\npermalink: \
        coffee/coffee-brewing-methods\ntags:\n- '#coffee'\n- '#brewing'\n---\n\n# Coffee Brewing \
        Methods\n\n## Observations\n- [method] Pour over provides more clarity #brewing\n- \
        [principle] Freshly ground beans preserve aromatics\n\n## Relations\n- relates_to \
        [[Coffee Bean Origins]]\n- requires [[Proper Grinding Technique]]\n";

    #[test]
    fn a_note_keeps_its_text_and_its_structure_goes_into_metadata() {
        let note = note("coffee.md", "coffee/coffee.md", "coffee", COFFEE).unwrap();
        assert!(
            note.content
                .starts_with("# Coffee Brewing Methods\n\n## Observations")
        );
        assert_eq!(note.tags, ["coffee", "brewing"]);
        let m = &note.metadata;
        assert_eq!(m["title"], "Coffee Brewing Methods");
        assert_eq!(m["permalink"], "coffee/coffee-brewing-methods");
        assert_eq!(m["type"], "note");
        assert_eq!(m["observations"][0]["category"], "method");
        assert_eq!(
            m["relations"][1],
            json!({"type": "requires", "target": "Proper Grinding Technique"})
        );
    }

    #[test]
    fn notes_without_front_matter_or_heading_get_their_title() {
        let standup = note("a.md", "a.md", "Standup", "- [decision] ship on Friday\n").unwrap();
        assert_eq!(standup.content, "# Standup\n\n- [decision] ship on Friday");
        assert_eq!(
            tags_of(&serde_yaml_ng::Value::String("a, #b c".into())),
            ["a", "b", "c"]
        );
        let error = note("b.md", "b.md", "b", "---\ntitle: [unclosed\n---\nbody")
            .err()
            .unwrap();
        assert!(
            error
                .to_string()
                .starts_with("b.md: the front matter is not YAML"),
            "{error}"
        );
    }
}
