//! `key = value` assignments with a credential-like key: which values are secrets.
//!
//! The regex finds a key whose last word is credential-like (`password`, `DB_PASSWORD`,
//! `"api_key"`, `--token`, `aws_secret_access_key`…) and a separator (`=`, `:`, `=>`, `:=`). This
//! module reads the value and decides whether it is a literal secret or code and prose:
//!
//! * **Quoted** values (`"…"`, `'…'`, and JSON-escaped `\"…\"`) are string literals: redacted
//!   unless empty, a placeholder or a type/keyword literal. (A backtick ends a value: in Markdown
//!   it closes a code span, in shell it starts a command.)
//! * **Bare** values must be at least 4 bytes and not look like code:
//!   - not followed by `(`, `[`, `{` or `<` (a call, an index, a generic): `next_token()`;
//!   - not a member path (`self.token`, `os.environ`, `std::env::var`; except in tight
//!     `key=value` form, where dotted tokens are common), a reference (`&str`), a file path (`/home/…`, `./…`, `~/…`), a placeholder (`$TOKEN`, `${…}`, `%s`, `{{…}}`,
//!     `<…>`, `****`) or a type/keyword literal (`None`, `true`, `String`, `str`…);
//!   - after `key=value` written tight (no spaces: env files, URLs, CLI flags, connection
//!     strings) the value ends at whitespace or `& , ; ) ] } " '`;
//!   - after a spaced `=`, or after `:`, `=>`, `:=` (code, YAML, INI, prose), the value must be
//!     the rest of the line (a trailing `# …` or `// …` comment is allowed), must not be part
//!     of a code statement (`let token = context`, `self.token = other`, an expression that
//!     continues on the next line), and after `:` must not be a capitalised word (a type
//!     annotation such as `token: Token`).
//! * Keys after `::` or `->` are code (`Error::Token => "invalid token"`), as are capitalised
//!   keys before `=>` (match arms); pagination or progress tokens (`progressToken`,
//!   `nextPageToken`) are not credentials.
//! * An unquoted key before `:` must start an entry (line start, after a list marker, `{` or
//!   `,`): `Unexpected token: "<"` is prose.
//!
//! The key must *end* with the credential word, so `password_hash`, `max_tokens` or
//! `token_count` are never keys.

use std::ops::Range;

use crate::SecretKind;

/// The value span and kind of the assignment matched at `found` (key and separator), or `None`
/// if the value is not a literal secret.
pub(crate) fn value(text: &str, found: Range<usize>) -> Option<(Range<usize>, SecretKind)> {
    let head = &text[found.clone()];
    let key_start = head.find(|c: char| c.is_ascii_alphanumeric() || "_.-".contains(c))?;
    let key_len = head[key_start..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || "_.-".contains(c)))
        .unwrap_or(head.len() - key_start);
    let key = &head[key_start..key_start + key_len];
    let separator = &head[key_start + key_len..];
    let before_key = &text[..found.start + key_start];
    if before_key.ends_with("::") || before_key.ends_with("->") || is_not_a_credential(key) {
        // `Error::Token => "invalid token"` names an enum variant; `progressToken` is not secret.
        return None;
    }
    let key_quoted = key_start > 0;
    let operator = separator.trim_start_matches(['"', '\'', '\\']).trim();
    if !key_quoted && operator == "=>" && key.starts_with(|c: char| c.is_ascii_uppercase()) {
        // `TrafficSecret => "CLIENT_TRAFFIC_SECRET"`: a match arm on an enum variant.
        return None;
    }
    if !key_quoted && operator == ":" && !starts_an_entry(before_key) {
        // `Unexpected token: "<"`: prose, not a YAML or JSON-ish entry.
        return None;
    }
    let tight = separator.trim_start_matches(['"', '\'', '`', '\\']).eq("=");

    let rest = &text[found.end..];
    let (span, quoted) = if let Some(close) = quoted_value(rest) {
        close
    } else {
        (bare_value(rest, tight)?, false)
    };
    let value = &rest[span.clone()];
    if value.is_empty() || is_placeholder(value) || is_literal_keyword(value) {
        return None;
    }
    if !quoted
        && (value.len() < 4
            || looks_like_code(value, separator, tight)
            || (!tight && is_code_statement(before_key, key, &rest[span.end..])))
    {
        return None;
    }
    let span = found.end + span.start..found.end + span.end;
    Some((span, kind_of(key)))
}

