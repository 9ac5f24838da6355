//! Input validation: limits and shapes, with messages that name the field and the limit.

use sha2::{Digest, Sha256};

use crate::config::MemoryConfig;
use crate::error::{MemoryError, Result};
use crate::model::{Identity, Layer, Scope, kind};

/// `text` with its secrets replaced by `[REDACTED:<kind>]` (see `aeterna_redact`).
pub fn redacted(field: &str, text: String) -> String {
    let redaction = aeterna_redact::redact(&text);
    if redaction.is_clean() {
        return text;
    }
    tracing::info!(
        field,
        secrets = redaction.total(),
        "redacted secrets before storage"
    );
    redaction.into_text().into_owned()
}

/// `metadata` with secrets redacted from every string in it. A string under a key is checked
/// as the assignment `key=value`, so `{"api_key": "…"}` is caught as the redactor catches
/// `api_key=…` in text.
pub fn redacted_metadata(metadata: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match metadata {
        Value::String(text) => Value::String(redacted("metadata", text)),
        Value::Array(items) => Value::Array(items.into_iter().map(redacted_metadata).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| match value {
                    Value::String(text) => {
                        let assignment = format!("{key}={text}");
                        let checked = redacted("metadata", assignment.clone());
                        let value = match checked.strip_prefix(&format!("{key}=")) {
                            Some(value) if checked != assignment => value.to_string(),
                            _ => redacted("metadata", text),
                        };
                        (key, Value::String(value))
                    }
                    other => (key, redacted_metadata(other)),
                })
                .collect(),
        ),
        other => other,
    }
}

/// Hex SHA-256 of `content`.
pub(crate) fn content_hash(content: &str) -> String {
    hex::encode(Sha256::digest(content.as_bytes()))
}

pub(crate) fn tenant(who: &Identity) -> Result<&str> {
    if who.tenant_id.trim().is_empty() {
        return Err(MemoryError::invalid(
            "the caller has no tenant; authenticate with a token that maps to one",
        ));
    }
    Ok(&who.tenant_id)
}

/// The caller's scope in `layer`.
pub(crate) fn scope(who: &Identity, layer: Layer, config: &MemoryConfig) -> Result<Scope> {
    let id =
        who.scope(layer)
            .filter(|id| !id.trim().is_empty())
            .ok_or(MemoryError::MissingScope {
                layer,
                field: layer.scope_field(),
            })?;
    if id.len() > config.max_id_bytes {
        return Err(MemoryError::invalid(format!(
            "`{}` is {} bytes; the limit is {} bytes (max_id_bytes)",
            layer.scope_field(),
            id.len(),
            config.max_id_bytes
        )));
    }
    Ok(Scope::new(layer, id))
}

/// The scopes to search or list: those of `layers`, or every scope the caller has.
pub(crate) fn scopes(
    who: &Identity,
    layers: Option<&[Layer]>,
    config: &MemoryConfig,
) -> Result<Vec<Scope>> {
    match layers {
        Some(layers) if !layers.is_empty() => {
            let mut scopes = Vec::with_capacity(layers.len());
            for &layer in layers {
                let scope = scope(who, layer, config)?;
                if !scopes.contains(&scope) {
                    scopes.push(scope);
                }
            }
            Ok(scopes)
        }
        _ => Ok(Layer::ALL
            .into_iter()
            .filter_map(|layer| scope(who, layer, config).ok())
            .collect()),
    }
}

pub(crate) fn content(field: &str, content: &str, config: &MemoryConfig) -> Result<()> {
    if content.trim().is_empty() {
        return Err(MemoryError::invalid(format!(
            "`{field}` is empty; a memory needs some text"
        )));
    }
    if content.len() > config.max_content_bytes {
        return Err(MemoryError::invalid(format!(
            "`{field}` is {} bytes; the limit is {} bytes (max_content_bytes); split it into several memories",
            content.len(),
            config.max_content_bytes
        )));
    }
    Ok(())
}

/// Trimmed, de-duplicated tags within the limits.
pub(crate) fn tags(field: &str, tags: &[String], config: &MemoryConfig) -> Result<Vec<String>> {
    let mut clean: Vec<String> = Vec::with_capacity(tags.len());
    for (i, tag) in tags.iter().enumerate() {
        let tag = tag.trim();
        if tag.is_empty() {
            return Err(MemoryError::invalid(format!(
                "`{field}[{i}]` is empty; leave it out"
            )));
        }
        if tag.len() > config.max_tag_bytes {
            return Err(MemoryError::invalid(format!(
                "`{field}[{i}]` is {} bytes; the limit is {} bytes (max_tag_bytes)",
                tag.len(),
                config.max_tag_bytes
            )));
        }
        if tag.chars().any(char::is_control) {
            return Err(MemoryError::invalid(format!(
                "`{field}[{i}]` contains control characters"
            )));
        }
        if !clean.iter().any(|seen| seen == tag) {
            clean.push(tag.to_string());
        }
    }
    if clean.len() > config.max_tags {
        return Err(MemoryError::invalid(format!(
            "`{field}` has {} tags; the limit is {} (max_tags)",
            clean.len(),
            config.max_tags
        )));
    }
    Ok(clean)
}

