//! Which project and branch a hook runs in, read from the working directory's git metadata
//! without starting `git` (a hook's time budget is a few milliseconds).

use std::path::{Path, PathBuf};

/// The longest project id sent (the server's default `memory.max_id_bytes`).
const MAX_PROJECT_ID_BYTES: usize = 128;

/// The repository (or plain directory) a hook's working directory belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The repository's top directory, or the working directory when it is in none.
    pub root: PathBuf,
    /// The memory `project_id`: the top directory's name.
    pub project_id: String,
    /// The checked-out branch; a detached `HEAD` is its commit's first 12 hex digits.
    pub branch: Option<String>,
}

/// The workspace of `cwd`: the nearest ancestor holding `.git` (a directory, or a file pointing
/// at one, as in worktrees and submodules).
pub fn discover(cwd: &Path) -> Workspace {
    let found = cwd.ancestors().find_map(|dir| {
        let dot_git = dir.join(".git");
        git_dir(&dot_git).map(|git_dir| (dir.to_path_buf(), git_dir))
    });
    let (root, branch) = match found {
        Some((root, git_dir)) => {
            let branch = std::fs::read_to_string(git_dir.join("HEAD"))
                .ok()
                .and_then(|head| branch_of(&head));
            (root, branch)
        }
        None => (cwd.to_path_buf(), None),
    };
    let name = root
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_owned());
    Workspace {
        root,
        project_id: truncate(&name, MAX_PROJECT_ID_BYTES),
        branch,
    }
}

/// The git directory `dot_git` stands for, if it is one.
fn git_dir(dot_git: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git.to_path_buf());
    }
    // `gitdir: <path>`, relative to the directory holding the file.
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.strip_prefix("gitdir:")?.trim();
    let target = Path::new(target);
    Some(match target.is_absolute() {
        true => target.to_path_buf(),
        false => dot_git.parent()?.join(target),
    })
}

/// The branch a `HEAD` file names.
fn branch_of(head: &str) -> Option<String> {
    let head = head.trim();
    if let Some(reference) = head.strip_prefix("ref:") {
        let reference = reference.trim();
        let name = reference.strip_prefix("refs/heads/").unwrap_or(reference);
        return (!name.is_empty()).then(|| truncate(name, MAX_PROJECT_ID_BYTES));
    }
    let is_commit = head.len() >= 12 && head.bytes().all(|byte| byte.is_ascii_hexdigit());
    is_commit.then(|| head[..12].to_owned())
}

/// `text` cut to at most `max` bytes at a character boundary.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_gives_its_top_directory_and_branch() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("parser-rs");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/feature/tokens\n").unwrap();
        let found = discover(&root.join("src/deep"));
        assert_eq!(found.root, root);
        assert_eq!(found.project_id, "parser-rs");
        assert_eq!(found.branch.as_deref(), Some("feature/tokens"));
    }

    #[test]
    fn worktrees_detached_heads_and_plain_directories() {
        let temp = tempfile::tempdir().unwrap();
        let main_git = temp.path().join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&main_git).unwrap();
        std::fs::write(
            main_git.join("HEAD"),
            "0123456789abcdef0123456789abcdef01234567\n",
        )
        .unwrap();
        let worktree = temp.path().join("wt");
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::write(worktree.join(".git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
        let found = discover(&worktree);
        assert_eq!(found.project_id, "wt");
        assert_eq!(found.branch.as_deref(), Some("0123456789ab"));

        let plain = temp.path().join("notes");
        std::fs::create_dir_all(&plain).unwrap();
        let found = discover(&plain);
        assert_eq!((found.project_id.as_str(), found.branch), ("notes", None));
    }
}
