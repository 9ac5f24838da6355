//! `secret-redactor`: keeps secrets away from the LLM.
//!
//! It redacts the messages about to be sent to the LLM (`on-input-messages`) and what the LLM
//! writes back (`on-llm-output`): cloud keys, GitHub and Slack tokens, JWTs, private keys,
//! `password=`-style assignments and, with `redact_emails = true`, e-mail addresses. Each secret
//! becomes `[REDACTED:<kind>]`. The detection is `aeterna-redact`, the same code the server uses
//! before it stores anything.
//!
//! State: `counts` holds what was redacted in this session, as JSON
//! `{"total": 3, "by_kind": {"github-token": 2, "password": 1}, "by_hook": {"input-messages": 3}}`.
//! It is written only when something was redacted.
//!
//! Config (`[config]` in `secret_redactor.toml`):
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `redact_emails` | `false` | also redact e-mail addresses |

use std::collections::BTreeMap;

use aeterna_extension_sdk::{
    ExtError, Extension, Hook, Message, Registration, config, export_extension, info, state,
};
use aeterna_redact::{Options, Redaction, redact_with};
use serde::{Deserialize, Serialize};

/// The state key holding [`Counts`].
pub const COUNTS_KEY: &str = "counts";

/// What was redacted in this session.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Secrets redacted in all.
    pub total: u64,
    /// Per kind, such as `github-token`.
    pub by_kind: BTreeMap<String, u64>,
    /// Per hook: `input-messages` or `llm-output`.
    pub by_hook: BTreeMap<String, u64>,
}

pub struct SecretRedactor;

impl Extension for SecretRedactor {
    fn register() -> Registration {
        Registration::new("secret-redactor", env!("CARGO_PKG_VERSION"))
            // Run before every other extension, so none of them sees a secret either.
            .with_priority(1000)
            .with_hook(Hook::InputMessages)
            .with_hook(Hook::LlmOutput)
    }

    fn on_input_messages(mut messages: Vec<Message>) -> Result<Vec<Message>, ExtError> {
        let options = options()?;
        let mut found = Found::default();
        for message in &mut messages {
            let redaction = redact_with(&message.content, options);
            if !redaction.is_clean() {
                found.add(&redaction);
                message.content = redaction.into_text().into_owned();
            }
        }
        found.record(Hook::InputMessages)?;
        Ok(messages)
    }

    fn on_llm_output(text: String) -> Result<String, ExtError> {
        let redaction = redact_with(&text, options()?);
        if redaction.is_clean() {
            return Ok(text);
        }
        let mut found = Found::default();
        found.add(&redaction);
        found.record(Hook::LlmOutput)?;
        Ok(redaction.into_text().into_owned())
    }
}

export_extension!(SecretRedactor);

/// The redaction options from config. `redact_with` builds the detectors only for text that may
/// hold a secret: each callback runs in a fresh instance, and building them is the main cost.
fn options() -> Result<Options, ExtError> {
    let emails = config::parse_or("redact_emails", false)?;
    Ok(Options { emails })
}

/// Findings of one callback, by kind.
#[derive(Default)]
struct Found {
    by_kind: BTreeMap<&'static str, u64>,
}

impl Found {
    fn add(&mut self, redaction: &Redaction<'_>) {
        for finding in redaction.findings() {
            *self.by_kind.entry(finding.kind.as_str()).or_default() += u64::from(finding.count);
        }
    }

