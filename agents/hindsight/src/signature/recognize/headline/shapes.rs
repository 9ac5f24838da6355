//! The shapes the headline fallback recognises in a line, none of them a toolchain's: error
//! words, severity labels, class names, locations and positions, stack frames, excerpts and
//! summaries. Everything here looks at one bounded line or segment.

use std::sync::LazyLock;

use regex::Regex;

macro_rules! regex {
    ($name:ident, $re:expr) => {
        pub(super) static $name: LazyLock<Regex> = LazyLock::new(|| Regex::new($re).expect($re));
    };
}

// Stack frames (`at f (x:1)`, `from x.rb:3:in 'f'`, `#0 x()`), source excerpts and rules.
regex!(
    FRAME,
    r"^(?:\s+(?:at|from|in|by|called from)\s+\S|\s*at\s+\S.*(?:\(|:\d|\bline \d)|\s*#\d+\s+\S)"
);
regex!(
    NOISE,
    r"^\s*(?:\d+\s*)?[|│]|^[\s^~\-=_*.]*$|^\s*[\^~]+[\s^~\-]*$"
);
// Leading markers: `** `, `>> `, `# `, `E `, enumerators `1) `, `2. `.
regex!(MARKERS, r"^(?:(?:[*!>#=+|^-]+|E|\d+[.)])\s+)+");
// A location: a file with an extension and a line (`a.rb:3`, `A.cs(8,20)`, `x.pl line 4`).
regex!(
    LOCATION,
    r#"(?P<path>[^\s:()\[\]<>'"`,]*[\w]\.[A-Za-z][\w]{0,5})["'>]?(?::\d+(?::\d+)?|:\([^()\s]*\)|\(\d+(?:,\s*\d+)?\)|,?\s+line\s+\d+)"#
);
// A position without a file (`line 3`, `near line 2`, `char 5`, `line:1`, `line 4, column 2`).
regex!(
    POSITION,
    r"(?i)(?:\b(?:near|at|on|in)\s+)?\b(?:line|char|column|col|offset|position|pos|byte)s?\s*[:#]?\s*\d+(?:\s*[,:]\s*(?:(?:col(?:umn)?|char)s?\s*)?\d+)?"
);
// A position ending a message (`…, unexpected $end at <top>, line 1:`).
regex!(
    TRAILING_POSITION,
    r"(?i)[,;]?\s+(?:(?:at|in|on|near)\s+[^\s,:]+,?\s+)?(?:(?:at|on|near|in)\s+)?(?:line|char|column|col|offset|position|pos)s?\s*[:#]?\s*\d+(?:\s*[,:]\s*(?:(?:col(?:umn)?|char)s?\s*)?\d+)?\s*[.:]?\s*$"
);
// A quoted name (`` `f' ``, `'f'`, `"f"`): one word however many it holds.
regex!(QUOTED, r#"`[^`']*['`]|'[^']*'|"[^"]*""#);
regex!(PARENTHESISED, r"\([^()]*\)");
regex!(
    LINE_ONLY,
    r"^(?:(?:on )?line )?\d+(?:[,:]? ?(?:col(?:umn)? )?\d+)?$"
);
// A section rule (`==== summary ====`, `----`): what follows is another part of the output.
// A labelled detail line (`got: 'a'`, `Expected: 15`, `left: 1`).
regex!(DETAIL, r"^[A-Za-z][\w ]{0,20}:\s+\S");
regex!(RULE, r"^\s*[=\-_*#~]{3,}");
// A location clause inside a message: ` at x.pl line 4.`, ` in /a/x.php:3`, ` (x.c:4)`.
regex!(
    LOCATION_CLAUSE,
    r#"(?:,\s*|\s+)(?:(?:called\s+)?(?:at|in|from)\s+)?(?:file\s+)?\(?(?P<path>[^\s:()\[\]<>'"`,]*[\w]\.[A-Za-z][\w]{0,5})(?::\d+(?::\d+)?|\(\d+(?:,\s*\d+)?\)|,?\s+(?:on\s+)?line\s+\d+)\)?(?:[.,](?:\s|$))?"#
);
// A class name: `KeyError`, `System.IO.FileNotFoundException`, `Errno::ENOENT`.
regex!(
    CLASS,
    r"^(?P<prefix>(?i:(?:uncaught|unhandled)\s+(?:exception\s+)?))?(?P<class>(?:[A-Za-z_]\w*(?:\.|::))*[A-Z]\w*)$"
);
regex!(
    PAREN_CLASS_END,
    r"\s*\((?P<class>(?:[A-Za-z_]\w*(?:\.|::))*[A-Z]\w*)\)\.?$"
);
regex!(
    PAREN_CLASS_START,
    r"^\((?P<class>(?:[A-Za-z_]\w*(?:\.|::))*[A-Z]\w*)\)\s*"
);
regex!(CODE, r"^[A-Z]{1,6}-?\d{2,6}$");
regex!(TOOL, r"^[\w.+\-/]{2,30}$");
// `1 error(s), 0 warnings`, `3 runs, 1 failures`: a count of errors, not an error.
regex!(
    SUMMARY,
    r"(?i)\b\d+\s+(?:errors?|failures?|failed|warnings?|tests?|runs?|assertions?|examples?|passed|skips?|skipped)\b|\berror\(s\)|\bexit (?:status|code)\b|\breturned \d+\b|\bprevious errors?\b"
);

/// Words of a severity label (`[ERROR] FATAL:`, `Unhandled Exception:`, `Parse error:`).
pub(super) const LABEL_WORDS: &[&str] = &[
    "error",
    "errors",
    "err",
    "fatal",
    "exception",
    "uncaught",
    "unhandled",
    "panic",
    "failure",
    "failed",
    "fail",
    "critical",
    "crit",
    "severe",
    "runtime",
    "parse",
    "internal",
];
/// Words that make a label a warning or a note: never a headline.
pub(super) const WARNING_WORDS: &[&str] = &[
    "warning",
    "warn",
    "note",
    "notice",
    "info",
    "hint",
    "help",
    "deprecated",
    "deprecation",
];
/// Words (lower case) that say something went wrong.
pub(super) const CUE_WORDS: &[&str] = &[
    "error",
    "errors",
    "exception",
    "fatal",
    "fail",
    "fails",
    "failed",
    "failure",
    "panic",
    "panicked",
    "undefined",
    "undeclared",
    "unbound",
    "uninitialized",
    "uninitialised",
    "cannot",
    "can't",
    "couldn't",
    "unable",
    "unexpected",
    "expected",
    "expecting",
    "invalid",
    "illegal",
    "denied",
    "refused",
    "missing",
    "unknown",
    "wrong",
    "mismatch",
    "mismatched",
    "incompatible",
    "overflow",
    "timeout",
    "aborted",
    "crash",
    "crashed",
    "segmentation",
    "violation",
    "unsupported",
    "forbidden",
    "unreachable",
    "assertion",
    "uncaught",
    "unhandled",
    "traceback",
    "nil",
    "null",
    "unterminated",
    "unclosed",
    "unmatched",
    "unbalanced",
    "unrecognized",
    "unrecognised",
    "unresolved",
    "malformed",
    "attempt",
    "attempted",
];
/// Phrases (lower case) that say something went wrong.
pub(super) const CUE_PHRASES: &[&str] = &[
    "no such",
    "not found",
    "does not exist",
    "doesn't exist",
    "not defined",
    "not present",
    "by zero",
    "out of range",
    "out of bounds",
    "too many",
    "too few",
    "could not",
    "not allowed",
    "not supported",
    "no method",
    "no matching",
];
/// Class-name endings that make a capitalised word an error class.
pub(super) const CLASS_ENDINGS: &[&str] = &[
    "Error",
    "Exception",
    "Failure",
    "Fault",
    "Panic",
    "Interrupt",
    "Exit",
    "Violation",
];

/// The source paths of a segment that only says where (`a.rb:3:in 'f'`, `A.cs(8,20)`,
/// `T#test [t.rb:9]`, `line 4`), or `None`.
pub(super) fn location(segment: &str) -> Option<Vec<String>> {
    if LINE_ONLY.is_match(segment) {
        return Some(Vec::new());
    }
    let found: Vec<regex::Captures<'_>> = LOCATION.captures_iter(segment).collect();
    if found.is_empty() {
        // No file, but a position and a name or two: `(stdin) 1`, `cmd. line:1`,
        // `-e expression #1, char 5`.
        let (rest, stripped) = bare(segment);
        let tokens: Vec<&str> = rest.split_whitespace().collect();
        let numbers = tokens.iter().all(|t| {
            t.trim_matches(|c: char| !c.is_alphanumeric())
                .bytes()
                .all(|b| b.is_ascii_digit())
        });
        let names = POSITION.is_match(segment)
            && tokens.len() <= 3
            && tokens.iter().all(|t| {
                let lower = t.to_ascii_lowercase();
                let word = lower.trim_matches(|c: char| !c.is_alphanumeric());
                !CUE_WORDS.contains(&word) && !LABEL_WORDS.contains(&word)
            });
        return (stripped && numbers || names).then(Vec::new);
    }
    // What is left besides the locations must be a name or two (`in 'f'`, `T#test`), not a
    // sentence that happens to mention a file.
    let rest = LOCATION.replace_all(segment, " ");
    let rest = QUOTED.replace_all(&rest, " ");
    let words: Vec<String> = rest
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(|w| w.to_lowercase())
        .collect();
    let says_what = words.iter().any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        CUE_WORDS.contains(&w) || LABEL_WORDS.contains(&w)
    });
    (words.len() <= 3 && !says_what).then(|| found.iter().map(|c| c["path"].to_string()).collect())
}

