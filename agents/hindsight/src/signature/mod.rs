//! Error signatures: what stays the same when the same error happens again somewhere else.
//!
//! [`extract`] turns raw error text (compiler diagnostics, test output, stack traces, shell
//! errors, or all of them mixed in one log) into one [`ErrorSignature`] per distinct error.
//! The pipeline is:
//!
//! 1. [`recognize`]: line-oriented recognisers, one per ecosystem, find where each error starts
//!    and ends and pull out its type, raw message, stack frames and locations;
//! 2. [`normalize`]: everything that varies between occurrences (paths, line and column numbers,
//!    addresses, hex, ids, timestamps, temp dirs, quoted identifiers and literals) becomes a
//!    placeholder; file names, extensions and the quoted values are kept as context.
//!
//! Summary lines (`aborting due to 2 previous errors`, `ld returned 1 exit status`, `make: ***
//! … Error 2`, `exit status 1`) become signatures only when the text has nothing more specific.
//!
//! When no recogniser finds a specific error — output of a toolchain nobody wrote one for —
//! a generic fallback finds the headline among the unclaimed lines by cues every toolchain
//! shares (error words, class names, severity labels, locations; `recognize/headline.rs`).
//! Its error replaces the summaries, which say less.

mod normalize;
mod recognize;

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub(crate) use normalize::slug;
pub use normalize::{PLACEHOLDERS, normalize_message};

/// Largest number of stack patterns kept per signature (the frames nearest the error).
pub const MAX_STACK_PATTERNS: usize = 8;
/// Largest number of context patterns kept per signature.
pub const MAX_CONTEXT_PATTERNS: usize = 24;

/// The ecosystem an error comes from.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Java,
    Kotlin,
    Go,
    C,
    Cpp,
    Shell,
    Unknown,
}

impl Language {
    pub const ALL: [Language; 11] = [
        Language::Rust,
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Java,
        Language::Kotlin,
        Language::Go,
        Language::C,
        Language::Cpp,
        Language::Shell,
        Language::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Java => "java",
            Language::Kotlin => "kotlin",
            Language::Go => "go",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Shell => "shell",
            Language::Unknown => "unknown",
        }
    }

    /// The language of a source file, from its extension.
    pub fn from_extension(ext: &str) -> Option<Language> {
        Some(match ext {
            "rs" => Language::Rust,
            "py" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "tsx" | "mts" | "cts" => Language::TypeScript,
            "java" => Language::Java,
            "kt" | "kts" => Language::Kotlin,
            "go" => Language::Go,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" | "C" => Language::Cpp,
            "sh" | "bash" | "zsh" => Language::Shell,
            _ => return None,
        })
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Language {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase();
        let alias = match lower.as_str() {
            "js" | "node" => "javascript",
            "ts" => "typescript",
            "c++" => "cpp",
            "sh" | "bash" => "shell",
            other => other,
        };
        Language::ALL
            .into_iter()
            .find(|l| l.as_str() == alias)
            .ok_or_else(|| {
                format!(
                    "unknown language `{s}`; expected one of rust, python, javascript, typescript, \
                 java, kotlin, go, c, cpp, shell, unknown"
                )
            })
    }
}

/// What identifies an error independently of where and in which code it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorSignature {
    /// The most specific stable class available: a compiler code (`E0308`, `TS2322`), an
    /// exception class (`ModuleNotFoundError`, `java.lang.NullPointerException`), a Node error
    /// code (`MODULE_NOT_FOUND`), a compiler flag (`implicit-function-declaration`), or else a
    /// slug of the message's head (`cannot-find-symbol`, `command-not-found`).
    pub error_type: String,
    /// The message with every varying part replaced by a placeholder: `<Q>`, `<PATH>`, `<N>`,
    /// `<HEX>`, … (the list is `PLACEHOLDERS`).
    pub message_pattern: String,
    /// Normalised stack frames, innermost first: `file.py:function`, `pkg.Class.method`.
    #[serde(default)]
    pub stack_patterns: Vec<String>,
    /// Sorted, de-duplicated context: `file:<name>`, `ext:<ext>`, `q:<quoted value>`,
    /// `tool:<tool>`, `help:<normalised hint>`, `cause:<type>`…
    #[serde(default)]
    pub context_patterns: Vec<String>,
    /// The ecosystem the error comes from.
    pub language: Language,
    /// Filled in by the service with the configured embedder; never serialised when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
}

