//! The headline fallback on made-up formats (no toolchain's): each test exercises one cue.

use super::*;

fn headline(text: &str) -> Option<RawError> {
    let lines: Vec<&str> = text.lines().collect();
    fallback(&lines, &vec![false; lines.len()])
}

fn parts(text: &str) -> (Option<String>, String) {
    let found = headline(text).unwrap_or_else(|| panic!("no headline in {text:?}"));
    (found.error_type, found.message)
}

#[test]
fn a_class_in_parentheses_or_at_the_head_is_the_type() {
    assert_eq!(
        parts("app.xy:3:in `run': key not found: \"k\" (KeyError)\n\tfrom app.xy:9:in `<main>'"),
        (Some("KeyError".into()), "key not found: \"k\"".into())
    );
    assert_eq!(
        parts(
            "\nUnhandled Exception:\nPkg.IO.FileMissingException: Could not find file \"a\"\n  at X.Main () [0x0]"
        ),
        (
            Some("Pkg.IO.FileMissingException".into()),
            "Could not find file \"a\"".into()
        )
    );
    assert_eq!(
        parts(">> (Mod.SomeError) bad thing happened"),
        (Some("Mod.SomeError".into()), "bad thing happened".into())
    );
}

#[test]
fn labels_codes_tools_and_locations_are_cut_off() {
    assert_eq!(
        parts(
            "Main.zz(8,20): error AB0266: Cannot implicitly convert\nBuild failed: 1 error(s), 0 warnings"
        ),
        (Some("AB0266".into()), "Cannot implicitly convert".into())
    );
    assert_eq!(
        parts("tool9.1: input.zz:4: cannot frobnicate the widget"),
        (None, "cannot frobnicate the widget".into())
    );
    let found = headline("Cannot open the thing at script.zz line 4.").unwrap();
    assert_eq!(found.message, "Cannot open the thing");
    assert!(found.context.contains(&"src:zz".to_string()), "{found:?}");
}

#[test]
fn a_headline_ending_in_a_colon_continues_below() {
    let text = "Run options: --seed 1\n\n  1) Failure:\nSuite#test_x [test_x.zz:14]:\nExpected: 15\n  Actual: 18.0\n\n1 runs, 1 assertions, 1 failures\n";
    assert_eq!(parts(text), (None, "Expected: 15 Actual: 18.0".into()));
}

#[test]
fn warnings_summaries_and_plain_text_are_no_headlines() {
    assert!(headline("all 12 tests passed\nFinished in 0.3s\n").is_none());
    assert!(headline("a.zz(3,1): warning XY0649: Field is never assigned to\n").is_none());
    assert!(headline("hello world\n").is_none());
    assert!(headline("").is_none());
}

#[test]
fn huge_and_hostile_lines_are_bounded() {
    let long = format!("error: {}\n", "x: ".repeat(100_000));
    let found = headline(&long).expect("a headline");
    assert!(found.message.len() <= MAX_LINE_BYTES);
    let noise: String = (0..50_000u32)
        .map(|i| char::from_u32(i % 0x2FF + 1).unwrap_or('x'))
        .collect();
    let _ = headline(&noise);
}

#[test]
fn the_first_error_wins_over_a_later_consequence() {
    // The cause scores a little less than the summary after it, and is still the headline.
    let text = "Cannot resolve name frob at job.zz line 3.\nRUN failed--compilation aborted at job.zz line 3.\n";
    assert_eq!(parts(text).1, "Cannot resolve name frob");
    // A later line that says clearly more wins: a location-led excerpt is no headline.
    let text = "zz: cmd. line:1: x = ;\nzz: cmd. line:1:     ^ syntax error\n";
    assert_eq!(parts(text), (None, "syntax error".into()));
}

#[test]
fn positions_without_files_and_asides_are_where_not_what() {
    assert_eq!(parts("(input) 2: syntax error").1, "syntax error");
    assert_eq!(
        parts("ed: -e expression #1, char 5: unterminated `s' command").1,
        "unterminated `s' command"
    );
    assert_eq!(
        parts("Parse error near line 2: no such column: price").1,
        "no such column: price"
    );
    assert_eq!(
        parts("zq: error (at <stdin>:1): Cannot iterate over number (5)").1,
        "Cannot iterate over number (5)"
    );
    assert_eq!(
        parts("zq: error: syntax error, unexpected end at <top-level>, line 1:\n.a |\n").1,
        "syntax error, unexpected end"
    );
}

#[test]
fn a_thin_opening_headline_continues_and_a_thin_message_takes_its_details() {
    let text = "worker 'main' panicked at job.zz:7:19:\nindex out of bounds: the len is 3\nnote: run with TRACE=1\n";
    assert_eq!(
        parts(text).1,
        "worker 'main' panicked index out of bounds: the len is 3"
    );
    let text = "#   Failed test 'totals'\n#   at t/sum.zz line 8.\n#          got: '3'\n#     expected: '4'\n# Looks like you failed 1 test of 1.\n";
    assert_eq!(parts(text).1, "Failed test 'totals' got: '3' expected: '4'");
}

#[test]
fn frames_after_the_headline_give_the_source_files_and_the_language() {
    let found = headline(
        "oops: cannot divide by zero\n    while running\n\"calc 1 0\"\n    (file \"calc.zz\" line 3)\n",
    )
    .unwrap();
    assert_eq!(found.frames.len(), 1, "{found:?}");
    assert!(found.context.contains(&"src:zz".to_string()), "{found:?}");
    let found = headline("Oops: cannot open\n  at load (/srv/app/main.py:3)\n").unwrap();
    assert_eq!(found.language, Language::Python);
}
