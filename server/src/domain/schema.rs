//! JSON-schema helpers for argument types whose Rust type is wider than what they accept.

use aeterna_memory::Layer;
use schemars::{Schema, SchemaGenerator, json_schema};

fn layer_names() -> Vec<&'static str> {
    Layer::ALL.iter().map(|layer| layer.as_str()).collect()
}

/// A layer name: `{"type": "string", "enum": ["agent", …]}`.
pub fn layer_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "string", "enum": layer_names() })
}

/// An optional list of layer names.
pub fn layer_list_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": ["array", "null"],
        "items": { "type": "string", "enum": layer_names() },
    })
}
