//! Behaviour of the redactor on realistic (fake) secrets and on ordinary code and prose.
//!
//! The secrets below are made up or are vendors' documented examples (AWS's `AKIAIOSFODNN7EXAMPLE`,
//! jwt.io's sample token); none is live.

use std::borrow::Cow;

use aeterna_redact::{Options, Redactor, SecretKind, redact};

const GITHUB_CLASSIC: &str = "ghp_R3aLi5t1cButFak3T0kenF0rT3sts0000001";
const GITHUB_FINE_GRAINED: &str =
    "github_pat_11AAAAAAA0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456";
const AWS_KEY_ID: &str = "AKIAIOSFODNN7EXAMPLE";
const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const SLACK_BOT: &str = "xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
const SLACK_APP: &str = "xapp-1-A0123456789-1234567890123-0123456789abcdef0123456789abcdef";
const SLACK_HOOK: &str =
    "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX";
const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

fn pem(label: &str) -> String {
    format!(
        "-----BEGIN {label}-----\n\
         MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n\
         MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n\
         NMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEovGhLa0VzMaQ8s+CLOyS56YyCFGeJZ\n\
         -----END {label}-----"
    )
}

/// Redacts `input` and checks the exact output and the kinds counted.
#[track_caller]
fn check(input: &str, expected: &str, kinds: &[(SecretKind, u32)]) {
    let out = redact(input);
    assert_eq!(out.text(), expected, "input: {input}");
    let found: Vec<(SecretKind, u32)> = out.findings().map(|f| (f.kind, f.count)).collect();
    assert_eq!(found, kinds, "input: {input}");
}

#[test]
fn github_tokens() {
    check(
        &format!("export GITHUB_TOKEN={GITHUB_CLASSIC}"),
        "export GITHUB_TOKEN=[REDACTED:github-token]",
        &[(SecretKind::GithubToken, 1)],
    );
    for prefix in ["gho_", "ghu_", "ghs_", "ghr_"] {
        let token = format!("{prefix}{}", &GITHUB_CLASSIC[4..]);
        check(
            &format!("remote: {token} expired"),
            "remote: [REDACTED:github-token] expired",
            &[(SecretKind::GithubToken, 1)],
        );
    }
    check(
        &format!("git clone https://x-access-token:{GITHUB_FINE_GRAINED}@github.com/o/r"),
        "git clone https://x-access-token:[REDACTED:github-token]@github.com/o/r",
        &[(SecretKind::GithubToken, 1)],
    );
}

#[test]
fn aws_keys() {
    check(
        &format!(
            "[default]\naws_access_key_id = {AWS_KEY_ID}\naws_secret_access_key = {AWS_SECRET}\n"
        ),
        "[default]\naws_access_key_id = [REDACTED:aws-access-key-id]\n\
         aws_secret_access_key = [REDACTED:aws-secret-access-key]\n",
        &[
            (SecretKind::AwsAccessKeyId, 1),
            (SecretKind::AwsSecretAccessKey, 1),
        ],
    );
    check(
        &format!(
            r#"{{"Credentials": {{"AccessKeyId": "ASIAIOSFODNN7EXAMPLE", "SecretAccessKey": "{AWS_SECRET}"}}}}"#
        ),
        r#"{"Credentials": {"AccessKeyId": "[REDACTED:aws-access-key-id]", "SecretAccessKey": "[REDACTED:aws-secret-access-key]"}}"#,
        &[
            (SecretKind::AwsAccessKeyId, 1),
            (SecretKind::AwsSecretAccessKey, 1),
        ],
    );
    check(
        &format!("AWS_SECRET_ACCESS_KEY={AWS_SECRET} aws s3 ls"),
        "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key] aws s3 ls",
        &[(SecretKind::AwsSecretAccessKey, 1)],
    );
}

