//! Secret redaction of captured events with `aeterna-redact`, just before they are stored.

use std::borrow::Cow;

use aeterna_redact::{Options, Redactor};

use crate::event::CapturedEvent;

/// Replaces every secret in the event's text fields (tool name, description, input, output,
/// tags and metadata) with `[REDACTED:<kind>]`. Returns how many it replaced.
pub fn redact_event(redactor: &Redactor, event: &mut CapturedEvent) -> usize {
    let mut found = 0;
    for field in [
        &mut event.tool_name,
        &mut event.description,
        &mut event.input,
        &mut event.output,
    ] {
        found += redact_text(redactor, field);
    }
    for tag in &mut event.tags {
        found += redact_text(redactor, tag);
    }
    found += redact_metadata(redactor, &mut event.metadata);
    found
}

/// The redactor notes use: secrets, and e-mail addresses too, since notes are shared with a
/// whole project.
pub fn redactor() -> &'static Redactor {
    Redactor::shared(Options { emails: true })
}

/// Redacts `text` as it is (which sees JSON `"key": "value"` pairs with their key), then, for
/// JSON text, each string literal decoded on its own: a file's content or a command inside a
/// JSON input is scanned as the text it is, line starts included.
fn redact_text(redactor: &Redactor, text: &mut String) -> usize {
    let mut found = redact_in_place(redactor, text);
    if text.trim_start().starts_with(['{', '[']) {
        found += redact_json_strings(redactor, text);
    }
    found
}

fn redact_in_place(redactor: &Redactor, text: &mut String) -> usize {
    let redaction = redactor.redact(text);
    let count = redaction.total() as usize;
    if let Cow::Owned(clean) = redaction.into_text() {
        *text = clean;
    }
    count
}

/// Redacts every JSON string literal of `text` decoded, re-encoding the ones that change.
/// Works on truncated JSON too: it needs only the literals, not a valid document.
fn redact_json_strings(redactor: &Redactor, text: &mut String) -> usize {
    let mut found = 0;
    let mut out: Option<String> = None;
    let mut copied = 0;
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] != b'"' {
            index += 1;
            continue;
        }
        let start = index;
        index += 1;
        while index < bytes.len() && bytes[index] != b'"' {
            index += if bytes[index] == b'\\' { 2 } else { 1 };
        }
        let end = index.min(bytes.len());
        index = end + 1;
        // A literal cut off by truncation has no closing quote; it is not decodable.
        if end >= bytes.len() {
            break;
        }
        let literal = &text[start..=end];
        // Only assignments (`key: value`, `key=value`) depend on where a line starts; every
        // other kind of secret was already found in the first pass over the whole text.
        if !literal.contains([':', '=']) {
            continue;
        }
        let Ok(decoded) = serde_json::from_str::<String>(literal) else {
            continue;
        };
        let redaction = redactor.redact(&decoded);
        if redaction.is_clean() {
            continue;
        }
        found += redaction.total() as usize;
        let encoded = serde_json::Value::String(redaction.text().to_owned()).to_string();
        let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
        out.push_str(&text[copied..start]);
        out.push_str(&encoded);
        copied = end + 1;
    }
    if let Some(mut out) = out {
        out.push_str(&text[copied..]);
        *text = out;
    }
    found
}

/// Redacts the metadata as JSON text, so `"password": "…"` pairs are seen with their key. If
/// the redacted text is no longer JSON, the object is replaced by a marker rather than kept.
fn redact_metadata(redactor: &Redactor, metadata: &mut serde_json::Value) -> usize {
    let mut text = metadata.to_string();
    let count = redact_text(redactor, &mut text);
    if count > 0 {
        *metadata = serde_json::from_str(&text).unwrap_or_else(
            |_| serde_json::json!({ "redacted": "the metadata held secrets and was dropped" }),
        );
    }
    count
}

#[cfg(test)]
mod tests {
    use aeterna_memory::Identity;

    use super::*;
    use crate::config::EventLimits;
    use crate::event::TrajectoryEvent;

    const GITHUB: &str = "ghp_Tk9sY2FsRGV2VG9rZW5Gb3JUZXN0czEyMzQ1Ng";

    #[test]
    fn every_text_field_is_redacted() {
        let raw = TrajectoryEvent {
            tool_name: "bash".into(),
            description: format!("push with {GITHUB}"),
            input: serde_json::json!({ "command": format!("GITHUB_TOKEN={GITHUB} git push") }),
            output: "AWS key AKIAIOSFODNN7EXAMPLE rejected; mail ops@example.com".into(),
            success: false,
            duration_ms: 1,
            tags: vec![format!("tok-{GITHUB}")],
            metadata: Some(
                serde_json::from_value(
                    serde_json::json!({ "db_password": "hunter2-correct-horse" }),
                )
                .unwrap(),
            ),
        };
        let mut event =
            CapturedEvent::build(Identity::new("t"), raw, &EventLimits::default()).unwrap();
        let found = redact_event(redactor(), &mut event);
        let stored = serde_json::to_string(&event).unwrap();
        for secret in [
            GITHUB,
            "AKIAIOSFODNN7EXAMPLE",
            "hunter2-correct-horse",
            "ops@example.com",
        ] {
            assert!(!stored.contains(secret), "{secret} survived: {stored}");
        }
        assert!(found >= 6, "found {found}");
        assert!(
            event.output.contains("[REDACTED:aws-access-key-id]"),
            "{}",
            event.output
        );
        assert!(event.metadata.is_object());
    }

    #[test]
    fn secrets_inside_json_string_values_are_found() {
        let mut input = serde_json::json!({
            "path": "config/app.yaml",
            "content": "db:\n  db_password: correct-horse-battery-staple\n",
        })
        .to_string();
        assert_eq!(redact_text(redactor(), &mut input), 1);
        assert!(!input.contains("correct-horse"), "{input}");
        let value: serde_json::Value = serde_json::from_str(&input).expect("still JSON");
        assert_eq!(
            value["content"],
            "db:\n  db_password: [REDACTED:password]\n"
        );

        // Truncated JSON: complete literals are still checked, the cut one is left alone.
        let mut cut = r#"{"a":"password: hunter2-horse","b":"unfinis"#.to_owned();
        redact_text(redactor(), &mut cut);
        assert!(!cut.contains("hunter2-horse"), "{cut}");
        assert!(cut.ends_with(r#""b":"unfinis"#), "{cut}");
    }

    #[test]
    fn clean_events_are_untouched() {
        let raw = TrajectoryEvent {
            tool_name: "read_file".into(),
            description: "let token = next_token();".into(),
            input: "src/lexer.rs".into(),
            output: "fn next_token() {}".into(),
            success: true,
            duration_ms: 1,
            tags: vec!["lexer".into()],
            metadata: None,
        };
        let mut event =
            CapturedEvent::build(Identity::new("t"), raw, &EventLimits::default()).unwrap();
        let before = event.clone();
        assert_eq!(redact_event(redactor(), &mut event), 0);
        assert_eq!(event, before);
    }
}
