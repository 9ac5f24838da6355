//! The durable write queue: `memory_add` and `trajectory_capture` calls made while the memory
//! server is unreachable, kept under `<data dir>/queue/` until they are delivered.
//!
//! One JSON file per entry, `<sequence>.json` (20 digits, so names sort in arrival order),
//! written to a temporary file, synced and renamed, so a crash leaves either the whole entry or
//! none. An entry is removed only after the server acknowledged it; an entry the server refuses
//! (a tool error: it will never succeed) moves to `queue/refused/` with the reason, so no write
//! is dropped silently. Delivery is at least once: a crash between the server's answer and the
//! removal sends that one entry again on the next start (`memory_add` stores identical content
//! once).
//!
//! Bounded: at most `max_entries` entries and `max_bytes` bytes of entries; a write over either
//! bound is refused with an error naming the bound.
//!
//! Several processes may share one queue (every `aeterna hook` is a process of its own): a
//! write takes an exclusive lock on `queue/.lock` and numbers its entry after what is on disk
//! then, so two writers never pick the same name; delivery takes `queue/.deliver.lock`, so
//! only one process delivers at a time and no entry is sent twice by two of them.

use std::fs::File;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The tools whose calls are queued while the server is unreachable.
pub const QUEUED_TOOLS: [&str; 2] = ["memory_add", "trajectory_capture"];

/// Bounds of the queue.
#[derive(Debug, Clone, Copy)]
pub struct QueueLimits {
    pub max_entries: usize,
    pub max_bytes: u64,
}

impl Default for QueueLimits {
    fn default() -> Self {
        Self {
            max_entries: 10_000,
            max_bytes: 64 * 1024 * 1024,
        }
    }
}

/// One queued call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueuedCall {
    /// Unique per entry (UUID v7), logged with each delivery.
    pub key: String,
    pub tool: String,
    pub arguments: Map<String, Value>,
}

/// A queued entry on disk.
#[derive(Debug, Clone)]
pub struct Entry {
    pub path: PathBuf,
    pub bytes: u64,
    pub call: QueuedCall,
}

/// Why a call could not be queued.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error(
        "the local write queue is full ({entries} entries, limit {limit}: queue.max_entries); \
         the write was not stored, retry when the memory server is back"
    )]
    TooManyEntries { entries: usize, limit: usize },
    #[error(
        "the local write queue is full ({bytes} of {limit} bytes: queue.max_bytes); the write \
         was not stored, retry when the memory server is back"
    )]
    TooManyBytes { bytes: u64, limit: u64 },
    #[error("cannot write to the local write queue at {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The queue directory and its bookkeeping.
pub struct WriteQueue {
    dir: PathBuf,
    limits: QueueLimits,
    state: Mutex<QueueState>,
}

struct QueueState {
    next_sequence: u64,
    entries: usize,
    bytes: u64,
}

