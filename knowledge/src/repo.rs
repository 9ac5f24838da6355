//! The git repository knowledge lives in (libgit2 through `git2`).
//!
//! Items are `<type directory>/<id>.md` files. Reads see the tip of the repository's branch
//! (`main` unless configured), never the working tree: what is committed is what is known.
//! Every write is one commit, with an author and a message that says why, onto the branch it
//! names; a proposal goes on a branch of its own forked from the protected one. When the branch
//! written is the one checked out, the working tree follows (files a person is editing are left
//! alone). Secrets are redacted before anything is committed.

use std::path::{Path, PathBuf};

use git2::build::CheckoutBuilder;
use git2::{ErrorCode, ObjectType, Oid, Repository, RepositoryInitOptions, Signature, Tree};

use crate::error::{KnowledgeError, Result, git};
use crate::item::{ItemType, KnowledgeItem, check_id};

/// What one repository may hold, checked before anything is read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The largest item file read or written, in bytes.
    pub max_item_bytes: usize,
    /// The most items a branch may hold.
    pub max_items: usize,
    /// The most revisions [`KnowledgeRepo::history`] returns.
    pub max_history: usize,
    /// The most item bytes one read of a branch takes in all ([`KnowledgeRepo::snapshot`]).
    pub max_branch_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_item_bytes: 64 * 1024,
            max_items: 10_000,
            max_history: 200,
            max_branch_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Who a commit is by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    pub name: String,
    pub email: String,
}

impl Author {
    /// The server writing for itself.
    pub fn aeterna() -> Author {
        Author {
            name: "Aeterna".into(),
            email: "aeterna@localhost".into(),
        }
    }
}

/// One item on a branch, with the blob it was read from (what a sync compares).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub path: String,
    pub blob: String,
    pub item: KnowledgeItem,
}

/// A file on the branch that is not a valid item, and why. Reported, never fatal: one bad
/// hand edit must not hide the rest of the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// Everything on a branch at one commit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// The commit read; `None` for a branch with no commits yet.
    pub commit: Option<String>,
    pub entries: Vec<Entry>,
    pub problems: Vec<Problem>,
}

/// What one commit changes.
#[derive(Debug, Clone, Default)]
pub struct Change {
    /// Items written (created, or replaced by id).
    pub put: Vec<KnowledgeItem>,
    /// Ids of items removed.
    pub remove: Vec<String>,
}

/// One commit that changed an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    pub commit: String,
    pub author: String,
    /// Seconds since the Unix epoch.
    pub time: i64,
    pub message: String,
    /// Whether this commit removed the item.
    pub removed: bool,
}

/// Commits one history listing looks at, at most (newest first).
pub const MAX_HISTORY_WALK: usize = 20_000;

/// A knowledge repository and the branch its reads see.
pub struct KnowledgeRepo {
    repo: Repository,
    path: PathBuf,
    branch: String,
    limits: Limits,
}

impl std::fmt::Debug for KnowledgeRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnowledgeRepo")
            .field("path", &self.path)
            .field("branch", &self.branch)
            .finish_non_exhaustive()
    }
}

impl KnowledgeRepo {
    /// Opens the repository at `path`, or creates it (with `branch` as its initial branch).
    pub fn open_or_init(path: &Path, branch: &str, limits: Limits) -> Result<KnowledgeRepo> {
        check_branch(branch)?;
        let repo = match Repository::open(path) {
            Ok(repo) => repo,
            Err(error) if error.code() == ErrorCode::NotFound => {
                let mut options = RepositoryInitOptions::new();
                options.initial_head(branch).mkpath(true);
                Repository::init_opts(path, &options)
                    .map_err(git(format!("creating a repository at {}", path.display())))?
            }
            Err(error) => return Err(git(format!("opening {}", path.display()))(error)),
        };
        Ok(KnowledgeRepo {
            repo,
            path: path.to_owned(),
            branch: branch.to_owned(),
            limits,
        })
    }

