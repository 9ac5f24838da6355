//! `aeterna ext check` and `aeterna ext run`, through the real binary with real components.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The test guest `name`, built from `tests/guests` by the testkit on first use.
fn guest(name: &str) -> PathBuf {
    aeterna_testkit::test_guest(name).unwrap_or_else(|error| panic!("test guest {name}: {error:#}"))
}

/// Runs `aeterna` with `args`, feeding `stdin`, with a compile cache shared by these tests.
fn aeterna(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_aeterna"))
        .args(args)
        .env(
            "AETERNA_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("ext-cli-cache"),
        )
        .env("AETERNA_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the aeterna binary starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().expect("aeterna finishes")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// An extensions directory with two probes (`high` runs first).
fn probes() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (id, priority) in [("high", 5), ("low", 1)] {
        std::fs::copy(guest("probe"), dir.path().join(format!("{id}.wasm"))).unwrap();
        std::fs::write(
            dir.path().join(format!("{id}.toml")),
            format!("id = \"{id}\"\npriority = {priority}\n[config]\nmark = \"{id}\"\n"),
        )
        .unwrap();
    }
    dir
}

fn path(dir: &tempfile::TempDir) -> &str {
    dir.path().to_str().unwrap()
}

#[test]
fn check_prints_the_registration_as_json() {
    let dir = probes();
    let file = dir.path().join("high.wasm");
    let output = aeterna(&["ext", "check", file.to_str().unwrap()], "");
    assert!(output.status.success(), "{}", stderr(&output));
    let info: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(info["id"], "high", "manifest overrides apply");
    assert_eq!(info["priority"], 5);
    assert_eq!(info["version"], "1.2.3");
    assert_eq!(
        info["hooks"],
        serde_json::json!(["input-messages", "plain-text", "tag", "llm-output"])
    );
    assert_eq!(info["tags"], serde_json::json!(["probe"]));
    assert_eq!(info["failure"], "open");
    assert_eq!(info["limits"]["timeout_ms"], 5000);
}

#[test]
fn check_rejects_invalid_files_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.wasm");
    std::fs::write(&garbage, b"definitely not wasm").unwrap();
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let bad_manifest = dir.path().join("bad.wasm");
    std::fs::copy(guest("probe"), &bad_manifest).unwrap();
    std::fs::write(dir.path().join("bad.toml"), "colour = \"blue\"\n").unwrap();
    let invalid_registration = dir.path().join("reg.wasm");
    std::fs::copy(guest("probe"), &invalid_registration).unwrap();
    std::fs::write(dir.path().join("reg.toml"), "[config]\nreg-hooks = \"\"\n").unwrap();

    let cases = [
        (garbage, "not a WebAssembly binary".to_owned()),
        (core, "core WebAssembly module, not a component".to_owned()),
        (
            guest("not-an-extension"),
            "not an Aeterna extension".to_owned(),
        ),
        (
            guest("wrong-version"),
            "aeterna:extension/types@0.2.0".to_owned(),
        ),
        (bad_manifest, "unknown field `colour`".to_owned()),
        (invalid_registration, "`hooks` is empty".to_owned()),
        (
            dir.path().join("missing.wasm"),
            "cannot read the file".to_owned(),
        ),
    ];
    for (file, expected) in cases {
        let output = aeterna(&["ext", "check", file.to_str().unwrap()], "");
        assert!(
            !output.status.success(),
            "{} must be rejected",
            file.display()
        );
        assert!(stdout(&output).is_empty());
        let message = stderr(&output);
        assert!(
            message.contains(file.to_str().unwrap()),
            "names the file: {message}"
        );
        assert!(message.contains(&expected), "{expected:?} not in {message}");
    }
}

#[test]
fn run_plain_text_from_stdin() {
    let dir = probes();
    let output = aeterna(
        &[
            "ext",
            "run",
            "--extensions",
            path(&dir),
            "--hook",
            "plain-text",
        ],
        "hello",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "hello[high:1][low:1]");
}

