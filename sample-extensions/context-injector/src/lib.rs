//! `context-injector`: tells the LLM about the project, from the manifest's config.
//!
//! * At registration it declares `prompt_additions` (config) as prompt additions.
//! * On `on-input-messages` it adds one system message built from `project`, `conventions` and
//!   `text` (config), right after the leading system messages (so the agent's own system prompt
//!   stays first). It is idempotent: if the message is already there it is left alone; if an
//!   older version is there (the config changed) it is replaced in place; duplicates are
//!   removed.
//!
//! With none of `project`, `conventions` and `text` configured, messages pass through unchanged.
//!
//! | config | type | example |
//! |---|---|---|
//! | `project` | string | `"aeterna"` |
//! | `conventions` | string or list of strings | `["Rust 2024", "errors carry context"]` |
//! | `text` | string | free text appended after the conventions |
//! | `prompt_additions` | string or list of strings | added to the system prompt at registration |

use aeterna_extension_sdk::{
    ExtError, Extension, Hook, Message, Registration, config, export_extension, warn,
};

/// The first line of the injected message; it identifies the message on later calls.
pub const HEADER: &str = "## Project context (from context-injector)";

pub struct ContextInjector;

impl Extension for ContextInjector {
    fn register() -> Registration {
        let mut registration = Registration::new("context-injector", env!("CARGO_PKG_VERSION"))
            .with_priority(100)
            .with_hook(Hook::InputMessages);
        // register() cannot fail: a malformed list is logged here, and every call of the hook
        // fails with `invalid-config` until the manifest is fixed.
        match config::list("prompt_additions") {
            Ok(additions) => {
                for addition in additions.into_iter().filter(|a| !a.trim().is_empty()) {
                    registration = registration.with_prompt_addition(addition);
                }
            }
            Err(error) => warn!("{error}; no prompt additions declared"),
        }
        registration
    }

    fn on_input_messages(mut messages: Vec<Message>) -> Result<Vec<Message>, ExtError> {
        config::list("prompt_additions")?;
        let Some(content) = context_message()? else {
            return Ok(messages);
        };
        let injected = |m: &Message| m.is_system() && m.content.starts_with(HEADER);
        match messages.iter().position(injected) {
            Some(first) => {
                messages[first].content = content;
                let mut index = 0;
                messages.retain(|m| {
                    index += 1;
                    index - 1 == first || !injected(m)
                });
            }
            None => {
                let after_system = messages.iter().take_while(|m| m.is_system()).count();
                messages.insert(after_system, Message::system(content));
            }
        }
        Ok(messages)
    }
}

export_extension!(ContextInjector);

