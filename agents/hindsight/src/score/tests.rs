//! Score components and how they combine, on hand-made signatures.

use super::*;

fn sig(language: Language, error_type: &str, message: &str, context: &[&str]) -> ErrorSignature {
    ErrorSignature {
        error_type: error_type.to_string(),
        message_pattern: message.to_string(),
        stack_patterns: Vec::new(),
        context_patterns: context.iter().map(|c| c.to_string()).collect(),
        language,
        embedding: None,
    }
}

fn uniform(_: u64) -> f32 {
    1.0
}

fn score_of(query: &ErrorSignature, entry: &ErrorSignature, form: QueryForm) -> ScoreBreakdown {
    ranked(query, entry, form).0
}

#[test]
fn identical_signatures_score_one() {
    let a = sig(
        Language::Rust,
        "E0308",
        "mismatched types",
        &["tool:rustc", "ext:rs"],
    );
    let breakdown = score_of(&a, &a.clone(), QueryForm::ToolOutput);
    assert_eq!(breakdown.total, 1.0);
    assert_eq!(breakdown.context, Some(1.0));
    assert_eq!(breakdown.error_type, Some(1.0));
    assert_eq!(breakdown.embedding, None);
}

#[test]
fn a_different_class_caps_the_score_below_the_default_threshold() {
    let a = sig(Language::Python, "KeyError", "<Q>", &[]);
    let b = sig(Language::Python, "IndexError", "<Q>", &[]);
    let breakdown = score_of(&a, &b, QueryForm::ToolOutput);
    assert_eq!(breakdown.error_type, Some(0.0));
    assert_eq!(breakdown.message, 1.0);
    assert!(breakdown.total < 0.8, "{breakdown:?}");
}

#[test]
fn a_message_without_its_code_is_judged_on_the_message() {
    // The code-less query gets a slug type: no type evidence, rather than a mismatch.
    let stored = sig(Language::Rust, "E0382", "use of moved value: <Q>", &[]);
    let query = sig(
        Language::Unknown,
        "use-of-moved-value",
        "use of moved value: <Q>",
        &[],
    );
    assert!(!is_coded(&query) && is_coded(&stored));
    let breakdown = score_of(&query, &stored, QueryForm::ErrorMessage);
    assert_eq!(breakdown.error_type, None);
    assert_eq!(breakdown.language, None);
    assert_eq!(breakdown.total, 1.0, "{breakdown:?}");
}

#[test]
fn same_type_with_an_unrelated_message_is_not_a_match() {
    let a = sig(
        Language::Python,
        "TypeError",
        "unsupported operand type(s) for +: <Q> and <Q>",
        &[],
    );
    let b = sig(
        Language::Python,
        "TypeError",
        "<Q> object is not subscriptable",
        &[],
    );
    let breakdown = score_of(&a, &b, QueryForm::ToolOutput);
    assert!(breakdown.message < 0.3, "{breakdown:?}");
    assert!(breakdown.total < 0.8, "{breakdown:?}");
}

#[test]
fn messages_compare_by_stems() {
    // {us, mov, valu, <v>} + 3 pairs vs {borrow, mov, valu, <v>} + 3 pairs: 2 + 2 shared.
    let similarity = message_similarity("use of moved value: <Q>", "borrow of moved value: <Q>");
    assert!((similarity - 10.0 / 14.0).abs() < 1e-6, "{similarity}");
    assert!(message_similarity("casting failed", "cast fails") > 0.99);
    assert_eq!(message_similarity("", ""), 1.0);
    assert_eq!(message_similarity("abc", ""), 0.0);
}

#[test]
fn rare_words_weigh_more() {
    let set = |t: &str| hashed(terms::terms(t).iter().map(String::as_str));
    let (a, b) = (set("cannot borrow as mutable"), set("cannot find value"));
    let cannot = fnv1a(b"cannot");
    let common_cannot = |t: u64| if t == cannot { 0.1 } else { 1.0 };
    assert!(weighted_dice(&a, &b, &common_cannot) < weighted_dice(&a, &b, &uniform));
    assert!((coverage(&b, &a, &uniform) - 1.0 / 3.0).abs() < 1e-6);
}