#[test]
fn run_json_prints_output_and_report() {
    let dir = probes();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "a <probe k=\"v\">body</probe> b").unwrap();
    let output = aeterna(
        &[
            "ext",
            "run",
            "--extensions",
            path(&dir),
            "--hook",
            "llm-output",
            "--input",
            input.to_str().unwrap(),
            "--json",
            "--tenant",
            "t1",
            "--session",
            "s1",
        ],
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let run: Value = serde_json::from_str(&stdout(&output)).unwrap();
    // One priority-ordered pipeline: `high` handles the tag, then the whole text; `low` then
    // finds no tag left and handles the whole text.
    assert_eq!(run["output"], "a (high:1 probe k=v|body) b[high:2][low:1]");
    let report = run["report"].as_array().unwrap();
    let rows: Vec<_> = report
        .iter()
        .map(|row| {
            (
                row["extension"].as_str().unwrap(),
                row["hook"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("high", "tag"),
            ("high", "llm-output"),
            ("low", "llm-output")
        ]
    );
    for row in report {
        assert_eq!(row["outcome"]["status"], "ok");
        assert!(row["fuel_used"].as_u64().unwrap() > 0);
        assert!(row["duration_us"].is_u64());
    }
}

#[test]
fn run_input_messages_takes_a_json_array_of_messages() {
    let dir = probes();
    let input = r#"[{"role": "user", "content": "hi"}]"#;
    let output = aeterna(
        &[
            "ext",
            "run",
            "--extensions",
            path(&dir),
            "--hook",
            "input-messages",
            "--tenant",
            "acme",
            "--session",
            "s7",
            "--user",
            "ana",
        ],
        input,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let messages: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        messages[0],
        serde_json::json!({"role": "user", "content": "hi"})
    );
    assert_eq!(
        messages[1]["content"],
        "high:1 tenant=acme session=s7 user=ana project= tools="
    );
    assert_eq!(messages.as_array().unwrap().len(), 3);

    for bad in [
        r#"{"role": "user"}"#,
        r#"[{"role": "user"}]"#,
        r#"[{"role": "user", "content": "x", "extra": 1}]"#,
        "not json",
    ] {
        let output = aeterna(
            &[
                "ext",
                "run",
                "--extensions",
                path(&dir),
                "--hook",
                "input-messages",
            ],
            bad,
        );
        assert!(!output.status.success(), "{bad} must be refused");
        assert!(
            stderr(&output).contains("JSON array of {\"role\": …, \"content\": …}"),
            "{bad}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn run_stops_on_a_fail_closed_fault_and_names_the_extension() {
    let dir = probes();
    std::fs::copy(guest("hostile"), dir.path().join("guard.wasm")).unwrap();
    std::fs::write(
        dir.path().join("guard.toml"),
        "id = \"guard\"\npriority = 3\nfailure = \"closed\"\n[config]\nmode = \"panic\"\n",
    )
    .unwrap();
    let output = aeterna(
        &[
            "ext",
            "run",
            "--extensions",
            path(&dir),
            "--hook",
            "plain-text",
            "--json",
        ],
        "x",
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("extension `guard` faulted"),
        "{}",
        stderr(&output)
    );
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["extension"], "guard");
    assert_eq!(report["fault"]["kind"], "trap");
    assert_eq!(
        report["report"].as_array().unwrap().len(),
        2,
        "high ran, then guard; low never did"
    );
}

#[test]
fn run_refuses_rejected_extensions_unless_told_to_skip_them() {
    let dir = probes();
    std::fs::write(dir.path().join("broken.wasm"), b"nope").unwrap();
    let args = [
        "ext",
        "run",
        "--extensions",
        path(&dir),
        "--hook",
        "plain-text",
    ];
    let output = aeterna(&args, "x");
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("broken.wasm: not a WebAssembly binary"),
        "{}",
        stderr(&output)
    );

    let mut skipping = args.to_vec();
    skipping.push("--skip-invalid");
    let output = aeterna(&skipping, "x");
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "x[high:1][low:1]");
}

#[test]
fn run_reports_a_missing_directory_and_an_unknown_hook() {
    let output = aeterna(
        &[
            "ext",
            "run",
            "--extensions",
            "/nonexistent/dir",
            "--hook",
            "plain-text",
        ],
        "",
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("/nonexistent/dir"),
        "{}",
        stderr(&output)
    );

    let dir = probes();
    let output = aeterna(
        &[
            "ext",
            "run",
            "--extensions",
            path(&dir),
            "--hook",
            "sideways",
        ],
        "",
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("unknown hook `sideways`"),
        "{}",
        stderr(&output)
    );
}

// ----- ext new and ext test ----------------------------------------------------------------

/// Runs `program` with `args` in `dir`, with `path` first on PATH; panics with its output if it
/// fails, returns its stdout otherwise.
fn run_in(dir: &Path, path: Option<&Path>, program: &str, args: &[&str]) -> String {
    let mut command = Command::new(program);
    command.args(args).current_dir(dir);
    if let Some(path) = path {
        let mut paths = vec![path.to_path_buf()];
        paths.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        command.env("PATH", std::env::join_paths(paths).unwrap());
    }
    aeterna_testkit::any_language::command_output(&mut command)
        .unwrap_or_else(|error| panic!("{program} {args:?} in {}: {error:#}", dir.display()))
}

/// `aeterna ext new NAME --lang LANG` in a fresh directory; returns it and the project path.
fn scaffold(name: &str, lang: &str) -> (tempfile::TempDir, PathBuf) {
    let parent = tempfile::tempdir().unwrap();
    let output = aeterna(
        &[
            "ext",
            "new",
            name,
            "--lang",
            lang,
            "--dir",
            parent.path().to_str().unwrap(),
        ],
        "",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("next:"), "{}", stdout(&output));
    let project = parent.path().join(name);
    (parent, project)
}

/// `aeterna ext test DIR`, which must pass both fixture cases of a new project.
fn assert_fixtures_pass(project: &Path) {
    let output = aeterna(&["ext", "test", project.to_str().unwrap()], "");
    let out = stdout(&output);
    assert!(output.status.success(), "{out}{}", stderr(&output));
    assert!(out.ends_with("2 passed, 0 failed\n"), "{out}");
}

#[test]
fn a_new_rust_project_builds_and_passes_its_tests_as_generated() {
    let (_parent, project) = scaffold("trim-rs", "rust");
    // The samples' target dir and lock file: the SDK's dependencies, already built for the
    // samples, are reused rather than built again.
    let target = aeterna_testkit::guests_target_dir();
    std::fs::copy(
        aeterna_testkit::repo_root().join("sample-extensions/Cargo.lock"),
        project.join("Cargo.lock"),
    )
    .unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = |args: &[&str]| {
        let mut command = Command::new(&cargo);
        command
            .args(args)
            .current_dir(&project)
            .env("CARGO_TARGET_DIR", &target)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS");
        aeterna_testkit::any_language::command_output(&mut command)
            .unwrap_or_else(|error| panic!("cargo {args:?}: {error:#}"))
    };
    build(&["test", "--quiet"]);
    let script = Command::new("./build.sh")
        .current_dir(&project)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        script.status.success(),
        "{}",
        String::from_utf8_lossy(&script.stderr)
    );
    assert!(project.join("dist/trim_rs.wasm").is_file());
    assert!(project.join("dist/trim_rs.toml").is_file());
    assert_fixtures_pass(&project);
}

