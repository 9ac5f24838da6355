//! What the deterministic distiller reads out of one event: the kind of action, the command,
//! the files it touched, the tests that failed and the most telling error line.

use std::sync::LazyLock;

use regex::Regex;

use crate::event::CapturedEvent;

/// What a tool call did, for workflows and for telling fixes from investigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Search,
    Read,
    Edit,
    Test,
    Build,
    Run,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Search => "search",
            Action::Read => "read",
            Action::Edit => "edit",
            Action::Test => "test",
            Action::Build => "build",
            Action::Run => "run",
        }
    }
}

/// Everything the distiller uses about one event, extracted once.
#[derive(Debug, Clone, PartialEq)]
pub struct Signals {
    pub action: Action,
    /// The shell command, for shell-like tools (`cargo test parser`).
    pub command: Option<String>,
    /// Files named by the input, description, metadata and (for failures) the output.
    pub files: Vec<String>,
    /// Names of tests the output reports as failing.
    pub failing_tests: Vec<String>,
    /// The most telling error line of a failed call.
    pub error: Option<String>,
}

/// Longest error excerpt kept, in characters.
const MAX_ERROR_CHARS: usize = 200;
/// Most files and failing tests kept per event.
const MAX_PER_EVENT: usize = 8;

impl Signals {
    pub fn of(event: &CapturedEvent) -> Signals {
        let command = command_of(event);
        let action = classify(&event.tool_name, command.as_deref());
        let mut files = Vec::new();
        collect_metadata_files(&event.metadata, &mut files);
        collect_files(&event.input, &mut files);
        collect_files(&event.description, &mut files);
        // A search's output names the files it found; a failure's names where it failed.
        if action == Action::Search || !event.success {
            collect_files(&event.output, &mut files);
        }
        let (failing_tests, error) = if event.success {
            (Vec::new(), None)
        } else {
            (failing_tests(&event.output), error_line(&event.output))
        };
        files.truncate(MAX_PER_EVENT);
        Signals {
            action,
            command,
            files,
            failing_tests,
            error,
        }
    }

    /// The call as a person would name it: the command for shell tools, else the tool.
    pub fn label(&self, event: &CapturedEvent) -> String {
        match &self.command {
            Some(command) => format!("`{command}`"),
            None => format!("`{}`", event.tool_name),
        }
    }
}

const SHELL_TOOLS: [&str; 7] = [
    "bash",
    "shell",
    "sh",
    "exec",
    "terminal",
    "run_command",
    "command",
];

fn is_shell_tool(tool: &str) -> bool {
    let tool = tool.to_ascii_lowercase();
    SHELL_TOOLS
        .iter()
        .any(|shell| tool == *shell || tool.ends_with(&format!("_{shell}")))
        || tool.contains("bash")
        || tool.contains("shell")
}

/// The command of a shell-like call: `{"command": "..."}` (or `cmd`, `script`) in the input,
/// or the input itself when it is one short line.
fn command_of(event: &CapturedEvent) -> Option<String> {
    let input = event.input.trim();
    if input.starts_with('{')
        && let Ok(serde_json::Value::Object(map)) = serde_json::from_str(input)
    {
        return ["command", "cmd", "script"]
            .iter()
            .find_map(|key| map.get(*key).and_then(|value| value.as_str()))
            .map(|command| first_line(command, 120));
    }
    if is_shell_tool(&event.tool_name) && !input.is_empty() && !input.contains('\n') {
        return Some(first_line(input, 120));
    }
    None
}

fn first_line(text: &str, max_chars: usize) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    let mut cut: String = line.chars().take(max_chars).collect();
    if line.chars().count() > max_chars {
        cut.push('…');
    }
    cut
}

fn contains_any(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|needle| text.contains(needle))
}

/// What shell commands do, checked in this order.
static COMMAND_ACTIONS: LazyLock<Vec<(Action, Regex)>> = LazyLock::new(|| {
    [
        (
            Action::Test,
            r"\b(?:(?:cargo|go|npm|yarn|pnpm|bun|deno|dotnet|mix|mvn|gradle|make)\s+(?:run\s+)?(?:nex)?test|pytest|jest|vitest|mocha|rspec|ctest|unittest|tox)\b",
        ),
        (
            Action::Build,
            r"\b(?:cargo\s+(?:build|check|clippy)|go\s+(?:build|vet)|(?:npm|yarn|pnpm)\s+(?:run\s+)?build|mvn\s+(?:compile|package)|gradle\s+build|tsc|make|gcc|clang|javac|eslint|ruff|mypy)\b",
        ),
        (Action::Search, r"(?:^|[|;&]\s*)(?:grep|rg|find|ag|fd|ls|git\s+grep)\b"),
        (Action::Read, r"(?:^|[|;&]\s*)(?:cat|head|tail|less|bat|sed\s+-n)\b"),
        (Action::Edit, r"\bsed\s+-i|\bpatch\b|\bgit\s+apply\b|\btee\b"),
    ]
    .into_iter()
    .map(|(action, pattern)| (action, Regex::new(pattern).expect("command regex")))
    .collect()
});