impl ErrorSignature {
    /// Identifies exact duplicates: hex SHA-256 of language, type and message pattern. When
    /// the language is unknown, the ecosystem the context names (`src:` extensions, `tool:`)
    /// is part of it too: `syntax error` of two unknown tools is two errors, not one.
    pub fn fingerprint(&self) -> String {
        let mut hasher = Sha256::new();
        for part in [
            self.language.as_str(),
            &self.error_type,
            &self.message_pattern,
        ] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        if self.language == Language::Unknown {
            let mut ecosystem: Vec<&String> = self
                .context_patterns
                .iter()
                .filter(|c| c.starts_with("src:") || c.starts_with("tool:"))
                .collect();
            ecosystem.sort();
            for part in ecosystem {
                hasher.update(part.as_bytes());
                hasher.update([0]);
            }
        }
        hex::encode(hasher.finalize())
    }

    /// The text given to the embedder: language, type and message. Stack frames are left out:
    /// they name the code at hand, which differs between occurrences of the same error. An
    /// unknown language is named by the ecosystem the context gives (the source files'
    /// extension, the tool: `rb`, `sqlite3`), which a model may relate to the language's name
    /// in a description.
    pub fn embedding_text(&self) -> String {
        let mut ecosystem: Vec<&str> = Vec::new();
        if self.language == Language::Unknown {
            for c in &self.context_patterns {
                if let Some(name) = c.strip_prefix("src:").or_else(|| c.strip_prefix("tool:"))
                    && !ecosystem.contains(&name)
                {
                    ecosystem.push(name);
                }
            }
        }
        let language = if ecosystem.is_empty() {
            self.language.as_str().to_string()
        } else {
            ecosystem.join(" ")
        };
        format!("{language} {} {}", self.error_type, self.message_pattern)
    }

    /// A one-line title for notes and listings: `E0308 mismatched types`.
    pub fn title(&self) -> String {
        let mut title = format!("{}: {}", self.error_type, self.message_pattern);
        if title.len() > 120 {
            let cut = (0..=117)
                .rev()
                .find(|i| title.is_char_boundary(*i))
                .unwrap_or(0);
            title.truncate(cut);
            title.push_str("...");
        }
        title
    }
}

/// Extracts one signature per distinct error in `text`, in order of appearance.
///
/// Returns an empty list when nothing in the text looks like an error.
pub fn extract(text: &str) -> Vec<ErrorSignature> {
    extract_with_origin(text).0
}

/// [`extract`], and whether the signatures come from the generic fallback (no recogniser knew
/// the format): then the text may as well be a sentence that uses error words.
pub(crate) fn extract_with_origin(text: &str) -> (Vec<ErrorSignature>, bool) {
    let cleaned = normalize::clean_text(text);
    let lines: Vec<&str> = cleaned.lines().collect();
    let recognized = recognize::recognize(&lines);
    let found = recognized.errors;

    let specific: Vec<_> = found.iter().filter(|raw| !raw.summary).collect();
    // Only the generic line patterns matched: the fallback reads such text better (it knows
    // labels, locations and continuations), and they are kept if it finds nothing. Output in a
    // format a recogniser knows, with warnings and no error, has no error to find: a warning
    // alone is not a failure.
    let only_generic = specific.iter().all(|raw| raw.generic) && !recognized.warned;
    let fallback;
    let mut generic = false;
    let chosen = if !only_generic {
        specific
    } else if let Some(headline) = recognize::fallback(&lines, &recognized.claimed) {
        fallback = headline;
        generic = true;
        vec![&fallback]
    } else if !specific.is_empty() {
        specific
    } else {
        found.iter().collect()
    };

    let mut signatures: Vec<ErrorSignature> = Vec::new();
    for raw in chosen {
        let signature = normalize::signature_of(raw);
        // The same error printed twice (a test failure and its summary line) is one error.
        match signatures.iter_mut().find(|s| {
            s.language == signature.language
                && s.error_type == signature.error_type
                && s.message_pattern == signature.message_pattern
        }) {
            Some(existing) => merge_context(existing, &signature),
            None => signatures.push(signature),
        }
    }
    (signatures, generic)
}

/// Adds `other`'s stack and context patterns to `into`, keeping both within their limits.
pub fn merge_context(into: &mut ErrorSignature, other: &ErrorSignature) {
    for frame in &other.stack_patterns {
        if into.stack_patterns.len() < MAX_STACK_PATTERNS && !into.stack_patterns.contains(frame) {
            into.stack_patterns.push(frame.clone());
        }
    }
    let mut context: BTreeSet<String> = into.context_patterns.iter().cloned().collect();
    context.extend(other.context_patterns.iter().cloned());
    into.context_patterns = context.into_iter().take(MAX_CONTEXT_PATTERNS).collect();
}

#[cfg(test)]
mod tests;
