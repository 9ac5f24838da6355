//! Markdown rendering of notes, and the small text formatters the distiller uses.

use std::fmt::Write;

use aeterna_memory::Timestamp;
use uuid::Uuid;

use super::{DistilledNote, RelatedNote};

/// Description characters kept in a related-note link.
const RELATED_DESCRIPTION: usize = 160;

/// The sections and the footer.
pub fn markdown(note: &DistilledNote) -> String {
    let mut out = String::with_capacity(2048);
    body(&mut out, note);
    footer(&mut out, note);
    out
}

/// Front matter, the sections, the related notes and the footer: the note as stored.
pub fn document(note: &DistilledNote, id: Uuid, related: &[RelatedNote]) -> String {
    let mut out = String::with_capacity(3072);
    // YAML front matter; JSON strings and arrays are YAML flow scalars and sequences, so
    // quoting and escaping are exact.
    let quoted = |text: &str| serde_json::to_string(&one_line(text)).unwrap_or_default();
    let keywords: Vec<String> = note.keywords.iter().map(|k| quoted(k)).collect();
    let _ = writeln!(out, "---");
    let _ = writeln!(out, "id: {id}");
    let _ = writeln!(out, "title: {}", quoted(&note.title));
    let _ = writeln!(out, "description: {}", quoted(&note.description));
    let _ = writeln!(out, "keywords: [{}]", keywords.join(", "));
    let _ = writeln!(out, "---\n");
    body(&mut out, note);
    let _ = writeln!(out, "## Related notes\n");
    if related.is_empty() {
        out.push_str("_No earlier note of this project matched._\n");
    }
    for note in related {
        let title = one_line(&note.title).replace(['[', ']'], "");
        let _ = write!(out, "- [{title}]({}{})", crate::note::URI_PREFIX, note.id);
        if !note.description.trim().is_empty() {
            let _ = write!(out, " — {}", clip(&note.description, RELATED_DESCRIPTION));
        }
        out.push('\n');
    }
    out.push('\n');
    footer(&mut out, note);
    out
}

fn body(out: &mut String, note: &DistilledNote) {
    let _ = writeln!(out, "# {}\n", one_line(&note.title));
    bullets(out, "Context", &note.context);
    bullets(out, "Problem", &note.problem);
    let _ = writeln!(out, "## Solution\n");
    if note.solution.is_empty() {
        out.push_str("_None recorded._\n");
    }
    for (number, step) in note.solution.iter().enumerate() {
        let _ = writeln!(out, "{}. {}", number + 1, one_line(step));
    }
    out.push('\n');
    bullets(out, "Patterns", &note.patterns);
    let _ = writeln!(out, "## Tags\n");
    let tags: Vec<String> = note.tags.iter().map(|tag| code(tag)).collect();
    if tags.is_empty() {
        out.push_str("_None._\n");
    } else {
        let _ = writeln!(out, "{}", tags.join(" "));
    }
    out.push('\n');
}

fn footer(out: &mut String, note: &DistilledNote) {
    let _ = write!(
        out,
        "_Quality {:.2} · distilled by {}",
        note.quality,
        one_line(&note.distiller)
    );
    if !note.fallbacks.is_empty() {
        let _ = write!(
            out,
            " (before it: {})",
            clip(&note.fallbacks.join("; "), 400)
        );
    }
    out.push_str("._\n");
}

fn bullets(out: &mut String, heading: &str, lines: &[String]) {
    let _ = writeln!(out, "## {heading}\n");
    if lines.is_empty() {
        out.push_str("_None recorded._\n");
    }
    for line in lines {
        let _ = writeln!(out, "- {}", one_line(line));
    }
    out.push('\n');
}

/// Keeps a list item on one line, so captured text cannot inject headings or break the list.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` as inline code; inner backticks become quotes so the span cannot be broken out of.
pub fn code(text: &str) -> String {
    format!("`{}`", one_line(text).replace('`', "'"))
}

