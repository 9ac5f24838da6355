//! Whether a shell command failed in a way worth remembering, and the text to remember.
//!
//! A command fails when it exits non-zero (Claude Code reports those as `PostToolUseFailure`),
//! and also when it exits zero but its output shows a compiler or test failure — the exit
//! status of `cargo test 2>&1 | tail` is `tail`'s.

use serde_json::Value;

/// The most error text sent to Hindsight: the head and the tail of longer output, where the
/// compiler's first error and the test runner's summary are.
pub const MAX_ERROR_TEXT_BYTES: usize = 16 * 1024;

/// Lines that mark a failure in the output of a command that exited zero. Each is specific to
/// a compiler, test runner or interpreter, so ordinary output rarely matches.
const FAILURE_MARKERS: [&str; 13] = [
    "error[E",                           // rustc
    "test result: FAILED",               // cargo test
    "error: could not compile",          // cargo
    "Traceback (most recent call last)", // Python
    "npm ERR!",                          // npm
    "npm error ",                        // npm 10+
    ": error TS",                        // tsc
    "FAILED (failures=",                 // unittest
    "FAIL\t",                            // go test
    "--- FAIL:",                         // go test
    "BUILD FAILURE",                     // Maven
    "FAILURE: Build failed",             // Gradle
    " panicked at ",                     // Rust
];

/// The failure text of a command that exited zero, if its output shows one.
pub fn failure_in_output(tool_response: &Value) -> Option<String> {
    let output = response_text(tool_response);
    let junit_failed = output
        .lines()
        .any(|line| line.contains("Tests run:") && has_nonzero(line, "Failures:"));
    let failed = junit_failed || FAILURE_MARKERS.iter().any(|marker| output.contains(marker));
    failed.then(|| clip(&output))
}

/// The text of a command that exited non-zero, from Claude Code's `error` field
/// (`Exit code 101\n<output>`).
pub fn failure_from_error(error: &str) -> String {
    clip(error)
}

/// A shell tool's output as one text: stdout then stderr (Claude Code's Bash answers with
/// `{stdout, stderr, …}`), or the response itself when it is a string.
pub fn response_text(tool_response: &Value) -> String {
    match tool_response {
        Value::String(text) => text.clone(),
        Value::Object(fields) => {
            let part = |name: &str| fields.get(name).and_then(Value::as_str).unwrap_or("");
            let (stdout, stderr) = (part("stdout"), part("stderr"));
            match (stdout.is_empty(), stderr.is_empty()) {
                (_, true) => stdout.to_owned(),
                (true, false) => stderr.to_owned(),
                (false, false) => format!("{stdout}\n{stderr}"),
            }
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Whether `line` has `label` followed by a number other than zero (`Failures: 2`).
fn has_nonzero(line: &str, label: &str) -> bool {
    line.split(label).nth(1).is_some_and(|rest| {
        let digits: String = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse::<u64>().is_ok_and(|count| count > 0)
    })
}

/// `text` within [`MAX_ERROR_TEXT_BYTES`]: its head and tail around a marker.
pub fn clip(text: &str) -> String {
    head_and_tail(text, MAX_ERROR_TEXT_BYTES)
}

/// At most `max` bytes of `text`: a quarter from its start, the rest from its end, cut at
/// character boundaries.
pub fn head_and_tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let marker = "\n[… output cut …]\n";
    let budget = max.saturating_sub(marker.len());
    let mut head = budget / 4;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (budget - head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}{marker}{}", &text[..head], &text[tail..])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn compiler_and_test_failures_in_successful_output_are_found() {
        let piped = json!({"stdout": "error[E0308]: mismatched types\n --> src/lib.rs:3:5\n", "stderr": ""});
        assert!(failure_in_output(&piped).unwrap().contains("E0308"));
        let tests = json!({"stdout": "running 2 tests\ntest result: FAILED. 1 passed; 1 failed", "stderr": ""});
        assert!(failure_in_output(&tests).is_some());
        let python = json!("Traceback (most recent call last):\n  File \"x.py\"\nKeyError: 'a'");
        assert!(failure_in_output(&python).is_some());
        let junit = json!({"stdout": "Tests run: 4, Failures: 1, Errors: 0", "stderr": ""});
        assert!(failure_in_output(&junit).is_some());
    }

    #[test]
    fn ordinary_output_is_not_a_failure() {
        for output in [
            json!({"stdout": "test result: ok. 12 passed; 0 failed", "stderr": ""}),
            json!({"stdout": "Tests run: 4, Failures: 0, Errors: 0", "stderr": ""}),
            json!({"stdout": "src/error.rs\nsrc/lib.rs", "stderr": ""}),
            json!({"stdout": "", "stderr": "warning: unused variable"}),
            Value::Null,
        ] {
            assert_eq!(failure_in_output(&output), None, "{output}");
        }
    }

    #[test]
    fn long_output_keeps_its_head_and_tail_within_the_bound() {
        let text = format!(
            "error[E0425]: first{}test result: FAILED",
            "é".repeat(40_000)
        );
        let clipped = clip(&text);
        assert!(clipped.len() <= MAX_ERROR_TEXT_BYTES);
        assert!(clipped.starts_with("error[E0425]: first"));
        assert!(clipped.ends_with("test result: FAILED"));
        assert!(clipped.contains("output cut"));
    }
}
