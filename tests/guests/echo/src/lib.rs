//! The smallest possible extension: every callback returns its input unchanged, with no host
//! calls. Benchmarks use it to measure the host's own cost per callback.

wit_bindgen::generate!({ path: "../../../wit", world: "extension" });

use aeterna::extension::types::{Hook, ToolConfig};

struct Echo;

impl Guest for Echo {
    fn register() -> Registration {
        Registration {
            id: "echo".into(),
            version: "1.0.0".into(),
            priority: 0,
            hooks: vec![
                Hook::InputMessages,
                Hook::PlainText,
                Hook::Tag,
                Hook::LlmOutput,
            ],
            tags: vec!["echo".into()],
            prompt_additions: vec![],
            tool_config: ToolConfig {
                add: vec![],
                remove: vec![],
                override_: vec![],
            },
        }
    }

    fn on_input_messages(messages: Vec<Message>) -> Result<Vec<Message>, ExtError> {
        Ok(messages)
    }

    fn on_plain_text(text: String) -> Result<String, ExtError> {
        Ok(text)
    }

    fn on_tag(
        _tag: String,
        _attributes: Vec<Attribute>,
        content: String,
    ) -> Result<String, ExtError> {
        Ok(content)
    }

    fn on_llm_output(text: String) -> Result<String, ExtError> {
        Ok(text)
    }
}

export!(Echo);
