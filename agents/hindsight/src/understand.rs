//! What a query's text is: raw tool output, a bare error message, or a description in words.
//!
//! * **Tool output**: the extractor finds an error with its class (a code such as `E0308`, an
//!   exception class), a location, a stack or several lines: it is matched as before, type
//!   and all.
//! * **Error message**: one line that reads like a diagnostic but carries no class (`use of
//!   moved value: `x``, `No module named 'requests'`): normalised like a message, with a slug
//!   for a type, so the type gives no evidence either way and the message decides.
//! * **Description**: a sentence about the error (`how did we fix the borrowed-value-moved
//!   error?`): never refused; matched on the words it shares with stored messages and fixes,
//!   and on its embedding.
//!
//! For the last two, the language is guessed from the words (`rustc`, `pytest`, `Go program`,
//! `.tsx`) and file names in the text, since the language is what tells apart classes that
//! share a message.

use std::collections::BTreeSet;

use crate::model::QueryForm;
use crate::score::is_coded;
use crate::signature::{self, ErrorSignature, Language, normalize_message};

/// A query's text, understood.
#[derive(Debug, Clone)]
pub(crate) struct Understood {
    pub form: QueryForm,
    /// What is looked up: the extracted errors, or one signature made of the message or the
    /// description.
    pub signatures: Vec<ErrorSignature>,
}

/// A line that starts where a tool prints the location of an error (`src/main.rs:4:5:`,
/// `main.ts(2,10):`, `deploy.sh: line 4:`, `build.sh: 3:`) or its own name (`make: ***`):
/// the tool's own output, not a message copied out of it.
static LOCATED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"^(?:\S+?(?::\d+(?::\d+)?:|\(\d+,\d+\):|:\(\.\w+\+0x[0-9a-f]+\):|: line \d+:|: \d+:)|\w+: \*\*\*)",
    )
    .expect("location pattern")
});

/// Words that make a text a description rather than a message.
const PROSE_MARKERS: &[&str] = &[
    "how",
    "what",
    "why",
    "we",
    "i",
    "our",
    "my",
    "you",
    "your",
    "us",
    "because",
    "complains",
    "complained",
    "says",
    "said",
    "reports",
    "reported",
    "refuses",
    "rejects",
    "crashes",
    "crashed",
    "throws",
    "fails",
    "failed",
    "stops",
    "whenever",
    "keeps",
];

/// Understands a (redacted) query text. `forced` is the caller's say-so; a text forced to be
/// tool output must contain a recognisable error.
pub(crate) fn understand(text: &str, forced: Option<QueryForm>) -> Option<Understood> {
    let (found, generic) = signature::extract_with_origin(text);
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    let located = lines == 1 && LOCATED.is_match(text.trim());
    // A sentence no recogniser claimed reads as prose even when it uses error words (`…
    // throws KeyError: …`) that the generic fallback picks up.
    let sentence = generic && lines == 1 && !located && reads_as_prose(text);
    let tool_output = !found.is_empty()
        && !sentence
        && (lines > 1
            || located
            || found
                .iter()
                .any(|s| is_coded(s) || !s.stack_patterns.is_empty()));
    // A text forced to be tool output must hold an error a tool printed: from the generic
    // fallback, one line needs a class, a code, a tool or a source file (`mismatched types`
    // alone is a phrase).
    let printed = !generic
        || lines > 1
        || located
        || found.iter().any(|s| {
            is_coded(s)
                || s.context_patterns
                    .iter()
                    .any(|c| c.starts_with("src:") || c.starts_with("tool:"))
        });
    let form = match forced {
        Some(QueryForm::ToolOutput) if found.is_empty() || !printed => return None,
        Some(form) => form,
        None if tool_output => QueryForm::ToolOutput,
        None if reads_as_prose(text) => QueryForm::Description,
        None => QueryForm::ErrorMessage,
    };
    let signatures = match form {
        QueryForm::ToolOutput if lines == 1 && !located => found
            .into_iter()
            .map(|s| with_language(one_line(s), text))
            .collect(),
        QueryForm::ToolOutput => found.into_iter().map(|s| with_language(s, text)).collect(),
        QueryForm::ErrorMessage => match found.into_iter().next() {
            Some(extracted) if lines == 1 => vec![with_language(one_line(extracted), text)],
            _ => vec![made_of(text)],
        },
        QueryForm::Description => vec![made_of(text)],
    };
    Some(Understood { form, signatures })
}