/// A segment without its asides in parentheses and its positions (`Parse error near line
/// 2` → `Parse error`), and whether anything was removed.
pub(super) fn bare(segment: &str) -> (String, bool) {
    let once = PARENTHESISED.replace_all(segment, " ");
    let twice = PARENTHESISED.replace_all(&once, " ");
    let rest = POSITION.replace_all(&twice, " ");
    let rest = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    let stripped = rest.len()
        < segment
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .len();
    (rest, stripped)
}

/// A severity label: its code (`CS1234`) and leading tool word (`php`, `mcs`), if any.
pub(super) struct Label {
    pub code: Option<String>,
    pub tool: Option<String>,
    pub warning: bool,
}

/// A segment made only of severity words, at most one code and enumerators, optionally led
/// by one tool word when `first`: `error CS0103`, `[ERROR] FATAL UNHANDLED EXCEPTION`,
/// `Fatal error`, `Failure`, `warning CS0649`.
pub(super) fn label(segment: &str, first: bool) -> Option<Label> {
    let (segment, _) = bare(segment);
    let tokens: Vec<&str> = segment
        .split(|c: char| c.is_whitespace() || "[](){}".contains(c))
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.is_empty() || tokens.len() > 6 {
        return None;
    }
    let mut label = Label {
        code: None,
        tool: None,
        warning: false,
    };
    let mut words = 0;
    for (i, token) in tokens.iter().enumerate() {
        let lower = token.to_ascii_lowercase();
        if LABEL_WORDS.contains(&lower.as_str()) {
            words += 1;
        } else if WARNING_WORDS.contains(&lower.as_str()) {
            words += 1;
            label.warning = true;
        } else if CODE.is_match(token) && label.code.is_none() {
            label.code = Some(token.to_string());
        } else if token
            .trim_end_matches(['.', ')'])
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            // An enumerator.
        } else if i == 0 && first && tokens.len() > 1 && is_name(token) {
            label.tool = Some(token.to_string());
        } else {
            return None;
        }
    }
    (words > 0).then_some(label)
}

