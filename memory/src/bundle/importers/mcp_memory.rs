//! The official MCP memory server's knowledge graph file: JSON Lines of
//! `{"type":"entity","name","entityType","observations":[…]}` and
//! `{"type":"relation","from","to","relationType"}`.

use std::io::BufReader;
use std::path::Path;

use serde_json::{Value, json};

use super::{Entry, field_error, new_memory};
use crate::bundle::MAX_LINE_BYTES;
use crate::bundle::lines::{Lines, describe};
use crate::error::{MemoryError, Result};
use crate::model::Layer;

pub(super) fn read(path: &Path, layer: Layer, send: &mut dyn FnMut(Entry) -> bool) -> Result<()> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path)
        .map_err(|error| MemoryError::invalid(format!("cannot open {shown}: {error}")))?;
    let mut lines = Lines::new(BufReader::new(file), MAX_LINE_BYTES);
    loop {
        let line = lines.next_line().map_err(|error| match error {
            crate::bundle::lines::LineError::TooLong { line, limit } => MemoryError::invalid(
                format!("{shown} line {line} is longer than the limit of {limit} bytes"),
            ),
            crate::bundle::lines::LineError::Io { line, error } => {
                MemoryError::invalid(format!("cannot read {shown} line {line}: {error}"))
            }
        })?;
        let Some((number, line)) = line else {
            return Ok(());
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let origin = format!("{shown} line {number}");
        let value: Value = serde_json::from_slice(line).map_err(|error| {
            MemoryError::invalid(format!("{origin} is not JSON: {}", describe(&error)))
        })?;
        if !send(entry(&origin, layer, &value)?) {
            return Ok(());
        }
    }
}

fn text<'a>(origin: &str, value: &'a Value, field: &str) -> Result<&'a str> {
    value
        .get(field)
        .and_then(Value::as_str)
        .filter(|text| !text.trim().is_empty())
        .ok_or_else(|| field_error(origin, field, "a non-empty string"))
}

/// The memory of one line: an entity or a relation.
fn entry(origin: &str, layer: Layer, value: &Value) -> Result<Entry> {
    let kind = value.get("type").and_then(Value::as_str);
    let memory = match kind {
        Some("entity") => {
            let name = text(origin, value, "name")?;
            let entity_type = value
                .get("entityType")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim();
            let observations = match value.get("observations") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .ok_or_else(|| field_error(origin, "observations", "a list of strings"))
                    })
                    .collect::<Result<Vec<_>>>()?,
                Some(_) => return Err(field_error(origin, "observations", "a list of strings")),
            };
            let mut content = match entity_type {
                "" => name.to_owned(),
                kind => format!("{name} ({kind})"),
            };
            for observation in observations {
                content.push_str("\n- ");
                content.push_str(observation.trim());
            }
            let tags = match entity_type {
                "" => Vec::new(),
                kind => vec![kind.to_owned()],
            };
            new_memory(
                layer,
                content,
                tags,
                json!({"source": "mcp-memory", "entity": name, "entity_type": entity_type}),
            )
        }
        Some("relation") => {
            let from = text(origin, value, "from")?;
            let to = text(origin, value, "to")?;
            let relation = text(origin, value, "relationType")?;
            new_memory(
                layer,
                format!("{from} {relation} {to}"),
                vec!["relation".into()],
                json!({"source": "mcp-memory", "from": from, "to": to, "relation_type": relation}),
            )
        }
        _ => {
            return Err(field_error(origin, "type", "\"entity\" or \"relation\""));
        }
    };
    Ok(Entry {
        origin: origin.to_owned(),
        memory,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_and_relations_become_memories_and_bad_lines_name_their_field() {
        let entity = json!({"type": "entity", "name": "John_Smith", "entityType": "person",
            "observations": ["Speaks fluent Spanish", "Graduated in 2019"]});
        let memory = entry("m.jsonl line 1", Layer::User, &entity)
            .unwrap()
            .memory;
        assert_eq!(
            memory.content,
            "John_Smith (person)\n- Speaks fluent Spanish\n- Graduated in 2019"
        );
        assert_eq!(memory.tags, ["person"]);
        let relation = json!({"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"});
        let memory = entry("m.jsonl line 2", Layer::User, &relation)
            .unwrap()
            .memory;
        assert_eq!(memory.content, "John_Smith works_at Anthropic");
        let error = entry(
            "m.jsonl line 3",
            Layer::User,
            &json!({"type": "relation", "from": "a"}),
        )
        .err()
        .unwrap();
        assert_eq!(
            error.to_string(),
            "m.jsonl line 3: `to` must be a non-empty string"
        );
        let error = entry("m.jsonl line 4", Layer::User, &json!({"name": "x"}))
            .err()
            .unwrap();
        assert!(error.to_string().contains("`type`"), "{error}");
    }
}