/// A one-line error keeps the language its recogniser gave it only where the line's shape
/// belongs to one compiler (`error[E0308]` is rustc's, `error TS2322` tsc's); elsewhere the
/// shape is shared (`x: No such file or directory` comes from any tool), so the words and
/// file names of the text decide.
fn one_line(mut signature: ErrorSignature) -> ErrorSignature {
    let code = signature.error_type.as_bytes();
    let digits = |from: usize| code.len() > from && code[from..].iter().all(u8::is_ascii_digit);
    // `cd: <PATH>: No such file or directory`: a shell builtin names itself.
    let builtin = signature
        .message_pattern
        .split_once(": ")
        .is_some_and(|(head, _)| !head.is_empty() && head.chars().all(|c| c.is_ascii_lowercase()));
    let rustc = signature.language == Language::Rust && code.first() == Some(&b'E') && digits(1);
    let tsc = signature.language == Language::TypeScript && code.starts_with(b"TS") && digits(2);
    let shell = signature.language == Language::Shell && builtin;
    // The C-family recogniser says C++ only with a reason (a demangled `ns::f(int)`).
    let cpp = signature.language == Language::Cpp;
    let distinctive = rustc || tsc || shell || cpp;
    if !distinctive {
        signature.language = Language::Unknown;
    }
    signature
}

/// A signature of a message or description that no recogniser claimed.
fn made_of(text: &str) -> ErrorSignature {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let (message_pattern, context) = normalize_message(&one_line);
    let mut context: BTreeSet<String> = context.into_iter().collect();
    context.retain(|c| !c.starts_with("suggestion:"));
    // A slug, never a class: the text is matched on its words.
    let signature = ErrorSignature {
        error_type: signature::slug(&message_pattern),
        message_pattern,
        stack_patterns: Vec::new(),
        context_patterns: context
            .into_iter()
            .take(signature::MAX_CONTEXT_PATTERNS)
            .collect(),
        language: Language::Unknown,
        embedding: None,
    };
    with_language(signature, text)
}

/// Fills in a guessed language where the signature has none: from the words and file names
/// of the text, or from the package of its exception class (`java.lang.…`, `kotlin.…`).
fn with_language(mut signature: ErrorSignature, text: &str) -> ErrorSignature {
    if signature.language == Language::Unknown {
        let by_package = match signature.error_type.split('.').next() {
            Some("java" | "javax") if signature.error_type.contains('.') => Some(Language::Java),
            Some("kotlin") if signature.error_type.contains('.') => Some(Language::Kotlin),
            _ => None,
        };
        signature.language =
            by_package.unwrap_or_else(|| guess_language(text, &signature.context_patterns));
    }
    signature
}

/// Whether a text that no recogniser claimed reads as a sentence about an error.
fn reads_as_prose(text: &str) -> bool {
    let trimmed = text.trim();
    if trimmed.ends_with('?') {
        return true;
    }
    let words: Vec<String> = trimmed
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if words.iter().any(|w| PROSE_MARKERS.contains(&w.as_str())) {
        return true;
    }
    // Diagnostics rarely start with a capitalised article or name their language.
    let article = ["The ", "A ", "An "].iter().any(|a| trimmed.starts_with(a));
    if (article && words.len() >= 6) || named_language(trimmed).is_some() {
        return true;
    }
    // A long sentence with no quoted identifiers and no `head:` structure. An apostrophe
    // between letters (`can't`, `isn't`) quotes nothing.
    let chars: Vec<char> = trimmed.chars().collect();
    let quoted = chars.iter().enumerate().any(|(i, c)| {
        let inside_word = *c == '\''
            && i > 0
            && chars[i - 1].is_alphabetic()
            && chars.get(i + 1).is_some_and(|n| n.is_alphabetic());
        ['`', '\'', '"', '‘', '“'].contains(c) && !inside_word
    });
    let headed = trimmed.find(": ").is_some_and(|at| at <= 40);
    words.len() >= 14 && !quoted && !headed
}

