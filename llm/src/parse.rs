//! A tolerant reader of the JSON object a model was asked for. Small models wrap it in code
//! fences, put prose before or after it, think aloud in `<think>` blocks, leave trailing commas,
//! give a string where a list was asked, or leave optional fields out; all of that is accepted.
//! What cannot be read is an error saying why, and the chain moves on.

use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::Value;

/// `{` positions tried at most: bounds the work on a long answer with many braces.
const MAX_CANDIDATES: usize = 16;

/// The first JSON object in `text` that parses.
pub fn json_object(text: &str) -> Result<serde_json::Map<String, Value>, String> {
    let text = without_thinking(text);
    let mut candidates: Vec<&str> = fenced_blocks(text);
    candidates.extend(
        text.match_indices('{')
            .take(MAX_CANDIDATES)
            .filter_map(|(start, _)| balanced_object(&text[start..])),
    );
    for candidate in candidates {
        let candidate = candidate.trim();
        if !candidate.starts_with('{') {
            continue;
        }
        if let Ok(Value::Object(object)) = serde_json::from_str(candidate) {
            return Ok(object);
        }
        if let Ok(Value::Object(object)) = serde_json::from_str(&without_trailing_commas(candidate))
        {
            return Ok(object);
        }
    }
    let start: String = text.trim().chars().take(80).collect();
    Err(format!(
        "no JSON object in the answer (it began: {start:?})"
    ))
}

/// Reads `T` from the first JSON object in `text`.
pub fn parse<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
    let object = json_object(text)?;
    serde_json::from_value(Value::Object(object))
        .map_err(|error| format!("unexpected JSON: {error}"))
}

/// What follows the last `</think>` (reasoning models think aloud first); all of `text`
/// without one.
fn without_thinking(text: &str) -> &str {
    match text.rfind("</think>") {
        Some(end) => &text[end + "</think>".len()..],
        None => text,
    }
}

/// The contents of Markdown code fences, in order.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        // Skip the info string (`json`, `JSON`…) to the end of the line.
        let body_start = after.find('\n').map_or(after.len(), |n| n + 1);
        let body = &after[body_start..];
        match body.find("```") {
            Some(close) => {
                blocks.push(&body[..close]);
                rest = &body[close + 3..];
            }
            None => {
                blocks.push(body);
                break;
            }
        }
    }
    blocks
}

/// The object starting at `text[0] == '{'`, up to its matching brace (strings and escapes
/// respected), or `None` when it is not closed.
fn balanced_object(text: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (index, byte) in text.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(&text[..=index]);
                }
            }
            _ => {}
        }
    }
    None
}

/// `text` with commas before `}` or `]` removed (outside strings).
fn without_trailing_commas(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (index, ch) in text.char_indices() {
        if in_string {
            match ch {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if ch == '"' {
            in_string = true;
        } else if ch == ',' {
            let next = bytes[index + 1..].iter().find(|b| !b.is_ascii_whitespace());
            if matches!(next, Some(b'}' | b']')) {
                continue;
            }
        }
        out.push(ch);
    }
    out
}

/// A list of lines that also accepts one string (split into lines, bullets and numbering
/// dropped) or numbers; `null` is empty.
pub fn lines<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    list(deserializer, &['\n'])
}

/// A list of terms that also accepts one string split at commas, semicolons or newlines.
pub fn terms<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    list(deserializer, &[',', ';', '\n'])
}

fn list<'de, D: Deserializer<'de>>(
    deserializer: D,
    separators: &[char],
) -> Result<Vec<String>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    let items: Vec<String> = match value {
        Value::Null => Vec::new(),
        Value::String(text) => text.split(separators).map(str::to_owned).collect(),
        Value::Array(items) => items
            .into_iter()
            .filter_map(|item| match item {
                Value::String(text) => Some(text),
                Value::Null => None,
                other => Some(other.to_string()),
            })
            .collect(),
        other => {
            return Err(de::Error::custom(format!(
                "expected a list or a string, got {other}"
            )));
        }
    };
    Ok(items
        .iter()
        .map(|item| strip_marker(item))
        .filter(|item| !item.is_empty())
        .collect())
}

/// A string that also accepts `null` (empty) or a number.
pub fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::Null => String::new(),
        Value::String(text) => text.trim().to_owned(),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    })
}

/// `- item`, `* item`, `1. item`, `2) item` → `item`.
fn strip_marker(item: &str) -> String {
    let trimmed = item.trim();
    let without_bullet = trimmed
        .strip_prefix("- ")
        .or_else(|| trimmed.strip_prefix("* "))
        .or_else(|| trimmed.strip_prefix("• "))
        .unwrap_or(trimmed);
    let digits = without_bullet
        .bytes()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let numbered = (1..=3).contains(&digits)
        && matches!(
            without_bullet.as_bytes().get(digits..digits + 2),
            Some([b'.' | b')', b' '])
        );
    let item = if numbered {
        &without_bullet[digits + 2..]
    } else {
        without_bullet
    };
    item.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Answer {
        title: String,
        #[serde(default, deserialize_with = "lines")]
        steps: Vec<String>,
        #[serde(default, deserialize_with = "terms")]
        keywords: Vec<String>,
    }

    fn answer(text: &str) -> Answer {
        parse(text).unwrap_or_else(|error| panic!("{error}: {text}"))
    }

    #[test]
    fn small_model_habits_are_tolerated() {
        let plain = answer(r#"{"title": "a", "steps": ["x"]}"#);
        assert_eq!(plain.steps, ["x"]);
        let fenced =
            answer("Sure! Here it is:\n```json\n{\"title\": \"a\"}\n```\nHope that helps.");
        assert_eq!(fenced.title, "a");
        let prose = answer("The note: {\"title\": \"b {with braces}\", \"steps\": []} — done.");
        assert_eq!(prose.title, "b {with braces}");
        let trailing = answer("{\"title\": \"c\", \"steps\": [\"x\", \"y\",],}");
        assert_eq!(trailing.steps, ["x", "y"]);
        let thinking = answer("<think>maybe {\"title\": \"wrong\"}</think>{\"title\": \"d\"}");
        assert_eq!(thinking.title, "d");
        let strings = answer(
            "{\"title\": \"e\", \"steps\": \"1. run it\\n2) fix it\\n- done\", \"keywords\": \"rust, parser; tests\"}",
        );
        assert_eq!(strings.steps, ["run it", "fix it", "done"]);
        assert_eq!(strings.keywords, ["rust", "parser", "tests"]);
        let missing = answer("{\"title\": \"f\"}");
        assert!(missing.steps.is_empty() && missing.keywords.is_empty());
        let unclosed_fence = answer("```json\n{\"title\": \"g\"}");
        assert_eq!(unclosed_fence.title, "g");
    }

    #[test]
    fn unusable_answers_say_why() {
        assert!(
            parse::<Answer>("I cannot help with that.")
                .unwrap_err()
                .contains("no JSON object")
        );
        assert!(
            parse::<Answer>("{\"title\": ")
                .unwrap_err()
                .contains("no JSON object")
        );
        assert!(
            parse::<Answer>("{\"steps\": []}")
                .unwrap_err()
                .contains("title")
        );
        assert!(parse::<Answer>("[1, 2]").is_err());
    }

    #[test]
    fn markers_are_stripped_but_numbers_in_text_kept() {
        assert_eq!(strip_marker("  - 3 files changed"), "3 files changed");
        assert_eq!(strip_marker("12. step"), "step");
        assert_eq!(strip_marker("2024 was busy"), "2024 was busy");
        assert_eq!(strip_marker("1.5x faster"), "1.5x faster");
    }
}