/// Classifies by command first (a `bash` call running `cargo test` is a test), then by the
/// tool's name.
pub fn classify(tool_name: &str, command: Option<&str>) -> Action {
    if let Some(command) = command {
        let command = command.trim();
        if let Some((action, _)) = COMMAND_ACTIONS
            .iter()
            .find(|(_, pattern)| pattern.is_match(command))
        {
            return *action;
        }
    }
    let tool = tool_name.to_ascii_lowercase();
    if contains_any(
        &tool,
        &[
            "edit", "write", "patch", "replace", "apply", "create", "insert", "rename", "delete",
        ],
    ) {
        Action::Edit
    } else if contains_any(&tool, &["test"]) {
        Action::Test
    } else if contains_any(&tool, &["build", "compile", "check", "lint", "clippy"]) {
        Action::Build
    } else if tool == "ls"
        || contains_any(&tool, &["grep", "search", "find", "glob", "list", "query"])
    {
        Action::Search
    } else if contains_any(
        &tool,
        &["read", "view", "cat", "open", "fetch", "get", "show"],
    ) {
        Action::Read
    } else {
        Action::Run
    }
}

static FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?:^|[\s"'`(\[=,:])(?:\./)?((?:/?[A-Za-z0-9_.@-]+/)*[A-Za-z0-9_@-][A-Za-z0-9_.@-]*\.(?:rs|py|pyi|ts|tsx|js|jsx|mjs|go|java|kt|scala|c|h|cc|cpp|hpp|cs|rb|php|swift|toml|json|yaml|yml|md|sql|sh|html|css|vue|svelte|lock|ex|exs|zig|lua))(?::\d+)*\b"#,
    )
    .expect("file regex")
});

fn push_unique(into: &mut Vec<String>, value: String) {
    if !value.is_empty() && !into.contains(&value) && into.len() < MAX_PER_EVENT {
        into.push(value);
    }
}

/// Paths with a known source extension, in order of appearance, without line numbers.
pub fn collect_files(text: &str, into: &mut Vec<String>) {
    for captures in FILE.captures_iter(text) {
        let path = &captures[1];
        // `example.com/a.js` in a URL is not a file of the project.
        if path.contains("://") || path.starts_with("//") {
            continue;
        }
        push_unique(into, path.to_owned());
    }
}

fn collect_metadata_files(metadata: &serde_json::Value, into: &mut Vec<String>) {
    for key in ["files", "file", "path", "paths"] {
        match metadata.get(key) {
            Some(serde_json::Value::String(path)) => push_unique(into, path.clone()),
            Some(serde_json::Value::Array(paths)) => {
                for path in paths.iter().filter_map(|path| path.as_str()) {
                    push_unique(into, path.to_owned());
                }
            }
            _ => {}
        }
    }
}

/// Failing-test report lines of the common runners, with the test name in group 1.
static FAILING_TEST: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // cargo test / libtest
        r"(?m)^test (\S+) \.\.\. FAILED",
        r"(?m)^---- (\S+) stdout ----",
        // pytest
        r"(?m)^FAILED (\S+::\S+)",
        // python -m unittest: `FAIL: test_add (test_calc.CalcTest.test_add)`
        r"(?m)^(?:FAIL|ERROR): (\S+ \([\w.]+\))",
        // go test
        r"(?m)^\s*--- FAIL: (\S+)",
        // jest / vitest
        r"(?m)^\s*● (.+?)\s*$",
        r"(?m)^\s*[✕×] (.+?)(?: \(\d+ ?m?s\))?\s*$",
        // JUnit / Maven surefire
        r"(?m)^\[ERROR\]\s+(\S+?)(?:\(\S+\))?\s+(?:Time elapsed.*)?<<< FAIL",
    ]
    .iter()
    .map(|pattern| Regex::new(pattern).expect("failing-test regex"))
    .collect()
});

pub fn failing_tests(output: &str) -> Vec<String> {
    let mut names = Vec::new();
    for pattern in FAILING_TEST.iter() {
        for captures in pattern.captures_iter(output) {
            push_unique(&mut names, captures[1].trim().to_owned());
        }
    }
    names
}

/// Markers of an informative error line, most telling first.
const ERROR_MARKERS: [&str; 10] = [
    "panicked at",
    "error[",
    "Error:",
    "Error ",
    "error:",
    "Exception",
    "assert",
    "FAILED",
    "FAIL",
    "failed",
];

/// The most telling line of an error output: the first line with the strongest marker. A
/// panic's location line is joined with the message on the next line.
pub fn error_line(output: &str) -> Option<String> {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    for marker in ERROR_MARKERS {
        if let Some(index) = lines.iter().position(|line| line.contains(marker)) {
            let mut line = lines[index].to_owned();
            if marker == "panicked at"
                && line.ends_with(':')
                && let Some(message) = lines.get(index + 1)
            {
                line = format!("{line} {message}");
            }
            return Some(first_line(&line, MAX_ERROR_CHARS));
        }
    }
    lines.first().map(|line| first_line(line, MAX_ERROR_CHARS))
}

