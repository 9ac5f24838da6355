//! Runs one allowed command for a phase: never through a shell, in its own process group,
//! under a timeout that kills the whole group, with its output kept head + tail within a cap.
//!
//! The command comes from the operator's allow-list (`meta.commands`) by name; the working
//! directory must be inside one of `meta.allowed_roots` after resolving symlinks. The process
//! group is killed (SIGKILL) whenever the phase ends — by exit, timeout, cancellation or the
//! task being dropped — so nothing a test spawned outlives its phase.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::config::MetaConfig;
use crate::error::{MetaError, Result};

/// A resolved command: the operator's argv and the checked working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedCommand {
    pub name: String,
    pub argv: Vec<String>,
    pub working_dir: PathBuf,
}

impl PreparedCommand {
    /// The command line as a person would read it (for trajectories and reports).
    pub fn display(&self) -> String {
        self.argv.join(" ")
    }
}

/// Looks `name` up in the allow-list; `argument` names the tool argument in the error.
pub fn allowed_command(
    config: &MetaConfig,
    argument: &str,
    name: &str,
    working_dir: &Path,
) -> Result<PreparedCommand> {
    let Some(command) = config.commands.get(name) else {
        let known: Vec<&str> = config.commands.keys().map(String::as_str).collect();
        return Err(MetaError::invalid(format!(
            "`{argument}` is `{name}`, which is not in the operator's allow-list \
             (meta.commands); allowed: {}",
            if known.is_empty() {
                "none configured".to_owned()
            } else {
                known.join(", ")
            }
        )));
    };
    Ok(PreparedCommand {
        name: name.to_owned(),
        argv: command.argv.clone(),
        working_dir: working_dir.to_owned(),
    })
}

/// Resolves `dir` and checks it lies inside an allowed root.
pub fn allowed_working_dir(config: &MetaConfig, dir: &str) -> Result<PathBuf> {
    if config.allowed_roots.is_empty() {
        return Err(MetaError::invalid(
            "`working_dir`: command-driven loops are disabled on this server (no \
             meta.allowed_roots); drive the loop yourself with meta_loop_step",
        ));
    }
    let resolved = Path::new(dir).canonicalize().map_err(|error| {
        MetaError::invalid(format!(
            "`working_dir` is `{dir}`, which cannot be resolved ({error}); give an existing \
             directory"
        ))
    })?;
    let inside = config.allowed_roots.iter().any(|root| {
        root.canonicalize()
            .map(|root| resolved.starts_with(root))
            .unwrap_or(false)
    });
    if !inside || !resolved.is_dir() {
        return Err(MetaError::invalid(format!(
            "`working_dir` is `{dir}`, which is not a directory inside the allowed roots \
             (meta.allowed_roots)"
        )));
    }
    Ok(resolved)
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    Exited(Option<i32>),
    /// The timeout passed; the group was killed.
    TimedOut,
    /// Cancelled; the group was killed.
    Cancelled,
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    pub end: RunEnd,
    /// stdout and stderr interleaved as they arrived, head + tail within the cap.
    pub output: String,
    pub omitted_bytes: u64,
    pub duration: Duration,
    /// The process group the command ran in (its pid).
    pub process_group: Option<i32>,
}

impl RunOutcome {
    pub fn success(&self) -> bool {
        self.end == RunEnd::Exited(Some(0))
    }
}

