//! The spill file: where acknowledged events go when the store is still failing at the end of
//! the shutdown drain, and where they come back from at the next start.
//!
//! Events are written redacted, one JSON object per line, and synced before shutdown reports
//! them as spilled. At start the file is renamed to `<file>.replaying` (appended to it, if an
//! earlier replay did not finish) so that a spill during this run starts a new file; the
//! replayed events go through the queue like new ones, and the `.replaying` file is removed
//! only once they are stored. Storing is idempotent by event id, so an event that ends up in
//! both files is stored once.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::event::CapturedEvent;

/// Appends `events` to the spill file at `path` and syncs it.
pub(crate) fn append(path: &Path, events: &[CapturedEvent]) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(path)?;
    let mut lines = Vec::new();
    if ends_mid_line(&file)? {
        lines.push(b'\n'); // a line torn by a crash stays alone on its line, and is skipped
    }
    for event in events {
        serde_json::to_writer(&mut lines, event)?;
        lines.push(b'\n');
    }
    file.write_all(&lines)?;
    file.sync_all()
}

/// Whether the file's last line is unterminated. (Writes in append mode go to the end
/// whatever this seek does.)
fn ends_mid_line(mut file: &File) -> io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    let mut last = [0u8];
    file.seek(SeekFrom::End(-1))?;
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// Events spilled by earlier runs, claimed for replay; `done` removes them for good.
pub(crate) struct Claimed {
    pub(crate) events: Vec<CapturedEvent>,
    replaying: PathBuf,
}

impl Claimed {
    /// The claimed events are stored: forget them.
    pub(crate) fn done(self) -> io::Result<()> {
        fs::remove_file(&self.replaying)
    }
}

/// Claims what earlier runs spilled to `path`, if anything. A line that does not parse (a
/// write torn by a crash) is skipped with a warning; the rest is kept.
pub(crate) fn claim(path: &Path) -> io::Result<Option<Claimed>> {
    let replaying = replaying_path(path);
    if path.exists() {
        if replaying.exists() {
            let mut earlier = OpenOptions::new()
                .append(true)
                .read(true)
                .open(&replaying)?;
            let mut bytes = Vec::new();
            if ends_mid_line(&earlier)? {
                bytes.push(b'\n');
            }
            bytes.extend(fs::read(path)?);
            earlier.write_all(&bytes)?;
            earlier.sync_all()?;
            fs::remove_file(path)?;
        } else {
            fs::rename(path, &replaying)?;
        }
    } else if !replaying.exists() {
        return Ok(None);
    }
    let mut events = Vec::new();
    // Bytes, not text: a torn line may end inside a UTF-8 character.
    for (number, line) in fs::read(&replaying)?.split(|&b| b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(event) => events.push(event),
            Err(error) => tracing::warn!(
                file = %replaying.display(),
                line = number + 1,
                %error,
                "skipping an unreadable line of the trajectory spill file"
            ),
        }
    }
    Ok(Some(Claimed { events, replaying }))
}

fn replaying_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".replaying");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EventLimits;
    use crate::event::TrajectoryEvent;
    use aeterna_memory::Identity;

    fn event(tool: &str) -> CapturedEvent {
        let raw = TrajectoryEvent {
            tool_name: tool.into(),
            description: String::new(),
            input: serde_json::Value::Null,
            output: serde_json::json!("output"),
            success: false,
            duration_ms: 3,
            tags: vec!["ci".into()],
            metadata: None,
        };
        CapturedEvent::build(Identity::new("t"), raw, &EventLimits::default()).unwrap()
    }

    #[test]
    fn claims_merge_an_unfinished_replay_and_done_forgets_both() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spill.jsonl");
        assert!(claim(&path).unwrap().is_none(), "nothing spilled yet");

        let (a, b, c) = (event("a"), event("b"), event("c"));
        append(&path, &[a.clone(), b.clone()]).unwrap();
        let first = claim(&path).unwrap().expect("spilled events");
        assert_eq!(first.events, vec![a.clone(), b.clone()]);
        assert!(!path.exists(), "a new spill starts a new file");

        // The replay did not finish (no `done`) and this run spilled again.
        append(&path, std::slice::from_ref(&c)).unwrap();
        let second = claim(&path).unwrap().expect("spilled events");
        assert_eq!(second.events, vec![a, b, c]);
        second.done().unwrap();
        assert!(claim(&path).unwrap().is_none());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_torn_line_is_skipped_and_what_came_before_and_after_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spill.jsonl");
        let whole = event("whole");
        append(&path, std::slice::from_ref(&whole)).unwrap();
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"tool_name\":\"caf\xc3").unwrap(); // a crash mid-write, mid-character
        let later = event("later");
        append(&path, std::slice::from_ref(&later)).unwrap();
        let claimed = claim(&path).unwrap().unwrap();
        assert_eq!(claimed.events, vec![whole, later]);
    }
}
