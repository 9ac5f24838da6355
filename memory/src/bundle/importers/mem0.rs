//! Mem0's export JSON: `{"results": [{"id", "memory", "user_id", "agent_id", "metadata",
//! "created_at", "updated_at", "categories"}, …]}` or the bare list. The array is read one
//! entry at a time (a serde visitor), never whole.

use std::fmt;
use std::io::BufReader;
use std::path::Path;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{Entry, field_error, new_memory};
use crate::error::{MemoryError, Result};
use crate::model::Layer;

pub(super) fn read(path: &Path, layer: Layer, send: &mut dyn FnMut(Entry) -> bool) -> Result<()> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path)
        .map_err(|error| MemoryError::invalid(format!("cannot open {shown}: {error}")))?;
    let mut failure = None;
    let mut each = |index: usize, value: Value| -> bool {
        let origin = format!("{shown} entry {index}");
        match entry(&origin, layer, value) {
            Ok(entry) => send(entry),
            Err(error) => {
                failure = Some(error);
                false
            }
        }
    };
    let mut deserializer = serde_json::Deserializer::from_reader(BufReader::new(file));
    let parsed = deserializer.deserialize_any(Export { each: &mut each });
    if let Some(error) = failure {
        return Err(error);
    }
    match parsed {
        Ok(()) => deserializer.end().map_err(|error| {
            MemoryError::invalid(format!(
                "{shown}: text after the export's JSON ({})",
                crate::bundle::lines::describe(&error)
            ))
        }),
        Err(error) if error.to_string().starts_with(STOPPED) => Ok(()),
        Err(error) => Err(MemoryError::invalid(format!(
            "{shown} is not a Mem0 export (`{{\"results\": [...]}}` or a list of memories): {} \
             (line {})",
            crate::bundle::lines::describe(&error),
            error.line()
        ))),
    }
}

/// The visitor's error when the receiver stopped taking entries.
const STOPPED: &str = "stopped";

/// The top level: an object with `results`, or the list itself.
struct Export<'a> {
    each: &'a mut dyn FnMut(usize, Value) -> bool,
}

impl<'de> Visitor<'de> for Export<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with `results` or a list of memories")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> std::result::Result<(), A::Error> {
        Entries { each: self.each }.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let mut found = false;
        while let Some(key) = map.next_key::<String>()? {
            if key == "results" && !found {
                found = true;
                map.next_value_seed(Entries {
                    each: &mut *self.each,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        if found {
            Ok(())
        } else {
            Err(de::Error::missing_field("results"))
        }
    }
}

struct Entries<'a> {
    each: &'a mut dyn FnMut(usize, Value) -> bool,
}

impl<'de> DeserializeSeed<'de> for Entries<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of memories")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let mut index = 0;
        while let Some(value) = seq.next_element::<Value>()? {
            if !(self.each)(index, value) {
                return Err(de::Error::custom(STOPPED));
            }
            index += 1;
        }
        Ok(())
    }
}

/// The memory of one entry.
fn entry(origin: &str, layer: Layer, value: Value) -> Result<Entry> {
    let Value::Object(mut fields) = value else {
        return Err(MemoryError::invalid(format!("{origin} is not an object")));
    };
    let content = match fields.remove("memory") {
        Some(Value::String(text)) if !text.trim().is_empty() => text,
        _ => return Err(field_error(origin, "memory", "a non-empty string")),
    };
    let tags = match fields.remove("categories") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Value::String(text) => Ok(text),
                _ => Err(field_error(origin, "categories", "a list of strings")),
            })
            .collect::<Result<Vec<_>>>()?,
        Some(_) => return Err(field_error(origin, "categories", "a list of strings")),
    };
    let mut metadata = match fields.remove("metadata") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(field_error(origin, "metadata", "an object")),
    };
    metadata.insert("source".into(), Value::String("mem0".into()));
    for (from, to) in [
        ("id", "mem0_id"),
        ("user_id", "user_id"),
        ("agent_id", "agent_id"),
        ("run_id", "run_id"),
        ("created_at", "created_at"),
        ("updated_at", "updated_at"),
    ] {
        match fields.remove(from) {
            None | Some(Value::Null) => {}
            Some(value @ (Value::String(_) | Value::Number(_))) => {
                metadata.insert(to.into(), value);
            }
            Some(_) => return Err(field_error(origin, from, "a string")),
        }
    }
    Ok(Entry {
        origin: origin.to_owned(),
        memory: new_memory(layer, content, tags, Value::Object(metadata)),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_entry_keeps_its_dates_and_ids_in_metadata() {
        let value = json!({"id": "m-1", "memory": "Prefers dark roast", "user_id": "alex",
            "agent_id": null, "metadata": {"mood": "calm"}, "categories": ["food"],
            "created_at": "2024-07-20T01:30:00.000000-07:00", "updated_at": null, "hash": "x"});
        let entry = entry("m.json entry 0", Layer::User, value).unwrap();
        assert_eq!(entry.memory.content, "Prefers dark roast");
        assert_eq!(entry.memory.tags, ["food"]);
        assert_eq!(
            entry.memory.metadata,
            json!({"mood": "calm", "source": "mem0", "mem0_id": "m-1", "user_id": "alex",
                "created_at": "2024-07-20T01:30:00.000000-07:00"})
        );
        let error = entry_error(json!({"memory": 3}));
        assert_eq!(error, "m.json entry 1: `memory` must be a non-empty string");
        let error = entry_error(json!({"memory": "x", "categories": "food"}));
        assert_eq!(
            error,
            "m.json entry 1: `categories` must be a list of strings"
        );
    }

    fn entry_error(value: Value) -> String {
        entry("m.json entry 1", Layer::User, value)
            .err()
            .unwrap()
            .to_string()
    }
}
