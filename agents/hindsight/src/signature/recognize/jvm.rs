//! The JVM: uncaught exceptions with `at` frames and `Caused by:` chains (Java and Kotlin),
//! javac diagnostics with their `symbol:`/`location:` lines, and kotlinc diagnostics.

use super::{Found, Frame, RawError, group, lazy_regex, template, until};
use crate::signature::Language;

lazy_regex!(
    UNCAUGHT,
    r#"^(?:Exception in thread "[^"]*" )?(?P<type>(?:[a-zA-Z_$][\w$]*\.)+[A-Z][\w$]*)(?:: (?P<msg>.*))?$"#
);
lazy_regex!(FRAME, r"^\s+at (?P<func>[\w$.<>/]+)\((?P<src>[^)]*)\)$");
lazy_regex!(
    CAUSED_BY,
    r"^Caused by: (?P<type>[\w$.]+)(?:: (?P<msg>.*))?$"
);
lazy_regex!(
    JAVAC,
    r"^(?P<path>.+\.java):\d+: (?P<level>error|warning): (?P<msg>.+)$"
);
lazy_regex!(
    KOTLINC,
    r"^(?:(?P<level2>e|w): )?(?:file://)?(?P<path>\S+\.kts?):\d+:\d+:? (?:(?P<level>error|warning): )?(?P<msg>.+)$"
);
lazy_regex!(SYMBOL, r"^\s+symbol:\s+(?P<kind>\w+)\s+(?P<name>.+)$");
lazy_regex!(JAVAC_TOTAL, r"^\d+ (?:error|warning)s?$");

lazy_regex!(
    INCOMPATIBLE,
    r"^incompatible types: (?P<t1>.+?) cannot be converted to (?P<t2>.+)$"
);
lazy_regex!(
    LOSSY,
    r"^incompatible types: possible lossy conversion from (?P<t1>\S+) to (?P<t2>\S+)$"
);
lazy_regex!(
    KT_MISMATCH,
    r"^(?i:type mismatch): inferred type is (?P<t1>.+?) but (?P<t2>.+?) was expected$"
);
lazy_regex!(KT_UNRESOLVED, r"^(?i:unresolved reference): (?P<id>.+)$");

pub(super) fn recognize(lines: &[&str], index: usize) -> Option<Found> {
    let line = lines[index].trim_end();
    if let Some(found) = JAVAC.captures(line) {
        return compiler(lines, index, &found, Language::Java, "javac");
    }
    if let Some(found) = KOTLINC.captures(line) {
        return compiler(lines, index, &found, Language::Kotlin, "kotlinc");
    }
    if JAVAC_TOTAL.is_match(line) {
        return Found::skip(index + 1);
    }
    uncaught(lines, index)
}

fn compiler(
    lines: &[&str],
    index: usize,
    found: &regex::Captures<'_>,
    language: Language,
    tool: &str,
) -> Option<Found> {
    // The excerpt, caret and symbol lines are indented; the next diagnostic is not.
    let end = until(lines, index + 1, |l| {
        !(l.starts_with(' ') || l.starts_with('\t'))
    });
    let warning = group(found, "level") == Some("warning") || group(found, "level2") == Some("w");
    if warning {
        return Found::warning(end);
    }
    let message = &found["msg"];
    let mut quoted = Vec::new();
    let message = [&*INCOMPATIBLE, &*LOSSY, &*KT_MISMATCH, &*KT_UNRESOLVED]
        .iter()
        .find_map(|pattern| template(pattern, message, &mut quoted))
        .unwrap_or_else(|| message.to_string());
    let mut error = RawError::new(language, None, message).tool(tool);
    error.quoted = quoted;
    error.paths.push(found["path"].to_string());
    for line in &lines[index + 1..end] {
        if let Some(symbol) = SYMBOL.captures(line) {
            error.context.push(format!("symbol:{}", &symbol["kind"]));
            error.quoted.push(symbol["name"].to_string());
        }
    }
    Found::error(error, end)
}

fn uncaught(lines: &[&str], index: usize) -> Option<Found> {
    let header = UNCAUGHT.captures(lines[index].trim_end())?;
    // Without `at` frames this is not a JVM stack trace.
    if !lines
        .get(index + 1)
        .is_some_and(|l| FRAME.is_match(l.trim_end()))
    {
        return None;
    }
    let error_type = header["type"].to_string();
    let mut frames = Vec::new();
    let mut causes = Vec::new();
    let mut kotlin = error_type.starts_with("kotlin.");
    let mut at = index + 1;
    while let Some(line) = lines.get(at).map(|l| l.trim_end()) {
        if let Some(frame) = FRAME.captures(line) {
            let src = &frame["src"];
            kotlin |= src.contains(".kt:") || src.ends_with(".kt");
            // Only the top exception's frames describe where it escaped.
            if causes.is_empty() {
                frames.push(Frame::new(None, Some(&frame["func"])));
            }
        } else if let Some(cause) = CAUSED_BY.captures(line) {
            causes.push(cause["type"].to_string());
        } else if !(line.trim_start().starts_with("...") && line.ends_with("more")) {
            break;
        }
        at += 1;
    }
    let language = if kotlin {
        Language::Kotlin
    } else {
        Language::Java
    };
    let mut error = RawError::new(
        language,
        Some(error_type),
        group(&header, "msg").unwrap_or(""),
    )
    .tool("jvm");
    error.frames = frames;
    error
        .context
        .extend(causes.iter().map(|c| format!("cause:{c}")));
    Found::error(error, at)
}
