//! Extraction and normalisation tests. Tool output comes from the committed fixture corpus
//! (`fixtures/outputs`, produced by `fixtures/generate.py` from real tools); the short strings
//! below exercise single normalisation rules, not tool formats.

use super::*;

fn fixture(path: &str) -> String {
    let full = format!("{}/fixtures/outputs/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

fn one(path: &str) -> ErrorSignature {
    let mut found = extract(&fixture(path));
    assert_eq!(found.len(), 1, "{path}: {found:#?}");
    found.remove(0)
}

fn has(signature: &ErrorSignature, context: &str) -> bool {
    signature.context_patterns.iter().any(|c| c == context)
}

#[test]
fn quoted_identifiers_become_placeholders_and_context() {
    let (pattern, context) = normalize_message("cannot find value `countr` in this scope");
    assert_eq!(pattern, "cannot find value <Q> in this scope");
    assert!(context.contains(&"q:countr".to_string()), "{context:?}");
    let (pattern, _) = normalize_message("name 'totl' is not defined. Did you mean: 'total'?");
    assert_eq!(pattern, "name <Q> is not defined");
    // gcc's `sym' style and Unicode quotes.
    assert_eq!(
        normalize_message("undefined reference to `db_open'").0,
        "undefined reference to <Q>"
    );
    assert_eq!(
        normalize_message("‘BUF_SIZE’ undeclared").0,
        "<Q> undeclared"
    );
}

#[test]
fn quoted_punctuation_and_apostrophes_are_kept() {
    assert_eq!(
        normalize_message("'(' was never closed").0,
        "'(' was never closed"
    );
    assert_eq!(
        normalize_message("expected `;`, found `}`").0,
        "expected `;`, found `}`"
    );
    assert_eq!(
        normalize_message("can't find crate's root").0,
        "can't find crate's root"
    );
}

#[test]
fn paths_lose_directories_and_locations_but_keep_the_file_name() {
    let (pattern, context) = normalize_message(
        "failed to read /tmp/hindsight-x81/app/src/main.rs:12:5 (see ./build/log.txt)",
    );
    assert_eq!(pattern, "failed to read <PATH> (see <PATH>)");
    for expected in ["file:main.rs", "ext:rs", "file:log.txt", "ext:txt"] {
        assert!(
            context.contains(&expected.to_string()),
            "{expected}: {context:?}"
        );
    }
    assert_eq!(
        normalize_message("fatal: netutil.h: missing").0,
        "fatal: <PATH>: missing"
    );
    assert_eq!(
        normalize_message(r"open C:\Users\ada\app.py failed").0,
        "open <PATH> failed"
    );
    // Words with a slash that are not paths stay.
    assert_eq!(
        normalize_message("read and/or write").0,
        "read and/or write"
    );
}

#[test]
fn numbers_hex_ids_and_timestamps_become_placeholders() {
    let (pattern, _) = normalize_message(
        "at 2024-05-01T10:22:33.120Z job 7f3a9c2e1b0d4e5f8a9b (id 3f2b8c4e-1d2a-4b3c-9d8e-7f6a5b4c3d2e) \
         failed at 0x7ffd5a3b after 250ms on 10.0.0.12:5432, index 5 of len 3",
    );
    assert_eq!(
        pattern,
        "at <TS> job <HEX> (id <UUID>) failed at <HEX> after <N> on <ADDR>, index <N> of len <N>"
    );
    // Digits inside identifiers stay.
    assert_eq!(
        normalize_message("E0308 in int64 utf8").0,
        "E0308 in int64 utf8"
    );
}

#[test]
fn rustc_diagnostic_keeps_code_file_and_hints() {
    let s = one("rust/E0308-mismatched-types/invoice_total.txt");
    assert_eq!(
        (s.language, s.error_type.as_str()),
        (Language::Rust, "E0308")
    );
    assert_eq!(s.message_pattern, "mismatched types");
    assert!(
        has(&s, "file:invoice_total.rs") && has(&s, "ext:rs") && has(&s, "tool:rustc"),
        "{s:#?}"
    );
    assert!(
        s.context_patterns.iter().any(|c| c.starts_with("help:")),
        "{s:#?}"
    );
    // The `aborting due to` summary is not a second signature.
}

#[test]
fn several_errors_in_one_text_are_split() {
    let rust = extract(&fixture("rust/multi/two_errors.txt"));
    let types: Vec<&str> = rust.iter().map(|s| s.error_type.as_str()).collect();
    assert_eq!(types, ["E0425", "E0308"]);
    let ts = extract(&fixture("typescript/multi/report.txt"));
    let types: Vec<&str> = ts.iter().map(|s| s.error_type.as_str()).collect();
    assert_eq!(types, ["TS2322", "TS2339"]);
    let shell = extract(&fixture("shell/multi/setup.txt"));
    let types: Vec<&str> = shell.iter().map(|s| s.error_type.as_str()).collect();
    assert_eq!(types, ["command-not-found", "no-such-file-or-directory"]);
    // Two "declared and not used" errors in one file are the same error once.
    assert_eq!(extract(&fixture("go/declared-not-used/cache.txt")).len(), 1);
}

#[test]
fn logs_concatenated_from_several_tools_split_by_tool() {
    let text = [
        "rust/E0599-no-method/shapes.txt",
        "python/KeyError/cart.txt",
        "java/NullPointerException/Cache.txt",
        "node/TypeError-read-undefined/orders.txt",
        "gcc/undeclared/sum.txt",
        "go/panic-nil-map/config.txt",
    ]
    .map(fixture)
    .join("\n");
    let found: Vec<(Language, String)> = extract(&text)
        .into_iter()
        .map(|s| (s.language, s.error_type))
        .collect();
    let expected = [
        (Language::Rust, "E0599"),
        (Language::Python, "KeyError"),
        (Language::Java, "java.lang.NullPointerException"),
        (Language::JavaScript, "TypeError"),
        (Language::C, "undeclared"),
        (Language::Go, "panic"),
    ];
    let expected: Vec<(Language, String)> =
        expected.iter().map(|(l, t)| (*l, t.to_string())).collect();
    assert_eq!(found, expected);
}

#[test]
fn chained_python_tracebacks_report_the_escaping_exception() {
    let s = one("python/multi/chained.txt");
    assert_eq!(s.error_type, "RuntimeError");
    assert!(has(&s, "cause:JSONDecodeError"), "{s:#?}");
    assert_eq!(
        s.stack_patterns.first().map(String::as_str),
        Some("chained.py:load")
    );
}

#[test]
fn node_errors_use_the_error_code_and_frames() {
    let s = one("node/MODULE_NOT_FOUND/utils.txt");
    assert_eq!(s.error_type, "MODULE_NOT_FOUND");
    assert_eq!(s.message_pattern, "Cannot find module <Q>");
    assert!(
        s.stack_patterns
            .iter()
            .any(|f| f.starts_with("node:internal/modules/cjs/loader:"))
    );
    let s = one("node/ReferenceError/logger.txt");
    assert_eq!(s.message_pattern, "<ID> is not defined");
    assert!(has(&s, "q:logMesage"), "{s:#?}");
}

#[test]
fn jvm_exceptions_and_javac_diagnostics() {
    let s = one("java/NullPointerException/Cache.txt");
    assert_eq!(s.stack_patterns, ["Cache.upper", "Cache.main"]);
    let s = one("java/cannot-find-symbol/Inventory.txt");
    assert_eq!(s.error_type, "cannot-find-symbol");
    assert!(has(&s, "symbol:class") && has(&s, "q:ArrayList"), "{s:#?}");
    let s = one("kotlin/type-mismatch/Name.txt");
    assert_eq!(
        s.message_pattern,
        "type mismatch: inferred type is <T> but <T> was expected"
    );
    let s = one("kotlin/NullPointerException/Profile.txt");
    assert_eq!(
        (s.language, s.error_type.as_str()),
        (Language::Kotlin, "kotlin.KotlinNullPointerException")
    );
}

#[test]
fn c_family_flags_linker_and_summaries() {
    let s = one("gcc/implicit-function-declaration/main.txt");
    assert_eq!(s.error_type, "implicit-function-declaration");
    let s = one("gxx/undefined-reference/engine.txt");
    assert_eq!(
        (s.language, s.error_type.as_str()),
        (Language::Cpp, "undefined-reference")
    );
    assert_eq!(s.message_pattern, "undefined reference to <Q>");
}

#[test]
fn shell_errors_and_exit_codes() {
    let s = one("shell/command-not-found/build.txt");
    assert_eq!(s.message_pattern, "<ID>: command not found");
    assert!(has(&s, "q:yarnn") && has(&s, "tool:sh"), "{s:#?}");
    let s = one("shell/make-recipe-failed/lint.txt");
    assert!(has(&s, "exit:3"), "{s:#?}");
    // A Go panic is followed by `exit status 2`: the panic is the error, the exit a summary.
    let go = extract(&fixture("go/panic-index-out-of-range/args.txt"));
    assert_eq!(go.len(), 1);
    assert_eq!(go[0].error_type, "panic");
}

#[test]
fn rust_panics_drop_thread_ids_and_locations() {
    let a = one("rust/panic-unwrap-none/lookup.txt");
    let b = one("rust/panic-unwrap-none/env_var.txt");
    assert_eq!(a.message_pattern, "called <Q> on a <Q> value");
    assert_eq!(a.fingerprint(), b.fingerprint());
    let test = one("cargo/test-assert-eq/pricing.txt");
    assert_eq!(test.error_type, "panic");
    assert!(
        has(&test, "test:panicked") && has(&test, "file:lib.rs"),
        "{test:#?}"
    );
}

#[test]
fn pytest_sections_and_their_summary_are_one_error() {
    let s = one("python/pytest-assert/test_queue.txt");
    assert_eq!(
        (s.error_type.as_str(), s.message_pattern.as_str()),
        ("AssertionError", "assert <N> == <N>")
    );
    assert_eq!(s.stack_patterns, ["test_queue.py:TestQueue.test_fifo"]);
}

#[test]
fn text_without_errors_yields_nothing_and_warnings_are_skipped() {
    assert!(extract("").is_empty());
    assert!(extract("all 12 tests passed\nFinished in 0.3s\n").is_empty());
    // A warning alone is not a failure.
    let warning_only = fixture("rust/E0308-mismatched-types/greeting.txt")
        .replace("error[E0308]", "warning[E0308]")
        .replace("error: aborting", "note: aborting");
    assert!(
        extract(&warning_only).is_empty(),
        "{:#?}",
        extract(&warning_only)
    );
}

#[test]
fn hostile_input_is_handled() {
    // Long lines, binary noise, unbalanced quotes and ANSI colours neither panic nor hang.
    let noise: String = (0..50_000u32)
        .map(|i| char::from_u32(i % 0x2FF + 1).unwrap_or('x'))
        .collect();
    let _ = extract(&noise);
    let coloured = "\x1b[0m\x1b[1m\x1b[38;5;9merror[E0425]\x1b[0m\x1b[0m\x1b[1m: cannot find value `x` in this scope\x1b[0m\n --> a.rs:1:1\n";
    let s = &extract(coloured)[0];
    assert_eq!(
        (s.error_type.as_str(), s.message_pattern.as_str()),
        ("E0425", "cannot find value <Q> in this scope")
    );
    let unbalanced = format!("error: `{}\n", "a".repeat(10_000));
    let _ = extract(&unbalanced);
}

#[test]
fn language_parses_aliases_and_rejects_unknowns() {
    assert_eq!("ts".parse::<Language>(), Ok(Language::TypeScript));
    assert_eq!("C++".parse::<Language>(), Ok(Language::Cpp));
    assert!(
        "cobol"
            .parse::<Language>()
            .unwrap_err()
            .contains("expected one of")
    );
}

#[test]
fn output_no_recogniser_knows_is_read_by_the_headline_fallback() {
    let found = extract("zq: error (at <stdin>:1): Cannot index number with string \"id\"\n");
    let [s] = &found[..] else {
        panic!("{found:#?}")
    };
    assert_eq!(s.message_pattern, "Cannot index number with string <Q>");
    assert!(has(s, "tool:zq"), "{s:?}");
    // A known format with only a warning stays without errors, whatever words it uses.
    let warned = "warning: unused variable: `x`\n --> src/main.rs:2:9\n  |\n\nFor more information about this error, try `rustc --explain E0308`.\n";
    assert!(extract(warned).is_empty(), "{:#?}", extract(warned));
}

#[test]
fn an_unknown_language_is_fingerprinted_and_embedded_with_its_ecosystem() {
    let of =
        |tool: &str| extract(&format!("{tool}: fatal: cannot frobnicate the widget\n")).remove(0);
    let (a, b) = (of("aa"), of("bb"));
    assert_eq!(
        (a.language, &a.message_pattern),
        (Language::Unknown, &b.message_pattern)
    );
    assert_ne!(a.fingerprint(), b.fingerprint());
    assert_eq!(of("aa").fingerprint(), a.fingerprint());
    assert!(
        a.embedding_text().starts_with("aa "),
        "{}",
        a.embedding_text()
    );
    let known = one("rust/E0308-mismatched-types/greeting.txt");
    assert!(known.embedding_text().starts_with("rust "));
}
