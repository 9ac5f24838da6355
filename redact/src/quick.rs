//! A conservative pre-check that needs no compilation: does the text contain anything every
//! detector requires? If not, nothing can match and the regex need not be built at all — which
//! matters inside a WebAssembly extension, where every callback starts from a fresh instance
//! and building the detectors costs far more than scanning a page.
//!
//! The check must never say "clean" for a text a detector would match; the crate's tests hold
//! it to that on random mixtures.

use crate::Options;

/// Whether `text` holds something every match of some detector needs: `-----BEGIN`, an AWS key
/// prefix, `gh?_`/`github_pat_`, `xox`/`xapp-`, `hooks.slack.com`, `eyJ`, `://` with an `@`,
/// `bearer` and a blank, a credential word (any case) followed by a separator as in
/// `password =`, `"token":`, `api_key=`, or (with [`Options::emails`]) an `@`.
pub fn may_contain_secrets(text: &str, options: Options) -> bool {
    let bytes = text.as_bytes();
    let has_at = bytes.contains(&b'@');
    if options.emails && has_at {
        return true;
    }
    bytes.iter().enumerate().any(|(i, &byte)| {
        if !STARTS[usize::from(byte)] {
            return false;
        }
        let rest = &bytes[i..];
        match byte {
            b'-' => rest.starts_with(b"-----BEGIN"),
            b'A' => [&b"AKIA"[..], b"ASIA", b"ABIA", b"ACCA", b"A3T"]
                .iter()
                .any(|prefix| rest.starts_with(prefix)),
            b'g' => {
                rest.starts_with(b"github_pat_")
                    || (rest.len() > 3
                        && rest[1] == b'h'
                        && b"pousr".contains(&rest[2])
                        && rest[3] == b'_')
            }
            b'x' => rest.starts_with(b"xox") || rest.starts_with(b"xapp-"),
            b'h' => rest.starts_with(b"hooks.slack.com"),
            b'e' => rest.starts_with(b"eyJ"),
            b':' => has_at && rest.starts_with(b"://"),
            _ => credential_word_at(rest, byte.to_ascii_lowercase()),
        }
    })
}

/// The bytes a match can start with, so that most bytes are skipped with one lookup.
static STARTS: [bool; 256] = {
    let mut table = [false; 256];
    let starts = b"-Agxhe:bBpPsSkKtTcC";
    let mut i = 0;
    while i < starts.len() {
        table[starts[i] as usize] = true;
        i += 1;
    }
    table
};

/// `bearer` and a blank, or a credential word and a separator, at the start of `rest`
/// (`lower` is its first byte, lowercased).
fn credential_word_at(rest: &[u8], lower: u8) -> bool {
    match lower {
        b'b' => {
            starts_with_ignore_case(rest, b"bearer") && matches!(rest.get(6), Some(b' ' | b'\t'))
        }
        b'p' | b's' | b'k' | b't' | b'c' => CREDENTIAL_WORDS.iter().any(|word| {
            word[0] == lower
                && starts_with_ignore_case(rest, word)
                && separator_follows(&rest[word.len()..])
        }),
        _ => false,
    }
}

/// Every key the assignment detector accepts ends with one of these.
const CREDENTIAL_WORDS: [&[u8]; 8] = [
    b"password",
    b"passwd",
    b"pwd",
    b"passphrase",
    b"secret",
    b"key",
    b"token",
    b"credential",
];

/// What the assignment pattern requires after its key: an optional `s` (`credentials`), an
/// optional (escaped) quote, blanks, then `=` or `:`.
fn separator_follows(after: &[u8]) -> bool {
    let mut at = 0;
    if matches!(after.first(), Some(b's' | b'S')) {
        at += 1;
    }
    if after.get(at) == Some(&b'\\') {
        at += 1;
    }
    if matches!(after.get(at), Some(b'"' | b'\'' | b'`')) {
        at += 1;
    }
    while matches!(after.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    matches!(after.get(at), Some(b'=' | b':'))
}

fn starts_with_ignore_case(haystack: &[u8], lowercase_word: &[u8]) -> bool {
    haystack.len() >= lowercase_word.len()
        && haystack[..lowercase_word.len()].eq_ignore_ascii_case(lowercase_word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_output_needs_no_detectors() {
        let plain = Options::default();
        for text in [
            "   Compiling serde v1.0.219\n    Finished `dev` profile in 3.2s",
            "test result: ok. 15 passed; 0 failed",
            "let token_count = tokens.len();",
            "See https://docs.rs/regex for details",
            "ana@example.com wrote",
        ] {
            assert!(!may_contain_secrets(text, plain), "{text}");
        }
        assert!(may_contain_secrets(
            "ana@example.com",
            Options { emails: true }
        ));
    }

    #[test]
    fn each_detector_family_is_noticed() {
        let plain = Options::default();
        for text in [
            "-----BEGIN RSA PRIVATE KEY-----",
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_x",
            "github_pat_x",
            "xoxb-1",
            "xapp-1",
            "https://hooks.slack.com/services/x",
            "eyJhbGciOi",
            "postgres://a:b@h",
            "Authorization: BEARER abc",
            "DB_PASSWORD=x",
            "Pwd: x",
            "SECRET=x",
            "api_KEY: x",
            "TOKEN=x",
            "credentials=x",
            "{\\\"password\\\": 1}",
            "'secret' => 1",
        ] {
            assert!(may_contain_secrets(text, plain), "{text}");
        }
        assert!(
            !may_contain_secrets("the password is long", plain),
            "no separator"
        );
    }
}
