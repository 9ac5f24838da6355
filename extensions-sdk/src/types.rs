//! Friendly constructors and helpers on the contract's types.
//!
//! The data types themselves are generated from the WIT (one source of truth) and re-exported at
//! the crate root; this module adds what makes them pleasant to use.

use crate::{Attribute, ExtError, Hook, Message, Registration, ToolConfig, ToolDefinition};

impl Registration {
    /// A registration with an id and a version, priority 0, and no hooks yet.
    ///
    /// The id must match `[a-z0-9][a-z0-9._-]*` and be at most 64 bytes; the host refuses the
    /// component otherwise.
    pub fn new(id: impl Into<String>, version: impl Into<String>) -> Self {
        Registration {
            id: id.into(),
            version: version.into(),
            priority: 0,
            hooks: Vec::new(),
            tags: Vec::new(),
            prompt_additions: Vec::new(),
            tool_config: ToolConfig {
                add: Vec::new(),
                remove: Vec::new(),
                override_: Vec::new(),
            },
        }
    }

    /// Sets the priority: higher runs first (the manifest may override it).
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Declares a hook this extension handles.
    pub fn with_hook(mut self, hook: Hook) -> Self {
        if !self.hooks.contains(&hook) {
            self.hooks.push(hook);
        }
        self
    }

    /// Declares a tag name handed to [`Extension::on_tag`](crate::Extension::on_tag), such as
    /// `todo` for `<todo>…</todo>`. Also declares [`Hook::Tag`].
    pub fn with_tag(mut self, tag: impl Into<String>) -> Self {
        let tag = tag.into();
        if !self.tags.contains(&tag) {
            self.tags.push(tag);
        }
        self.with_hook(Hook::Tag)
    }

    /// Adds text to the agent's system prompt.
    pub fn with_prompt_addition(mut self, text: impl Into<String>) -> Self {
        self.prompt_additions.push(text.into());
        self
    }

    /// Adds a tool to the agent's tool list.
    pub fn with_tool(mut self, tool: ToolDefinition) -> Self {
        self.tool_config.add.push(tool);
        self
    }

    /// Removes a tool, by name, from the agent's tool list.
    pub fn without_tool(mut self, name: impl Into<String>) -> Self {
        self.tool_config.remove.push(name.into());
        self
    }

    /// Replaces the description and schema of an existing tool, matched by name.
    pub fn with_tool_override(mut self, tool: ToolDefinition) -> Self {
        self.tool_config.override_.push(tool);
        self
    }

    /// Whether this registration declares `hook`.
    pub fn handles(&self, hook: Hook) -> bool {
        self.hooks.contains(&hook)
    }
}

impl Hook {
    /// The hook's name in the WIT contract, such as `plain-text`.
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::InputMessages => "input-messages",
            Hook::PlainText => "plain-text",
            Hook::Tag => "tag",
            Hook::LlmOutput => "llm-output",
        }
    }
}

impl ToolDefinition {
    /// A tool definition; `input_schema` is a JSON Schema document as JSON text.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: impl Into<String>,
    ) -> Self {
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            input_schema: input_schema.into(),
        }
    }
}

impl Message {
    /// A message with any role.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Message {
            role: role.into(),
            content: content.into(),
        }
    }

    /// A `system` message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new("system", content)
    }

    /// A `user` message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new("user", content)
    }

    /// An `assistant` message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new("assistant", content)
    }

    /// A `tool` message (a tool's result).
    pub fn tool(content: impl Into<String>) -> Self {
        Self::new("tool", content)
    }

    /// Whether this is a `system` message.
    pub fn is_system(&self) -> bool {
        self.role == "system"
    }
}

impl ExtError {
    /// An error with a machine-readable `code` and a message for the operator's log.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        ExtError {
            code: code.into(),
            message: message.into(),
        }
    }

    /// `invalid-input`: the callback cannot handle what it was given.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new("invalid-input", message)
    }

    /// `unavailable`: something the callback needs is missing right now.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new("unavailable", message)
    }
}

