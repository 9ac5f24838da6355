//! `todo-tags`: turns `<todo>` blocks in the LLM's output into checklist lines, and remembers
//! them.
//!
//! ```text
//! <todo owner="ana" due="friday">write the migration</todo>
//!   →  - [ ] write the migration (owner: ana, due: friday)
//! ```
//!
//! * Attributes are listed in source order; `done="true"` (or `yes`, `x`) checks the box and is
//!   not listed.
//! * The text is trimmed and its whitespace collapsed to single spaces.
//! * Every TODO is recorded in state under `todos`, a JSON list of [`Todo`]. A TODO with the same
//!   text (ignoring case) updates the recorded one, so `<todo done="true">write the
//!   migration</todo>` later in the session checks it off.
//! * At most `max_items` (config, default 500) are kept; the oldest go first.
//!
//! At registration it adds a line to the system prompt telling the LLM how to write a TODO.

use aeterna_extension_sdk::{
    ExtError, Extension, Registration, Tag, config, export_extension, state,
};
use serde::{Deserialize, Serialize};

/// The state key holding the list of [`Todo`]s.
pub const TODOS_KEY: &str = "todos";
/// How many TODOs are kept when `max_items` is not configured.
pub const DEFAULT_MAX_ITEMS: usize = 500;

/// What the system prompt is told.
pub const PROMPT_ADDITION: &str = "To record a task for later, write it as \
<todo owner=\"who\" due=\"when\">what to do</todo> (attributes optional; add done=\"true\" to \
check one off). It is shown as a checklist line and kept for the session.";

/// One recorded TODO.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// What to do, whitespace collapsed.
    pub text: String,
    /// The tag's attributes (other than `done`), in source order.
    pub attributes: Vec<(String, String)>,
    /// Whether it is checked off.
    pub done: bool,
}

impl Todo {
    /// Reads a `<todo>` block. Fails on an empty one: there is nothing to record.
    pub fn from_tag(tag: &Tag) -> Result<Todo, ExtError> {
        let text = tag.content.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            return Err(ExtError::invalid_input(
                "an empty <todo> block has nothing to record; put the task between the tags",
            ));
        }
        let mut done = false;
        let mut attributes = Vec::new();
        for attribute in &tag.attributes {
            if attribute.name == "done" {
                done = matches!(
                    attribute.value.trim().to_ascii_lowercase().as_str(),
                    "true" | "yes" | "x" | "1"
                );
            } else {
                attributes.push((attribute.name.clone(), attribute.value.trim().to_owned()));
            }
        }
        Ok(Todo {
            text,
            attributes,
            done,
        })
    }

    /// The checklist line: `- [ ] text (owner: ana, due: friday)`.
    pub fn checklist_line(&self) -> String {
        let mut line = format!("- [{}] {}", if self.done { 'x' } else { ' ' }, self.text);
        let details: Vec<String> = self
            .attributes
            .iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(name, value)| format!("{name}: {value}"))
            .collect();
        if !details.is_empty() {
            line.push_str(" (");
            line.push_str(&details.join(", "));
            line.push(')');
        }
        line
    }

    fn same_task(&self, other: &Todo) -> bool {
        self.text.to_lowercase() == other.text.to_lowercase()
    }
}

pub struct TodoTags;

impl Extension for TodoTags {
    fn register() -> Registration {
        Registration::new("todo-tags", env!("CARGO_PKG_VERSION"))
            .with_tag("todo")
            .with_prompt_addition(PROMPT_ADDITION)
    }

    fn on_tag(tag: Tag) -> Result<String, ExtError> {
        let todo = Todo::from_tag(&tag)?;
        let max_items = config::parse_or("max_items", DEFAULT_MAX_ITEMS)?.max(1);
        let line = todo.checklist_line();
        state::update_json(TODOS_KEY, |todos: &mut Vec<Todo>| {
            match todos.iter_mut().find(|known| known.same_task(&todo)) {
                Some(known) => {
                    known.done = todo.done;
                    if !todo.attributes.is_empty() {
                        known.attributes = todo.attributes;
                    }
                }
                None => todos.push(todo),
            }
            if todos.len() > max_items {
                let excess = todos.len() - max_items;
                todos.drain(..excess);
            }
        })?;
        Ok(line)
    }
}

