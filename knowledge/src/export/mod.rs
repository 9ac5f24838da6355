//! Knowledge in the files agents already read: a section of `AGENTS.md` or `CLAUDE.md` between
//! markers ([`instructions`]), and one Agent Skills folder (`<name>/SKILL.md`) per pattern or
//! lesson ([`skills`]).
//!
//! An export is planned first: [`plan`] reads what is on disk and lists only the files whose
//! bytes would change, so re-running an export changes nothing, `--check` is "the plan is not
//! empty", and [`Plan::apply`] writes each file whole (a temporary file renamed over it).

mod instructions;
mod skills;

use std::path::{Path, PathBuf};

use crate::error::{KnowledgeError, Result, io};
use crate::item::{ItemType, KnowledgeItem};

/// The files an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `AGENTS.md` (Codex and the agents that follow it).
    AgentsMd,
    /// `CLAUDE.md` (Claude Code).
    ClaudeMd,
    /// One `<name>/SKILL.md` folder per pattern and lesson (the Agent Skills format).
    Skills,
}

impl std::str::FromStr for Format {
    type Err = KnowledgeError;

    fn from_str(text: &str) -> Result<Format> {
        match text {
            "agents-md" => Ok(Format::AgentsMd),
            "claude-md" => Ok(Format::ClaudeMd),
            "skills" => Ok(Format::Skills),
            other => Err(KnowledgeError::Invalid(format!(
                "unknown export format `{other}`: use agents-md, claude-md or skills"
            ))),
        }
    }
}

/// How an export is shaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// The largest `AGENTS.md` / `CLAUDE.md` written, the text outside the markers included
    /// (Codex reads 32 KiB of project instructions by default).
    pub max_bytes: usize,
}

impl Default for ExportOptions {
    fn default() -> ExportOptions {
        ExportOptions {
            max_bytes: 32 * 1024,
        }
    }
}

/// One file an export changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    /// The new contents; `None` removes the file (a skill folder that no longer qualifies).
    pub contents: Option<String>,
}

/// What an export would change, and what it left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub changes: Vec<FileChange>,
    /// Items in force that did not fit or could not be exported, each with the reason.
    pub left_out: Vec<String>,
}

impl Plan {
    /// Whether the files on disk are what the export writes (`--check`).
    pub fn is_current(&self) -> bool {
        self.changes.is_empty()
    }

    /// Writes every change: each file whole, through a temporary file in its directory.
    pub fn apply(&self) -> Result<()> {
        for change in &self.changes {
            match &change.contents {
                Some(contents) => write_whole(&change.path, contents)?,
                None => {
                    std::fs::remove_file(&change.path).map_err(io(&change.path))?;
                    if let Some(parent) = change.path.parent() {
                        // The folder goes too when nothing else is in it.
                        let _ = std::fs::remove_dir(parent);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Plans the export of `items` in `format` into `dir`. Only items in force (`accepted`) are
/// exported, the most useful kinds first: policies, decisions, specs, patterns, lessons, notes.
pub fn plan(
    format: Format,
    items: &[KnowledgeItem],
    dir: &Path,
    options: &ExportOptions,
) -> Result<Plan> {
    let mut in_force: Vec<&KnowledgeItem> = items
        .iter()
        .filter(|item| item.front.status.in_force())
        .collect();
    in_force.sort_by(|a, b| {
        (usefulness(a.front.kind), a.id()).cmp(&(usefulness(b.front.kind), b.id()))
    });
    match format {
        Format::AgentsMd => instructions::plan(&dir.join("AGENTS.md"), &in_force, options),
        Format::ClaudeMd => instructions::plan(&dir.join("CLAUDE.md"), &in_force, options),
        Format::Skills => skills::plan(dir, &in_force),
    }
}

/// Whether `line` opens or closes the section an export writes (so an import leaves it out).
pub(crate) fn is_exported_section_line(line: &str) -> bool {
    instructions::is_marker(line)
}

/// The order kinds are exported in: what an agent must obey before what it may find useful.
fn usefulness(kind: ItemType) -> u8 {
    match kind {
        ItemType::Policy => 0,
        ItemType::Adr => 1,
        ItemType::Spec => 2,
        ItemType::Pattern => 3,
        ItemType::Lesson => 4,
        ItemType::Note => 5,
    }
}

/// The file's text, or `None` when it does not exist.
fn read_existing(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(io(path)(error)),
    }
}

fn write_whole(path: &Path, contents: &str) -> Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = parent.join(format!(".{name}.aeterna-tmp"));
    std::fs::write(&temporary, contents).map_err(io(&temporary))?;
    std::fs::rename(&temporary, path).map_err(io(path))
}
