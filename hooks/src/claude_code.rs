//! Claude Code's hook events: what arrives on stdin, and the answer on stdout that adds context
//! for the model (`hookSpecificOutput.additionalContext`).

use serde::Deserialize;
use serde_json::{Value, json};

/// The events `aeterna hook` handles, named as Claude Code names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// A session starts (or resumes, is cleared or compacted): context for the repository.
    SessionStart,
    /// The user sent a prompt: memories relevant to it.
    UserPromptSubmit,
    /// A tool call succeeded (its output may still show a failure).
    PostToolUse,
    /// A tool call failed (a shell command exited non-zero).
    PostToolUseFailure,
    /// The model finished its turn.
    Stop,
    /// The session ended.
    SessionEnd,
}

impl Event {
    pub const ALL: [Event; 6] = [
        Event::SessionStart,
        Event::UserPromptSubmit,
        Event::PostToolUse,
        Event::PostToolUseFailure,
        Event::Stop,
        Event::SessionEnd,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PostToolUse => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::Stop => "Stop",
            Event::SessionEnd => "SessionEnd",
        }
    }

    /// Whether Claude Code reads `additionalContext` from this event's answer.
    pub fn adds_context(self) -> bool {
        !matches!(self, Event::Stop | Event::SessionEnd)
    }
}

impl std::str::FromStr for Event {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Event::ALL
            .into_iter()
            .find(|event| event.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Event::ALL.iter().map(|event| event.name()).collect();
                format!(
                    "unknown hook event `{name}`; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

impl std::fmt::Display for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What Claude Code sends on a hook's stdin (the fields `aeterna hook` reads; others are
/// ignored, so newer versions keep working).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct HookInput {
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub cwd: Option<std::path::PathBuf>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
    /// `UserPromptSubmit`: the user's prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// `SessionStart`: `startup`, `resume`, `clear` or `compact`.
    #[serde(default)]
    pub source: Option<String>,
    /// Tool events.
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: Option<Value>,
    /// `PostToolUse`: the tool's answer (`{stdout, stderr, …}` for Bash).
    #[serde(default)]
    pub tool_response: Option<Value>,
    /// `PostToolUseFailure`: the error (`Exit code 101\n…` for Bash).
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub is_interrupt: bool,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// `SessionEnd`: why it ended.
    #[serde(default)]
    pub reason: Option<String>,
}

/// The answer that adds `context` for the model, as Claude Code reads it on stdout.
pub fn context_answer(event: Event, context: &str) -> String {
    json!({
        "hookSpecificOutput": {
            "hookEventName": event.name(),
            "additionalContext": context,
        }
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_round_trip_and_unknown_ones_list_the_known() {
        for event in Event::ALL {
            assert_eq!(event.name().parse::<Event>().unwrap(), event);
        }
        let error = "PreToolUse".parse::<Event>().unwrap_err();
        assert!(error.contains("SessionStart, UserPromptSubmit"), "{error}");
    }

    #[test]
    fn real_payloads_parse_and_unknown_fields_are_ignored() {
        // As Claude Code 2.1 sends them.
        let failure: HookInput = serde_json::from_str(
            r#"{"session_id":"e69","transcript_path":"/t.jsonl","cwd":"/tmp/exp",
            "prompt_id":"73e","permission_mode":"default","effort":{"level":"medium"},
            "hook_event_name":"PostToolUseFailure","tool_name":"Bash",
            "tool_input":{"command":"cargo test","description":"run"},"tool_use_id":"toolu_01",
            "error":"Exit code 101\nerror[E0308]: mismatched types","is_interrupt":false,
            "duration_ms":18}"#,
        )
        .unwrap();
        assert_eq!(failure.tool_name.as_deref(), Some("Bash"));
        assert_eq!(failure.duration_ms, Some(18));
        assert!(failure.error.unwrap().contains("E0308"));
        let answer: Value =
            serde_json::from_str(&context_answer(Event::UserPromptSubmit, "x")).unwrap();
        assert_eq!(
            answer["hookSpecificOutput"]["hookEventName"],
            "UserPromptSubmit"
        );
        assert_eq!(answer["hookSpecificOutput"]["additionalContext"], "x");
    }
}
