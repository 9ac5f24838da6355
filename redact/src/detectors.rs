//! The detectors: one regex pattern each, searched together in one pass, and what part of a
//! match is the secret.

use std::ops::Range;

use crate::SecretKind;
use crate::assignment;

/// How a detector's match becomes a redacted span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Detector {
    /// The whole match is the secret.
    Whole(SecretKind),
    /// An e-mail address (the whole match), except SSH remotes such as `git@github.com`.
    Email,
    /// `scheme://user:PASSWORD@`: the password is the secret.
    UrlPassword,
    /// `Bearer TOKEN`: the token is the secret.
    Bearer,
    /// `key = value` with a credential-like key: the value is the secret, if it looks like a
    /// literal rather than code (see [`assignment`]).
    Assignment,
}

/// What to do with one match.
pub(crate) enum Verdict {
    /// Replace `span` with `[REDACTED:kind]`.
    Redact {
        span: Range<usize>,
        kind: SecretKind,
    },
    /// Not a secret after all; continue searching at `resume`.
    Skip { resume: usize },
}

impl Detector {
    /// Whether the secret sits after some context (a key, a scheme, `Bearer`). Such a secret may
    /// itself be a token a specific detector names better (`token=ghp_…` is a GitHub token).
    pub(crate) fn is_contextual(self) -> bool {
        matches!(
            self,
            Detector::UrlPassword | Detector::Bearer | Detector::Assignment
        )
    }

    pub(crate) fn judge(self, text: &str, found: Range<usize>) -> Verdict {
        let skip = Verdict::Skip { resume: found.end };
        match self {
            Detector::Whole(kind) => Verdict::Redact { span: found, kind },
            Detector::Email => {
                let local = text[found.clone()].split('@').next().unwrap_or_default();
                if local.eq_ignore_ascii_case("git") {
                    skip
                } else {
                    Verdict::Redact {
                        span: found,
                        kind: SecretKind::Email,
                    }
                }
            }
            Detector::UrlPassword => {
                let matched = &text[found.clone()];
                let after_scheme = matched.find("://").map_or(0, |i| i + 3);
                let colon = after_scheme + matched[after_scheme..].find(':').unwrap_or(0);
                let span = found.start + colon + 1..found.end - 1;
                if assignment::is_placeholder(&text[span.clone()]) {
                    skip
                } else {
                    Verdict::Redact {
                        span,
                        kind: SecretKind::UrlPassword,
                    }
                }
            }
            Detector::Bearer => {
                let matched = &text[found.clone()];
                let token_at = matched[6..]
                    .find(|c: char| !c.is_ascii_whitespace())
                    .map_or(matched.len(), |i| i + 6);
                Verdict::Redact {
                    span: found.start + token_at..found.end,
                    kind: SecretKind::BearerToken,
                }
            }
            Detector::Assignment => match assignment::value(text, found.clone()) {
                Some((span, kind)) => Verdict::Redact { span, kind },
                None => skip,
            },
        }
    }
}

/// A PEM/OpenSSH/PGP private key: the complete block, or, when the END line is missing
/// (truncated output), the header and the base64 lines after it (at least one).
/// The body of a complete block may hold base64, PEM headers (`Proc-Type: 4,ENCRYPTED`) and
/// escaped newlines, but no quotes, brackets or backticks, so prose that merely mentions a BEGIN
/// line and, pages later, an END line is not swallowed. An empty block is not a key.
const PRIVATE_KEY: &str = r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\s:,.\\-]*?[A-Za-z0-9+/]{16}[A-Za-z0-9+/=\s:,.\\-]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:(?:\s|\\[nr])*[A-Za-z0-9+/=]{16,})+)";
const AWS_ACCESS_KEY_ID: &str = r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b";
const GITHUB_TOKEN: &str = r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b";
const SLACK_TOKEN: &str = r"\b(?:xox[a-z]|xapp)-[A-Za-z0-9-]{10,}";
const SLACK_WEBHOOK: &str =
    r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{8,}";
/// Header and payload are base64url JSON objects, so both start with `eyJ` (`{"`).
const JWT: &str = r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*";
/// User and password are RFC 3986 user-info characters (no quotes, spaces, `/`, `@`).
const URL_PASSWORD: &str =
    r"\b[A-Za-z][A-Za-z0-9+.-]*://[A-Za-z0-9._~%!$&()*+,;=-]+:[A-Za-z0-9._~%!$&()*+,;=:-]+@";
const BEARER: &str = r"(?i:\bbearer)[ \t]+[A-Za-z0-9._~+/-]{20,}=*";
/// A key whose last word is credential-like, optionally quoted (also JSON-escaped), then `=`,
/// `:`, `=>` or `:=`. The value is parsed by [`assignment::value`].
const ASSIGNMENT: &str = r#"(?i)["'`]?[A-Za-z0-9_.-]*(?:password|passwd|pwd|passphrase|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key|token|credentials?)\b(?:\\?["'`])?[ \t]*(?:=>|:=|[:=])[ \t]*"#;
const EMAIL: &str = r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b";

/// The detectors in priority order: when two match at the same position, the first wins.
pub(crate) fn table(emails: bool) -> Vec<(Detector, &'static str)> {
    let mut table = vec![
        (Detector::Whole(SecretKind::PrivateKey), PRIVATE_KEY),
        (
            Detector::Whole(SecretKind::AwsAccessKeyId),
            AWS_ACCESS_KEY_ID,
        ),
        (Detector::Whole(SecretKind::GithubToken), GITHUB_TOKEN),
        (Detector::Whole(SecretKind::SlackToken), SLACK_TOKEN),
        (Detector::Whole(SecretKind::SlackWebhook), SLACK_WEBHOOK),
        (Detector::Whole(SecretKind::Jwt), JWT),
        (Detector::UrlPassword, URL_PASSWORD),
        (Detector::Bearer, BEARER),
        (Detector::Assignment, ASSIGNMENT),
    ];
    if emails {
        table.push((Detector::Email, EMAIL));
    }
    table
}