/// Words that name a language for sure, and the language.
const LANGUAGE_WORDS: &[(&str, Language)] = &[
    ("rust", Language::Rust),
    ("rustc", Language::Rust),
    ("cargo", Language::Rust),
    ("clippy", Language::Rust),
    ("python", Language::Python),
    ("python3", Language::Python),
    ("pytest", Language::Python),
    ("pip", Language::Python),
    ("virtualenv", Language::Python),
    ("venv", Language::Python),
    ("traceback", Language::Python),
    ("node", Language::JavaScript),
    ("nodejs", Language::JavaScript),
    ("javascript", Language::JavaScript),
    ("npm", Language::JavaScript),
    ("typescript", Language::TypeScript),
    ("tsc", Language::TypeScript),
    ("java", Language::Java),
    ("javac", Language::Java),
    ("jvm", Language::Java),
    ("maven", Language::Java),
    ("kotlin", Language::Kotlin),
    ("kotlinc", Language::Kotlin),
    ("golang", Language::Go),
    ("goroutine", Language::Go),
    ("gcc", Language::C),
    ("clang", Language::C),
    ("c++", Language::Cpp),
    ("g++", Language::Cpp),
    ("clang++", Language::Cpp),
    ("cpp", Language::Cpp),
    ("bash", Language::Shell),
    ("shell", Language::Shell),
    ("zsh", Language::Shell),
];

/// Words after `Go` or `C` that make it the language (`a Go program`, `in C code`).
const LANGUAGE_NOUNS: &[&str] = &[
    "program",
    "programs",
    "code",
    "compiler",
    "file",
    "files",
    "function",
    "functions",
    "source",
    "build",
    "run",
    "test",
    "vet",
    "module",
    "package",
    "binary",
    "project",
];

/// The language a text names or its file names imply, else the one the context's file
/// extensions imply.
pub(crate) fn guess_language(text: &str, context: &[String]) -> Language {
    named_language(text)
        .or_else(|| by_extension(text))
        .or_else(|| {
            context
                .iter()
                .filter_map(|c| c.strip_prefix("ext:"))
                .find_map(Language::from_extension)
        })
        .unwrap_or(Language::Unknown)
}

/// The first language a file name in the text implies (`config.py`).
fn by_extension(text: &str) -> Option<Language> {
    tokens(text).find_map(|token| {
        token
            .trim_end_matches('.')
            .rsplit_once('.')
            .filter(|(stem, _)| !stem.is_empty())
            .and_then(|(_, ext)| Language::from_extension(ext))
    })
}

fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || ",;:()[]{}!?\"'`".contains(c))
        .filter(|t| !t.is_empty())
}