/// A JSON object (`null` becomes `{}`) within the size limit.
pub(crate) fn metadata(
    field: &str,
    metadata: serde_json::Value,
    config: &MemoryConfig,
) -> Result<serde_json::Value> {
    let metadata = match metadata {
        serde_json::Value::Null => serde_json::Value::Object(Default::default()),
        object @ serde_json::Value::Object(_) => object,
        other => {
            return Err(MemoryError::invalid(format!(
                "`{field}` must be a JSON object, not {}",
                match other {
                    serde_json::Value::Array(_) => "an array",
                    serde_json::Value::String(_) => "a string",
                    serde_json::Value::Number(_) => "a number",
                    _ => "a boolean",
                }
            )));
        }
    };
    let size = metadata.to_string().len();
    if size > config.max_metadata_bytes {
        return Err(MemoryError::invalid(format!(
            "`{field}` is {size} bytes as JSON; the limit is {} bytes (max_metadata_bytes)",
            config.max_metadata_bytes
        )));
    }
    Ok(metadata)
}

/// The kind, defaulting to [`kind::MEMORY`]: lowercase letters, digits, `_`, `-` and `.`.
pub(crate) fn kind(field: &str, value: Option<&str>, config: &MemoryConfig) -> Result<String> {
    let Some(value) = value else {
        return Ok(kind::MEMORY.to_string());
    };
    let valid = !value.is_empty()
        && value.len() <= config.max_id_bytes
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-.".contains(&b));
    if !valid {
        return Err(MemoryError::invalid(format!(
            "`{field}` {value:?} is not a kind: use 1 to {} lowercase letters, digits, `_`, `-` or `.` (such as `memory`, `note`)",
            config.max_id_bytes
        )));
    }
    Ok(value.to_string())
}

/// Kinds to filter on.
pub(crate) fn kinds(field: &str, kinds: &[String], config: &MemoryConfig) -> Result<Vec<String>> {
    kinds
        .iter()
        .enumerate()
        .map(|(i, value)| kind(&format!("{field}[{i}]"), Some(value), config))
        .collect()
}

pub(crate) fn limit(field: &str, limit: usize, config: &MemoryConfig) -> Result<usize> {
    if limit == 0 || limit > config.max_page_size {
        return Err(MemoryError::invalid(format!(
            "`{field}` is {limit}; use 1 to {} (max_page_size)",
            config.max_page_size
        )));
    }
    Ok(limit)
}

/// Listing cursors: an opaque token for a position.
pub(crate) mod cursor {
    use super::*;

    const PREFIX: &str = "c1_";

    pub fn encode(position: i64) -> String {
        format!("{PREFIX}{position:x}")
    }

    pub fn decode(cursor: &str) -> Result<i64> {
        cursor
            .strip_prefix(PREFIX)
            .and_then(|hex| i64::from_str_radix(hex, 16).ok())
            .filter(|position| *position > 0)
            .ok_or_else(|| {
                MemoryError::invalid(
                    "`cursor` is not one a listing returned; pass `next_cursor` from the previous page, or leave it out to start from the newest",
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_errors_name_the_field_and_limit() {
        let config = MemoryConfig::default();
        let error = content("content", &"x".repeat(70_000), &config)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`content`") && error.contains("65536"),
            "{error}"
        );
        let many: Vec<String> = (0..40).map(|i| format!("t{i}")).collect();
        let error = tags("tags", &many, &config).unwrap_err().to_string();
        assert!(error.contains("40 tags") && error.contains("32"), "{error}");
        let error = metadata("metadata", serde_json::json!([1]), &config)
            .unwrap_err()
            .to_string();
        assert!(error.contains("an array"), "{error}");
        let error = limit("limit", 0, &config).unwrap_err().to_string();
        assert!(error.contains("1 to 100"), "{error}");
    }

    #[test]
    fn tags_are_trimmed_and_deduplicated() {
        let input = vec![" rust ".to_string(), "rust".to_string(), "db".to_string()];
        assert_eq!(
            tags("tags", &input, &MemoryConfig::default()).unwrap(),
            ["rust", "db"]
        );
        assert!(tags("tags", &["  ".to_string()], &MemoryConfig::default()).is_err());
    }

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        assert_eq!(cursor::decode(&cursor::encode(12345)).unwrap(), 12345);
        for garbage in ["", "abc", "c1_", "c1_zz", "c1_-5", "c1_0"] {
            assert!(cursor::decode(garbage).is_err(), "{garbage:?}");
        }
    }

    #[test]
    fn kinds_are_restricted_to_a_safe_alphabet() {
        let config = MemoryConfig::default();
        assert_eq!(kind("kind", None, &config).unwrap(), "memory");
        assert_eq!(
            kind("kind", Some("hindsight"), &config).unwrap(),
            "hindsight"
        );
        assert!(kind("kind", Some("Not OK"), &config).is_err());
        assert!(kind("kind", Some(""), &config).is_err());
    }
}
