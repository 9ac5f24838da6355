//! Go: compiler diagnostics (`./main.go:5:2: undefined: foo`, which carry no code, so the
//! common message shapes are templated) and runtime panics with their goroutine traces.

use super::{Found, Frame, RawError, lazy_regex, template, until};
use crate::signature::Language;

lazy_regex!(DIAGNOSTIC, r"^(?P<path>\S+\.go):\d+(?::\d+)?: (?P<msg>.+)$");
lazy_regex!(PANIC, r"^panic: (?P<msg>.+?)(?: \[recovered\])?$");
lazy_regex!(FUNC_LINE, r"^(?P<func>[\w./*()\[\]{}$-]+)\(.*\)$");
lazy_regex!(FILE_LINE, r"^\t(?P<path>\S+\.go):\d+(?: \+0x[0-9a-f]+)?$");

lazy_regex!(UNDEFINED, r"^undefined: (?P<id>\S+)$");
lazy_regex!(NOT_USED, r"^(?P<id>\S+) declared (?:but|and) not used$");
lazy_regex!(NOT_USED_NEW, r"^declared and not used: (?P<id>\S+)$");
lazy_regex!(
    IMPORTED_NOT_USED,
    r#"^(?P<q>"[^"]+") imported and not used$"#
);
lazy_regex!(
    CANNOT_USE,
    r"^cannot use (?P<id>.+?) \((?P<tkind>untyped \w+ constant|(?:variable|value|constant) of type (?P<t0>.+?))\) as (?:type )?(?P<t1>\S+?)(?: value)? in (?P<where>.+?)(?: to (?P<id2>\S+))?$"
);
lazy_regex!(
    MISMATCHED,
    r"^invalid operation: (?P<id>.+?) \(mismatched types (?P<t1>\S+) and (?P<t2>\S+)\)$"
);

pub(super) fn recognize(lines: &[&str], index: usize) -> Option<Found> {
    let line = lines[index].trim_end();
    if line.starts_with("# ") && lines.get(index + 1).is_some_and(|l| DIAGNOSTIC.is_match(l)) {
        // `# command-line-arguments`: the package header of the diagnostics that follow.
        return Found::skip(index + 1);
    }
    if let Some(found) = DIAGNOSTIC.captures(line) {
        let raw = &found["msg"];
        if raw.starts_with("warning: ") {
            return Found::warning(index + 1);
        }
        let mut quoted = Vec::new();
        let message = [
            &*UNDEFINED,
            &*NOT_USED,
            &*NOT_USED_NEW,
            &*CANNOT_USE,
            &*MISMATCHED,
        ]
        .iter()
        .find_map(|pattern| template(pattern, raw, &mut quoted))
        .map(|m| {
            m.replace("declared but not used", "declared and not used")
                .replace("as type <T> in", "as <T> value in")
        })
        .or_else(|| {
            // Go 1.19 prints `"fmt" imported and not used`; 1.20+ `imported and not used: "fmt"`.
            IMPORTED_NOT_USED
                .captures(raw)
                .map(|c| format!("imported and not used: {}", &c["q"]))
        })
        .unwrap_or_else(|| raw.to_string());
        let mut message =
            message.replace("declared and not used: <ID>", "<ID> declared and not used");
        // Where the value was used (`in argument to f`, `in return statement`) is context.
        if message.starts_with("cannot use <ID>")
            && let Some(at) = message.find(" value in ")
        {
            quoted.push(message[at + " value in ".len()..].to_string());
            message.truncate(at + " value".len());
        }
        let mut error = RawError::new(Language::Go, None, message).tool("go");
        error.quoted = quoted;
        error.paths.push(found["path"].to_string());
        return Found::error(error, index + 1);
    }
    let panic = PANIC.captures(line)?;
    let end = until(lines, index + 1, |l| {
        l.starts_with("exit status ") || l.starts_with("panic: ")
    });
    let mut error =
        RawError::new(Language::Go, Some("panic".to_string()), &panic["msg"]).tool("go");
    for (offset, line) in lines[index + 1..end].iter().enumerate() {
        if let Some(func) = FUNC_LINE.captures(line) {
            let file = lines
                .get(index + 2 + offset)
                .and_then(|l| FILE_LINE.captures(l));
            error.frames.push(Frame::new(
                file.as_ref().map(|f| &f["path"]),
                Some(func["func"].trim_end_matches("(...)")),
            ));
            if let Some(file) = file
                && error.paths.is_empty()
            {
                error.paths.push(file["path"].to_string());
            }
        }
    }
    Found::error(error, end)
}
