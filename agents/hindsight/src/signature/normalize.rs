//! Normalisation: everything that varies between two occurrences of the same error becomes a
//! placeholder, and what it replaced is kept as context where it helps to tell errors apart.
//!
//! Decisions (each one is tested in `tests.rs`):
//! * Quoted spans (`` `x` ``, `'x'`, `"x"`, `‘x’`, gcc's `` `x' ``) that contain a letter or
//!   digit are identifiers or literals of the code at hand: they become `<Q>` and their value is
//!   kept as `q:<value>` context. Quoted punctuation (`'('`, `` `;` ``) is structure: kept.
//! * Paths (absolute, relative with a directory, `file://`, Windows) and bare file names with a
//!   source extension become `<PATH>`, dropping any `:line:col` / `(line,col)` suffix; the file
//!   name and extension are kept as `file:` and `ext:` context. Temp dirs are paths too.
//! * URLs, timestamps, UUIDs, hex (`0x…` and long hex runs such as hashes), IPv4 addresses and
//!   standalone numbers become `<URL>`, `<TS>`, `<UUID>`, `<HEX>`, `<ADDR>` and `<N>`. Numbers
//!   inside identifiers (`int64`, `E0308`, `utf8`) stay.
//! * "Did you mean …?" suggestions are dropped from the message (kept as context).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::recognize::{Frame, RawError};
use super::{ErrorSignature, MAX_CONTEXT_PATTERNS, MAX_STACK_PATTERNS};

/// Every placeholder a message pattern can contain.
pub const PLACEHOLDERS: [&str; 11] = [
    "<Q>", "<PATH>", "<URL>", "<TS>", "<UUID>", "<HEX>", "<ADDR>", "<N>", "<ID>", "<T>", "<SECRET>",
];

/// Longest message pattern kept, in bytes.
const MAX_PATTERN_BYTES: usize = 400;
/// Longest quoted value kept as context.
const MAX_QUOTED_CONTEXT: usize = 64;
/// Most `help:` hints kept per signature.
const MAX_HINTS: usize = 3;

macro_rules! regex {
    ($name:ident, $re:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| Regex::new($re).expect($re));
    };
}

regex!(
    ANSI,
    r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
);
regex!(
    DID_YOU_MEAN,
    r"(?i)[.;,]?\s*did you mean:?\s*(.+?)\s*\??\s*$"
);
regex!(REDACTED, r"\[REDACTED:[\w-]+\]");
regex!(URL, r#"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"`<>)\]]+"#);
regex!(
    TIMESTAMP,
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?\b|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
);
regex!(
    UUID,
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
);
regex!(HEX_PREFIXED, r"\b0[xX][0-9a-fA-F]+\b");
regex!(HEX_RUN, r"\b[0-9a-fA-F]*[0-9][0-9a-fA-F]*\b");
regex!(IPV4, r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b");
regex!(NUMBER, r"\b\d+(?:\.\d+)*(?:[a-zA-Z]{1,3})?\b");
regex!(LOCATION_SUFFIX, r"(?::\d+(?::\d+)?|\(\d+(?:,\d+)?\))$");
regex!(SPACES, r"\s+");
regex!(PARENTHESISED, r"\([^()]*\)");

/// File extensions that make a bare word a file name (`main.rs`, `netutil.h`).
const FILE_EXTENSIONS: &[&str] = &[
    "rs", "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "java", "kt", "kts",
    "go", "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "sh", "bash", "zsh", "toml", "json",
    "yaml", "yml", "lock", "txt", "so", "dylib", "dll", "exe", "class", "jar", "rb", "php", "cs",
    "swift", "html", "css", "xml", "gradle", "mod", "sum", "ini", "cfg", "pem", "crt", "sql",
    "proto", "mk", "cmake", "wasm", "whl",
];

/// Removes terminal colour codes and carriage returns.
pub(crate) fn clean_text(text: &str) -> String {
    ANSI.replace_all(text, "")
        .replace("\r\n", "\n")
        .replace('\r', "\n")
}

/// Normalises one message; returns the pattern and the context it extracted
/// (`q:`, `file:`, `ext:`, `suggestion:` entries).
pub fn normalize_message(raw: &str) -> (String, Vec<String>) {
    let mut context = BTreeSet::new();
    let pattern = normalize_into(raw, &mut context);
    (pattern, context.into_iter().collect())
}

pub(crate) fn normalize_into(raw: &str, context: &mut BTreeSet<String>) -> String {
    let mut text = raw.trim().to_string();
    if let Some(found) = DID_YOU_MEAN.captures(&text) {
        let suggestion = found[1]
            .trim_matches(|c: char| "'\"`‘’“”?".contains(c))
            .to_string();
        if !suggestion.is_empty() && suggestion.len() <= MAX_QUOTED_CONTEXT {
            context.insert(format!("suggestion:{suggestion}"));
        }
        text.truncate(found.get(0).map_or(text.len(), |m| m.start()));
    }
    // aeterna-redact's markers (`[REDACTED:github-token]`): the secret varies, its kind not.
    let text = REDACTED.replace_all(&text, "<SECRET>");
    let text = replace_quoted(&text, context);
    let text = URL.replace_all(&text, "<URL>");
    let text = TIMESTAMP.replace_all(&text, "<TS>");
    let text = UUID.replace_all(&text, "<UUID>");
    let text = replace_paths(&text, context);
    let text = HEX_PREFIXED.replace_all(&text, "<HEX>");
    let text = HEX_RUN.replace_all(&text, |found: &regex::Captures<'_>| {
        let run = &found[0];
        if run.len() >= 8 && run.bytes().any(|b| b.is_ascii_alphabetic()) {
            "<HEX>".to_string()
        } else {
            run.to_string()
        }
    });
    let text = IPV4.replace_all(&text, "<ADDR>");
    let text = NUMBER.replace_all(&text, "<N>");
    let mut text = SPACES.replace_all(text.trim(), " ").into_owned();
    truncate(&mut text, MAX_PATTERN_BYTES);
    text
}

fn truncate(text: &mut String, max: usize) {
    if text.len() > max {
        let cut = (0..=max)
            .rev()
            .find(|i| text.is_char_boundary(*i))
            .unwrap_or(0);
        text.truncate(cut);
    }
}

/// The closing quote(s) for an opening quote character.
fn closers(open: char) -> Option<&'static [char]> {
    Some(match open {
        '`' => &['`', '\''],
        '\'' => &['\''],
        '"' => &['"'],
        '‘' => &['’'],
        '“' => &['”'],
        _ => return None,
    })
}