/// The class a segment names (`KeyError`, `Uncaught TypeError`, `System.IO.IOException`).
pub(super) fn class_of(segment: &str) -> Option<String> {
    let found = CLASS.captures(segment)?;
    let class = &found["class"];
    is_class(class).then(|| class.to_string())
}

/// The class that ends a head of a few words (`Exception in thread "main" pkg.SomeError`):
/// only a name that ends like a class (`…Error`, `…Exception`), not any qualified word.
pub(super) fn trailing_class(segment: &str) -> Option<String> {
    let tokens: Vec<&str> = segment.split_whitespace().collect();
    let last = *tokens.last()?;
    let name = last.rsplit(['.', ':', '/']).next().unwrap_or(last);
    let ends = CLASS_ENDINGS
        .iter()
        .any(|e| name.ends_with(e) && name.len() > e.len());
    (tokens.len() > 1 && tokens.len() <= 8 && ends && class_of(last).is_some())
        .then(|| last.to_string())
}

/// Whether a capitalised name is an error class: it ends like one (`…Error`, `…Exception`)
/// or is qualified by a module (`Errno::ENOENT`, `System.Foo`), which plain words never are.
pub(super) fn is_class(name: &str) -> bool {
    let last = name.rsplit(['.', ':']).next().unwrap_or(name);
    if last.len() < 3 || !last.starts_with(|c: char| c.is_ascii_uppercase()) {
        return false;
    }
    let ends = CLASS_ENDINGS
        .iter()
        .any(|e| last.ends_with(e) && last.len() > e.len() || last == *e && name != last);
    let qualified = name.contains("::")
        || (name.contains('.')
            && name.starts_with(|c: char| c.is_ascii_uppercase())
            && name.split('.').all(|p| !p.is_empty()));
    ends || qualified
}

