//! Recognisers: find where each error in a text starts and ends, and what it says.
//!
//! Each ecosystem has a recogniser `fn(&[&str], usize) -> Option<Found>` that looks at the line
//! at an index and, when an error (or a warning, or noise it owns) starts there, consumes the
//! lines that belong to it. The driver tries them in a fixed order at each line; lines nobody
//! claims are skipped. Order matters only where formats overlap: the JVM recogniser runs before
//! Node's (both print `at` frames), the C family before the shell (both print `No such file or
//! directory`), and the generic one last.
//!
//! When none of them finds a specific error, [`headline::fallback`] looks for the error's
//! headline among the lines nobody claimed, by cues all toolchains share.

mod cfamily;
mod go;
mod headline;
mod javascript;
mod jvm;
mod python;
mod rust;
mod shell;

use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::Language;

/// One stack frame as printed, before normalisation.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Frame {
    pub file: Option<String>,
    pub function: Option<String>,
}

impl Frame {
    pub fn new(file: Option<&str>, function: Option<&str>) -> Frame {
        Frame {
            file: file.map(str::to_string),
            function: function.map(str::to_string),
        }
    }
}

/// What a recogniser found, before normalisation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawError {
    pub language: Language,
    /// `None`: derive it from the message pattern's head.
    pub error_type: Option<String>,
    /// The message; may already contain `<ID>`/`<T>` placeholders from a template.
    pub message: String,
    pub frames: Vec<Frame>,
    /// Source locations mentioned by the error.
    pub paths: Vec<String>,
    /// help/note/label lines, normalised into `help:` context.
    pub hints: Vec<String>,
    /// Values a template replaced by a placeholder, kept as `q:` context.
    pub quoted: Vec<String>,
    /// Ready-made context entries (`tool:rustc`, `cause:ValueError`, `exit:2`).
    pub context: Vec<String>,
    /// A consequence of other errors (`aborting due to…`, `exit status 1`): used only when the
    /// text holds nothing more specific.
    pub summary: bool,
    /// Found by the generic line patterns (`tool: error: …`, `SomethingError: …`), not by a
    /// recogniser that knows the format: the headline fallback may read the text better.
    pub generic: bool,
}

impl RawError {
    pub fn new(language: Language, error_type: Option<String>, message: impl Into<String>) -> Self {
        RawError {
            language,
            error_type,
            message: message.into(),
            frames: Vec::new(),
            paths: Vec::new(),
            hints: Vec::new(),
            quoted: Vec::new(),
            context: Vec::new(),
            summary: false,
            generic: false,
        }
    }

    pub fn tool(mut self, tool: &str) -> Self {
        self.context.push(format!("tool:{tool}"));
        self
    }

    pub fn summary(mut self) -> Self {
        self.summary = true;
        self
    }
}

/// A recogniser's claim: the lines up to `next` are consumed; `error` is `None` for lines that
/// are owned but are not errors (warnings, progress noise).
pub(crate) struct Found {
    pub error: Option<RawError>,
    pub next: usize,
    /// The lines are a warning the recogniser knows.
    pub warning: bool,
}

impl Found {
    pub fn error(error: RawError, next: usize) -> Option<Found> {
        Some(Found {
            error: Some(error),
            next,
            warning: false,
        })
    }

    pub fn skip(next: usize) -> Option<Found> {
        Some(Found {
            error: None,
            next,
            warning: false,
        })
    }

    /// Lines that are a warning (or a note) in a format the recogniser knows.
    pub fn warning(next: usize) -> Option<Found> {
        Some(Found {
            error: None,
            next,
            warning: true,
        })
    }
}

type Recognizer = fn(&[&str], usize) -> Option<Found>;

const RECOGNIZERS: &[Recognizer] = &[
    rust::recognize,
    python::recognize,
    jvm::recognize,
    javascript::recognize,
    go::recognize,
    cfamily::recognize,
    shell::recognize,
    generic,
];

pub(crate) use headline::fallback;

/// What the recognisers found in a text: the errors, in order, which lines they claimed (as
/// part of an error, a warning or noise they own), and whether a warning was among them.
pub(crate) struct Recognized {
    pub errors: Vec<RawError>,
    pub claimed: Vec<bool>,
    pub warned: bool,
}

/// Every error found in `lines`, in order, and the lines claimed.
pub(crate) fn recognize(lines: &[&str]) -> Recognized {
    let mut errors = Vec::new();
    let mut claimed = vec![false; lines.len()];
    let mut warned = false;
    let mut index = 0;
    while index < lines.len() {
        match RECOGNIZERS
            .iter()
            .find_map(|recognizer| recognizer(lines, index))
        {
            Some(claim) => {
                let next = claim.next.max(index + 1).min(lines.len());
                warned |= claim.warning;
                // A line only the generic patterns matched stays open to the fallback.
                if !claim.error.as_ref().is_some_and(|e| e.generic) {
                    claimed[index..next].iter_mut().for_each(|c| *c = true);
                }
                errors.extend(claim.error);
                index = next;
            }
            None => index += 1,
        }
    }
    Recognized {
        errors,
        claimed,
        warned,
    }
}