#[test]
fn slack_tokens_and_webhooks() {
    check(
        &format!("SLACK_BOT_TOKEN={SLACK_BOT}\nSLACK_APP_TOKEN={SLACK_APP}"),
        "SLACK_BOT_TOKEN=[REDACTED:slack-token]\nSLACK_APP_TOKEN=[REDACTED:slack-token]",
        &[(SecretKind::SlackToken, 2)],
    );
    check(
        &format!("curl -X POST -d '{{\"text\":\"hi\"}}' {SLACK_HOOK}"),
        "curl -X POST -d '{\"text\":\"hi\"}' [REDACTED:slack-webhook]",
        &[(SecretKind::SlackWebhook, 1)],
    );
}

#[test]
fn jwts_and_bearer_tokens() {
    check(
        &format!("Authorization: Bearer {JWT}"),
        "Authorization: Bearer [REDACTED:jwt]",
        &[(SecretKind::Jwt, 1)],
    );
    check(
        "curl -H 'Authorization: Bearer 4f8a1c2e9b7d6a5f3e2d1c0b9a8f7e6d' https://api",
        "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://api",
        &[(SecretKind::BearerToken, 1)],
    );
    check(
        &format!("session cookie: id={JWT}; Path=/"),
        "session cookie: id=[REDACTED:jwt]; Path=/",
        &[(SecretKind::Jwt, 1)],
    );
}