    /// Opens the repository at `path`, which must exist.
    pub fn open(path: &Path, branch: &str, limits: Limits) -> Result<KnowledgeRepo> {
        check_branch(branch)?;
        let repo = Repository::open(path).map_err(|error| match error.code() {
            ErrorCode::NotFound => KnowledgeError::Invalid(format!(
                "{} is not a git repository; create it with `aeterna knowledge import`,                  `git init`, or by configuring it under [[knowledge.repositories]]",
                path.display()
            )),
            _ => git(format!("opening {}", path.display()))(error),
        })?;
        Ok(KnowledgeRepo {
            repo,
            path: path.to_owned(),
            branch: branch.to_owned(),
            limits,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The branch reads see (the protected branch).
    pub fn branch(&self) -> &str {
        &self.branch
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The commit at the tip of `branch`, if it has one.
    pub fn tip(&self, branch: &str) -> Result<Option<String>> {
        Ok(self.tip_oid(branch)?.map(|oid| oid.to_string()))
    }

    /// Every item on the repository's branch, and the files that are not valid items.
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.snapshot_of(&self.branch)
    }

    /// Every item on `branch`.
    pub fn snapshot_of(&self, branch: &str) -> Result<Snapshot> {
        let Some(tip) = self.tip_oid(branch)? else {
            return Ok(Snapshot::default());
        };
        let tree = self.tree_of(tip)?;
        let mut snapshot = Snapshot {
            commit: Some(tip.to_string()),
            ..Snapshot::default()
        };
        let mut read_bytes = 0;
        for kind in ItemType::ALL {
            let Some(directory) = self.subtree(&tree, kind.directory())? else {
                continue;
            };
            for entry in directory.iter() {
                let Some(name) = entry.name() else { continue };
                let Some(stem) = name.strip_suffix(".md") else {
                    continue;
                };
                if entry.kind() != Some(ObjectType::Blob) {
                    continue;
                }
                let path = format!("{}/{name}", kind.directory());
                if snapshot.entries.len() >= self.limits.max_items {
                    return Err(KnowledgeError::Limit(format!(
                        "branch `{branch}` holds more than {} items (`knowledge.max_items`); \
                         raise the limit or split the repository",
                        self.limits.max_items
                    )));
                }
                read_bytes += self.item_size(entry.id(), &path)?;
                if read_bytes > self.limits.max_branch_bytes {
                    return Err(KnowledgeError::Limit(format!(
                        "branch `{branch}` holds more than {} bytes of items \
                         (`knowledge.max_branch_bytes`); raise the limit or split the repository",
                        self.limits.max_branch_bytes
                    )));
                }
                match self.read_item(entry.id(), &path, kind, stem) {
                    Ok(item) => snapshot.entries.push(Entry {
                        path,
                        blob: entry.id().to_string(),
                        item,
                    }),
                    Err(error) => snapshot.problems.push(Problem {
                        path,
                        message: error.to_string(),
                    }),
                }
            }
        }
        Ok(snapshot)
    }

    /// The item `id` on the repository's branch.
    pub fn get(&self, id: &str) -> Result<KnowledgeItem> {
        check_id(id)?;
        let tree = match self.tip_oid(&self.branch)? {
            Some(tip) => self.tree_of(tip)?,
            None => return Err(KnowledgeError::NotFound(id.to_owned())),
        };
        for kind in ItemType::ALL {
            let path = format!("{}/{id}.md", kind.directory());
            if let Some(blob) = blob_at(&tree, &path) {
                return self.read_item(blob, &path, kind, id);
            }
        }
        Err(KnowledgeError::NotFound(id.to_owned()))
    }

    /// Commits `change` onto `branch` (created from the repository's branch when missing) and
    /// returns the new commit, or the tip unchanged when the change changes nothing.
    pub fn commit(
        &self,
        branch: &str,
        change: &Change,
        author: &Author,
        message: &str,
    ) -> Result<String> {
        check_branch(branch)?;
        if message.trim().is_empty() {
            return Err(KnowledgeError::Invalid(
                "a knowledge commit needs a message that says why".into(),
            ));
        }
        let base = match self.tip_oid(branch)? {
            Some(tip) => Some(tip),
            None => self.tip_oid(&self.branch)?,
        };
        let base_tree = base.map(|oid| self.tree_of(oid)).transpose()?;
        let mut index = git2::Index::new().map_err(git("creating an index"))?;
        if let Some(tree) = &base_tree {
            index
                .read_tree(tree)
                .map_err(git("reading the branch's tree"))?;
        }
        for id in &change.remove {
            check_id(id)?;
            if !remove_item(&mut index, id)? {
                return Err(KnowledgeError::NotFound(id.clone()));
            }
        }
        for item in &change.put {
            let text = redacted(item)?.render()?;
            if text.len() > self.limits.max_item_bytes {
                return Err(KnowledgeError::Limit(format!(
                    "item `{}` is {} bytes, more than `knowledge.max_item_bytes` ({}); split it",
                    item.id(),
                    text.len(),
                    self.limits.max_item_bytes
                )));
            }
            remove_item(&mut index, item.id())?;
            let blob = self
                .repo
                .blob(text.as_bytes())
                .map_err(git("writing an item"))?;
            index
                .add(&index_entry(&item.path()?, blob, text.len()))
                .map_err(git(format!("adding item `{}`", item.id())))?;
        }
        if index.len() > self.limits.max_items {
            return Err(KnowledgeError::Limit(format!(
                "the commit would leave more than {} items on `{branch}` \
                 (`knowledge.max_items`)",
                self.limits.max_items
            )));
        }
        let tree_oid = index
            .write_tree_to(&self.repo)
            .map_err(git("writing the tree"))?;
        if let (Some(base), Some(tree)) = (base, &base_tree)
            && tree.id() == tree_oid
        {
            // Nothing changes: no empty commit; a new branch starts where it was forked.
            if self.tip_oid(branch)?.is_none() {
                self.repo
                    .reference(&format!("refs/heads/{branch}"), base, false, message)
                    .map_err(git(format!("creating branch `{branch}`")))?;
            }
            return Ok(base.to_string());
        }
        let tree = self
            .repo
            .find_tree(tree_oid)
            .map_err(git("reading the tree"))?;
        let signature = Signature::now(&author.name, &author.email)
            .map_err(|error| KnowledgeError::Invalid(format!("commit author: {error}")))?;
        let parent = base
            .map(|oid| self.repo.find_commit(oid))
            .transpose()
            .map_err(git("reading the parent commit"))?;
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        let commit = self
            .repo
            .commit(None, &signature, &signature, message, &tree, &parents)
            .map_err(git(format!("committing to `{branch}`")))?;
        // The working tree follows before the branch moves: its baseline is the old tip.
        self.follow_in_working_tree(branch, &tree)?;
        self.repo
            .reference(&format!("refs/heads/{branch}"), commit, true, message)
            .map_err(git(format!("moving `{branch}` to the new commit")))?;
        tracing::info!(branch, %commit, put = change.put.len(), remove = change.remove.len(), "knowledge committed");
        Ok(commit.to_string())
    }

    /// The commits on the repository's branch that changed item `id`, newest first.
    pub fn history(&self, id: &str) -> Result<Vec<Revision>> {
        check_id(id)?;
        let Some(tip) = self.tip_oid(&self.branch)? else {
            return Ok(Vec::new());
        };
        let mut walk = self.repo.revwalk().map_err(git("walking history"))?;
        walk.push(tip).map_err(git("walking history"))?;
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)
            .map_err(git("walking history"))?;
        let mut revisions = Vec::new();
        // A bound on the work one `knowledge_get` costs on a long history: the item's older
        // revisions are in `git log`.
        for oid in walk.take(MAX_HISTORY_WALK) {
            let oid = oid.map_err(git("walking history"))?;
            let commit = self
                .repo
                .find_commit(oid)
                .map_err(git("reading a commit"))?;
            let tree = commit.tree().map_err(git("reading a commit's tree"))?;
            let here = item_blob(&tree, id);
            let before = match commit.parents().next() {
                Some(parent) => item_blob(&parent.tree().map_err(git("reading a tree"))?, id),
                None => None,
            };
            if here != before {
                revisions.push(Revision {
                    commit: oid.to_string(),
                    author: commit.author().name().unwrap_or_default().to_owned(),
                    time: commit.time().seconds(),
                    message: commit.message().unwrap_or_default().trim_end().to_owned(),
                    removed: here.is_none(),
                });
                if revisions.len() >= self.limits.max_history {
                    break;
                }
            }
        }
        Ok(revisions)
    }

    /// Pushes `branch` to `remote` (a configured remote's name, a path or a `file://` URL).
    pub fn push(&self, remote: &str, branch: &str) -> Result<()> {
        check_branch(branch)?;
        // What errors and logs show: a URL's password never.
        let shown = aeterna_redact::redact_url_password(remote);
        let mut remote_handle = match self.repo.find_remote(remote) {
            Ok(found) => found,
            Err(_) => self
                .repo
                .remote_anonymous(remote)
                .map_err(git(format!("remote `{shown}`")))?,
        };
        let mut rejected = None;
        let mut callbacks = git2::RemoteCallbacks::new();
        callbacks.push_update_reference(|reference, status| {
            if let Some(status) = status {
                rejected = Some(format!("{reference}: {status}"));
            }
            Ok(())
        });
        let mut options = git2::PushOptions::new();
        options.remote_callbacks(callbacks);
        let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
        remote_handle
            .push(&[refspec.as_str()], Some(&mut options))
            .map_err(git(format!("pushing `{branch}` to `{shown}`")))?;
        drop(options);
        match rejected {
            Some(reason) => Err(KnowledgeError::Invalid(format!(
                "the remote `{shown}` refused `{branch}`: {reason}"
            ))),
            None => Ok(()),
        }
    }

    fn tip_oid(&self, branch: &str) -> Result<Option<Oid>> {
        match self.repo.refname_to_id(&format!("refs/heads/{branch}")) {
            Ok(oid) => Ok(Some(oid)),
            Err(error) if error.code() == ErrorCode::NotFound => Ok(None),
            Err(error) => Err(git(format!("reading branch `{branch}`"))(error)),
        }
    }

    fn tree_of(&self, commit: Oid) -> Result<Tree<'_>> {
        self.repo
            .find_commit(commit)
            .and_then(|commit| commit.tree())
            .map_err(git(format!("reading commit {commit}")))
    }

    fn subtree(&self, tree: &Tree<'_>, name: &str) -> Result<Option<Tree<'_>>> {
        match tree.get_name(name) {
            Some(entry) if entry.kind() == Some(ObjectType::Tree) => self
                .repo
                .find_tree(entry.id())
                .map(Some)
                .map_err(git(format!("reading `{name}/`"))),
            _ => Ok(None),
        }
    }

    /// A blob's size, from its object header (without reading it).
    fn item_size(&self, blob: Oid, path: &str) -> Result<usize> {
        let odb = self.repo.odb().map_err(git("opening the object store"))?;
        let (size, _) = odb
            .read_header(blob)
            .map_err(git(format!("reading {path}")))?;
        Ok(size)
    }

    /// Reads and parses one item blob, checking its size before reading it whole and that its
    /// id is its file name.
    fn read_item(
        &self,
        blob: Oid,
        path: &str,
        kind: ItemType,
        stem: &str,
    ) -> Result<KnowledgeItem> {
        let size = self.item_size(blob, path)?;
        if size > self.limits.max_item_bytes {
            return Err(KnowledgeError::Limit(format!(
                "{size} bytes, more than `knowledge.max_item_bytes` ({})",
                self.limits.max_item_bytes
            )));
        }
        let blob = self
            .repo
            .find_blob(blob)
            .map_err(git(format!("reading {path}")))?;
        let text = std::str::from_utf8(blob.content())
            .map_err(|_| KnowledgeError::Invalid("not UTF-8 text".into()))?;
        let item = KnowledgeItem::parse(text)?;
        if item.id() != stem {
            return Err(KnowledgeError::Invalid(format!(
                "its front matter says `id: {}` but the file is `{stem}.md`; make them agree",
                item.id()
            )));
        }
        if item.front.kind != kind {
            return Err(KnowledgeError::Invalid(format!(
                "its front matter says `type: {}` but it is in `{}/`; move it to `{}/`",
                item.front.kind,
                kind.directory(),
                item.front.kind.directory()
            )));
        }
        Ok(item)
    }

    /// When `branch` is checked out, brings the working tree and index to `tree`, leaving
    /// alone the files a person changed since the checkout (their edit stays; `git status`
    /// shows it).
    fn follow_in_working_tree(&self, branch: &str, tree: &Tree<'_>) -> Result<()> {
        if self.repo.is_bare() {
            return Ok(());
        }
        let head = match self.repo.find_reference("HEAD") {
            Ok(head) => head,
            Err(_) => return Ok(()),
        };
        if head.symbolic_target() != Some(&format!("refs/heads/{branch}")) {
            return Ok(());
        }
        self.repo
            .checkout_tree(
                tree.as_object(),
                Some(CheckoutBuilder::new().safe().allow_conflicts(true)),
            )
            .map_err(git("updating the working tree"))
    }
}

/// The item with secrets redacted from everything a person writes.
fn redacted(item: &KnowledgeItem) -> Result<KnowledgeItem> {
    let mut item = item.clone();
    item.validate()?;
    let clean = |text: &str| aeterna_redact::redact(text).into_text().into_owned();
    item.body = clean(&item.body);
    item.front.title = clean(&item.front.title);
    item.front.description = item.front.description.as_deref().map(clean);
    Ok(item)
}

/// Removes item `id` from every type directory of `index`; whether it was there.
fn remove_item(index: &mut git2::Index, id: &str) -> Result<bool> {
    let mut removed = false;
    for kind in ItemType::ALL {
        let path = format!("{}/{id}.md", kind.directory());
        if index.get_path(Path::new(&path), 0).is_some() {
            index
                .remove_path(Path::new(&path))
                .map_err(git(format!("removing {path}")))?;
            removed = true;
        }
    }
    Ok(removed)
}

fn blob_at(tree: &Tree<'_>, path: &str) -> Option<Oid> {
    let entry = tree.get_path(Path::new(path)).ok()?;
    (entry.kind() == Some(ObjectType::Blob)).then(|| entry.id())
}

fn item_blob(tree: &Tree<'_>, id: &str) -> Option<Oid> {
    ItemType::ALL
        .into_iter()
        .find_map(|kind| blob_at(tree, &format!("{}/{id}.md", kind.directory())))
}

fn index_entry(path: &str, blob: Oid, size: usize) -> git2::IndexEntry {
    git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: 0o100644,
        uid: 0,
        gid: 0,
        file_size: u32::try_from(size).unwrap_or(u32::MAX),
        id: blob,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
}

/// Checks a branch name: what git accepts, and no way out of `refs/heads/`.
fn check_branch(branch: &str) -> Result<()> {
    let valid = git2::Reference::is_valid_name(&format!("refs/heads/{branch}"))
        && !branch.starts_with('-')
        && !branch.contains("..");
    if !valid {
        return Err(KnowledgeError::Invalid(format!(
            "`{}` is not a valid branch name",
            branch.escape_debug()
        )));
    }
    Ok(())
}