/// A tool's name leading a line on its own (`mytool: …`, `tool2.1: …`): one lower-case token
/// that is no error word (capitalised words lead messages: `Expected: 3`).
pub(super) fn is_tool(token: &str) -> bool {
    is_name(token) && !token.starts_with(|c: char| c.is_ascii_uppercase())
}

/// One token that can name a tool (`cc1`, `Tool`, `x-y.2`) and is no error word.
pub(super) fn is_name(token: &str) -> bool {
    let lower = token.to_ascii_lowercase();
    TOOL.is_match(token)
        && !CUE_WORDS.contains(&lower.as_str())
        && !LABEL_WORDS.contains(&lower.as_str())
        && !WARNING_WORDS.contains(&lower.as_str())
}

/// How many distinct error words and phrases a message has.
pub(super) fn cue_count(message: &str) -> usize {
    let lower = message.to_lowercase();
    let words = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| CUE_WORDS.contains(w))
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    words + CUE_PHRASES.iter().filter(|p| lower.contains(*p)).count()
}

/// A line led by a warning or note label (`note: run with …`): commentary, not the error.
pub(super) fn is_note(line: &str) -> bool {
    let text = MARKERS.replace(line.trim(), "");
    text.split(": ").next().is_some_and(|head| {
        text.contains(": ") && label(head.trim(), true).is_some_and(|l| l.warning)
    })
}

/// A name in quotes (`` in `fetch' ``), as frames of some tools print the function.
pub(super) fn quoted_name(text: &str) -> Option<String> {
    let open = text.find(['`', '\''])?;
    let rest = &text[open + 1..];
    let close = rest.find(['\'', '`'])?;
    let name = &rest[..close];
    (!name.is_empty() && name.len() <= 80).then(|| name.to_string())
}

/// The extension of a source file's path (`rb` of `lib/a.rb`), lower-cased.
pub(super) fn source_extension(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && (1..=6).contains(&ext.len()) && ext.chars().all(char::is_alphanumeric))
        .then(|| ext.to_ascii_lowercase())
}