#[test]
fn a_description_is_scored_on_what_it_mentions() {
    let stored = sig(Language::Rust, "E0382", "borrow of moved value: <Q>", &[]);
    let query = sig(
        Language::Rust,
        "description",
        "How did we fix the Rust error where a value is used after it was moved?",
        &[],
    );
    let breakdown = score_of(&query, &stored, QueryForm::Description);
    // `mov` and `valu` of {borrow, mov, valu}.
    assert!(
        (breakdown.message - 2.0 / 3.0).abs() < 1e-6,
        "{breakdown:?}"
    );
    assert_eq!(breakdown.language, Some(1.0));
    assert!(breakdown.resolution.is_some());
}

#[test]
fn an_unknown_language_does_not_cost_type_credit_and_kin_get_half_language_credit() {
    let a = sig(Language::Unknown, "ENOENT", "no such file", &[]);
    let b = sig(Language::JavaScript, "ENOENT", "no such file", &[]);
    assert_eq!(type_similarity(&a, &b), 1.0);
    let c = sig(Language::Python, "ENOENT", "no such file", &[]);
    assert_eq!(type_similarity(&b, &c), 0.0);
    let esm = sig(Language::JavaScript, "ERR_MODULE_NOT_FOUND", "", &[]);
    let cjs = sig(Language::JavaScript, "MODULE_NOT_FOUND", "", &[]);
    assert_eq!(type_similarity(&esm, &cjs), 1.0);
    let key = sig(Language::Python, "KeyError", "", &[]);
    let index = sig(Language::Python, "IndexError", "", &[]);
    assert_eq!(type_similarity(&key, &index), 0.0);
    let rust = |code: &str| sig(Language::Rust, code, "", &[]);
    assert_eq!(type_similarity(&rust("E0308"), &rust("E0382")), 0.0);
    assert_eq!(
        type_words("java.lang.NullPointerException"),
        ["null", "pointer"]
    );
    assert_eq!(language_similarity(Language::C, Language::Cpp), Some(0.5));
    assert_eq!(language_similarity(Language::Go, Language::Cpp), Some(0.0));
    assert_eq!(language_similarity(Language::Unknown, Language::Cpp), None);
}

#[test]
fn missing_components_spread_their_weight() {
    let weights = ScoreWeights::default();
    let without = combine(
        Components {
            error_type: Some(1.0),
            message: 1.0,
            ..Components::default()
        },
        &weights,
    );
    assert_eq!(without.total, 1.0);
    let with = combine(
        Components {
            error_type: Some(1.0),
            message: 1.0,
            embedding: Some(0.0),
            ..Components::default()
        },
        &weights,
    );
    let present = weights.error_type + weights.message;
    let expected = present / (present + weights.embedding);
    assert!((with.total - expected).abs() < 1e-6, "{with:?}");
}

#[test]
fn context_uses_the_smaller_set() {
    let stored = sig(
        Language::Go,
        "undefined",
        "undefined: <ID>",
        &["a", "b", "c", "d"],
    );
    let query = sig(Language::Go, "undefined", "undefined: <ID>", &["a", "b"]);
    assert_eq!(context_similarity(&query, &stored), Some(1.0));
    let bare = sig(Language::Go, "undefined", "undefined: <ID>", &[]);
    assert_eq!(context_similarity(&query, &bare), None);
}

#[test]
fn cosine_of_zero_vector_is_zero() {
    assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    assert!((cosine(&[1.0, 1.0], &[2.0, 2.0]) - 1.0).abs() < 1e-6);
}