impl WriteQueue {
    /// Opens (creating) `dir` and counts what is already queued there.
    pub fn open(dir: impl Into<PathBuf>, limits: QueueLimits) -> Result<Self, QueueError> {
        let dir = dir.into();
        let io = |source| QueueError::Io {
            path: dir.clone(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let state = scan(&dir).map_err(io)?;
        Ok(Self {
            dir,
            limits,
            state: Mutex::new(state),
        })
    }

    /// The right to deliver entries, held by one process at a time; `None` while another
    /// process (or another delivery of this one) holds it.
    pub fn try_deliver(&self) -> Option<DeliveryGuard> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join(".deliver.lock"))
            .ok()?;
        file.try_lock().ok()?;
        Some(DeliveryGuard { _file: file })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of entries waiting, as this process last saw the directory.
    pub fn len(&self) -> usize {
        self.state.lock().entries
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends a call; returns its position (1-based) in the queue.
    pub fn push(&self, tool: &str, arguments: Map<String, Value>) -> Result<usize, QueueError> {
        let call = QueuedCall {
            key: uuid::Uuid::now_v7().to_string(),
            tool: tool.to_owned(),
            arguments,
        };
        let bytes = serde_json::to_vec(&call).map_err(|error| QueueError::Io {
            path: self.dir.clone(),
            source: std::io::Error::other(error),
        })?;
        let mut state = self.state.lock();
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| QueueError::Io { path, source }
        };
        // Another process may have written or delivered entries since we last looked.
        let _writer = lock_file(&self.dir.join(".lock")).map_err(io(&self.dir))?;
        *state = scan(&self.dir).map_err(io(&self.dir))?;
        if state.entries >= self.limits.max_entries {
            return Err(QueueError::TooManyEntries {
                entries: state.entries,
                limit: self.limits.max_entries,
            });
        }
        let size = bytes.len() as u64;
        if state.bytes + size > self.limits.max_bytes {
            return Err(QueueError::TooManyBytes {
                bytes: state.bytes + size,
                limit: self.limits.max_bytes,
            });
        }
        let path = self.dir.join(format!("{:020}.json", state.next_sequence));
        write_atomically(&path, &bytes).map_err(io(&path))?;
        state.next_sequence += 1;
        state.entries += 1;
        state.bytes += size;
        tracing::info!(tool, key = %call.key, queued = state.entries, "write queued while the memory server is unreachable");
        Ok(state.entries)
    }

    /// The oldest entry, if any. An unreadable entry is moved to `refused/` and skipped.
    pub fn front(&self) -> Option<Entry> {
        let files = entry_files(&self.dir).ok()?;
        for (_, path) in files {
            let read = std::fs::read(&path).map_err(|error| error.to_string());
            match read.and_then(|bytes| {
                serde_json::from_slice::<QueuedCall>(&bytes)
                    .map(|call| (bytes.len() as u64, call))
                    .map_err(|error| error.to_string())
            }) {
                Ok((bytes, call)) => return Some(Entry { path, bytes, call }),
                Err(reason) => {
                    tracing::error!(path = %path.display(), reason, "unreadable queue entry set aside");
                    self.set_aside(&path, &format!("unreadable: {reason}"));
                }
            }
        }
        None
    }

    /// Removes a delivered entry.
    pub fn remove(&self, entry: &Entry) {
        if let Err(error) = std::fs::remove_file(&entry.path) {
            tracing::error!(path = %entry.path.display(), %error, "cannot remove a delivered queue entry");
            return;
        }
        self.forget(entry.bytes);
    }

    /// Moves an entry the server refused to `refused/`, with the reason beside it.
    pub fn refuse(&self, entry: &Entry, reason: &str) {
        tracing::error!(tool = %entry.call.tool, key = %entry.call.key, reason, "the memory server refused a queued write; kept in queue/refused");
        self.set_aside(&entry.path, reason);
    }

    fn set_aside(&self, path: &Path, reason: &str) {
        let refused = self.dir.join("refused");
        let size = std::fs::metadata(path).map(|meta| meta.len()).unwrap_or(0);
        let moved = std::fs::create_dir_all(&refused).and_then(|()| {
            let name = path.file_name().unwrap_or_default();
            std::fs::write(
                refused.join(name).with_extension("reason.txt"),
                reason.as_bytes(),
            )?;
            std::fs::rename(path, refused.join(name))
        });
        match moved {
            Ok(()) => self.forget(size),
            Err(error) => {
                tracing::error!(path = %path.display(), %error, "cannot set a queue entry aside")
            }
        }
    }

    fn forget(&self, bytes: u64) {
        let mut state = self.state.lock();
        state.entries = state.entries.saturating_sub(1);
        state.bytes = state.bytes.saturating_sub(bytes);
    }
}

/// Held while delivering (see [`WriteQueue::try_deliver`]); the lock is released on drop.
pub struct DeliveryGuard {
    _file: File,
}

/// An exclusive lock on `path` (created if missing), released when the file is dropped.
fn lock_file(path: &Path) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    file.lock()?;
    Ok(file)
}

/// What is queued in `dir` now.
fn scan(dir: &Path) -> std::io::Result<QueueState> {
    let mut state = QueueState {
        next_sequence: 0,
        entries: 0,
        bytes: 0,
    };
    for (sequence, path) in entry_files(dir)? {
        state.next_sequence = state.next_sequence.max(sequence + 1);
        state.entries += 1;
        state.bytes += std::fs::metadata(&path).map(|meta| meta.len()).unwrap_or(0);
    }
    Ok(state)
}

