//! The host's public domain types: what flows through a chain and what an extension declares.
//!
//! They mirror the WIT records (see `wit/extension.wit`) but are plain Rust types with serde
//! support, so embedders never touch generated bindings.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One chat message, as sent to the LLM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// One attribute of a tag, in source order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribute {
    pub name: String,
    pub value: String,
}

/// The hooks an extension can handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hook {
    InputMessages,
    PlainText,
    Tag,
    LlmOutput,
}

impl Hook {
    pub const ALL: [Hook; 4] = [
        Hook::InputMessages,
        Hook::PlainText,
        Hook::Tag,
        Hook::LlmOutput,
    ];

    /// The WIT name of the hook, such as `plain-text`.
    pub fn as_str(self) -> &'static str {
        match self {
            Hook::InputMessages => "input-messages",
            Hook::PlainText => "plain-text",
            Hook::Tag => "tag",
            Hook::LlmOutput => "llm-output",
        }
    }
}

impl fmt::Display for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Hook {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Hook::ALL
            .into_iter()
            .find(|hook| hook.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown hook `{s}`: expected input-messages, plain-text, tag or llm-output"
                )
            })
    }
}

/// A tool as the agent sees it. `input_schema` is a JSON Schema document, as JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: String,
}

/// How an extension changes the agent's tool list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolConfig {
    /// Tools to add.
    pub add: Vec<ToolDefinition>,
    /// Names of tools to remove.
    pub remove: Vec<String>,
    /// Tools whose description or schema is replaced, matched by name.
    #[serde(rename = "override")]
    pub override_: Vec<ToolDefinition>,
}

impl ToolConfig {
    pub fn is_empty(&self) -> bool {
        self.add.is_empty() && self.remove.is_empty() && self.override_.is_empty()
    }

    /// Applies this configuration to `tools`: removals first, then overrides, then additions
    /// (an added tool replaces a tool of the same name).
    pub fn apply(&self, tools: &mut Vec<ToolDefinition>) {
        tools.retain(|tool| !self.remove.contains(&tool.name));
        for replacement in &self.override_ {
            if let Some(tool) = tools.iter_mut().find(|tool| tool.name == replacement.name) {
                *tool = replacement.clone();
            }
        }
        for added in &self.add {
            match tools.iter_mut().find(|tool| tool.name == added.name) {
                Some(tool) => *tool = added.clone(),
                None => tools.push(added.clone()),
            }
        }
    }
}

/// What an extension declares when it is loaded (after manifest overrides).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    pub id: String,
    pub version: String,
    pub priority: i32,
    pub hooks: Vec<Hook>,
    pub tags: Vec<String>,
    pub prompt_additions: Vec<String>,
    pub tool_config: ToolConfig,
}

impl Registration {
    pub fn handles(&self, hook: Hook) -> bool {
        self.hooks.contains(&hook)
    }
}

/// Who and where a chain runs for. Cheap to clone: the tool list is shared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallContext {
    pub tenant: String,
    pub session: String,
    pub user: Option<String>,
    pub project: Option<String>,
    /// The tools available to the agent in this session (`host.tools` in the guest).
    pub tools: Arc<[ToolDefinition]>,
}

impl CallContext {
    pub fn new(tenant: impl Into<String>, session: impl Into<String>) -> Self {
        Self {
            tenant: tenant.into(),
            session: session.into(),
            user: None,
            project: None,
            tools: Arc::from(Vec::new()),
        }
    }

    pub fn with_user(mut self, user: impl Into<String>) -> Self {
        self.user = Some(user.into());
        self
    }

    pub fn with_project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }

    pub fn with_tools(mut self, tools: impl Into<Arc<[ToolDefinition]>>) -> Self {
        self.tools = tools.into();
        self
    }
}