/// The language a text names in words, first mention first. `C++` wins over `C` and `gcc`
/// when both appear (g++ is gcc).
fn named_language(text: &str) -> Option<Language> {
    let tokens: Vec<&str> = tokens(text).collect();
    let mut found: Option<Language> = None;
    for (i, raw) in tokens.iter().enumerate() {
        let token = raw.trim_end_matches('.');
        let lower = token.to_lowercase();
        let next = tokens
            .get(i + 1)
            .map(|t| t.trim_end_matches('.').to_lowercase());
        let noun_follows = next.as_deref().is_some_and(|n| LANGUAGE_NOUNS.contains(&n));
        let language = LANGUAGE_WORDS
            .iter()
            .find(|(word, _)| *word == lower)
            .map(|(_, language)| *language)
            .or(match token {
                "Go" => Some(Language::Go),
                "go" if noun_follows => Some(Language::Go),
                "C" if noun_follows || i > 0 => Some(Language::C),
                _ => None,
            });
        match (found, language) {
            (_, Some(Language::Cpp)) => return Some(Language::Cpp),
            (None, Some(language)) => found = Some(language),
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(text: &str) -> QueryForm {
        understand(text, None).expect("understood").form
    }

    #[test]
    fn raw_output_bare_messages_and_descriptions_are_told_apart() {
        let raw = "error[E0382]: borrow of moved value: `jobs`\n --> src/main.rs:5:20\n";
        assert_eq!(form(raw), QueryForm::ToolOutput);
        assert_eq!(form("KeyError: 'banana'"), QueryForm::ToolOutput);
        for message in [
            "borrow of moved value: `jobs`",
            "use of moved value",
            "cannot find value `countr` in this scope",
            "mismatched types",
            "No module named 'requestz'",
            "the integer literal does not conform to the expected type String",
            "undefined: greeting",
        ] {
            assert_eq!(form(message), QueryForm::ErrorMessage, "{message}");
        }
        for description in [
            "how did we fix the borrowed-value-moved error?",
            "A Go program panics when it writes a key into a map that was never created.",
            "rustc complains that a value's type does not match the type the function expects.",
            "Looking up a missing key in a Python dict raises an exception and the script stops there.",
        ] {
            assert_eq!(form(description), QueryForm::Description, "{description}");
        }
    }

    #[test]
    fn a_message_without_code_gets_a_slug_type_and_its_quoted_values_as_context() {
        let understood = understand("cannot find value `countr` in this scope", None).unwrap();
        let [signature] = &understood.signatures[..] else {
            panic!("{understood:?}")
        };
        assert_eq!(
            signature.message_pattern,
            "cannot find value <Q> in this scope"
        );
        assert!(!is_coded(signature));
        assert!(signature.context_patterns.contains(&"q:countr".to_string()));
    }

    #[test]
    fn apostrophes_quote_nothing_and_sentences_stay_descriptions() {
        // Long, no quoted identifier, no `head:`: a sentence, though `can't` has an apostrophe.
        let long =
            "the loader can't open the library file that the build script names in its first line";
        assert_eq!(form(long), QueryForm::Description);
        // Error words the generic fallback would pick up do not make a question tool output.
        assert_eq!(
            form("How do we fix Uncaught FrobError: the widget cannot be frobnicated?"),
            QueryForm::Description
        );
    }

    #[test]
    fn forcing_a_form() {
        let text = "mismatched types";
        let described = understand(text, Some(QueryForm::Description)).unwrap();
        assert_eq!(described.form, QueryForm::Description);
        assert!(understand(text, Some(QueryForm::ToolOutput)).is_none());
    }

    #[test]
    fn languages_are_guessed_from_strong_words_only() {
        let guess = |t: &str| guess_language(t, &[]);
        assert_eq!(guess("The Rust compiler cannot find it"), Language::Rust);
        assert_eq!(guess("A Go program panics"), Language::Go);
        assert_eq!(guess("go build fails"), Language::Go);
        assert_eq!(guess("we go on and it fails"), Language::Unknown);
        assert_eq!(guess("gcc rejects the C++ call"), Language::Cpp);
        assert_eq!(guess("gcc cannot find the header in a C file"), Language::C);
        assert_eq!(guess("tsc cannot find a name"), Language::TypeScript);
        assert_eq!(guess("it breaks in config.py"), Language::Python);
        assert_eq!(guess("Node cannot load the package"), Language::JavaScript);
        assert_eq!(guess("nothing here"), Language::Unknown);
        assert_eq!(
            guess_language("nothing here", &["ext:kt".to_string()]),
            Language::Kotlin
        );
    }
}