export_extension!(TodoTags);

#[cfg(test)]
mod tests {
    use aeterna_extension_sdk::Hook;
    use aeterna_extension_sdk::testing::TestHost;

    use super::*;

    fn todo(content: &str) -> Tag {
        Tag::new("todo", content)
    }

    #[test]
    fn replaces_a_block_with_a_checklist_line_and_records_it() {
        let host = TestHost::new();
        let tag = todo("write the migration")
            .with_attribute("owner", "ana")
            .with_attribute("due", "friday");
        assert_eq!(
            host.tag::<TodoTags>(tag).unwrap(),
            "- [ ] write the migration (owner: ana, due: friday)"
        );
        assert_eq!(
            host.state_json::<Vec<Todo>>(TODOS_KEY).unwrap(),
            vec![Todo {
                text: "write the migration".into(),
                attributes: vec![
                    ("owner".into(), "ana".into()),
                    ("due".into(), "friday".into())
                ],
                done: false,
            }]
        );
    }

    #[test]
    fn collapses_whitespace_and_keeps_attribute_order() {
        let host = TestHost::new();
        let tag = todo("\n  update the\n   changelog  ")
            .with_attribute("priority", "high")
            .with_attribute("owner", "bo");
        assert_eq!(
            host.tag::<TodoTags>(tag).unwrap(),
            "- [ ] update the changelog (priority: high, owner: bo)"
        );
        assert_eq!(
            host.tag::<TodoTags>(todo("no attributes")).unwrap(),
            "- [ ] no attributes"
        );
        let todos: Vec<Todo> = host.state_json(TODOS_KEY).unwrap();
        assert_eq!(todos.len(), 2);
    }

    #[test]
    fn done_checks_off_the_recorded_task() {
        let host = TestHost::new();
        host.tag::<TodoTags>(todo("Write the migration").with_attribute("owner", "ana"))
            .unwrap();
        let line = host
            .tag::<TodoTags>(todo("write the migration").with_attribute("done", "true"))
            .unwrap();
        assert_eq!(line, "- [x] write the migration");
        let todos: Vec<Todo> = host.state_json(TODOS_KEY).unwrap();
        assert_eq!(todos.len(), 1, "the same task is updated, not duplicated");
        assert!(todos[0].done);
        assert_eq!(todos[0].attributes, vec![("owner".into(), "ana".into())]);
    }

    #[test]
    fn an_empty_block_is_an_error_and_records_nothing() {
        let host = TestHost::new();
        let error = host.tag::<TodoTags>(todo("  \n ")).unwrap_err();
        assert_eq!(error.code, "invalid-input");
        assert!(host.state_keys().is_empty());
    }

    #[test]
    fn keeps_at_most_max_items_dropping_the_oldest() {
        let host = TestHost::new().with_config("max_items", "2");
        for task in ["one", "two", "three"] {
            host.tag::<TodoTags>(todo(task)).unwrap();
        }
        let todos: Vec<Todo> = host.state_json(TODOS_KEY).unwrap();
        let texts: Vec<&str> = todos.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["two", "three"]);
    }

    #[test]
    fn registers_the_todo_tag_and_tells_the_llm_how_to_use_it() {
        let registration = TestHost::new().register::<TodoTags>();
        assert_eq!(registration.id, "todo-tags");
        assert_eq!(registration.tags, ["todo"]);
        assert_eq!(registration.hooks, [Hook::Tag]);
        assert_eq!(registration.prompt_additions, [PROMPT_ADDITION]);
    }
}