/// The language of a file, for tags.
pub fn language_of(path: &str) -> Option<&'static str> {
    let extension = path.rsplit('.').next()?;
    Some(match extension {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" | "tsx" => "typescript",
        "js" | "jsx" | "mjs" => "javascript",
        "go" => "go",
        "java" => "java",
        "kt" => "kotlin",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" => "cpp",
        "cs" => "csharp",
        "rb" => "ruby",
        "swift" => "swift",
        "sql" => "sql",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_commands_are_classified_by_what_they_run() {
        assert_eq!(classify("bash", Some("cargo test -p parser")), Action::Test);
        assert_eq!(
            classify("bash", Some("python -m pytest tests/")),
            Action::Test
        );
        assert_eq!(
            classify("bash", Some("cargo clippy --all-targets")),
            Action::Build
        );
        assert_eq!(classify("bash", Some("rg parse_expr src")), Action::Search);
        assert_eq!(classify("bash", Some("cat src/lib.rs")), Action::Read);
        assert_eq!(classify("bash", Some("echo hi")), Action::Run);
        assert_eq!(
            classify("bash", Some("cat tests/fixtures.txt")),
            Action::Read
        );
        assert_eq!(
            classify("bash", Some("cd web && npm run test")),
            Action::Test
        );
        assert_eq!(classify("edit_file", None), Action::Edit);
        assert_eq!(classify("str_replace_based_edit_tool", None), Action::Edit);
        assert_eq!(classify("read_file", None), Action::Read);
        assert_eq!(classify("grep", None), Action::Search);
        assert_eq!(classify("run_tests", None), Action::Test);
    }

    #[test]
    fn files_are_found_without_line_numbers_or_urls() {
        let mut files = Vec::new();
        collect_files(
            r#"{"path":"src/parser.rs"} see ./tests/test_parser.py:42 and https://example.com/app.js, src/parser.rs:17:9"#,
            &mut files,
        );
        assert_eq!(files, vec!["src/parser.rs", "tests/test_parser.py"]);
    }

    #[test]
    fn failing_tests_of_common_runners_are_named() {
        let cargo = "running 2 tests\ntest parser::tests::ok ... ok\ntest parser::tests::empty_input ... FAILED\n\nfailures:\n\n---- parser::tests::empty_input stdout ----\n";
        assert_eq!(failing_tests(cargo), vec!["parser::tests::empty_input"]);
        let pytest = "FAILED tests/test_api.py::test_login - AssertionError: 401 != 200\n";
        assert_eq!(failing_tests(pytest), vec!["tests/test_api.py::test_login"]);
        let go = "--- FAIL: TestParseEmpty (0.00s)\nFAIL\n";
        assert_eq!(failing_tests(go), vec!["TestParseEmpty"]);
        let jest = "  ✕ parses empty input (3 ms)\n";
        assert_eq!(failing_tests(jest), vec!["parses empty input"]);
        let unittest = "F.\n======\nFAIL: test_add (test_calc.CalcTest.test_add)\n------\nERROR: test_io (test_calc.CalcTest.test_io)\n";
        assert_eq!(
            failing_tests(unittest),
            vec![
                "test_add (test_calc.CalcTest.test_add)",
                "test_io (test_calc.CalcTest.test_io)"
            ]
        );
        assert!(failing_tests("all good").is_empty());
    }

    #[test]
    fn the_most_telling_error_line_is_chosen() {
        let panic = "test a ... FAILED\nthread 'a' panicked at src/parser.rs:17:9:\nindex out of bounds: the len is 0 but the index is 0\n";
        assert_eq!(
            error_line(panic).as_deref(),
            Some(
                "thread 'a' panicked at src/parser.rs:17:9: index out of bounds: the len is 0 but the index is 0"
            )
        );
        let rustc = "Compiling x\nerror[E0308]: mismatched types\n --> src/a.rs:3:5";
        assert_eq!(
            error_line(rustc).as_deref(),
            Some("error[E0308]: mismatched types")
        );
        assert_eq!(error_line("").as_deref(), None);
        assert_eq!(error_line("weird\n").as_deref(), Some("weird"));
    }

    #[test]
    fn commands_come_from_json_or_plain_shell_input() {
        let event = |tool: &str, input: &str| CapturedEvent {
            id: uuid::Uuid::now_v7(),
            identity: aeterna_memory::Identity::new("t"),
            tool_name: tool.into(),
            description: String::new(),
            input: input.into(),
            output: String::new(),
            success: true,
            duration_ms: 0,
            tags: vec![],
            metadata: serde_json::json!({}),
            truncated: vec![],
            captured_at: 0,
        };
        assert_eq!(
            command_of(&event("bash", r#"{"command":"cargo test"}"#)).as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            command_of(&event("bash", "ls -la")).as_deref(),
            Some("ls -la")
        );
        assert_eq!(command_of(&event("read_file", "src/a.rs")), None);
        assert_eq!(
            Signals::of(&event("bash", "cargo test")).action,
            Action::Test
        );
    }
}