/// `<sequence>.json` files of `dir`, oldest first.
fn entry_files(dir: &Path) -> std::io::Result<Vec<(u64, PathBuf)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "json")
            && let Some(sequence) = path
                .file_stem()
                .and_then(|stem| stem.to_str())
                .and_then(|stem| stem.parse::<u64>().ok())
        {
            files.push((sequence, path));
        }
    }
    files.sort();
    Ok(files)
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let temp = path.with_extension("tmp");
    let mut file = std::fs::File::create(&temp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temp, path)?;
    if let Some(dir) = path.parent()
        && let Ok(dir) = std::fs::File::open(dir)
    {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(content: &str) -> Map<String, Value> {
        json!({"content": content, "layer": "project"})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn entries_survive_reopening_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let queue = WriteQueue::open(dir.path(), QueueLimits::default()).unwrap();
        queue.push("memory_add", args("one")).unwrap();
        queue.push("memory_add", args("two")).unwrap();
        drop(queue);
        let queue = WriteQueue::open(dir.path(), QueueLimits::default()).unwrap();
        assert_eq!(queue.len(), 2);
        let first = queue.front().unwrap();
        assert_eq!(first.call.arguments["content"], "one");
        queue.remove(&first);
        queue.push("memory_add", args("three")).unwrap();
        let second = queue.front().unwrap();
        assert_eq!(second.call.arguments["content"], "two");
        queue.remove(&second);
        assert_eq!(queue.front().unwrap().call.arguments["content"], "three");
        assert_eq!(queue.len(), 1);
    }

    #[test]
    fn bounds_refuse_with_the_limit_named() {
        let dir = tempfile::tempdir().unwrap();
        let limits = QueueLimits {
            max_entries: 2,
            max_bytes: 1024,
        };
        let queue = WriteQueue::open(dir.path(), limits).unwrap();
        queue.push("memory_add", args("a")).unwrap();
        queue.push("memory_add", args("b")).unwrap();
        let error = queue.push("memory_add", args("c")).unwrap_err().to_string();
        assert!(error.contains("queue.max_entries"), "{error}");

        let dir = tempfile::tempdir().unwrap();
        let queue = WriteQueue::open(dir.path(), limits).unwrap();
        let error = queue
            .push("memory_add", args(&"x".repeat(2000)))
            .unwrap_err()
            .to_string();
        assert!(error.contains("queue.max_bytes"), "{error}");
        assert!(queue.is_empty());
    }

    #[test]
    fn two_processes_sharing_a_queue_never_overwrite_each_other() {
        let dir = tempfile::tempdir().unwrap();
        // Two handles opened before either writes, as two hook processes would.
        let first = WriteQueue::open(dir.path(), QueueLimits::default()).unwrap();
        let second = WriteQueue::open(dir.path(), QueueLimits::default()).unwrap();
        first.push("memory_add", args("one")).unwrap();
        second.push("memory_add", args("two")).unwrap();
        first.push("memory_add", args("three")).unwrap();
        let reopened = WriteQueue::open(dir.path(), QueueLimits::default()).unwrap();
        assert_eq!(reopened.len(), 3);
        let mut contents = Vec::new();
        while let Some(entry) = reopened.front() {
            contents.push(entry.call.arguments["content"].as_str().unwrap().to_owned());
            reopened.remove(&entry);
        }
        assert_eq!(contents, ["one", "two", "three"]);

        // One deliverer at a time; the right returns when it is dropped.
        let delivering = first.try_deliver().expect("free");
        assert!(second.try_deliver().is_none());
        drop(delivering);
        assert!(second.try_deliver().is_some());
    }

    #[test]
    fn refused_and_unreadable_entries_are_set_aside_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let queue = WriteQueue::open(dir.path(), QueueLimits::default()).unwrap();
        std::fs::write(dir.path().join("00000000000000000000.json"), b"{broken").unwrap();
        let queue2 = WriteQueue::open(dir.path(), QueueLimits::default()).unwrap();
        drop(queue);
        queue2.push("memory_add", args("ok")).unwrap();
        let entry = queue2.front().unwrap();
        assert_eq!(entry.call.arguments["content"], "ok");
        queue2.refuse(&entry, "memory_add: invalid layer");
        assert!(queue2.front().is_none());
        assert!(queue2.is_empty());
        let refused: Vec<_> = std::fs::read_dir(dir.path().join("refused"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(refused.len(), 4, "{refused:?}");
    }
}
