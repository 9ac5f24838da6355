//! `aeterna-hooks`: memory for a coding agent whether or not its model calls a tool. The
//! agent runs `aeterna hook EVENT` at the moments that matter (Claude Code's hooks); each run
//! reads the event's JSON on stdin, asks the memory server over HTTP, and prints context for
//! the model on stdout.
//!
//! * `SessionStart` → the context assembled for the repository and branch;
//! * `UserPromptSubmit` → the memories relevant to the prompt, within a token budget;
//! * `PostToolUse` / `PostToolUseFailure` → a trajectory event for every tool call; a failing
//!   shell command also goes to Hindsight (`hindsight_capture`), and a fix it has `matched` is
//!   handed to the model;
//! * `Stop` / `SessionEnd` → `note_distill` for the session.
//!
//! # Modules
//!
//! * [`claude_code`] — the events, their input and the answer's shape;
//! * [`install`] — `aeterna hooks install claude-code`: our hooks merged into a settings file;
//! * [`client`] — one stateless MCP request per call, bounded in time and size;
//! * [`writes`] — writes through the bridge's durable queue while the server is down;
//! * [`failure`] — whether a command failed, and the error text to remember;
//! * [`workspace`] — the project and branch, from the working directory's git metadata.
//!
//! # Guarantees
//!
//! * A hook never blocks the agent: every call is bounded, every error is one line on stderr
//!   and exit status 0, and the answer is empty when the server is down.
//! * A write the server did not receive is on disk in the queue before the hook exits, and is
//!   delivered by a later hook, in order (at least once).

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use aeterna_bridge::queue::QueueLimits;

pub mod claude_code;
pub mod client;
pub mod failure;
mod handle;
pub mod install;
pub mod workspace;
pub mod writes;

pub use claude_code::{Event, HookInput};

/// The largest event read from stdin (a tool's whole output can be in it).
pub const MAX_INPUT_BYTES: usize = 8 * 1024 * 1024;

/// How a hook reaches the server, and its budgets. (No `Debug`: it holds the token.)
#[derive(Clone)]
pub struct HookConfig {
    /// The server's MCP endpoint.
    pub server: String,
    /// Sent as a Bearer token.
    pub token: Option<String>,
    /// The write queue lives in `<data_dir>/queue`.
    pub data_dir: PathBuf,
    /// Overrides the project id taken from the repository's directory name.
    pub project_id: Option<String>,
    pub connect_timeout: Duration,
    /// The longest a context or lookup call may take (the agent waits for it).
    pub context_timeout: Duration,
    /// The longest a write may take.
    pub write_timeout: Duration,
    /// Tokens of context at the start of a session.
    pub session_token_budget: usize,
    /// Tokens of context per prompt.
    pub prompt_token_budget: usize,
    /// The most bytes of known fixes handed to the model after a failure.
    pub max_fix_bytes: usize,
    pub queue: QueueLimits,
}

impl HookConfig {
    pub fn new(server: impl Into<String>, data_dir: PathBuf) -> Self {
        Self {
            server: server.into(),
            token: None,
            data_dir,
            project_id: None,
            connect_timeout: Duration::from_millis(500),
            context_timeout: Duration::from_secs(2),
            write_timeout: Duration::from_secs(5),
            session_token_budget: 1500,
            prompt_token_budget: 800,
            max_fix_bytes: 4096,
            queue: QueueLimits::default(),
        }
    }
}

/// What a hook run produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Context for the model, when there is any.
    pub context: Option<String>,
    /// What went wrong, for one line on stderr.
    pub warnings: Vec<String>,
}

impl Outcome {
    fn warn(&mut self, warning: String) {
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
    }

    /// The answer for stdout (empty when there is nothing to add).
    pub fn stdout(&self, event: Event) -> String {
        match &self.context {
            Some(context) if event.adds_context() => claude_code::context_answer(event, context),
            _ => String::new(),
        }
    }

    /// The one line for stderr, if anything went wrong.
    pub fn stderr(&self, event: Event) -> Option<String> {
        (!self.warnings.is_empty())
            .then(|| format!("aeterna hook {event}: {}", self.warnings.join("; ")))
    }
}

/// Runs `event` on the JSON in `input`.
pub async fn run(event: Event, input: &[u8], config: &HookConfig) -> Outcome {
    let parsed: HookInput = match serde_json::from_slice(input) {
        Ok(parsed) => parsed,
        Err(error) => {
            let mut outcome = Outcome::default();
            outcome.warn(format!(
                "the event on stdin is not the JSON Claude Code sends ({error}); ignored"
            ));
            return outcome;
        }
    };
    handle::handle(event, &parsed, config).await
}

/// Reads the event from `reader`, at most [`MAX_INPUT_BYTES`].
pub fn read_input(reader: impl Read) -> Result<Vec<u8>, String> {
    let mut input = Vec::new();
    let limit = MAX_INPUT_BYTES as u64 + 1;
    reader
        .take(limit)
        .read_to_end(&mut input)
        .map_err(|error| format!("cannot read the event on stdin: {error}"))?;
    if input.len() > MAX_INPUT_BYTES {
        return Err(format!(
            "the event on stdin is over {MAX_INPUT_BYTES} bytes (aeterna_hooks::MAX_INPUT_BYTES); ignored"
        ));
    }
    Ok(input)
}