/// The system message for the configured context, or `None` if nothing is configured.
fn context_message() -> Result<Option<String>, ExtError> {
    let project = config::get("project").filter(|p| !p.trim().is_empty());
    let conventions: Vec<String> = config::list("conventions")?
        .into_iter()
        .filter(|c| !c.trim().is_empty())
        .collect();
    let text = config::get("text").filter(|t| !t.trim().is_empty());
    if project.is_none() && conventions.is_empty() && text.is_none() {
        return Ok(None);
    }
    let mut out = String::from(HEADER);
    if let Some(project) = project {
        out.push_str("\n\nProject: ");
        out.push_str(project.trim());
    }
    if !conventions.is_empty() {
        out.push_str("\n\nConventions:");
        for convention in &conventions {
            out.push_str("\n- ");
            out.push_str(convention.trim());
        }
    }
    if let Some(text) = text {
        out.push_str("\n\n");
        out.push_str(text.trim());
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use aeterna_extension_sdk::testing::TestHost;

    use super::*;

    fn configured() -> TestHost {
        TestHost::new()
            .with_config("project", "aeterna")
            .with_config("conventions", r#"["Rust 2024", "errors carry context"]"#)
            .with_config("text", "The WIT contract in wit/ is the source of truth.")
    }

    const EXPECTED: &str = "## Project context (from context-injector)\n\n\
        Project: aeterna\n\n\
        Conventions:\n- Rust 2024\n- errors carry context\n\n\
        The WIT contract in wit/ is the source of truth.";

    #[test]
    fn inserts_the_context_after_the_leading_system_messages() {
        let host = configured();
        let messages = vec![
            Message::system("You are a coding agent."),
            Message::user("add a test"),
        ];
        let out = host.input_messages::<ContextInjector>(messages).unwrap();
        assert_eq!(
            out,
            vec![
                Message::system("You are a coding agent."),
                Message::system(EXPECTED),
                Message::user("add a test"),
            ]
        );
    }

    #[test]
    fn inserts_first_when_there_is_no_system_message() {
        let out = configured()
            .input_messages::<ContextInjector>(vec![Message::user("hi")])
            .unwrap();
        assert_eq!(out, vec![Message::system(EXPECTED), Message::user("hi")]);
    }

    #[test]
    fn is_idempotent() {
        let host = configured();
        let once = host
            .input_messages::<ContextInjector>(vec![Message::user("hi")])
            .unwrap();
        let twice = host
            .input_messages::<ContextInjector>(once.clone())
            .unwrap();
        assert_eq!(twice, once);
    }

    #[test]
    fn replaces_a_stale_context_and_drops_duplicates() {
        let stale = format!("{HEADER}\n\nProject: old-name");
        let messages = vec![
            Message::system("You are a coding agent."),
            Message::user("hi"),
            Message::system(stale.clone()),
            Message::assistant("hello"),
            Message::system(stale),
        ];
        let out = configured()
            .input_messages::<ContextInjector>(messages)
            .unwrap();
        assert_eq!(
            out,
            vec![
                Message::system("You are a coding agent."),
                Message::user("hi"),
                Message::system(EXPECTED),
                Message::assistant("hello"),
            ]
        );
    }

    #[test]
    fn a_single_string_convention_and_partial_config_work() {
        let host = TestHost::new().with_config("conventions", "keep functions small");
        let out = host
            .input_messages::<ContextInjector>(vec![Message::user("hi")])
            .unwrap();
        assert_eq!(
            out[0].content,
            format!("{HEADER}\n\nConventions:\n- keep functions small")
        );
    }

    #[test]
    fn passes_through_when_nothing_is_configured() {
        let messages = vec![Message::system("s"), Message::user("u")];
        let out = TestHost::new()
            .input_messages::<ContextInjector>(messages.clone())
            .unwrap();
        assert_eq!(out, messages);
    }

    #[test]
    fn a_malformed_list_is_reported_with_its_key() {
        let host = TestHost::new().with_config("conventions", "[1, 2]");
        let error = host
            .input_messages::<ContextInjector>(vec![Message::user("hi")])
            .unwrap_err();
        assert_eq!(error.code, "invalid-config");
        assert!(error.message.contains("conventions"), "{}", error.message);
    }

    #[test]
    fn declares_prompt_additions_from_config() {
        let registration = TestHost::new()
            .with_config(
                "prompt_additions",
                r#"["Answer in English.", "Prefer small diffs."]"#,
            )
            .register::<ContextInjector>();
        assert_eq!(
            registration.prompt_additions,
            ["Answer in English.", "Prefer small diffs."]
        );
        assert_eq!(registration.hooks, [Hook::InputMessages]);
        let single = TestHost::new()
            .with_config("prompt_additions", "Prefer small diffs.")
            .register::<ContextInjector>();
        assert_eq!(single.prompt_additions, ["Prefer small diffs."]);
        assert!(
            TestHost::new()
                .register::<ContextInjector>()
                .prompt_additions
                .is_empty()
        );
    }

    #[test]
    fn malformed_prompt_additions_are_logged_at_registration_and_fail_the_hook() {
        let host = TestHost::new().with_config("prompt_additions", r#"{"not": "a list"}"#);
        let registration = host.register::<ContextInjector>();
        assert!(registration.prompt_additions.is_empty());
        assert!(host.logs()[0].message.contains("prompt_additions"));
        let error = host
            .input_messages::<ContextInjector>(vec![Message::user("hi")])
            .unwrap_err();
        assert_eq!(error.code, "invalid-config");
    }
}