/// Kills the process group when dropped, so an aborted task leaves no process behind.
struct GroupGuard(Option<i32>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: killpg has no memory effects; ESRCH (group gone) is fine.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs `command` until it exits, `timeout` passes or `cancel` fires.
pub async fn run(
    command: &PreparedCommand,
    timeout: Duration,
    max_output_bytes: usize,
    cancel: &CancellationToken,
) -> RunOutcome {
    let started = Instant::now();
    let mut buffer = HeadTail::new(max_output_bytes);
    let mut process = Command::new(&command.argv[0]);
    process
        .args(&command.argv[1..])
        .current_dir(&command.working_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match process.spawn() {
        Ok(child) => child,
        Err(error) => {
            buffer.push(format!("cannot start `{}`: {error}\n", command.display()).as_bytes());
            return RunOutcome {
                end: RunEnd::Exited(None),
                output: buffer.finish(),
                omitted_bytes: 0,
                duration: started.elapsed(),
                process_group: None,
            };
        }
    };
    let pgid = child.id().map(|pid| pid as i32);
    let mut guard = GroupGuard(pgid);
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let deadline = tokio::time::Instant::now() + timeout;
    let mut status = None;
    let end = loop {
        if status.is_some() && stdout.is_none() && stderr.is_none() {
            break RunEnd::Exited(status.flatten());
        }
        let mut out_chunk = [0u8; 8192];
        let mut err_chunk = [0u8; 8192];
        tokio::select! {
            read = read_some(&mut stdout, &mut out_chunk) => match read {
                Some(n) => buffer.push(&out_chunk[..n]),
                None => stdout = None,
            },
            read = read_some(&mut stderr, &mut err_chunk) => match read {
                Some(n) => buffer.push(&err_chunk[..n]),
                None => stderr = None,
            },
            exit = child.wait(), if status.is_none() => {
                status = Some(exit.ok().and_then(|s| s.code()));
                // The leader is gone; whatever it left in its group goes too, so a
                // background grandchild holding the pipes cannot keep the phase open.
                guard.kill();
            },
            _ = tokio::time::sleep_until(deadline) => break RunEnd::TimedOut,
            _ = cancel.cancelled() => break RunEnd::Cancelled,
        }
    };
    guard.kill();
    // Reaps the leader (at once: it was killed, or has already exited).
    let _ = child.wait().await;
    let omitted = buffer.omitted();
    let mut output = buffer.finish();
    match end {
        RunEnd::TimedOut => output.push_str(&format!(
            "\n[aeterna: `{}` timed out after {} ms; its process group was killed]\n",
            command.display(),
            timeout.as_millis()
        )),
        RunEnd::Cancelled => {
            output.push_str("\n[aeterna: cancelled; the process group was killed]\n")
        }
        RunEnd::Exited(_) => {}
    }
    RunOutcome {
        end,
        output,
        omitted_bytes: omitted,
        duration: started.elapsed(),
        process_group: pgid,
    }
}

/// Reads a chunk; `None` at end of stream (or when the stream is already closed, never
/// resolving so `select!` waits on the others).
async fn read_some<R: AsyncRead + Unpin>(stream: &mut Option<R>, buf: &mut [u8]) -> Option<usize> {
    match stream {
        Some(reader) => match reader.read(buf).await {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        None => std::future::pending().await,
    }
}

/// Output kept head + tail: the first half of the cap, and a ring of the last half. Memory
/// never exceeds the cap, whatever the command prints.
#[derive(Debug)]
pub struct HeadTail {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    omitted: u64,
}

impl HeadTail {
    pub fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        HeadTail {
            head: Vec::with_capacity(head_cap.min(64 * 1024)),
            tail: std::collections::VecDeque::new(),
            head_cap,
            tail_cap: cap - head_cap,
            omitted: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        for &byte in bytes {
            if self.tail.len() == self.tail_cap {
                self.tail.pop_front();
                self.omitted += 1;
            }
            if self.tail_cap > 0 {
                self.tail.push_back(byte);
            } else {
                self.omitted += 1;
            }
        }
    }

    pub fn omitted(&self) -> u64 {
        self.omitted
    }

    /// The kept text (invalid UTF-8 replaced), with a marker where bytes were left out.
    pub fn finish(self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted > 0 {
            text.push_str(&format!("\n[… {} bytes omitted …]\n", self.omitted));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        text.push_str(&String::from_utf8_lossy(&tail));
        text
    }
}

/// `text` kept head + tail within `cap` bytes: (kept, bytes omitted).
pub fn cap_text(text: &str, cap: usize) -> (String, u64) {
    if text.len() <= cap {
        return (text.to_owned(), 0);
    }
    let mut buffer = HeadTail::new(cap);
    buffer.push(text.as_bytes());
    let omitted = buffer.omitted();
    (buffer.finish(), omitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_are_kept_within_the_cap() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let (kept, omitted) = cap_text(&text, 200);
        assert!(kept.starts_with("line 0\nline 1\n"), "{kept}");
        assert!(kept.ends_with("line 999\n"), "{kept}");
        assert_eq!(omitted as usize, text.len() - 200);
        assert!(kept.contains("bytes omitted"));
        assert_eq!(cap_text("short", 200), ("short".to_owned(), 0));
    }

    #[test]
    fn commands_and_directories_outside_the_allow_lists_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let inside = root.path().join("project");
        std::fs::create_dir(&inside).unwrap();
        let mut config = MetaConfig::default();
        let error = allowed_working_dir(&config, inside.to_str().unwrap()).unwrap_err();
        assert!(error.to_string().contains("`working_dir`"), "{error}");
        config.allowed_roots = vec![root.path().to_owned()];
        assert!(allowed_working_dir(&config, inside.to_str().unwrap()).is_ok());
        let outside = allowed_working_dir(&config, "/").unwrap_err();
        assert!(outside.to_string().contains("allowed roots"), "{outside}");
        let escape = format!("{}/../..", inside.display());
        assert!(allowed_working_dir(&config, &escape).is_err());
        let unknown = allowed_command(&config, "test_command", "rm-rf", &inside).unwrap_err();
        assert!(
            unknown.to_string().contains("`test_command` is `rm-rf`"),
            "{unknown}"
        );
    }
}