#[test]
fn a_new_javascript_project_builds_and_passes_its_tests_as_generated() {
    let Some(bin) = aeterna_testkit::any_language::toolchains() else {
        return;
    };
    let (_parent, project) = scaffold("trim-js", "js");
    assert!(project.join("wit/extension.wit").is_file());
    // The toolchain's componentize-js stands in for `npm install` (same pinned version).
    let modules = bin.parent().unwrap().join("js/node_modules");
    std::os::unix::fs::symlink(&modules, project.join("node_modules")).unwrap();
    let node = bin.join("node");
    let npm = std::fs::canonicalize(&node)
        .unwrap()
        .parent()
        .unwrap()
        .join("../lib/node_modules/npm/bin/npm-cli.js");
    let npm = npm.to_str().unwrap();
    run_in(&project, Some(&bin), node.to_str().unwrap(), &[npm, "test"]);
    run_in(
        &project,
        Some(&bin),
        node.to_str().unwrap(),
        &[npm, "run", "build"],
    );
    assert!(project.join("dist/trim_js.wasm").is_file());
    assert_fixtures_pass(&project);
}

#[test]
fn a_new_python_project_builds_and_passes_its_tests_as_generated() {
    let Some(bin) = aeterna_testkit::any_language::toolchains() else {
        return;
    };
    let (_parent, project) = scaffold("trim-py", "python");
    run_in(
        &project,
        Some(&bin),
        "python3",
        &["-m", "unittest", "--quiet"],
    );
    run_in(&project, Some(&bin), "./build.sh", &[]);
    assert!(project.join("dist/trim_py.wasm").is_file());
    assert_fixtures_pass(&project);
}

