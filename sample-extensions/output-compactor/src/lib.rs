//! `output-compactor`: shortens very long tool output to a token budget, keeping its head and
//! its tail.
//!
//! ```text
//!    Compiling …            (head: the first lines that fit in half the budget)
//! [… 1,234 lines (~5,678 tokens) cut …]
//! error[E0308]: …           (tail: the last lines that fit in the other half)
//! ```
//!
//! Text within the budget passes through unchanged. Cuts fall on line boundaries; a single line
//! longer than its share (minified JSON, a base64 blob) is cut inside the line, at a character
//! boundary.
//!
//! # Token estimate
//!
//! Tokens are estimated, not counted: **one token per 4 ASCII bytes (rounded up), plus one
//! token per non-ASCII character**. BPE tokenizers such as `cl100k` and `o200k` average about 4
//! characters per token on English and code; CJK text is about one token per character, and
//! counting every non-ASCII character as a token keeps the estimate on the safe side for
//! accented text. It is cheap (one pass, no vocabulary in the component), which matters
//! because every callback runs in a fresh instance.
//!
//! | config | default | meaning |
//! |---|---|---|
//! | `max_tokens` | `2000` | budget for the compacted text, marker included (at least 64) |
//! | `head_share` | `0.5` | share of the budget kept from the start (0 to 1); the rest is kept from the end |
//!
//! State: `stats`, `{"compactions": 2, "lines_cut": 1800, "tokens_cut": 40000}` for the session.

use aeterna_extension_sdk::{
    ExtError, Extension, Hook, Registration, config, config::ConfigError, export_extension, state,
};
use serde::{Deserialize, Serialize};

/// The budget when `max_tokens` is not configured.
pub const DEFAULT_MAX_TOKENS: usize = 2000;
/// The smallest budget accepted: below it the marker would crowd out the content.
pub const MIN_MAX_TOKENS: usize = 64;
/// Tokens set aside for the marker line.
const MARKER_TOKENS: usize = 16;
/// The state key holding [`Stats`].
pub const STATS_KEY: &str = "stats";

/// What was cut in this session.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// How many texts were compacted.
    pub compactions: u64,
    /// Lines cut in all.
    pub lines_cut: u64,
    /// Estimated tokens cut in all.
    pub tokens_cut: u64,
}

/// The estimated token count of `text` (see the crate docs).
pub fn estimate_tokens(text: &str) -> usize {
    Estimate::of(text).tokens()
}

/// Running totals behind [`estimate_tokens`], so prefixes can be measured incrementally.
#[derive(Clone, Copy, Default)]
struct Estimate {
    ascii_bytes: usize,
    other_chars: usize,
}

impl Estimate {
    fn of(text: &str) -> Self {
        let mut estimate = Estimate::default();
        estimate.add(text);
        estimate
    }

    fn add(&mut self, text: &str) {
        let ascii = text.bytes().filter(u8::is_ascii).count();
        self.ascii_bytes += ascii;
        // Every non-ASCII character has exactly one leading (non-continuation) byte.
        self.other_chars += text
            .bytes()
            .filter(|b| !b.is_ascii() && (b & 0xC0) != 0x80)
            .count();
    }

    fn tokens(self) -> usize {
        self.ascii_bytes.div_ceil(4) + self.other_chars
    }
}

/// The result of cutting a text to a budget.
#[derive(Debug, PartialEq, Eq)]
pub struct Compacted {
    /// Head, marker line, tail.
    pub text: String,
    /// Lines cut (a line cut in part counts as one).
    pub lines_cut: usize,
    /// Estimated tokens cut.
    pub tokens_cut: usize,
}

