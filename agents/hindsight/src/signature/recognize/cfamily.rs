//! gcc and clang diagnostics (`file.c:3:5: error: …` with excerpt, caret and `note:` lines; a
//! `[-Werror=flag]` suffix names the error type) and the linker (`undefined reference to`).

use super::{Found, RawError, group, language_of, lazy_regex, until};
use crate::signature::Language;

lazy_regex!(
    DIAGNOSTIC,
    r"^(?P<path>\S+\.(?:c|h|cc|cpp|cxx|hpp|hh|hxx|C|m|mm|i|ii)):\d+(?::\d+)?: (?P<level>fatal error|error|warning|note): (?P<msg>.+)$"
);
lazy_regex!(FLAG, r"\s*\[-W(?:error=)?(?P<flag>[\w+-]+)\]$");
lazy_regex!(
    IN_FUNCTION,
    r"^\S+: (?:In (?:member )?function|In instantiation|At top level|In file included)"
);
lazy_regex!(
    LD_CONTEXT,
    r"^(?:/\S*/)?(?:ld|ld\.\w+|collect2)(?:\.exe)?: (?P<obj>\S+): in function"
);
lazy_regex!(
    UNDEFINED_REFERENCE,
    r"^(?:(?P<path>[^\s:]+):\(\.\w+(?:\+0x[0-9a-f]+)?\): )?undefined reference to [`'](?P<sym>.+)'$"
);
lazy_regex!(
    LD_ERROR,
    r"^(?:/\S*/)?(?:ld|ld\.\w+)(?:\.exe)?: (?P<msg>.+)$"
);
lazy_regex!(
    SUMMARY,
    r"^(?:collect2|cc1\w*|clang|gcc|g\+\+)(?:\.exe)?: (?:error: )?(?P<msg>.+)$"
);

pub(super) fn recognize(lines: &[&str], index: usize) -> Option<Found> {
    let line = lines[index].trim_end();
    if let Some(found) = DIAGNOSTIC.captures(line) {
        return diagnostic(lines, index, &found);
    }
    if IN_FUNCTION.is_match(line) || LD_CONTEXT.is_match(line) {
        return Found::skip(index + 1);
    }
    if let Some(found) = UNDEFINED_REFERENCE.captures(line) {
        let path = group(&found, "path").unwrap_or("");
        // Without the object's source file, only a demangled C++ name (`ns::f(int)`) tells
        // C++ from C; a plain symbol could be either.
        let language = if !path.is_empty() {
            language_of(path, Language::C)
        } else if found["sym"].contains("::") || found["sym"].contains('(') {
            Language::Cpp
        } else {
            Language::Unknown
        };
        let mut error = RawError::new(
            language,
            Some("undefined-reference".to_string()),
            format!("undefined reference to `{}'", &found["sym"]),
        )
        .tool("ld");
        if !path.is_empty() {
            error.paths.push(path.to_string());
        }
        return Found::error(error, index + 1);
    }
    if let Some(found) = SUMMARY.captures(line) {
        let msg = &found["msg"];
        if msg.contains("returned 1 exit status")
            || msg.contains("warnings being treated as errors")
            || msg.contains("linker command failed")
        {
            let error = RawError::new(Language::C, None, msg).tool("cc").summary();
            return Found::error(error, index + 1);
        }
    }
    let found = LD_ERROR.captures(line)?;
    let error = RawError::new(Language::C, None, &found["msg"]).tool("ld");
    Found::error(error, index + 1)
}

fn diagnostic(lines: &[&str], index: usize, found: &regex::Captures<'_>) -> Option<Found> {
    // Excerpt and caret lines are indented; `note:` lines belong to this diagnostic too.
    let end = until(lines, index + 1, |l| {
        let indented = l.starts_with(' ') || l.starts_with('\t');
        let note = DIAGNOSTIC
            .captures(l)
            .is_some_and(|c| &c["level"] == "note");
        !(indented || note)
    });
    match &found["level"] {
        "warning" | "note" => return Found::warning(end),
        _ => {}
    }
    let path = &found["path"];
    let mut message = found["msg"].to_string();
    let flag = FLAG.captures(&message).map(|c| c["flag"].to_string());
    if let Some(flag_at) = FLAG.find(&message).map(|m| m.start()) {
        message.truncate(flag_at);
    }
    let mut error = RawError::new(language_of(path, Language::C), flag, message).tool("cc");
    error.paths.push(path.to_string());
    for line in &lines[index + 1..end] {
        if let Some(note) = DIAGNOSTIC.captures(line) {
            error.hints.push(format!("note: {}", &note["msg"]));
        }
    }
    Found::error(error, end)
}