    /// Adds the findings to the session's counts and logs a summary (never the secrets).
    fn record(self, hook: Hook) -> Result<(), ExtError> {
        if self.by_kind.is_empty() {
            return Ok(());
        }
        let total: u64 = self.by_kind.values().sum();
        state::update_json(COUNTS_KEY, |counts: &mut Counts| {
            counts.total += total;
            *counts.by_hook.entry(hook.as_str().to_owned()).or_default() += total;
            for (kind, n) in &self.by_kind {
                *counts.by_kind.entry((*kind).to_owned()).or_default() += n;
            }
        })?;
        let summary: Vec<String> = self
            .by_kind
            .iter()
            .map(|(kind, n)| format!("{kind}: {n}"))
            .collect();
        info!(
            "redacted {total} secret(s) in {}: {}",
            hook.as_str(),
            summary.join(", ")
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use aeterna_extension_sdk::testing::TestHost;

    use super::*;

    const GITHUB_TOKEN: &str = "ghp_R3aLi5t1cButFak3T0kenF0rT3sts0000001";

    #[test]
    fn redacts_every_message_and_counts_by_kind() {
        let host = TestHost::new();
        let messages = vec![
            Message::system("You are a coding agent."),
            Message::user(format!("push with GITHUB_TOKEN={GITHUB_TOKEN} please")),
            Message::tool(
                "DATABASE_URL=postgres://app:s3cr3t-pass@db:5432/app\npassword: hunter22",
            ),
        ];
        let out = host.input_messages::<SecretRedactor>(messages).unwrap();
        assert_eq!(out[0].content, "You are a coding agent.");
        assert_eq!(
            out[1].content,
            "push with GITHUB_TOKEN=[REDACTED:github-token] please"
        );
        assert_eq!(
            out[2].content,
            "DATABASE_URL=postgres://app:[REDACTED:url-password]@db:5432/app\npassword: [REDACTED:password]"
        );
        assert_eq!(out[1].role, "user");

        let counts: Counts = host.state_json(COUNTS_KEY).unwrap();
        assert_eq!(counts.total, 3);
        assert_eq!(counts.by_kind["github-token"], 1);
        assert_eq!(counts.by_kind["url-password"], 1);
        assert_eq!(counts.by_kind["password"], 1);
        assert_eq!(counts.by_hook["input-messages"], 3);
        let logs = host.logs();
        assert_eq!(logs.len(), 1);
        assert!(
            !logs[0].message.contains("hunter22") && logs[0].message.contains("github-token: 1"),
            "the log summarises without leaking: {}",
            logs[0].message
        );
    }

    #[test]
    fn redacts_llm_output_and_accumulates_counts() {
        let host = TestHost::new();
        let out = host
            .llm_output::<SecretRedactor>(format!("Use `{GITHUB_TOKEN}` as the token."))
            .unwrap();
        assert_eq!(out, "Use `[REDACTED:github-token]` as the token.");
        host.llm_output::<SecretRedactor>("AKIAIOSFODNN7EXAMPLE")
            .unwrap();
        let counts: Counts = host.state_json(COUNTS_KEY).unwrap();
        assert_eq!(counts.total, 2);
        assert_eq!(counts.by_hook["llm-output"], 2);
        assert_eq!(counts.by_kind["aws-access-key-id"], 1);
    }

    #[test]
    fn clean_text_passes_unchanged_and_writes_no_state() {
        let host = TestHost::new();
        let text = "let token = next_token();\nlet password_hash = hash(&password);";
        assert_eq!(host.llm_output::<SecretRedactor>(text).unwrap(), text);
        let messages = vec![Message::user("fix the build")];
        assert_eq!(
            host.input_messages::<SecretRedactor>(messages.clone())
                .unwrap(),
            messages
        );
        assert!(host.state_keys().is_empty());
        assert!(host.logs().is_empty());
    }

    #[test]
    fn emails_are_redacted_only_when_configured() {
        let text = "ping ana.lima@example.com";
        assert_eq!(
            TestHost::new().llm_output::<SecretRedactor>(text).unwrap(),
            text
        );
        let host = TestHost::new().with_config("redact_emails", "true");
        assert_eq!(
            host.llm_output::<SecretRedactor>(text).unwrap(),
            "ping [REDACTED:email]"
        );
    }

    #[test]
    fn a_malformed_config_is_an_error_not_a_silent_default() {
        let host = TestHost::new().with_config("redact_emails", "sometimes");
        let error = host.llm_output::<SecretRedactor>("anything").unwrap_err();
        assert_eq!(error.code, "invalid-config");
        assert!(error.message.contains("redact_emails"), "{}", error.message);
    }

    #[test]
    fn registers_first_in_the_chain_for_both_hooks() {
        let registration = TestHost::new().register::<SecretRedactor>();
        assert_eq!(registration.id, "secret-redactor");
        assert_eq!(registration.priority, 1000);
        assert!(registration.handles(Hook::InputMessages));
        assert!(registration.handles(Hook::LlmOutput));
        assert!(!registration.handles(Hook::PlainText));
    }
}