#[test]
fn private_key_blocks() {
    for label in [
        "PRIVATE KEY",
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ] {
        check(
            &format!("key:\n{}\ndone", pem(label)),
            "key:\n[REDACTED:private-key]\ndone",
            &[(SecretKind::PrivateKey, 1)],
        );
    }
    // Inside JSON, with escaped newlines.
    let escaped = pem("PRIVATE KEY").replace('\n', "\\n");
    check(
        &format!(r#"{{"type": "service_account", "private_key": "{escaped}\n"}}"#),
        r#"{"type": "service_account", "private_key": "[REDACTED:private-key]\n"}"#,
        &[(SecretKind::PrivateKey, 1)],
    );
    // Truncated output: no END line. The header and the base64 lines go.
    let full = pem("RSA PRIVATE KEY");
    let truncated = &full[..full.find("-----END").unwrap()];
    check(
        &format!("{truncated}[output truncated]"),
        "[REDACTED:private-key]\n[output truncated]",
        &[(SecretKind::PrivateKey, 1)],
    );
    // A public key is not a secret.
    let public = pem("PUBLIC KEY");
    check(&public, &public, &[]);
}

#[test]
fn password_style_assignments() {
    let cases = [
        ("DB_PASSWORD=hunter2!", "DB_PASSWORD=[REDACTED:password]"),
        ("password: s3cr3t-value", "password: [REDACTED:password]"),
        (
            "password: hunter22 # dev only",
            "password: [REDACTED:password] # dev only",
        ),
        (
            r#"{"password":"correct horse"}"#,
            r#"{"password":"[REDACTED:password]"}"#,
        ),
        (
            r#"{"user": "ana", "passwd": "pa55"}"#,
            r#"{"user": "ana", "passwd": "[REDACTED:password]"}"#,
        ),
        (
            r#"{\"password\":\"hunter2\"}"#,
            r#"{\"password\":\"[REDACTED:password]\"}"#,
        ),
        (
            "mysql -u root --password=hunter2 app",
            "mysql -u root --password=[REDACTED:password] app",
        ),
        (
            "Server=db;User Id=sa;Password=Hunter2!;Database=app",
            "Server=db;User Id=sa;Password=[REDACTED:password];Database=app",
        ),
        ("pwd = 'abc123'", "pwd = '[REDACTED:password]'"),
        (
            "PASSPHRASE=\"long phrase here\"",
            "PASSPHRASE=\"[REDACTED:password]\"",
        ),
        (
            "client_secret = \"9f8e7d6c\"",
            "client_secret = \"[REDACTED:secret]\"",
        ),
        (
            "'secret' => 'abcd1234',",
            "'secret' => '[REDACTED:secret]',",
        ),
        (
            "api_key := \"k-123456\"",
            "api_key := \"[REDACTED:api-key]\"",
        ),
        (
            "requests.get(url, headers={\"X-API-Key\": \"abc123def\"})",
            "requests.get(url, headers={\"X-API-Key\": \"[REDACTED:api-key]\"})",
        ),
        (
            "https://example.com/cb?access_token=ya29.a0AfH6SMB&state=xyz",
            "https://example.com/cb?access_token=[REDACTED:token]&state=xyz",
        ),
        (
            "refresh_token: 1//0gLnR2kX",
            "refresh_token: [REDACTED:token]",
        ),
        ("credentials=ana:hunter2", "credentials=[REDACTED:secret]"),
        (
            "private_key = \"base64stuff==\"",
            "private_key = \"[REDACTED:private-key-value]\"",
        ),
        ("password = hunter2", "password = [REDACTED:password]"),
    ];
    for (input, expected) in cases {
        let out = redact(input);
        assert_eq!(out.text(), expected, "input: {input}");
        assert_eq!(out.total(), 1, "input: {input}");
    }
}

#[test]
fn a_token_in_an_assignment_is_named_by_its_own_kind() {
    check(
        &format!(r#"{{"token": "{GITHUB_CLASSIC}"}}"#),
        r#"{"token": "[REDACTED:github-token]"}"#,
        &[(SecretKind::GithubToken, 1)],
    );
    check(
        &format!("SLACK_TOKEN={SLACK_BOT}"),
        "SLACK_TOKEN=[REDACTED:slack-token]",
        &[(SecretKind::SlackToken, 1)],
    );
    check(
        &format!("token: Bearer {JWT}"),
        "token: Bearer [REDACTED:jwt]",
        &[(SecretKind::Jwt, 1)],
    );
}

#[test]
fn url_passwords() {
    check(
        "DATABASE_URL=postgres://app:s3cr3t-pass@db.internal:5432/app",
        "DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/app",
        &[(SecretKind::UrlPassword, 1)],
    );
    check(
        "redis://default:Zm9vYmFy@cache:6379/0 and amqp://guest:guest@rabbit",
        "redis://default:[REDACTED:url-password]@cache:6379/0 and amqp://guest:[REDACTED:url-password]@rabbit",
        &[(SecretKind::UrlPassword, 2)],
    );
    // Placeholders are not passwords.
    let templated = "postgres://app:${DB_PASSWORD}@db/app";
    check(templated, templated, &[]);
}

/// Ordinary code, logs, config and prose that mention credential words must come back unchanged.
#[test]
fn code_and_prose_are_left_alone() {
    let unchanged = [
        "let token = next_token();",
        "let password_hash = hash(&password);",
        "password_hash = bcrypt(password)",
        "max_tokens = 2000",
        "let token_count = tokens.len();",
        "fn login(user: &str, password: &str) -> Result<Session, Error> {",
        "    password: String,",
        "    token: Option<String>,",
        "    pub api_key: SecretString",
        "  password: string;",
        "def connect(password: str) -> None:",
        "token = self.token",
        "api_key = os.environ[\"API_KEY\"]",
        "let api_key = std::env::var(\"API_KEY\")?;",
        "password = getpass.getpass()",
        "API_KEY = os.getenv(\"API_KEY\")",
        "token = tokens[0]",
        "let secret = match vault.get(\"db\") {",
        "password = None",
        "token: null",
        "secret: true",
        "\"password\": {\"type\": \"string\", \"minLength\": 12}",
        "\"token\": \"string\"",
        "password: ${DB_PASSWORD}",
        "DB_PASSWORD=$DB_PASSWORD",
        "TOKEN=$(cat ~/.token)",
        "password = \"\"",
        "password: \"<your password>\"",
        "password=****",
        "PWD=/home/ana/projects/aeterna",
        "OLDPWD=/tmp",
        "kind: Secret",
        "secretName: db-credentials",
        "Reset your password: click the link we sent you.",
        "Invalid token: expected 3 segments, found 2",
        "The token: a short string the lexer emits.",
        "error[E0425]: cannot find value `token` in this scope",
        "if password == stored { return Ok(()) }",
        "tokens=5",
        "Bearer authentication is described in RFC 6750.",
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "https://github.com/aeterna-dev/aeterna/pull/42",
        "ssh://git@github.com/aeterna-dev/aeterna.git",
        "AKIA is the prefix of an AWS access key id.",
        "eyJ is how base64 JSON starts",
        "- [ ] write the migration (owner: ana, due: friday)",
        "let progress_token = context\n    .meta()\n    .progress_token();",
        "let secret = self\n    .derive_secret(label)?;",
        "let password = parts",
        "self.token = other",
        "AuthPlugin::MySqlClearPassword => \"mysql_clear_password\",",
        "Error::Token => \"invalid token\",",
        "Token::RParen => Some(Precedence::Call),",
        "//! # winnow::token::any",
        "{\"progressToken\": \"progress-1\", \"nextPageToken\": \"CAUQAA\"}",
        "permissions:\n  id-token: write\n  contents: read",
        "consistent!(click_1, r\"-----BEGIN PRIVATE KEY-----\");",
        "Keys start with `-----BEGIN PRIVATE KEY-----` (see below).\n\nAnd end with `-----END PRIVATE KEY-----`.",
        "ClientHandshakeTrafficSecret => \"CLIENT_HANDSHAKE_TRAFFIC_SECRET\",",
        "/// The value of an `api_key=` or `access_key=` assignment.",
        "SyntaxError: Unexpected token: \"<\" in JSON at position 0",
        "let weak = \"-----BEGIN PRIVATE KEY-----\\n-----END PRIVATE KEY-----\";",
        "",
    ];
    for input in unchanged {
        let out = redact(input);
        assert_eq!(out.text(), input, "false positive: {input}");
        assert!(out.is_clean(), "false positive: {input}");
    }
}

#[test]
fn clean_text_is_borrowed_not_copied() {
    let text = "   Compiling aeterna-host v0.1.0\n    Finished `dev` profile in 3.2s\n";
    assert!(matches!(redact(text).into_text(), Cow::Borrowed(_)));
}

#[test]
fn redaction_is_idempotent() {
    let input = format!(
        "GITHUB_TOKEN={GITHUB_CLASSIC}\npassword: hunter22\n{}\nurl=postgres://a:b1234@h/d\n\
         Authorization: Bearer 4f8a1c2e9b7d6a5f3e2d1c0b9a8f7e6d\n{{\"api_key\": \"k-123456\"}}",
        pem("PRIVATE KEY")
    );
    let once = redact(&input);
    assert_eq!(once.total(), 6);
    let twice = redact(once.text());
    assert!(twice.is_clean(), "second pass found: {:?}", twice.text());
    assert_eq!(twice.text(), once.text());
}

#[test]
fn counts_add_up_across_kinds() {
    let input = format!("{AWS_KEY_ID} {AWS_KEY_ID} {GITHUB_CLASSIC} {JWT}");
    let out = redact(&input);
    assert_eq!(out.count(SecretKind::AwsAccessKeyId), 2);
    assert_eq!(out.count(SecretKind::GithubToken), 1);
    assert_eq!(out.count(SecretKind::Jwt), 1);
    assert_eq!(out.total(), 4);
    assert_eq!(out.findings().count(), 3);
}

#[test]
fn emails_are_redacted_only_when_asked() {
    let input = "Author: Ana Lima <ana.lima+dev@example.co.uk>\nremote: git@github.com:o/r.git";
    assert!(redact(input).is_clean());
    let out = Redactor::shared(Options { emails: true }).redact(input);
    assert_eq!(
        out.text(),
        "Author: Ana Lima <[REDACTED:email]>\nremote: git@github.com:o/r.git"
    );
    assert_eq!(out.count(SecretKind::Email), 1);
}

#[test]
fn multibyte_text_around_secrets_is_kept_intact() {
    let input = format!("日本語 — password: pässwört123 ✓ {AWS_KEY_ID}é café\npassword=naïve-ß");
    let out = redact(&input);
    assert_eq!(
        out.text(),
        "日本語 — password: pässwört123 ✓ [REDACTED:aws-access-key-id]é café\npassword=[REDACTED:password]"
    );
}

/// Random mixtures of secrets, code, and multi-byte text: never a panic, never a secret left.
#[test]
fn random_mixtures_never_panic_or_leak() {
    let secrets = [GITHUB_CLASSIC, AWS_KEY_ID, SLACK_BOT, JWT, SLACK_HOOK];
    let fillers = [
        " ",
        "\n",
        "é",
        "日本",
        "=",
        ":",
        "\"",
        "'",
        "password",
        "token",
        "let x = y();",
        "\\",
        "@",
        "://",
        "Bearer ",
        "-----BEGIN PRIVATE KEY-----",
        "_",
        ".",
        "ß",
        "\t",
        "{",
        "}",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for _ in 0..2000 {
        let mut input = String::new();
        let mut planted = Vec::new();
        for _ in 0..next(12) + 1 {
            if next(4) == 0 {
                let secret = secrets[next(secrets.len())];
                // Separate tokens so they are not glued into a longer word.
                input.push(' ');
                input.push_str(secret);
                input.push(' ');
                planted.push(secret);
            } else {
                input.push_str(fillers[next(fillers.len())]);
            }
        }
        let out = redact(&input);
        for secret in planted {
            assert!(
                !out.text().contains(secret),
                "leaked {secret} from {input:?}: {:?}",
                out.text()
            );
        }
    }
}

/// The compile-free pre-check never calls a text clean that the detectors would change.
#[test]
fn the_pre_check_never_misses_what_the_detectors_find() {
    let fragments = [
        " ",
        "\n",
        "=",
        ":",
        "\"",
        "@",
        "://",
        "ana",
        "example.com",
        "host",
        "-----BEGIN ",
        "PRIVATE KEY-----",
        "AKIAIOSFODNN7EXAMPLE",
        GITHUB_CLASSIC,
        SLACK_BOT,
        SLACK_HOOK,
        JWT,
        "Bearer ",
        "4f8a1c2e9b7d6a5f3e2d1c0b9a8f7e6d",
        "PASSWORD",
        "pwd",
        "Secret",
        "api_key",
        "token",
        "credentials",
        "hunter22",
        "x",
        "postgres",
        "é",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for emails in [false, true] {
        let options = Options { emails };
        let redactor = Redactor::new(options);
        for _ in 0..5000 {
            let text: String = (0..next(10) + 1)
                .map(|_| fragments[next(fragments.len())])
                .collect();
            if !aeterna_redact::may_contain_secrets(&text, options) {
                assert!(
                    redactor.redact(&text).is_clean(),
                    "the pre-check missed {text:?}"
                );
            }
            assert_eq!(
                aeterna_redact::redact_with(&text, options),
                redactor.redact(&text),
                "{text:?}"
            );
        }
    }
}

#[test]
fn configured_urls_lose_their_password() {
    use aeterna_redact::redact_url_password;
    assert_eq!(
        redact_url_password("redis://:hunter2@cache:6379/0"),
        "redis://:[REDACTED:url-password]@cache:6379/0"
    );
    assert_eq!(
        redact_url_password("postgres://app:p@ss@db/app"),
        "postgres://app:[REDACTED:url-password]@db/app"
    );
    assert_eq!(
        redact_url_password("redis://127.0.0.1:6379"),
        "redis://127.0.0.1:6379"
    );
}
