//! Agent Skills: one `<name>/SKILL.md` per pattern and lesson in force. `name` and
//! `description` follow the format's rules (name: 1–64 lowercase letters, digits and single
//! hyphens, the folder's name; description: 1–1024 characters); `metadata.generated-by` marks
//! the folders we own, so a later export removes ours that no longer qualify and never touches
//! a skill someone wrote by hand.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::{FileChange, Plan, read_existing};
use crate::error::{KnowledgeError, Result, io};
use crate::item::{ItemType, KnowledgeItem};

const MAX_NAME_CHARS: usize = 64;
const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The `metadata.generated-by` of the folders an export owns.
const GENERATOR: &str = "aeterna";

#[derive(Serialize)]
struct SkillFront<'a> {
    name: &'a str,
    description: String,
    metadata: BTreeMap<&'static str, &'a str>,
}

pub(super) fn plan(dir: &Path, items: &[&KnowledgeItem]) -> Result<Plan> {
    let mut plan = Plan::default();
    let mut written = BTreeMap::new();
    for item in items {
        if !matches!(item.front.kind, ItemType::Pattern | ItemType::Lesson) {
            continue;
        }
        let name = skill_name(item.id());
        if let Some(first) = written.get(&name) {
            plan.left_out.push(format!(
                "{}: its skill name `{name}` is taken by `{first}`; rename one of them",
                item.id()
            ));
            continue;
        }
        let path = dir.join(&name).join("SKILL.md");
        let contents = skill(&name, item)?;
        if read_existing(&path)?.as_deref() != Some(contents.as_str()) {
            if owner(&path)?.is_some_and(|owner| owner != GENERATOR) {
                plan.left_out.push(format!(
                    "{}: `{}` is a skill someone else wrote; it is left as it is",
                    item.id(),
                    path.display()
                ));
                continue;
            }
            plan.changes.push(FileChange {
                path,
                contents: Some(contents),
            });
        }
        written.insert(name, item.id().to_owned());
    }
    // Our folders whose item is gone, retired or renamed.
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(plan),
        Err(error) => return Err(io(dir)(error)),
    };
    let mut stale = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path().join("SKILL.md");
        if !written.contains_key(&name) && owner(&path)?.as_deref() == Some(GENERATOR) {
            stale.push(FileChange {
                path,
                contents: None,
            });
        }
    }
    stale.sort_by(|a, b| a.path.cmp(&b.path));
    plan.changes.extend(stale);
    Ok(plan)
}

/// The skill name for an item id: the id with `_` and `.` as hyphens, no doubled or edge
/// hyphens, at most 64 characters.
fn skill_name(id: &str) -> String {
    let mut name = String::with_capacity(id.len());
    for c in id.chars() {
        let c = if c.is_ascii_alphanumeric() { c } else { '-' };
        if c == '-' && (name.is_empty() || name.ends_with('-')) {
            continue;
        }
        name.push(c);
        if name.len() == MAX_NAME_CHARS {
            break;
        }
    }
    let name = name.trim_end_matches('-');
    if name.is_empty() {
        "skill".into()
    } else {
        name.into()
    }
}

fn skill(name: &str, item: &KnowledgeItem) -> Result<String> {
    let description: String = item
        .summary()
        .replace('\n', " ")
        .chars()
        .take(MAX_DESCRIPTION_CHARS)
        .collect();
    let front = SkillFront {
        name,
        description,
        metadata: BTreeMap::from([
            ("generated-by", GENERATOR),
            ("knowledge-id", item.id()),
            ("type", item.front.kind.as_str()),
        ]),
    };
    let yaml = serde_yaml_ng::to_string(&front)
        .map_err(|error| KnowledgeError::Invalid(format!("skill `{name}`: {error}")))?;
    Ok(format!(
        "---\n{yaml}---\n# {}\n\n{}\n",
        item.front.title.replace('\n', " "),
        item.body.trim()
    ))
}

/// The `metadata.generated-by` of an existing `SKILL.md` (`Some("")` for a skill without one),
/// or `None` when there is no such file.
fn owner(path: &Path) -> Result<Option<String>> {
    let Some(text) = read_existing(path)? else {
        return Ok(None);
    };
    let front = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---").map(|(front, _)| front));
    let generator = front
        .and_then(|front| serde_yaml_ng::from_str::<serde_yaml_ng::Value>(front).ok())
        .and_then(|value| {
            value
                .get("metadata")?
                .get("generated-by")?
                .as_str()
                .map(str::to_owned)
        });
    Ok(Some(generator.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_names_follow_the_format() {
        assert_eq!(skill_name("sqlx-offline-in-ci"), "sqlx-offline-in-ci");
        assert_eq!(skill_name("retry_on.429--twice"), "retry-on-429-twice");
        assert_eq!(skill_name(&"a-".repeat(50)).len(), 63);
        assert!(!skill_name(&"ab".repeat(50)).ends_with('-'));
        assert_eq!(skill_name(&"ab".repeat(50)).len(), 64);
    }
}