/// A quoted value at the start of `rest`: its span (inside the quotes) and `true`. `None` if
/// `rest` does not start with a quote, or the quote is not closed on the same line.
fn quoted_value(rest: &str) -> Option<(Range<usize>, bool)> {
    let bytes = rest.as_bytes();
    let (quote, open_len, escaped) = match bytes {
        [b'\\', q @ (b'"' | b'\''), ..] => (*q, 2, true),
        [q @ (b'"' | b'\''), ..] => (*q, 1, false),
        _ => return None,
    };
    let mut i = open_len;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' | b'\r' => return None,
            b'\\' if escaped && bytes.get(i + 1) == Some(&quote) => {
                return Some((open_len..i, true));
            }
            b'\\' => i += 2,
            b if b == quote && !escaped => return Some((open_len..i, true)),
            _ => i += 1,
        }
    }
    None
}

/// A bare value at the start of `rest`, or `None` if what follows it shows it is code or prose.
fn bare_value(rest: &str, tight: bool) -> Option<Range<usize>> {
    let end = rest
        .find(|c: char| c.is_whitespace() || "\"'`,;&)]}([{<>".contains(c))
        .unwrap_or(rest.len());
    let after = &rest[end..];
    if after.starts_with(['(', '[', '{', '<']) {
        return None;
    }
    if !tight && !is_end_of_line(after) {
        return None;
    }
    Some(0..end)
}

/// Only blanks, then the end of the line or a `#`/`//` comment.
fn is_end_of_line(after: &str) -> bool {
    let after = after.trim_start_matches([' ', '\t']);
    after.is_empty() || after.starts_with(['\n', '\r', '#']) || after.starts_with("//")
}

/// Whether an unquoted `key:` starts an entry: at the start of its line (after indentation or a
/// list marker), or after `{`, `,`, `(`, `[`, `;` or `|`.
fn starts_an_entry(before_key: &str) -> bool {
    let line_start = before_key.rfind('\n').map_or(0, |i| i + 1);
    let prefix = before_key[line_start..].trim_end();
    prefix
        .trim_start_matches([' ', '\t', '-', '*', '>'])
        .is_empty()
        || prefix.ends_with(['{', ',', '(', '[', ';', '|'])
}

/// Keys that end with a credential word but never hold a secret: pagination and progress tokens.
fn is_not_a_credential(key: &str) -> bool {
    const NOT_SECRET: &[&str] = &[
        "progresstoken",
        "pagetoken",
        "nexttoken",
        "continuationtoken",
        "synctoken",
        "resumetoken",
        "cursortoken",
    ];
    let normalized: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    NOT_SECRET.iter().any(|word| normalized.ends_with(word))
}

/// A bare value in a statement of code rather than a config line: a declaration
/// (`let token = context`), a member assignment (`self.token = other`), or an expression that
/// continues on the next line (`let token = parts` then `.next()`).
fn is_code_statement(before_key: &str, key: &str, after_value: &str) -> bool {
    const DECLARATIONS: &[&str] = &[
        "let", "mut", "const", "var", "val", "auto", "my", "static", "final", "local",
    ];
    let line_start = before_key.rfind('\n').map_or(0, |i| i + 1);
    let declared = before_key[line_start..]
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .rfind(|word| !word.is_empty())
        .is_some_and(|word| DECLARATIONS.contains(&word));
    let member = ["self.", "this.", "@"].iter().any(|p| key.starts_with(p));
    let next_line = after_value
        .find('\n')
        .map_or("", |i| &after_value[i + 1..])
        .trim_start();
    let continued = [".", "?", "::", "->", "+", "||", "&&", ")"]
        .iter()
        .any(|p| next_line.starts_with(p));
    declared || member || continued
}

