//! The Markdown of an assembled context: one section per layer, the layer's summary (if chosen)
//! as a quote, then its memories as a list.
//!
//! ```markdown
//! ## Session · s-42
//!
//! > The summary of the session layer, when the fitter chose one.
//!
//! - A memory.
//! - Another memory,
//!   over two lines.
//! ```

use aeterna_memory::Layer;

/// The heading of a layer's section.
pub fn header(layer: Layer, scope_id: &str) -> String {
    let title = match layer {
        Layer::Agent => "Agent",
        Layer::User => "User",
        Layer::Session => "Session",
        Layer::Project => "Project",
        Layer::Team => "Team",
        Layer::Org => "Org",
        Layer::Company => "Company",
    };
    format!("## {title} · {}\n\n", one_line(scope_id))
}

/// A memory as a list item; continuation lines are indented so they stay inside the item.
pub fn item(content: &str) -> String {
    block("- ", "  ", content)
}

/// A summary as a quote.
pub fn summary(content: &str) -> String {
    let mut out = block("> ", "> ", content);
    out.push('\n');
    out
}

/// Separates two layer sections.
pub const SECTION_BREAK: &str = "\n";

fn block(first: &str, rest: &str, content: &str) -> String {
    let mut out = String::with_capacity(content.len() + first.len() + 1);
    for (index, line) in content.trim().lines().enumerate() {
        out.push_str(if index == 0 { first } else { rest });
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str(first.trim_end());
        out.push('\n');
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_keep_continuation_lines_inside_the_bullet() {
        assert_eq!(item("first\nsecond  \n"), "- first\n  second\n");
        assert_eq!(summary("a\nb"), "> a\n> b\n\n");
        assert_eq!(header(Layer::Session, "s 1\n2"), "## Session · s 1 2\n\n");
    }
}