fn replace_quoted(text: &str, context: &mut BTreeSet<String>) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let open = chars[i];
        let opens = closers(open).filter(|_| {
            // An apostrophe inside a word ("can't", "users'") is not a quote.
            open != '\'' || i == 0 || !chars[i - 1].is_alphanumeric()
        });
        let Some(closing) = opens else {
            out.push(open);
            i += 1;
            continue;
        };
        let end = (i + 1..chars.len().min(i + 202)).find(|&j| {
            closing.contains(&chars[j])
                && (chars[j] != '\'' || chars.get(j + 1).is_none_or(|c| !c.is_alphanumeric()))
        });
        match end {
            Some(j) if !chars[i + 1..j].contains(&'\n') => {
                let inner: String = chars[i + 1..j].iter().collect();
                if inner.chars().any(char::is_alphanumeric) {
                    out.push_str("<Q>");
                    record_quoted(&inner, context);
                } else {
                    out.extend(&chars[i..=j]);
                }
                i = j + 1;
            }
            _ => {
                out.push(open);
                i += 1;
            }
        }
    }
    out
}

fn record_quoted(inner: &str, context: &mut BTreeSet<String>) {
    let inner = inner.trim();
    if looks_like_path(inner) {
        record_path(inner, context);
    } else if inner.len() <= MAX_QUOTED_CONTEXT {
        context.insert(format!("q:{inner}"));
    }
}

/// Replaces path-like tokens (see the module docs) by `<PATH>`.
fn replace_paths(text: &str, context: &mut BTreeSet<String>) -> String {
    let mut out = String::with_capacity(text.len());
    for (index, token) in text.split(' ').enumerate() {
        if index > 0 {
            out.push(' ');
        }
        let start = token
            .find(|c: char| !"([{".contains(c))
            .unwrap_or(token.len());
        let core_end = token
            .trim_end_matches(|c: char| ")]},;".contains(c))
            .len()
            .max(start);
        let mut core = &token[start..core_end];
        let mut tail_colon = "";
        if let Some(stripped) = core.strip_suffix(':') {
            core = stripped;
            tail_colon = ":";
        }
        let location = LOCATION_SUFFIX.find(core).map_or(core.len(), |m| m.start());
        let path = core[..location].trim_end_matches('.');
        if looks_like_path(path) {
            record_path(path, context);
            out.push_str(&token[..start]);
            out.push_str("<PATH>");
            out.push_str(tail_colon);
            out.push_str(&token[core_end..]);
        } else {
            out.push_str(token);
        }
    }
    out
}