/// Cuts `text` to about `max_tokens`, keeping `head_share` of the budget from its start and the
/// rest from its end. `None` if it already fits.
pub fn compact(text: &str, max_tokens: usize, head_share: f64) -> Option<Compacted> {
    if estimate_tokens(text) <= max_tokens {
        return None;
    }
    let budget = max_tokens.saturating_sub(MARKER_TOKENS);
    let head_budget = (budget as f64 * head_share.clamp(0.0, 1.0)).round() as usize;
    let tail_budget = budget - head_budget;

    let head_end = head_end(text, head_budget);
    let rest = &text[head_end..];
    let tail_start = head_end + tail_start(rest, tail_budget);
    let middle = &text[head_end..tail_start];
    let lines_cut = middle.lines().count().max(1);
    let tokens_cut = estimate_tokens(middle);

    let (head, tail) = (&text[..head_end], &text[tail_start..]);
    let mut out = String::with_capacity(head.len() + tail.len() + 64);
    out.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "[… {} {} (~{} tokens) cut …]\n",
        thousands(lines_cut),
        if lines_cut == 1 { "line" } else { "lines" },
        thousands(tokens_cut)
    ));
    out.push_str(tail);
    Some(Compacted {
        text: out,
        lines_cut,
        tokens_cut,
    })
}

/// The end of the longest prefix of whole lines within `budget`; if not even the first line fits,
/// the longest prefix of it that does.
fn head_end(text: &str, budget: usize) -> usize {
    let mut estimate = Estimate::default();
    let mut end = 0;
    for line in text.split_inclusive('\n') {
        estimate.add(line);
        if estimate.tokens() > budget {
            break;
        }
        end += line.len();
    }
    if end == 0 {
        end = fitting_prefix(text.split_inclusive('\n').next().unwrap_or(""), budget);
    }
    end
}

/// The start of the longest suffix of whole lines within `budget`; if not even the last line
/// fits, the start of the longest suffix of it that does.
fn tail_start(text: &str, budget: usize) -> usize {
    let mut estimate = Estimate::default();
    let mut start = text.len();
    let mut lines = text.split_inclusive('\n').rev();
    for line in lines.by_ref() {
        estimate.add(line);
        if estimate.tokens() > budget {
            break;
        }
        start -= line.len();
    }
    if start == text.len() {
        let last = text.split_inclusive('\n').next_back().unwrap_or("");
        start = text.len() - fitting_suffix(last, budget);
    }
    start
}

/// The byte length of the longest prefix of `line` within `budget`, on a character boundary.
fn fitting_prefix(line: &str, budget: usize) -> usize {
    let mut estimate = Estimate::default();
    let mut end = 0;
    for (at, c) in line.char_indices() {
        estimate.add(c.encode_utf8(&mut [0; 4]));
        if estimate.tokens() > budget {
            break;
        }
        end = at + c.len_utf8();
    }
    end
}

/// The byte length of the longest suffix of `line` within `budget`, on a character boundary.
fn fitting_suffix(line: &str, budget: usize) -> usize {
    let mut estimate = Estimate::default();
    let mut len = 0;
    for c in line.chars().rev() {
        estimate.add(c.encode_utf8(&mut [0; 4]));
        if estimate.tokens() > budget {
            break;
        }
        len += c.len_utf8();
    }
    len
}

/// `1234567` → `1,234,567`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

pub struct OutputCompactor;

impl Extension for OutputCompactor {
    fn register() -> Registration {
        Registration::new("output-compactor", env!("CARGO_PKG_VERSION"))
            // Late in the chain: compact what the other extensions produced.
            .with_priority(-100)
            .with_hook(Hook::PlainText)
    }

    fn on_plain_text(text: String) -> Result<String, ExtError> {
        let (max_tokens, head_share) = settings()?;
        let Some(compacted) = compact(&text, max_tokens, head_share) else {
            return Ok(text);
        };
        state::update_json(STATS_KEY, |stats: &mut Stats| {
            stats.compactions += 1;
            stats.lines_cut += compacted.lines_cut as u64;
            stats.tokens_cut += compacted.tokens_cut as u64;
        })?;
        Ok(compacted.text)
    }
}

export_extension!(OutputCompactor);

fn settings() -> Result<(usize, f64), ExtError> {
    let max_tokens = config::parse_or("max_tokens", DEFAULT_MAX_TOKENS)?;
    if max_tokens < MIN_MAX_TOKENS {
        return Err(ConfigError {
            key: "max_tokens".into(),
            value: max_tokens.to_string(),
            message: format!("must be at least {MIN_MAX_TOKENS}"),
        }
        .into());
    }
    let head_share = config::parse_or("head_share", 0.5_f64)?;
    if !(0.0..=1.0).contains(&head_share) {
        return Err(ConfigError {
            key: "head_share".into(),
            value: head_share.to_string(),
            message: "must be between 0 and 1".into(),
        }
        .into());
    }
    Ok((max_tokens, head_share))
}

