//! A well-behaved extension for ordering, chaining, state and validation tests.
//!
//! Behaviour comes from the manifest's `[config]`:
//!
//! * `mark` (default `probe`): what the probe appends, so tests can read the execution order.
//! * `reg-id`, `reg-priority`, `reg-hooks` (comma-separated), `reg-tags` (comma-separated),
//!   `reg-schema` (a tool input schema), `reg-prompt`: shape `register()`, to exercise the host's
//!   validation.
//!
//! Every callback first increments the state counter `calls` (so tests can check commits and
//! discards), then looks at its input: text containing `FAIL` gets an `ext-error`, text containing
//! `TRAP` a panic. Otherwise the text callbacks return `input[mark:calls]`.

wit_bindgen::generate!({ path: "../../../wit", world: "extension" });

use aeterna::extension::types::{Hook, ToolConfig, ToolDefinition};
use aeterna::extension::{host, state};

struct Probe;

/// The manifest's `[config]`, fetched from the host once per callback.
fn config(key: &str) -> Option<String> {
    thread_local! {
        static CONFIG: Vec<(String, String)> = host::config();
    }
    CONFIG.with(|config| {
        config
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    })
}

fn mark() -> String {
    config("mark").unwrap_or_else(|| "probe".into())
}

fn list(key: &str) -> Option<Vec<String>> {
    config(key).map(|v| {
        v.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    })
}

/// Increments and returns the `calls` counter.
fn count_call() -> u64 {
    let calls = state::get("calls")
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.parse::<u64>().ok())
        .unwrap_or(0)
        + 1;
    state::set("calls", calls.to_string().as_bytes()).expect("a tiny counter fits the quota");
    calls
}

fn check(input: &str) -> Result<(), ExtError> {
    if input.contains("TRAP") {
        panic!("the probe was asked to trap");
    }
    if input.contains("FAIL") {
        return Err(ExtError {
            code: "probe-failure".into(),
            message: "the probe was asked to fail".into(),
        });
    }
    Ok(())
}

fn text_callback(text: String) -> Result<String, ExtError> {
    let calls = count_call();
    check(&text)?;
    Ok(format!("{text}[{}:{calls}]", mark()))
}

impl Guest for Probe {
    fn register() -> Registration {
        let hooks = match list("reg-hooks") {
            Some(names) => names
                .iter()
                .filter_map(|name| match name.as_str() {
                    "input-messages" => Some(Hook::InputMessages),
                    "plain-text" => Some(Hook::PlainText),
                    "tag" => Some(Hook::Tag),
                    "llm-output" => Some(Hook::LlmOutput),
                    _ => None,
                })
                .collect(),
            None => vec![
                Hook::InputMessages,
                Hook::PlainText,
                Hook::Tag,
                Hook::LlmOutput,
            ],
        };
        let tags = list("reg-tags").unwrap_or_else(|| vec!["probe".into()]);
        let add = config("reg-schema")
            .map(|schema| {
                vec![ToolDefinition {
                    name: "probe-tool".into(),
                    description: "added by the probe".into(),
                    input_schema: schema,
                }]
            })
            .unwrap_or_default();
        Registration {
            id: config("reg-id").unwrap_or_else(|| "probe".into()),
            version: "1.2.3".into(),
            priority: config("reg-priority")
                .and_then(|p| p.parse().ok())
                .unwrap_or(0),
            hooks,
            tags,
            prompt_additions: config("reg-prompt").into_iter().collect(),
            tool_config: ToolConfig {
                add,
                remove: vec!["removed-tool".into()],
                override_: vec![],
            },
        }
    }

    fn on_input_messages(mut messages: Vec<Message>) -> Result<Vec<Message>, ExtError> {
        let calls = count_call();
        for message in &messages {
            check(&message.content)?;
        }
        let session = host::session();
        let tools: Vec<String> = host::tools().into_iter().map(|tool| tool.name).collect();
        messages.push(Message {
            role: "system".into(),
            content: format!(
                "{}:{calls} tenant={} session={} user={} project={} tools={}",
                mark(),
                session.tenant_id,
                session.session_id,
                session.user_id.unwrap_or_default(),
                session.project_id.unwrap_or_default(),
                tools.join(","),
            ),
        });
        Ok(messages)
    }

    fn on_plain_text(text: String) -> Result<String, ExtError> {
        text_callback(text)
    }

    fn on_tag(
        tag: String,
        attributes: Vec<Attribute>,
        content: String,
    ) -> Result<String, ExtError> {
        let calls = count_call();
        check(&content)?;
        let attributes: String = attributes
            .iter()
            .map(|a| format!(" {}={}", a.name, a.value))
            .collect();
        Ok(format!("({}:{calls} {tag}{attributes}|{content})", mark()))
    }

    fn on_llm_output(text: String) -> Result<String, ExtError> {
        text_callback(text)
    }
}

export!(Probe);
