//! Shells and build runners: `command not found` (bash, dash, zsh), `Permission denied`,
//! `No such file or directory`, signals (`Segmentation fault`), `make: *** … Error N`, and exit
//! codes (`exit status 1`, `Process completed with exit code 2`). Exit codes are kept as
//! `exit:<code>` context; a make failure or an exit code is a summary of whatever failed inside.

use super::{Found, RawError, group, lazy_regex};
use crate::signature::Language;

// `script.sh: line 4: kubectl: command not found`, `bash: foo: command not found`,
// `build.sh: 3: yarn: not found` (dash), `zsh: command not found: foo`.
lazy_regex!(
    NOT_FOUND,
    r"^(?P<script>\S+?):(?: line)? (?:\d+: )?(?P<cmd>[^:\s]+): (?:command )?not found$"
);
lazy_regex!(NUMBERED, r"^\S+: \d+: ");
lazy_regex!(ZSH_NOT_FOUND, r"^zsh: command not found: (?P<cmd>\S+)$");
lazy_regex!(
    FILE_ERROR,
    r"^(?P<script>\S+?):(?: line)? (?:\d+: )?(?:(?P<builtin>cd|source|\.|exec|cat|cp|mv|rm|ls|chmod|mkdir|touch|tar|head|tail|grep|sed|sort|wc|ln|sh|bash): )?(?P<path>[^:]+): (?P<what>No such file or directory|Permission denied|Is a directory|Not a directory)$"
);
lazy_regex!(
    SIGNAL,
    r"^(?:.*: line \d+: +\d+ )?(?P<signal>Segmentation fault|Killed|Aborted|Bus error|Illegal instruction|Floating point exception)(?: +\(core dumped\))?(?: .*)?$"
);
lazy_regex!(
    MAKE,
    r"^(?P<tool>make|gmake|mingw32-make)(?:\[\d+\])?: \*\*\* (?:\[(?P<target>.+?)\] )?(?:Error (?P<code>\d+)|(?P<msg>.+))$"
);
lazy_regex!(
    EXIT,
    r"^(?i:exit status|Process completed with exit code|Command exited with non-zero status|Process exited with code|exited with code|Error: Process completed with exit code) (?P<code>\d+)\.?$"
);

pub(super) fn recognize(lines: &[&str], index: usize) -> Option<Found> {
    let line = lines[index].trim_end();
    if let Some(found) = NOT_FOUND
        .captures(line)
        .or_else(|| ZSH_NOT_FOUND.captures(line))
    {
        let mut error = RawError::new(
            Language::Shell,
            Some("command-not-found".to_string()),
            "<ID>: command not found",
        )
        .tool(shell_of(line, group(&found, "script")));
        error.quoted.push(found["cmd"].to_string());
        if let Some(script) = group(&found, "script") {
            error.paths.push(script.to_string());
        }
        return Found::error(error, index + 1);
    }
    if let Some(found) = FILE_ERROR.captures(line) {
        let what = &found["what"];
        let message = match group(&found, "builtin") {
            Some(builtin) => format!("{builtin}: <PATH>: {what}"),
            None => format!("<PATH>: {what}"),
        };
        let error_type = what.to_ascii_lowercase().replace(' ', "-");
        let mut error = RawError::new(Language::Shell, Some(error_type), message)
            .tool(shell_of(line, group(&found, "script")));
        error.paths.push(found["path"].trim().to_string());
        return Found::error(error, index + 1);
    }
    if let Some(found) = SIGNAL.captures(line) {
        let signal = &found["signal"];
        let error = RawError::new(
            Language::Shell,
            Some(signal.to_ascii_lowercase().replace(' ', "-")),
            signal,
        )
        .tool("shell");
        return Found::error(error, index + 1);
    }
    if let Some(found) = MAKE.captures(line) {
        let message = match (group(&found, "code"), group(&found, "msg")) {
            (Some(_), _) => "recipe for target <Q> failed: Error <N>".to_string(),
            (None, Some(msg)) => msg.to_string(),
            (None, None) => "make failed".to_string(),
        };
        let mut error = RawError::new(Language::Shell, Some("make-error".to_string()), message)
            .tool(&found["tool"]);
        if let Some(code) = group(&found, "code") {
            error.context.push(format!("exit:{code}"));
        }
        if let Some(target) = group(&found, "target") {
            // `Makefile:12: build`: the makefile and the target.
            let (file, name) = target.rsplit_once(": ").unwrap_or(("", target));
            error.quoted.push(name.to_string());
            if let Some((file, _)) = file.rsplit_once(':') {
                error.paths.push(file.to_string());
            }
        }
        // Only the `Error N` form is a pure consequence of a failed recipe.
        let summary = group(&found, "code").is_some();
        return Found::error(if summary { error.summary() } else { error }, index + 1);
    }
    let found = EXIT.captures(line)?;
    let mut error = RawError::new(
        Language::Shell,
        Some("exit-status".to_string()),
        "exit status <N>",
    )
    .tool("shell")
    .summary();
    error.context.push(format!("exit:{}", &found["code"]));
    Found::error(error, index + 1)
}

/// Which shell printed `line`: bash says `script: line N:`, dash `script: N:`.
fn shell_of(line: &str, script: Option<&str>) -> &'static str {
    let name = script.map(|s| s.rsplit('/').next().unwrap_or(s));
    if name == Some("zsh") {
        "zsh"
    } else if line.contains(": line ") || name == Some("bash") {
        "bash"
    } else if NUMBERED.is_match(line) || name == Some("sh") || name == Some("dash") {
        "sh"
    } else {
        "shell"
    }
}