#[cfg(test)]
mod tests {
    use aeterna_extension_sdk::testing::TestHost;

    use super::*;

    /// `n` numbered lines of 40 ASCII bytes each (10 estimated tokens).
    fn log_lines(n: usize) -> String {
        (0..n)
            .map(|i| format!("line {i:>6}: {:<26}\n", "compiling crate"))
            .collect()
    }

    #[test]
    fn estimates_four_ascii_bytes_per_token_and_one_per_other_character() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("日本語"), 3);
        assert_eq!(estimate_tokens("café"), 1 + 1);
        assert_eq!(log_lines(1).len(), 40);
        assert_eq!(estimate_tokens(&log_lines(10)), 100);
    }

    #[test]
    fn text_within_the_budget_passes_through() {
        let host = TestHost::new().with_config("max_tokens", "100");
        let text = log_lines(10);
        assert_eq!(
            host.plain_text::<OutputCompactor>(text.clone()).unwrap(),
            text
        );
        assert!(host.state_keys().is_empty());
    }

    #[test]
    fn keeps_head_and_tail_lines_with_a_marker_in_between() {
        let host = TestHost::new().with_config("max_tokens", "216");
        let text = log_lines(1000);
        let out = host.plain_text::<OutputCompactor>(text.clone()).unwrap();
        // Budget 216 - 16 for the marker = 200: 100 tokens (10 lines) each side.
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 21);
        assert_eq!(lines[..10], text.lines().take(10).collect::<Vec<_>>()[..]);
        assert_eq!(lines[10], "[… 980 lines (~9,800 tokens) cut …]");
        assert_eq!(lines[11..], text.lines().skip(990).collect::<Vec<_>>()[..]);
        assert!(estimate_tokens(&out) <= 216);

        let stats: Stats = host.state_json(STATS_KEY).unwrap();
        assert_eq!(
            stats,
            Stats {
                compactions: 1,
                lines_cut: 980,
                tokens_cut: 9800
            }
        );
    }

    #[test]
    fn head_share_moves_the_budget_between_head_and_tail() {
        let text = log_lines(100);
        let all_tail = compact(&text, 116, 0.0).unwrap();
        assert!(
            all_tail
                .text
                .starts_with("[… 90 lines (~900 tokens) cut …]\n")
        );
        assert!(all_tail.text.ends_with(&text[text.len() - 400..]));
        let mostly_head = compact(&text, 116, 0.8).unwrap();
        let lines: Vec<&str> = mostly_head.text.lines().collect();
        assert_eq!(lines[8], "[… 90 lines (~900 tokens) cut …]");
        assert_eq!(lines.len(), 8 + 1 + 2);
    }

    #[test]
    fn a_single_huge_line_is_cut_inside_at_character_boundaries() {
        let blob = "é".repeat(500) + &"x".repeat(4000);
        let compacted = compact(&blob, 116, 0.5).unwrap();
        let (head, rest) = compacted.text.split_once('\n').unwrap();
        let (marker, tail) = rest.split_once('\n').unwrap();
        assert_eq!(head, "é".repeat(50));
        assert_eq!(tail, "x".repeat(200));
        assert_eq!(marker, "[… 1 line (~1,400 tokens) cut …]");
    }

    #[test]
    fn numbers_get_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn invalid_settings_are_config_errors() {
        for (key, value) in [
            ("max_tokens", "10"),
            ("max_tokens", "lots"),
            ("head_share", "1.5"),
        ] {
            let host = TestHost::new().with_config(key, value);
            let error = host.plain_text::<OutputCompactor>("x").unwrap_err();
            assert_eq!(error.code, "invalid-config", "{key} = {value}");
            assert!(error.message.contains(key), "{}", error.message);
        }
    }

    #[test]
    fn the_default_budget_is_two_thousand_tokens() {
        let host = TestHost::new();
        let text = log_lines(300);
        let out = host.plain_text::<OutputCompactor>(text).unwrap();
        assert!(out.contains("lines (~"));
        assert!(estimate_tokens(&out) <= DEFAULT_MAX_TOKENS);
        assert!(estimate_tokens(&out) > DEFAULT_MAX_TOKENS - 50);
    }
}