/// Not a value but a stand-in for one: `$VAR`, `${VAR}`, `%s`, `{{ x }}`, `<password>`,
/// `****`, or an earlier redaction.
pub(crate) fn is_placeholder(value: &str) -> bool {
    value.starts_with(['$', '%', '{', '<'])
        || value.starts_with("#{")
        || value.starts_with("[REDACTED")
        || value
            .chars()
            .all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '…' | '•'))
}

/// A literal that is never a secret: types, null-likes, booleans, and the key words themselves.
fn is_literal_keyword(value: &str) -> bool {
    const WORDS: &[&str] = &[
        "null",
        "none",
        "nil",
        "undefined",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "string",
        "str",
        "bool",
        "boolean",
        "int",
        "integer",
        "number",
        "float",
        "any",
        "object",
        "bytes",
        "required",
        "optional",
        "secret",
        "password",
        "token",
        "redacted",
        "hidden",
        "masked",
        "empty",
        "default",
        "read",
        "write",
    ];
    WORDS.iter().any(|word| value.eq_ignore_ascii_case(word))
}

/// A bare value that reads as code: a reference, a file path, a member path (unless written
/// tight, `key=value`, where `ya29.a0Af…` is a token and code is rare), or (after `:`) a type
/// name.
fn looks_like_code(value: &str, separator: &str, tight: bool) -> bool {
    if value.starts_with(['&', '/', '=', ':']) || value.starts_with("./") || value.starts_with("~/")
    {
        return true;
    }
    let is_identifier = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let path = value.replace("::", ".");
    let member_path = !tight && path.contains('.') && path.split('.').all(is_identifier);
    let type_name = separator.contains(':')
        && !separator.contains(":=")
        && value.starts_with(|c: char| c.is_ascii_uppercase())
        && value.chars().all(|c| c.is_ascii_alphabetic());
    member_path || type_name
}

/// The kind a key names: its last credential word decides.
fn kind_of(key: &str) -> SecretKind {
    let normalized: String = key
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let ends = |suffix: &str| normalized.ends_with(suffix);
    if ends("secretaccesskey") || ends("awssecretkey") {
        SecretKind::AwsSecretAccessKey
    } else if ends("password") || ends("passwd") || ends("pwd") || ends("passphrase") {
        SecretKind::Password
    } else if ends("apikey") || ends("accesskey") {
        SecretKind::ApiKey
    } else if ends("privatekey") {
        SecretKind::PrivateKeyValue
    } else if ends("token") {
        SecretKind::Token
    } else {
        SecretKind::Secret
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_the_last_credential_word() {
        assert_eq!(kind_of("DB_PASSWORD"), SecretKind::Password);
        assert_eq!(kind_of("--passwd"), SecretKind::Password);
        assert_eq!(
            kind_of("aws_secret_access_key"),
            SecretKind::AwsSecretAccessKey
        );
        assert_eq!(kind_of("SecretAccessKey"), SecretKind::AwsSecretAccessKey);
        assert_eq!(kind_of("X-API-Key"), SecretKind::ApiKey);
        assert_eq!(kind_of("access_key"), SecretKind::ApiKey);
        assert_eq!(kind_of("private_key"), SecretKind::PrivateKeyValue);
        assert_eq!(kind_of("refresh_token"), SecretKind::Token);
        assert_eq!(kind_of("client_secret"), SecretKind::Secret);
        assert_eq!(kind_of("credentials"), SecretKind::Secret);
    }

    #[test]
    fn quoted_values_honour_escapes_and_lines() {
        assert_eq!(quoted_value(r#""a\"b" tail"#), Some((1..5, true)));
        assert_eq!(quoted_value(r#"\"inner\", x"#), Some((2..7, true)));
        assert_eq!(quoted_value("'unterminated\n'"), None);
        assert_eq!(quoted_value("bare"), None);
    }

    #[test]
    fn placeholders_are_recognised() {
        for value in [
            "$DB_PASS",
            "${DB_PASS}",
            "%s",
            "{{ .Values.pw }}",
            "<password>",
            "****",
        ] {
            assert!(is_placeholder(value), "{value}");
        }
        assert!(!is_placeholder("hunter2"));
    }
}