/// A `<name attr="value" …>content</name>` block handed to
/// [`Extension::on_tag`](crate::Extension::on_tag).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    /// The tag name, such as `todo`.
    pub name: String,
    /// The attributes, in source order.
    pub attributes: Vec<Attribute>,
    /// The text between the opening and the closing tag.
    pub content: String,
}

impl Tag {
    /// A tag without attributes.
    pub fn new(name: impl Into<String>, content: impl Into<String>) -> Self {
        Tag {
            name: name.into(),
            attributes: Vec::new(),
            content: content.into(),
        }
    }

    /// Adds an attribute (builder style, for tests).
    pub fn with_attribute(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.attributes.push(Attribute {
            name: name.into(),
            value: value.into(),
        });
        self
    }

    /// The value of the first attribute called `name`, if any.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.value.as_str())
    }

    /// The block as it would appear in source: `<name a="v">content</name>`.
    ///
    /// A value containing `"` is written between single quotes (and a value containing both kinds
    /// of quote has its `"` written as `&quot;`).
    pub fn to_source(&self) -> String {
        let mut out = String::with_capacity(self.name.len() * 2 + self.content.len() + 5);
        out.push('<');
        out.push_str(&self.name);
        for attribute in &self.attributes {
            out.push(' ');
            out.push_str(&attribute.name);
            out.push('=');
            let value = &attribute.value;
            match (value.contains('"'), value.contains('\'')) {
                (false, _) => {
                    out.push('"');
                    out.push_str(value);
                    out.push('"');
                }
                (true, false) => {
                    out.push('\'');
                    out.push_str(value);
                    out.push('\'');
                }
                (true, true) => {
                    out.push('"');
                    out.push_str(&value.replace('"', "&quot;"));
                    out.push('"');
                }
            }
        }
        out.push('>');
        out.push_str(&self.content);
        out.push_str("</");
        out.push_str(&self.name);
        out.push('>');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_builder_declares_tag_hook_once() {
        let registration = Registration::new("todo-tags", "1.0.0")
            .with_priority(5)
            .with_tag("todo")
            .with_tag("todo")
            .with_tag("fixme")
            .with_hook(Hook::Tag);
        assert_eq!(registration.priority, 5);
        assert_eq!(registration.hooks, vec![Hook::Tag]);
        assert_eq!(registration.tags, vec!["todo", "fixme"]);
        assert!(registration.handles(Hook::Tag));
        assert!(!registration.handles(Hook::PlainText));
    }

    #[test]
    fn registration_builder_collects_tool_changes() {
        let tool = ToolDefinition::new("grep", "search files", r#"{"type":"object"}"#);
        let registration = Registration::new("tools", "1")
            .with_tool(tool.clone())
            .without_tool("rm")
            .with_tool_override(tool.clone())
            .with_prompt_addition("be brief");
        assert_eq!(registration.tool_config.add, vec![tool.clone()]);
        assert_eq!(registration.tool_config.remove, vec!["rm"]);
        assert_eq!(registration.tool_config.override_, vec![tool]);
        assert_eq!(registration.prompt_additions, vec!["be brief"]);
    }

    #[test]
    fn tag_source_round_trips_attributes_and_quotes() {
        let tag = Tag::new("todo", "write <b>it</b>")
            .with_attribute("owner", "ana")
            .with_attribute("note", r#"say "hi""#)
            .with_attribute("mixed", r#"it's "x""#);
        assert_eq!(tag.attribute("owner"), Some("ana"));
        assert_eq!(tag.attribute("missing"), None);
        assert_eq!(
            tag.to_source(),
            r#"<todo owner="ana" note='say "hi"' mixed="it's &quot;x&quot;">write <b>it</b></todo>"#
        );
    }

    #[test]
    fn message_constructors_set_roles() {
        assert!(Message::system("s").is_system());
        assert_eq!(Message::user("u").role, "user");
        assert_eq!(Message::assistant("a").role, "assistant");
        assert_eq!(Message::tool("t").role, "tool");
    }
}
