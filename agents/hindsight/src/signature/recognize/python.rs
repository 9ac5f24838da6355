//! Python tracebacks (including chained ones, where the last exception is the one that
//! escaped and the earlier ones become `cause:` context), bare `File …, line N` syntax errors,
//! and pytest failure sections.

use super::{Found, Frame, RawError, group, lazy_regex, until};
use crate::signature::Language;

lazy_regex!(
    FRAME,
    r#"^\s*File "(?P<path>[^"]+)", line \d+(?:, in (?P<func>.+))?$"#
);
lazy_regex!(EXCEPTION, r"^(?P<type>[A-Za-z_][\w.]*)(?:: ?(?P<msg>.*))?$");
lazy_regex!(PYTEST_SECTION, r"^_{3,} (?P<test>.+?) _{3,}$");
lazy_regex!(
    PYTEST_LOCATION,
    r"^(?P<path>\S+\.py):\d+: (?P<type>[A-Za-z_][\w.]*)$"
);
lazy_regex!(PYTEST_E, r"^E\s+(?P<msg>.*)$");

const CHAINING: &[&str] = &[
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
];

pub(super) fn recognize(lines: &[&str], index: usize) -> Option<Found> {
    let line = lines[index].trim_end();
    if line == "Traceback (most recent call last):"
        || line.starts_with("  File \"") && FRAME.is_match(line)
    {
        return traceback(lines, index);
    }
    if PYTEST_SECTION.is_match(line) {
        return pytest_section(lines, index);
    }
    if line.starts_with("FAILED ") && line.contains("::")
        || line.starts_with("ERROR ") && line.contains("::")
    {
        // pytest's short summary repeats a failure already reported in its section.
        return Found::skip(index + 1);
    }
    None
}

/// Parses one traceback starting at `index`; follows chained tracebacks.
fn traceback(lines: &[&str], index: usize) -> Option<Found> {
    let mut causes: Vec<String> = Vec::new();
    let mut start = index;
    loop {
        let (mut error, next) = one_traceback(lines, start)?;
        // A chained traceback follows after a blank line and the chaining sentence.
        let sentence = until(lines, next, |l| !l.trim().is_empty());
        let chained = lines
            .get(sentence)
            .is_some_and(|l| CHAINING.contains(&l.trim()));
        let follow = until(lines, sentence + 1, |l| !l.trim().is_empty());
        if chained
            && lines
                .get(follow)
                .is_some_and(|l| l.trim_end() == "Traceback (most recent call last):")
        {
            causes.push(error.error_type.clone().unwrap_or_default());
            start = follow;
            continue;
        }
        error
            .context
            .extend(causes.iter().map(|c| format!("cause:{c}")));
        return Found::error(error, next);
    }
}

fn one_traceback(lines: &[&str], index: usize) -> Option<(RawError, usize)> {
    let first = if lines[index].starts_with("Traceback") {
        index + 1
    } else {
        index
    };
    let mut frames = Vec::new();
    let mut paths = Vec::new();
    let mut at = first;
    while at < lines.len() {
        let line = lines[at].trim_end();
        if let Some(frame) = FRAME.captures(line) {
            frames.push(Frame::new(Some(&frame["path"]), group(&frame, "func")));
            paths.push(frame["path"].to_string());
        } else if !(line.starts_with(' ') || line.starts_with('\t') || line.is_empty()) {
            break;
        }
        at += 1;
    }
    let exception = EXCEPTION.captures(lines.get(at)?.trim_end())?;
    let error_type = exception["type"].to_string();
    let mut error = RawError::new(
        Language::Python,
        Some(
            error_type
                .rsplit('.')
                .next()
                .unwrap_or(&error_type)
                .to_string(),
        ),
        group(&exception, "msg").unwrap_or(""),
    )
    .tool("python");
    // Innermost frame first, like every other ecosystem.
    frames.reverse();
    error.frames = frames;
    error.paths = paths.into_iter().last().into_iter().collect();
    if error_type.contains('.') {
        error.context.push(format!(
            "module:{}",
            error_type.rsplit_once('.').map_or("", |(m, _)| m)
        ));
    }
    Some((error, at + 1))
}

/// One `____ test_name ____` section of pytest output.
fn pytest_section(lines: &[&str], index: usize) -> Option<Found> {
    let end = until(lines, index + 1, |l| {
        PYTEST_SECTION.is_match(l) || l.starts_with("=====")
    });
    let body = &lines[index + 1..end];
    let location = body
        .iter()
        .rev()
        .find_map(|l| PYTEST_LOCATION.captures(l.trim_end()))?;
    let error_type = location["type"].to_string();
    let first_e = body.iter().find_map(|l| PYTEST_E.captures(l.trim_end()));
    let message = first_e.map_or(String::new(), |e| {
        let msg = e["msg"].trim();
        msg.strip_prefix(&format!("{error_type}: "))
            .unwrap_or(msg)
            .to_string()
    });
    let mut error = RawError::new(Language::Python, Some(error_type), message).tool("pytest");
    error.paths.push(location["path"].to_string());
    let test = PYTEST_SECTION
        .captures(lines[index])
        .map(|c| c["test"].to_string());
    error
        .frames
        .push(Frame::new(Some(&location["path"]), test.as_deref()));
    Found::error(error, end)
}
