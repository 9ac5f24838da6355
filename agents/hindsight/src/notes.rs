//! Hindsight notes: each resolution rendered as a Markdown memory of kind `hindsight`, so that
//! `memory_search` and `context_assemble` surface what fixed an error before. The note is
//! re-rendered when the resolution's track record changes.

use std::fmt::Write;

use aeterna_memory::{NewMemory, kind};
use serde_json::json;

use crate::model::{Resolution, StoredSignature};

/// Longest diff quoted in a note; the full diff stays in the resolution.
const MAX_NOTE_DIFF_BYTES: usize = 8 * 1024;

/// The note's Markdown: a title, then [`render_sections`].
pub fn render(signature: &StoredSignature, resolution: &Resolution) -> String {
    let sig = &signature.signature;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Hindsight: {} — {}\n",
        sig.error_type, sig.message_pattern
    );
    md.push_str(&render_sections(signature, resolution));
    md
}

/// The note without its title: the error, the resolution, the files and diff, the track
/// record.
pub fn render_sections(signature: &StoredSignature, resolution: &Resolution) -> String {
    let sig = &signature.signature;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "**Language:** {} · **Error type:** `{}` · **Seen:** {} time{}\n",
        sig.language,
        sig.error_type,
        signature.occurrence_count,
        if signature.occurrence_count == 1 {
            ""
        } else {
            "s"
        }
    );
    let _ = writeln!(md, "## Error\n\n```text\n{}\n```\n", sig.message_pattern);
    if !sig.stack_patterns.is_empty() {
        let _ = writeln!(md, "Stack: {}\n", sig.stack_patterns.join(" ← "));
    }
    let _ = writeln!(md, "## Resolution\n\n{}\n", resolution.description.trim());
    if !resolution.changes.files.is_empty() {
        let _ = writeln!(md, "### Files changed\n");
        for file in &resolution.changes.files {
            let _ = writeln!(md, "- `{}`: {}", file.file, file.summary);
        }
        md.push('\n');
    }
    if let Some(diff) = &resolution.changes.diff {
        let mut shown = diff.as_str();
        if shown.len() > MAX_NOTE_DIFF_BYTES {
            let cut = (0..=MAX_NOTE_DIFF_BYTES)
                .rev()
                .find(|i| diff.is_char_boundary(*i))
                .unwrap_or(0);
            shown = &diff[..cut];
        }
        let _ = writeln!(md, "### Diff\n\n```diff\n{}\n```\n", shown.trim_end());
        if shown.len() < diff.len() {
            let _ = writeln!(
                md,
                "(diff truncated; the full diff is in resolution `{}`)\n",
                resolution.id
            );
        }
    }
    let _ = writeln!(md, "## Track record\n");
    if resolution.application_count == 0 {
        let _ = writeln!(md, "Not applied yet.");
    } else {
        let _ = writeln!(
            md,
            "Applied {} time{}, {} succeeded ({:.0}%; confidence-adjusted {:.0}%).",
            resolution.application_count,
            if resolution.application_count == 1 {
                ""
            } else {
                "s"
            },
            resolution.success_count,
            resolution.success_rate * 100.0,
            resolution.confidence * 100.0
        );
    }
    md
}

/// The memory to store for a resolution.
pub fn memory(signature: &StoredSignature, resolution: &Resolution) -> NewMemory {
    let sig = &signature.signature;
    NewMemory {
        layer: resolution.layer,
        content: render(signature, resolution),
        tags: vec![
            "hindsight".to_string(),
            format!("lang:{}", sig.language),
            truncate_tag(format!("error:{}", sig.error_type)),
        ],
        metadata: metadata(signature, resolution),
        kind: Some(kind::HINDSIGHT.to_string()),
    }
}

pub fn metadata(signature: &StoredSignature, resolution: &Resolution) -> serde_json::Value {
    json!({
        "signature_id": signature.id,
        "resolution_id": resolution.id,
        "error_type": signature.signature.error_type,
        "language": signature.signature.language,
        "success_rate": resolution.success_rate,
        "application_count": resolution.application_count,
    })
}

fn truncate_tag(mut tag: String) -> String {
    if tag.len() > 120 {
        let cut = (0..=120)
            .rev()
            .find(|i| tag.is_char_boundary(*i))
            .unwrap_or(0);
        tag.truncate(cut);
    }
    tag
}