#[test]
fn new_refuses_a_bad_name_and_a_non_empty_directory() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().to_str().unwrap();
    let output = aeterna(&["ext", "new", "Bad Name", "--dir", dir], "");
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("cannot name an extension"),
        "{}",
        stderr(&output)
    );
    std::fs::create_dir(parent.path().join("taken")).unwrap();
    std::fs::write(parent.path().join("taken/file"), "x").unwrap();
    let output = aeterna(&["ext", "new", "taken", "--dir", dir], "");
    assert!(!output.status.success());
    assert!(stderr(&output).contains("not empty"), "{}", stderr(&output));
}

#[test]
fn ext_test_reports_each_case_and_fails_on_a_wrong_output_or_a_missing_fault() {
    let project = probes();
    let fixtures = project.path().join("fixtures");
    std::fs::create_dir(&fixtures).unwrap();
    std::fs::write(
        fixtures.join("chain.toml"),
        r#"
[[case]]
name = "both probes run, in order"
hook = "plain-text"
input = "x"
output = "x[high:1][low:1]"

[[case]]
name = "state carries over within the file"
hook = "plain-text"
input = "y"
output = "y[high:2][low:2]"

[[case]]
name = "an expected refusal"
hook = "plain-text"
input = "FAIL"
fault = "ext-error"

[[case]]
name = "a wrong expectation"
hook = "plain-text"
input = "z"
output = "z"

[[case]]
name = "messages"
hook = "input-messages"
input = [{ role = "user", content = "hi" }]
output = [{ role = "user", content = "hi" }]
"#,
    )
    .unwrap();
    let output = aeterna(
        &[
            "ext",
            "test",
            path(&project),
            "--extensions",
            path(&project),
        ],
        "",
    );
    let out = stdout(&output);
    assert!(!output.status.success(), "{out}");
    assert!(
        out.contains("ok      chain: both probes run, in order"),
        "{out}"
    );
    assert!(
        out.contains("ok      chain: state carries over within the file"),
        "{out}"
    );
    assert!(out.contains("ok      chain: an expected refusal"), "{out}");
    assert!(out.contains("FAILED  chain: a wrong expectation"), "{out}");
    assert!(out.contains("--- expected\n        z\n"), "{out}");
    assert!(
        out.contains("FAILED  chain: messages"),
        "the probes change messages: {out}"
    );
    assert!(out.ends_with("3 passed, 2 failed\n"), "{out}");
}

#[test]
fn stderr_carries_no_colour_codes_when_it_is_not_a_terminal() {
    let dir = probes();
    let mut child = Command::new(env!("CARGO_BIN_EXE_aeterna"))
        .args([
            "ext",
            "run",
            "--extensions",
            path(&dir),
            "--hook",
            "plain-text",
        ])
        .env(
            "AETERNA_CACHE_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("ext-cli-cache"),
        )
        .env("AETERNA_LOG", "info")
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"x").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let err = stderr(&output);
    assert!(err.contains("extensions loaded"), "{err}");
    assert!(!err.contains('\u{1b}'), "ANSI escapes on a pipe: {err:?}");
}
