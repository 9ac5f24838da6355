//! Finds and redacts secrets in text: the single implementation behind the `secret-redactor`
//! extension and the server's redaction before storage (notes, hindsight).
//!
//! ```
//! use aeterna_redact::{redact, SecretKind};
//!
//! let out = redact("export GITHUB_TOKEN=ghp_Tk9sY2FsRGV2VG9rZW5Gb3JUZXN0czEyMzQ1Ng\nls");
//! assert_eq!(out.text(), "export GITHUB_TOKEN=[REDACTED:github-token]\nls");
//! assert_eq!(out.count(SecretKind::GithubToken), 1);
//!
//! // Nothing found: the input is borrowed back, nothing is allocated.
//! let clean = redact("let token = next_token();");
//! assert!(clean.is_clean());
//! assert!(matches!(clean.into_text(), std::borrow::Cow::Borrowed(_)));
//! ```
//!
//! # What is found
//!
//! | kind | what |
//! |---|---|
//! | `private-key` | `-----BEGIN … PRIVATE KEY-----` blocks (PEM, OpenSSH, PGP), also truncated |
//! | `aws-access-key-id` | `AKIA…`, `ASIA…` (and `ABIA`, `ACCA`, `A3T…`) + 16 characters |
//! | `aws-secret-access-key` | the value of `aws_secret_access_key = …` / `"SecretAccessKey": …` |
//! | `github-token` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_` + 36 characters; `github_pat_…` |
//! | `slack-token` | `xoxb-…`, `xoxp-…` (any `xox?-`), `xapp-…` |
//! | `slack-webhook` | `https://hooks.slack.com/services/…` (and `workflows`, `triggers`) |
//! | `jwt` | `eyJ….eyJ….…` |
//! | `bearer-token` | the token after `Bearer ` |
//! | `url-password` | the password in `scheme://user:password@host` |
//! | `password`, `secret`, `api-key`, `private-key-value`, `token` | the value of an assignment whose key ends with such a word (`DB_PASSWORD=…`, `"api_key": "…"`, `--token=…`, `client_secret: …`) |
//! | `email` | e-mail addresses, only with [`Options::emails`] |
//!
//! Assignments are where false positives live; the rules that keep code and prose intact
//! (`let token = next_token();`, `password_hash = …`, `fn f(password: &str)`) are documented in
//! the `assignment` module and pinned by tests. A value that is itself a recognised token is
//! reported as that token: `token=ghp_…` counts as a `github-token`.
//!
//! # Cost
//!
//! All detectors are compiled into one multi-pattern regex and searched in one pass. When
//! nothing matches, [`Redactor::redact`] returns the input borrowed and allocates nothing. Build a
//! [`Redactor`] once ([`Redactor::shared`] does that for you): compiling the patterns (a few
//! hundred microseconds) costs far more than scanning a page of text. [`redact`] and
//! [`redact_with`] go further: a compile-free pre-check ([`may_contain_secrets`]) settles text
//! that no detector could match, and the detectors are built only when needed. That is what
//! the `secret-redactor` extension uses, since each of its callbacks starts from a fresh
//! WebAssembly instance.

mod assignment;
mod detectors;
mod kind;
mod quick;

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use regex_automata::meta::Regex;
use regex_automata::nfa::thompson::WhichCaptures;
use regex_automata::{Input, MatchKind};

use detectors::{Detector, Verdict};
pub use kind::SecretKind;
pub use quick::may_contain_secrets;

/// What to look for beyond secrets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Also redact e-mail addresses (kind `email`). Off by default.
    pub emails: bool,
}

/// A compiled set of detectors. Build once, use from any thread.
pub struct Redactor {
    regex: Regex,
    detectors: Vec<Detector>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("detectors", &self.detectors)
            .finish_non_exhaustive()
    }
}

/// Redacts `text` with the default options (no e-mail addresses); see [`redact_with`].
pub fn redact(text: &str) -> Redaction<'_> {
    redact_with(text, Options::default())
}

/// Redacts `text` with the shared [`Redactor`] for `options`, compiling it only if
/// [`may_contain_secrets`] says it could find something: clean text costs one cheap pass and
/// never builds the detectors (which matters in a fresh WebAssembly instance).
pub fn redact_with(text: &str, options: Options) -> Redaction<'_> {
    if !may_contain_secrets(text, options) {
        return Redaction {
            text: Cow::Borrowed(text),
            counts: [0; SecretKind::ALL.len()],
        };
    }
    Redactor::shared(options).redact(text)
}

