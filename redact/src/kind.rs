//! The kinds of secret the redactor recognises.

use std::fmt;

/// What a redacted span was. [`SecretKind::as_str`] is the name used in the replacement,
/// `[REDACTED:<name>]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SecretKind {
    /// `-----BEGIN … PRIVATE KEY-----` blocks (PEM, OpenSSH, PGP), complete or truncated.
    PrivateKey,
    /// AWS access key ids: `AKIA…`, `ASIA…` and the other documented prefixes.
    AwsAccessKeyId,
    /// The value of `aws_secret_access_key`-style assignments.
    AwsSecretAccessKey,
    /// GitHub tokens: `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`.
    GithubToken,
    /// Slack tokens: `xoxb-`, `xoxp-` (any `xox?-`) and `xapp-`.
    SlackToken,
    /// Slack incoming-webhook URLs (`https://hooks.slack.com/services/…`).
    SlackWebhook,
    /// JSON Web Tokens (`eyJ….eyJ….…`).
    Jwt,
    /// The token after `Bearer ` (as in an `Authorization` header).
    BearerToken,
    /// The password in a URL's user-info: `postgres://app:<password>@db/app`.
    UrlPassword,
    /// The value of a `password=`-style assignment (`password`, `passwd`, `pwd`, `passphrase`).
    Password,
    /// The value of a `secret=` or `credentials=` assignment.
    Secret,
    /// The value of an `api_key=` or `access_key=` assignment.
    ApiKey,
    /// The value of a `private_key=` assignment that is not a PEM block.
    PrivateKeyValue,
    /// The value of a `token=` assignment (`access_token`, `auth_token`, …).
    Token,
    /// E-mail addresses (only with [`Options::emails`](crate::Options::emails)).
    Email,
}

impl SecretKind {
    /// Every kind, in report order.
    pub const ALL: [SecretKind; 15] = [
        SecretKind::PrivateKey,
        SecretKind::AwsAccessKeyId,
        SecretKind::AwsSecretAccessKey,
        SecretKind::GithubToken,
        SecretKind::SlackToken,
        SecretKind::SlackWebhook,
        SecretKind::Jwt,
        SecretKind::BearerToken,
        SecretKind::UrlPassword,
        SecretKind::Password,
        SecretKind::Secret,
        SecretKind::ApiKey,
        SecretKind::PrivateKeyValue,
        SecretKind::Token,
        SecretKind::Email,
    ];

    /// The kind's name, as in `[REDACTED:github-token]`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SecretKind::PrivateKey => "private-key",
            SecretKind::AwsAccessKeyId => "aws-access-key-id",
            SecretKind::AwsSecretAccessKey => "aws-secret-access-key",
            SecretKind::GithubToken => "github-token",
            SecretKind::SlackToken => "slack-token",
            SecretKind::SlackWebhook => "slack-webhook",
            SecretKind::Jwt => "jwt",
            SecretKind::BearerToken => "bearer-token",
            SecretKind::UrlPassword => "url-password",
            SecretKind::Password => "password",
            SecretKind::Secret => "secret",
            SecretKind::ApiKey => "api-key",
            SecretKind::PrivateKeyValue => "private-key-value",
            SecretKind::Token => "token",
            SecretKind::Email => "email",
        }
    }

    /// The kind named `name` (the inverse of [`SecretKind::as_str`]).
    pub fn from_name(name: &str) -> Option<SecretKind> {
        SecretKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }

    pub(crate) const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for SecretKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_index_order_and_names_round_trip() {
        for (i, kind) in SecretKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), i);
            assert_eq!(SecretKind::from_name(kind.as_str()), Some(kind));
        }
        assert_eq!(SecretKind::from_name("nope"), None);
    }
}
