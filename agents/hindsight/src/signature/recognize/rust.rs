//! rustc diagnostics (`error[E0308]: …` with its `-->`, `|`, `=` and `help:` lines), cargo's
//! own errors, and panics (`thread 'main' (123) panicked at src/main.rs:4:5:`, old and new
//! formats). Warnings are consumed without producing a signature.

use super::{Found, RawError, group, lazy_regex, until};
use crate::signature::Language;

lazy_regex!(
    HEADER,
    r"^(?P<level>error|warning)(?:\[(?P<code>[A-Z]\d{4})\])?: (?P<msg>.+)$"
);
lazy_regex!(LOCATION, r"^\s*--> (?P<path>.+?)(?::\d+:\d+)?$");
lazy_regex!(HINT, r"^\s*(?:= )?(?P<kind>help|note): (?P<msg>.+)$");
lazy_regex!(LABEL, r"^\s*(?:\d+\s*)?\|\s*[\^\-~]+ (?P<msg>.+)$");
lazy_regex!(
    PANIC_NEW,
    r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at (?P<path>[^\s']+?):(?:\d+):(?:\d+):$"
);
lazy_regex!(
    PANIC_OLD,
    r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at '(?P<msg>.*)', (?P<path>\S+?):\d+:\d+$"
);

/// cargo/rustc lines that only report that errors happened.
const SUMMARIES: &[&str] = &[
    "aborting due to",
    "could not compile",
    "test failed, to rerun",
    "build failed",
    "process didn't exit successfully",
];

pub(super) fn recognize(lines: &[&str], index: usize) -> Option<Found> {
    let line = lines[index].trim_end();
    if line.starts_with("thread '") {
        return panic(lines, index);
    }
    let header = HEADER.captures(line)?;
    // The diagnostic runs to the next blank line.
    let end = until(lines, index + 1, |l| l.trim().is_empty());
    if &header["level"] == "warning" {
        return Found::warning(end);
    }
    let message = &header["msg"];
    let code = group(&header, "code");
    let body = &lines[index + 1..end];
    let has_location = body.iter().any(|l| LOCATION.is_match(l));
    if code.is_none() && !has_location {
        if SUMMARIES.iter().any(|s| message.starts_with(s)) {
            let error = RawError::new(Language::Rust, None, message)
                .tool("cargo")
                .summary();
            return Found::error(error, end);
        }
        // A bare `error: …` at column 0 is cargo's when it quotes with backticks; other tools
        // (git, pip) print the same shape and are left to the generic recogniser.
        if !message.contains('`') {
            return None;
        }
    }

    let tool = if has_location { "rustc" } else { "cargo" };
    let mut error = RawError::new(Language::Rust, code.map(str::to_string), message).tool(tool);
    for line in body {
        if let Some(location) = LOCATION.captures(line) {
            error.paths.push(location["path"].to_string());
        } else if let Some(hint) = HINT.captures(line) {
            error
                .hints
                .push(format!("{}: {}", &hint["kind"], &hint["msg"]));
        } else if let Some(label) = LABEL.captures(line) {
            error.hints.push(label["msg"].to_string());
        }
    }
    Found::error(error, end)
}

fn panic(lines: &[&str], index: usize) -> Option<Found> {
    let line = lines[index].trim_end();
    let (message, path, thread, next) = if let Some(old) = PANIC_OLD.captures(line) {
        (
            old["msg"].to_string(),
            old["path"].to_string(),
            old["thread"].to_string(),
            index + 1,
        )
    } else {
        let new = PANIC_NEW.captures(line)?;
        // The message follows on its own lines, up to the `note:` hint or a blank line.
        let end = until(lines, index + 1, |l| {
            l.trim().is_empty() || l.starts_with("note: ")
        });
        let message = lines
            .get(index + 1)
            .copied()
            .unwrap_or("explicit panic")
            .to_string();
        (
            message,
            new["path"].to_string(),
            new["thread"].to_string(),
            end,
        )
    };
    let mut error = RawError::new(Language::Rust, Some("panic".to_string()), message).tool("rust");
    error.paths.push(path);
    if thread != "main" {
        error.context.push("test:panicked".to_string());
    }
    Found::error(error, next)
}