impl Redactor {
    /// Compiles the detectors for `options`.
    pub fn new(options: Options) -> Redactor {
        let (detectors, patterns): (Vec<Detector>, Vec<&str>) =
            detectors::table(options.emails).into_iter().unzip();
        let regex = Regex::builder()
            // Every pattern is ASCII, so matches start and end on character boundaries; byte
            // classes compile far faster than Unicode ones.
            .syntax(regex_automata::util::syntax::Config::new().unicode(false))
            .configure(
                Regex::config()
                    .match_kind(MatchKind::LeftmostFirst)
                    .which_captures(WhichCaptures::Implicit)
                    // Compiling is most of the cost of a fresh wasm instance: skip the engines
                    // and the literal prefilter (hundreds of case-insensitive literals) that do
                    // not pay for themselves here. The lazy DFA does the scanning.
                    .onepass(false)
                    .backtrack(false)
                    .auto_prefilter(false),
            )
            .build_many(&patterns)
            .expect("the built-in detector patterns compile (checked by the crate's tests)");
        Redactor { regex, detectors }
    }

    /// A process-wide redactor for `options`, compiled on first use.
    pub fn shared(options: Options) -> &'static Redactor {
        static PLAIN: OnceLock<Redactor> = OnceLock::new();
        static WITH_EMAILS: OnceLock<Redactor> = OnceLock::new();
        let cell = if options.emails { &WITH_EMAILS } else { &PLAIN };
        cell.get_or_init(|| Redactor::new(options))
    }

    /// Replaces every secret in `text` with `[REDACTED:<kind>]` and counts them by kind.
    pub fn redact<'a>(&self, text: &'a str) -> Redaction<'a> {
        let mut redacted: Option<String> = None;
        let mut copied = 0;
        let mut counts = [0u32; SecretKind::ALL.len()];
        let mut at = 0;
        while at < text.len() {
            let Some(found) = self.regex.search(&Input::new(text).range(at..)) else {
                break;
            };
            let detector = self.detectors[found.pattern().as_usize()];
            match detector.judge(text, found.range()) {
                Verdict::Skip { resume } => at = resume,
                Verdict::Redact { span, .. }
                    if detector.is_contextual() && self.holds_a_specific_secret(text, &span) =>
                {
                    // `token=ghp_…`: search again from the value, where the GitHub detector
                    // will name it.
                    at = span.start;
                }
                Verdict::Redact { span, kind } => {
                    let out = redacted.get_or_insert_with(|| String::with_capacity(text.len()));
                    out.push_str(&text[copied..span.start]);
                    out.push_str("[REDACTED:");
                    out.push_str(kind.as_str());
                    out.push(']');
                    copied = span.end;
                    counts[kind.index()] += 1;
                    at = span.end.max(found.end());
                }
            }
        }
        let text = match redacted {
            Some(mut out) => {
                out.push_str(&text[copied..]);
                Cow::Owned(out)
            }
            None => Cow::Borrowed(text),
        };
        Redaction { text, counts }
    }

    /// Whether a detector that names its secret precisely matches inside `span`.
    fn holds_a_specific_secret(&self, text: &str, span: &std::ops::Range<usize>) -> bool {
        let mut at = span.start;
        while let Some(found) = self.regex.search(&Input::new(text).range(at..span.end)) {
            if !self.detectors[found.pattern().as_usize()].is_contextual() {
                return true;
            }
            at = found.end();
        }
        false
    }
}

/// The result of [`Redactor::redact`]: the text and what was found in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redaction<'a> {
    text: Cow<'a, str>,
    counts: [u32; SecretKind::ALL.len()],
}

/// How many secrets of one kind were redacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    /// The kind.
    pub kind: SecretKind,
    /// How many were redacted.
    pub count: u32,
}

impl<'a> Redaction<'a> {
    /// The redacted text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The redacted text; borrowed from the input when nothing was found.
    pub fn into_text(self) -> Cow<'a, str> {
        self.text
    }

    /// Whether nothing was found.
    pub fn is_clean(&self) -> bool {
        self.total() == 0
    }

    /// How many secrets were redacted in all.
    pub fn total(&self) -> u32 {
        self.counts.iter().sum()
    }

    /// How many secrets of `kind` were redacted.
    pub fn count(&self, kind: SecretKind) -> u32 {
        self.counts[kind.index()]
    }

    /// The kinds found, with their counts, in [`SecretKind::ALL`] order.
    pub fn findings(&self) -> impl Iterator<Item = Finding> + '_ {
        SecretKind::ALL
            .into_iter()
            .filter(|kind| self.counts[kind.index()] > 0)
            .map(|kind| Finding {
                kind,
                count: self.counts[kind.index()],
            })
    }
}

/// A connection URL (`redis://user:password@host/…`, `postgres://…`) with whatever precedes the
/// `@` of its authority, except a user name, replaced by `[REDACTED:url-password]`: for showing
/// configured URLs in logs and errors, where the password may be empty-user (`redis://:pw@h`) or
/// contain characters the text detectors do not expect.
pub fn redact_url_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let user = rest[..at].split_once(':').map_or("", |(user, _)| user);
            format!("{scheme}://{user}:[REDACTED:url-password]{}", &rest[at..])
        }
        None => url.to_owned(),
    }
}
