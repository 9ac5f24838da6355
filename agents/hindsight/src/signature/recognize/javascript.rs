//! Node.js uncaught errors (`TypeError: …` followed by `    at` frames, with the optional
//! `Require stack:` block and `{ code: 'MODULE_NOT_FOUND' }` trailer) and tsc diagnostics in
//! both the plain `file.ts(3,7): error TS2322:` and the pretty `file.ts:3:7 - error TS2322:`
//! formats.

use super::{Found, Frame, RawError, group, language_of, lazy_regex, template, until};
use crate::signature::Language;

lazy_regex!(
    EXCEPTION,
    r"^(?:Uncaught )?(?P<type>[A-Z]\w*(?:Error|Exception)|Error)(?: \[(?P<code>[A-Z0-9_]+)\])?: (?P<msg>.*)$"
);
lazy_regex!(
    FRAME,
    r"^\s+at (?:(?P<func>.+?) \((?P<loc1>[^()]+)\)|(?P<loc2>[^\s()]+))$"
);
lazy_regex!(CODE_PROPERTY, r"^\s+code: '(?P<code>[A-Z0-9_]+)',?$");
lazy_regex!(
    TSC,
    r"^(?P<path>\S.*?)(?:\(\d+,\d+\): | ?:\d+:\d+ - )error (?P<code>TS\d+): (?P<msg>.+)$"
);
lazy_regex!(TSC_GLOBAL, r"^error (?P<code>TS\d+): (?P<msg>.+)$");
lazy_regex!(TSC_TOTAL, r"^Found \d+ errors?");
lazy_regex!(
    NOT_DEFINED,
    r"^(?P<id>[\w$.]+) is not (?:defined|a function|a constructor|iterable)$"
);
lazy_regex!(LOCATION_HEADER, r"^(?P<path>\S+\.[cm]?[jt]sx?):\d+$");

pub(super) fn recognize(lines: &[&str], index: usize) -> Option<Found> {
    let line = lines[index].trim_end();
    if let Some(found) = TSC.captures(line).or_else(|| TSC_GLOBAL.captures(line)) {
        return tsc(lines, index, &found);
    }
    if TSC_TOTAL.is_match(line) {
        return Found::skip(index + 1);
    }
    uncaught(lines, index)
}

fn tsc(lines: &[&str], index: usize, found: &regex::Captures<'_>) -> Option<Found> {
    // Elaborations ("  Type 'undefined' is not assignable…") are indented.
    let end = until(lines, index + 1, |l| {
        !l.starts_with(' ') || l.trim().is_empty()
    });
    let mut error = RawError::new(
        Language::TypeScript,
        Some(found["code"].to_string()),
        &found["msg"],
    )
    .tool("tsc");
    if let Some(path) = group(found, "path") {
        error.paths.push(path.to_string());
    }
    error.hints.extend(
        lines[index + 1..end]
            .iter()
            .take(2)
            .map(|l| l.trim().to_string()),
    );
    Found::error(error, end)
}

fn uncaught(lines: &[&str], index: usize) -> Option<Found> {
    let header = EXCEPTION.captures(lines[index].trim_end())?;
    // The frames follow, possibly after a `Require stack:` list.
    let mut at = index + 1;
    while lines
        .get(at)
        .is_some_and(|l| *l == "Require stack:" || l.starts_with("- "))
    {
        at += 1;
    }
    if !lines
        .get(at)
        .is_some_and(|l| FRAME.is_match(l.trim_end()) && l.starts_with("    at "))
    {
        return None;
    }
    let mut frames = Vec::new();
    let mut language = Language::JavaScript;
    let mut trailer = false;
    while let Some(line) = lines.get(at).map(|l| l.trim_end()) {
        // The last frame may open the error's own properties: `… (file.js:1:2) {`.
        let (line, opens) = match line.strip_suffix(" {") {
            Some(stripped) => (stripped, true),
            None => (line, false),
        };
        let Some(frame) = FRAME.captures(line) else {
            break;
        };
        let location = group(&frame, "loc1")
            .or_else(|| group(&frame, "loc2"))
            .unwrap_or("");
        let file = strip_line_col(location);
        if language_of(file, Language::JavaScript) == Language::TypeScript {
            language = Language::TypeScript;
        }
        frames.push(Frame::new(Some(file), group(&frame, "func")));
        at += 1;
        if opens {
            trailer = true;
            break;
        }
    }
    // `{ code: 'MODULE_NOT_FOUND', … }` after the frames names the error precisely.
    let mut code = group(&header, "code").map(str::to_string);
    if trailer {
        let close = until(lines, at, |l| l.starts_with('}'));
        for line in &lines[at..close] {
            if let Some(found) = CODE_PROPERTY.captures(line.trim_end()) {
                code.get_or_insert_with(|| found["code"].to_string());
            }
        }
        at = (close + 1).min(lines.len());
    }
    let mut quoted = Vec::new();
    let message = template(&NOT_DEFINED, &header["msg"], &mut quoted)
        .unwrap_or_else(|| header["msg"].to_string());
    let mut error = RawError::new(
        language,
        Some(code.unwrap_or_else(|| header["type"].to_string())),
        message,
    )
    .tool("node");
    error.quoted = quoted;
    // Where the error was thrown, printed above it: `/app/src/x.js:3`.
    if let Some(path) = lines[index.saturating_sub(5)..index]
        .iter()
        .find_map(|l| LOCATION_HEADER.captures(l.trim_end()))
    {
        error.paths.push(path["path"].to_string());
    }
    error.frames = frames;
    Found::error(error, at)
}

fn strip_line_col(location: &str) -> &str {
    let mut file = location;
    for _ in 0..2 {
        match file.rsplit_once(':') {
            Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => {
                file = head
            }
            _ => break,
        }
    }
    file
}
