//! Tool arguments, parsed so that an error names the argument to fix.
//!
//! [`Parameters`] replaces rmcp's extractor of the same name (the `#[tool]` macro finds the
//! input schema by that name): it deserialises with `serde_path_to_error`, so a wrong argument
//! is reported by its path — `limit`, `events[3]`, `signature.language` — rather than as a bare
//! `invalid type: sequence, expected a string`. The message keeps rmcp's prefix, so rmcp
//! answers a tool error (`isError: true`) the model can read and act on, as the MCP
//! specification asks of input errors, and [`super::AeternaMcp::call_tool`] names the tool.

use rmcp::ErrorData;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// A tool's arguments of type `T`.
pub struct Parameters<T>(pub T);

impl<T: JsonSchema> JsonSchema for Parameters<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

impl<S, T: DeserializeOwned> FromContextPart<ToolCallContext<'_, S>> for Parameters<T> {
    fn from_context_part(context: &mut ToolCallContext<'_, S>) -> Result<Self, ErrorData> {
        let arguments = serde_json::Value::Object(context.arguments.take().unwrap_or_default());
        serde_path_to_error::deserialize(arguments)
            .map(Parameters)
            .map_err(|error| ErrorData::invalid_params(describe(&error), None))
    }
}

/// rmcp's prefix for argument errors, which it turns into tool errors.
pub const ARGUMENT_ERROR_PREFIX: &str = "failed to deserialize parameters:";

/// `failed to deserialize parameters: `path`: what is wrong`, without the path when the
/// error concerns the arguments as a whole (a missing argument, which serde names itself).
fn describe(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let path = error.path().to_string();
    let at = if path == "." {
        String::new()
    } else {
        format!("`{path}`: ")
    };
    format!("{ARGUMENT_ERROR_PREFIX} {at}{}", error.inner())
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;
    use crate::config::IdentityFields;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Event {
        tool_name: String,
        #[serde(flatten)]
        identity: IdentityFields,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Args {
        events: Vec<Event>,
        limit: Option<usize>,
        #[serde(flatten)]
        identity: IdentityFields,
    }

    fn error_of(value: serde_json::Value) -> String {
        let error = serde_path_to_error::deserialize::<_, Args>(value).expect_err("invalid");
        describe(&error)
    }

    #[test]
    fn errors_name_the_argument_path() {
        let error = error_of(serde_json::json!({ "events": [], "limit": "ten" }));
        assert!(
            error.starts_with("failed to deserialize parameters: `limit`: invalid type"),
            "{error}"
        );
        let error = error_of(serde_json::json!({
            "events": [{ "tool_name": "bash" }, { "tool_name": 5 }]
        }));
        assert!(
            error.contains("`events[1].tool_name`: invalid type: integer `5`"),
            "{error}"
        );
        let error = error_of(serde_json::json!({ "events": [{}] }));
        assert!(
            error.contains("`events[0]`: missing field `tool_name`"),
            "{error}"
        );
    }

    #[test]
    fn flattened_identity_fields_are_named_too() {
        let error = error_of(serde_json::json!({ "events": [], "project_id": 5 }));
        assert!(
            error.contains("`project_id`: invalid type: integer `5`"),
            "{error}"
        );
        let error = error_of(serde_json::json!({
            "events": [{ "tool_name": "bash", "session_id": ["s"] }]
        }));
        assert!(
            error.contains("`events[0]`: `session_id`: invalid type: sequence"),
            "{error}"
        );
    }
}