/// Applies a message template: each capture group named `id…` or `t…` becomes `<ID>` or `<T>`
/// and its value is remembered as a quoted value.
pub(crate) fn template(pattern: &Regex, message: &str, quoted: &mut Vec<String>) -> Option<String> {
    let captures = pattern.captures(message)?;
    let mut out = String::new();
    let mut last = 0;
    let mut groups: Vec<(usize, usize, &str)> = pattern
        .capture_names()
        .flatten()
        .filter_map(|name| {
            let m = captures.name(name)?;
            let placeholder = if name.starts_with("id") {
                "<ID>"
            } else if name.starts_with('t') {
                "<T>"
            } else {
                return None;
            };
            Some((m.start(), m.end(), placeholder))
        })
        .collect();
    // Outer groups first; a group nested in one already replaced is part of it.
    groups.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    for (start, end, placeholder) in groups {
        if start < last {
            continue;
        }
        out.push_str(&message[last..start]);
        out.push_str(placeholder);
        quoted.push(message[start..end].to_string());
        last = end;
    }
    out.push_str(&message[last..]);
    Some(out)
}

/// The index of the first line at or after `from` for which `stop` holds (or `lines.len()`).
pub(crate) fn until(lines: &[&str], from: usize, stop: impl Fn(&str) -> bool) -> usize {
    (from..lines.len())
        .find(|&i| stop(lines[i]))
        .unwrap_or(lines.len())
}

pub(crate) fn group<'a>(captures: &'a Captures<'_>, name: &str) -> Option<&'a str> {
    captures.name(name).map(|m| m.as_str())
}

/// The language of a path's extension, or `fallback`.
pub(crate) fn language_of(path: &str, fallback: Language) -> Language {
    path.rsplit_once('.')
        .and_then(|(_, ext)| Language::from_extension(ext))
        .unwrap_or(fallback)
}

macro_rules! lazy_regex {
    ($name:ident, $re:expr) => {
        static $name: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| regex::Regex::new($re).expect($re));
    };
}
pub(crate) use lazy_regex;

static GENERIC_ERROR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:(?P<tool>[\w.\-/]+): )?(?:(?:fatal )?error|ERROR|FATAL|fatal|Error)(?:\[(?P<code>[\w-]+)\])?:? (?P<msg>\S.*)$",
    )
    .expect("generic error pattern")
});
static GENERIC_EXCEPTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<type>(?:[a-z]\w*\.)*[A-Z]\w*(?:Error|Exception))(?: \[(?P<code>[\w-]+)\])?: (?P<msg>.+)$",
    )
        .expect("generic exception pattern")
});
static ERRNO_CODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?P<code>E[A-Z]{2,}): ").expect("errno pattern"));
static NPM_CODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^npm (?:ERR!|error) code (?P<code>\w+)$").expect("npm pattern"));

/// Errors in no known format: `tool: error: …`, `ERROR: …`, `SomethingError: …`.
fn generic(lines: &[&str], index: usize) -> Option<Found> {
    let line = lines[index].trim_end();
    if let Some(found) = NPM_CODE.captures(line) {
        let message = lines[index + 1..]
            .iter()
            .take(4)
            .find_map(|l| {
                l.strip_prefix("npm ERR! ")
                    .or_else(|| l.strip_prefix("npm error "))
            })
            .unwrap_or("npm failed");
        let error = RawError::new(
            Language::JavaScript,
            Some(found["code"].to_string()),
            message,
        )
        .tool("npm");
        return Found::error(error, until(lines, index + 1, |l| !l.starts_with("npm ")));
    }
    if let Some(found) = GENERIC_EXCEPTION.captures(line) {
        let message = &found["msg"];
        let error_type = group(&found, "code")
            .or_else(|| {
                ERRNO_CODE
                    .captures(message)
                    .and_then(|c| c.name("code"))
                    .map(|m| m.as_str())
            })
            .unwrap_or(&found["type"]);
        let mut error = RawError::new(Language::Unknown, Some(error_type.to_string()), message);
        error.generic = true;
        return Found::error(error, index + 1);
    }
    let found = GENERIC_ERROR.captures(line)?;
    let mut error = RawError::new(
        Language::Unknown,
        group(&found, "code").map(str::to_string),
        &found["msg"],
    );
    if let Some(tool) = group(&found, "tool") {
        error = error.tool(tool.rsplit('/').next().unwrap_or(tool));
    }
    error.generic = true;
    Found::error(error, index + 1)
}