fn ranked(
    query: &ErrorSignature,
    entry: &ErrorSignature,
    form: QueryForm,
) -> (ScoreBreakdown, f32) {
    let (qs, es) = (Prepared::new(query), Prepared::new(entry));
    score_ranked(
        &QueryEvidence {
            signature: query,
            sets: &qs,
            form,
            known_terms: &qs.words,
        },
        &EntryEvidence {
            signature: entry,
            sets: &es,
            fix_terms: &[],
            embedding: None,
        },
        &uniform,
        &ScoreWeights::default(),
    )
}

#[test]
fn source_files_and_tools_stand_in_for_an_unknown_language() {
    let rb = |message: &str| sig(Language::Unknown, "KeyError", message, &["src:zz"]);
    let other = sig(
        Language::Unknown,
        "KeyError",
        "key not found: <Q>",
        &["src:yy"],
    );
    let same = score_of(
        &rb("key not found: <Q>"),
        &rb("key not found: <Q>"),
        QueryForm::ToolOutput,
    );
    assert_eq!(same.language, Some(1.0));
    assert_eq!(same.total, 1.0);
    // Another ecosystem's class of the same name is another class.
    let differ = score_of(&rb("key not found: <Q>"), &other, QueryForm::ToolOutput);
    assert_eq!((differ.language, differ.error_type), (Some(0.0), Some(0.0)));
    assert!(differ.total < 0.5, "{differ:?}");
}

#[test]
fn a_class_shared_by_errors_of_unknown_ecosystems_counts_half() {
    let query = sig(Language::Unknown, "KeyError", "key not found: <Q>", &[]);
    let entry = sig(Language::Unknown, "KeyError", "key <Q> missing in map", &[]);
    let unplaced = score_of(&query, &entry, QueryForm::ErrorMessage);
    let placed = score_of(
        &sig(Language::Python, "KeyError", "key not found: <Q>", &[]),
        &sig(Language::Python, "KeyError", "key <Q> missing in map", &[]),
        QueryForm::ErrorMessage,
    );
    assert!(unplaced.total < placed.total, "{unplaced:?} {placed:?}");
}

#[test]
fn unplaced_errors_are_matched_only_on_a_near_same_message_that_is_not_short() {
    let short = |tool: &str| sig(Language::Unknown, "syntax-error", "syntax error", &[tool]);
    let (capped, uncapped) = ranked(&short("tool:aa"), &short("tool:bb"), QueryForm::ToolOutput);
    assert_eq!(capped.language, Some(0.0));
    let bare = sig(Language::Unknown, "syntax-error", "syntax error", &[]);
    let (capped, uncapped_bare) = ranked(&bare, &short("tool:aa"), QueryForm::ErrorMessage);
    assert!(capped.total <= UNPLACED_CAP, "{capped:?}");
    assert_eq!(uncapped_bare, 1.0, "the order still sees the exact message");
    assert!(uncapped <= 1.0);
    // One tool on both sides vouches for the ecosystem.
    assert_eq!(
        score_of(&short("tool:aa"), &short("tool:aa"), QueryForm::ToolOutput).total,
        1.0
    );
    // A long, nearly identical message is enough.
    let long = sig(
        Language::Unknown,
        "table-has-columns",
        "table <Q> has <N> columns but <N> values were supplied",
        &[],
    );
    assert!(score_of(&long, &long.clone(), QueryForm::ErrorMessage).total > UNPLACED_CAP);
}

#[test]
fn a_description_naming_the_tool_and_the_class_words_count() {
    let stored = sig(
        Language::Unknown,
        "ZeroDivisionError",
        "divided by <N>",
        &["tool:calc3", "src:zz"],
    );
    let description = |text: &str| sig(Language::Unknown, "description", text, &[]);
    let named = score_of(
        &description("calc crashes on a division by zero"),
        &stored,
        QueryForm::Description,
    );
    assert_eq!(named.language, Some(1.0));
    // `zero` and `division` come from the class name: the message says only `divided`.
    assert!(named.message > 0.5, "{named:?}");
    let unnamed = score_of(
        &description("the script crashes on a division by zero"),
        &stored,
        QueryForm::Description,
    );
    assert_eq!(unnamed.language, None);
}