/// Whether `token` is a file system path or a file name with a source extension.
pub(crate) fn looks_like_path(token: &str) -> bool {
    if token.len() < 2 || token.contains(char::is_whitespace) || token.starts_with('<') {
        return false;
    }
    if token.starts_with("file://") {
        return true;
    }
    let has_letter = token.chars().any(|c| c.is_ascii_alphabetic());
    let windows = token.len() > 3
        && token.as_bytes()[1] == b':'
        && token.as_bytes()[2] == b'\\'
        && token.as_bytes()[0].is_ascii_alphabetic();
    if windows {
        return true;
    }
    let name = basename(token);
    let has_extension = extension(name).is_some_and(|ext| FILE_EXTENSIONS.contains(&ext))
        && name.split('.').next().is_some_and(|stem| !stem.is_empty());
    if token.contains('/') {
        if !has_letter || token.contains("://") {
            return false;
        }
        let rooted = token.starts_with('/')
            || token.starts_with("./")
            || token.starts_with("../")
            || token.starts_with("~/");
        let valid = token
            .chars()
            .all(|c| c.is_alphanumeric() || "/._-+@~".contains(c));
        return valid && (rooted || has_extension || token.matches('/').count() >= 2);
    }
    has_extension
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "._-+".contains(c))
}

fn basename(path: &str) -> &str {
    let path = path.trim_end_matches(['/', '\\']);
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn extension(name: &str) -> Option<&str> {
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty() && ext.len() <= 6).then_some(ext)
}

/// Keeps a path's file name and extension as context.
pub(crate) fn record_path(path: &str, context: &mut BTreeSet<String>) {
    let path = path.strip_prefix("file://").unwrap_or(path);
    let path = LOCATION_SUFFIX
        .find(path)
        .map_or(path, |m| &path[..m.start()]);
    let name = basename(path);
    if name.is_empty() || name.len() > MAX_QUOTED_CONTEXT {
        return;
    }
    context.insert(format!("file:{name}"));
    if let Some(ext) = extension(name) {
        context.insert(format!("ext:{ext}"));
    }
}

/// A frame as `file:function`, `function` or `file`, without lines, columns or addresses.
fn frame_pattern(frame: &Frame) -> Option<String> {
    let function = frame.function.as_deref().map(|f| {
        let f = f.trim().trim_end_matches("(...)");
        let f = HEX_PREFIXED.replace_all(f, "<HEX>");
        NUMBER.replace_all(&f, "<N>").into_owned()
    });
    let file = frame.file.as_deref().map(|file| {
        let file = LOCATION_SUFFIX
            .find(file)
            .map_or(file, |m| &file[..m.start()]);
        if file.starts_with("node:") || !looks_like_path(file) {
            file.to_string()
        } else {
            basename(file).to_string()
        }
    });
    match (file, function) {
        (Some(file), Some(function)) => Some(format!("{file}:{function}")),
        (Some(file), None) => Some(file),
        (None, Some(function)) => Some(function),
        (None, None) => None,
    }
}

/// A lower-case slug of a message pattern's head: `cannot-find-symbol`.
pub(crate) fn slug(pattern: &str) -> String {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_ascii_alphanumeric() && c != '<' && c != '>')
            .filter(|w| {
                !w.is_empty() && !w.starts_with('<') && w.chars().any(|c| c.is_ascii_alphabetic())
            })
            .take(5)
            .map(str::to_ascii_lowercase)
            .collect()
    };
    // Parenthesised asides (`(first use in this function)`, `(variable of type <T>)`) vary
    // more than the head does.
    let pattern = &*PARENTHESISED.replace_all(pattern, " ");
    let head = match pattern.find(": ") {
        Some(colon) if colon <= 40 => words(&pattern[..colon]),
        _ => Vec::new(),
    };
    let words = if head.is_empty() {
        words(pattern)
    } else {
        head
    };
    if words.is_empty() {
        "error".to_string()
    } else {
        words.join("-")
    }
}

/// Turns a recogniser's raw finding into a signature.
pub(crate) fn signature_of(raw: &RawError) -> ErrorSignature {
    let mut context = BTreeSet::new();
    let message_pattern = normalize_into(&raw.message, &mut context);
    let error_type = match &raw.error_type {
        Some(error_type) => error_type.trim().to_string(),
        None => slug(&message_pattern),
    };

    let mut stack_patterns: Vec<String> = Vec::new();
    for pattern in raw.frames.iter().filter_map(frame_pattern) {
        if stack_patterns.len() == MAX_STACK_PATTERNS {
            break;
        }
        if !stack_patterns.contains(&pattern) {
            stack_patterns.push(pattern);
        }
    }

    for path in &raw.paths {
        record_path(path, &mut context);
    }
    for hint in raw.hints.iter().take(MAX_HINTS) {
        let mut pattern = normalize_into(hint, &mut context);
        truncate(&mut pattern, 80);
        if !pattern.is_empty() {
            context.insert(format!("help:{pattern}"));
        }
    }
    for quoted in &raw.quoted {
        record_quoted(quoted, &mut context);
    }
    context.extend(raw.context.iter().cloned());

    ErrorSignature {
        error_type,
        message_pattern,
        stack_patterns,
        context_patterns: context.into_iter().take(MAX_CONTEXT_PATTERNS).collect(),
        language: raw.language,
        embedding: None,
    }
}