/// Cuts `text` to `max_chars` characters, with an ellipsis when cut.
pub fn clip(text: &str, max_chars: usize) -> String {
    let text = one_line(text);
    if text.chars().count() <= max_chars {
        return text;
    }
    let mut cut: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// "850 ms", "12.3 s", "2 min 5 s", "1 h 3 min".
pub fn duration(millis: u64) -> String {
    match millis {
        0..=999 => format!("{millis} ms"),
        1_000..=59_999 => format!("{:.1} s", millis as f64 / 1000.0),
        60_000..=3_599_999 => format!("{} min {} s", millis / 60_000, (millis % 60_000) / 1000),
        _ => format!(
            "{} h {} min",
            millis / 3_600_000,
            (millis % 3_600_000) / 60_000
        ),
    }
}

/// "2025-06-15 14:13 UTC".
pub fn utc_minute(at: Timestamp) -> String {
    let seconds = at.div_euclid(1000);
    let (days, day_seconds) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        day_seconds / 3600,
        (day_seconds % 3600) / 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_durations_read_naturally() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(utc_minute(1_750_000_000_000), "2025-06-15 15:06 UTC");
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(12_345), "12.3 s");
        assert_eq!(duration(125_000), "2 min 5 s");
        assert_eq!(duration(3_780_000), "1 h 3 min");
    }

    #[test]
    fn captured_text_cannot_break_the_markdown() {
        let note = DistilledNote {
            title: "line one\n# injected heading".into(),
            description: String::new(),
            keywords: vec![],
            context: vec!["a\n## Problem\nb".into()],
            problem: vec![],
            solution: vec!["step".into()],
            patterns: vec![],
            tags: vec!["x`y".into()],
            quality: 0.5,
            distiller: "deterministic-v1".into(),
            fallbacks: vec![],
        };
        let text = markdown(&note);
        let headings: Vec<&str> = text.lines().filter(|line| line.starts_with('#')).collect();
        assert_eq!(
            headings,
            vec![
                "# line one # injected heading",
                "## Context",
                "## Problem",
                "## Solution",
                "## Patterns",
                "## Tags"
            ]
        );
        assert!(text.contains("`x'y`"));
        assert!(text.contains("1. step"));
    }

    #[test]
    fn documents_carry_front_matter_and_related_notes() {
        let note = DistilledNote {
            title: "Fix: \"quoted\" title".into(),
            description: "One line.\n---\nnot front matter".into(),
            keywords: vec!["a, b".into(), "src/x.rs".into()],
            context: vec![],
            problem: vec!["p".into()],
            solution: vec!["s".into()],
            patterns: vec![],
            tags: vec![],
            quality: 0.4,
            distiller: "llm:local/m distill-v1".into(),
            fallbacks: vec!["other (timeout): no answer".into()],
        };
        let id = Uuid::now_v7();
        let related = RelatedNote {
            id: Uuid::now_v7(),
            title: "An [earlier] note".into(),
            description: "What it was about.".into(),
        };
        let text = document(&note, id, std::slice::from_ref(&related));
        let front: Vec<&str> = text.lines().take(6).collect();
        assert_eq!(
            front,
            vec![
                "---".to_owned(),
                format!("id: {id}"),
                r#"title: "Fix: \"quoted\" title""#.to_owned(),
                r#"description: "One line. --- not front matter""#.to_owned(),
                r#"keywords: ["a, b", "src/x.rs"]"#.to_owned(),
                "---".to_owned(),
            ]
        );
        assert!(text.contains(&format!(
            "## Related notes\n\n- [An earlier note](aeterna://notes/{}) — What it was about.\n",
            related.id
        )));
        assert!(text.ends_with(
            "_Quality 0.40 · distilled by llm:local/m distill-v1 (before it: other (timeout): no answer)._\n"
        ));
        let alone = document(&note, id, &[]);
        assert!(alone.contains("## Related notes\n\n_No earlier note of this project matched._"));
    }

    #[test]
    fn clipping_counts_characters() {
        assert_eq!(clip("héllo wörld", 5), "héll…");
        assert_eq!(clip("short", 5), "short");
    }
}
