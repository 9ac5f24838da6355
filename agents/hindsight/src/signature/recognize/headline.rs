//! The fallback for output in a format no recogniser knows: find the error's headline by cues
//! that toolchains share, and cut it into a class, a message and where it happened.
//!
//! Why: the recognisers know the formats someone wrote them for. On toolchains nobody wrote
//! one for, `extract` found nothing and capture refused the text, so nothing could ever be
//! matched. Most tools, whatever their language, print the same kinds of things around an
//! error, and this module relies on those alone — no rule here names a toolchain (the shapes
//! are in [`shapes`]):
//! * a headline line carries error words (`error`, `fatal`, `exception`, `failed`, `cannot`,
//!   `undefined`, `unexpected`, `not found`, …), a class name (`SomethingError`,
//!   `Pkg.SomethingException`, `Mod::Name`, in parentheses or as a `Class: message` head), a
//!   severity label with or without a code (`error CS1234:`, `[ERROR] FATAL:`), a tool's name
//!   (`mytool: …`) and a location (`file.ext:12:`, `file.ext(12,5):`, `… at file.ext line
//!   12.`, `… in /a/b.ext:12`, `(stdin) 2:`, `… at <top>, line 1:`). Each scores; the prefix
//!   of tool, location and label is cut off, and the class and code become the type;
//! * the lines that follow are stack frames (`at …`, `from …`, `#0 …`, `(file "x" line 3)`),
//!   source excerpts (`12 | code`, carets) and summaries (`1 error(s), 0 warnings`, `exit
//!   status 1`): not headlines, though the frames' files name the language;
//! * the first error is the cause: a later line must score clearly more to be the headline
//!   ([`LATER_MARGIN`]), since `compilation aborted` and `exit status 1` come after it;
//! * a headline that ends in `:` with (almost) nothing before it (`Unhandled Exception:`,
//!   `1) Failure:`, `worker panicked at x:3:`) continues on the next lines, and a message of
//!   a few words takes the labelled detail lines after it (`got: …`, `expected: …`).
//!
//! It only runs on lines no recogniser claimed, and only when the recognisers found no error
//! in the text beyond the generic `tool: error: …` patterns (see `extract`), so output a
//! recogniser knows is read exactly as before. It returns at most one error: it cannot tell a
//! second error from a repetition of the first in a format it does not know. A line labelled
//! as a warning (or note) is never a headline: a warning alone is not a failure.
//!
//! The work is linear in the text and bounded: at most [`MAX_LINES`] lines are scored, each
//! on its first [`MAX_LINE_BYTES`] bytes, and at most [`MAX_PATHS`] locations are kept.

mod shapes;

use shapes::*;

use super::{Frame, RawError, language_of};
use crate::signature::{Language, MAX_STACK_PATTERNS};

/// Lines scored for a headline; an error is near the top of what a tool prints.
const MAX_LINES: usize = 20_000;
/// Bytes of a line looked at; past this a line is data, not a headline.
const MAX_LINE_BYTES: usize = 1_000;
/// Lines a headline ending in `:` continues on.
const MAX_CONTINUATION: usize = 4;
/// Lines after the headline searched for stack frames.
const FRAME_WINDOW: usize = 40;
/// Lowest score a headline needs (an error cue must be among its points).
const MIN_SCORE: i32 = 1;
/// How many points more than an earlier candidate a later line needs to be the headline.
const LATER_MARGIN: i32 = 1;
/// A message of at most this many words says too little on its own: the labelled detail
/// lines after it (`got: …`, `expected: …`) are part of it.
const THIN_WORDS: usize = 3;
/// Detail lines added to a thin message.
const MAX_DETAILS: usize = 3;
/// Locations kept from a headline and its continuation.
const MAX_PATHS: usize = 8;

/// What one line says, cut into its parts.
#[derive(Debug, Default)]
struct Cut {
    score: i32,
    /// Whether an error cue (word, class, label) is among its points, not only a location.
    cue: bool,
    class: Option<String>,
    code: Option<String>,
    message: String,
    /// Source locations (the headline's prefix and clauses): the file of the error.
    paths: Vec<String>,
    tool: Option<String>,
    /// The line ends in `:`: what it introduces follows on the next lines.
    opens: bool,
}

/// The headline of `lines` among those nobody `claimed`, as an error (see the module docs).
pub(crate) fn fallback(lines: &[&str], claimed: &[bool]) -> Option<RawError> {
    let mut eligible: Vec<(usize, i32)> = Vec::new();
    for (index, line) in lines.iter().enumerate().take(MAX_LINES) {
        if claimed.get(index).copied().unwrap_or(false) {
            continue;
        }
        let Some(cut) = cut(bounded(line)) else {
            continue;
        };
        if cut.cue && cut.score >= MIN_SCORE {
            eligible.push((index, cut.score));
        }
    }
    // The first error is the cause; a later line must say clearly more to win (`compilation
    // aborted`, `exit status 1` follow the error they are about).
    let best = eligible.iter().map(|(_, score)| *score).max()?;
    let index = eligible
        .iter()
        .find(|(_, score)| *score >= best - LATER_MARGIN)
        .map(|(index, _)| *index)?;
    let mut cut = cut(bounded(lines[index]))?;
    let mut next = index + 1;
    if cut.message.is_empty() || cut.opens && is_thin(&cut.message) {
        next = continue_message(lines, claimed, next, &mut cut);
    }
    if is_thin(&cut.message) {
        next = add_details(lines, claimed, next, &mut cut);
    }
    cut.paths.truncate(MAX_PATHS);
    let frames = frames(lines, next);
    // The files of the headline and of the frames are the code that failed: their extension
    // is the ecosystem.
    let sources: Vec<&str> = cut
        .paths
        .iter()
        .map(String::as_str)
        .chain(frames.iter().filter_map(|f| f.file.as_deref()))
        .collect();
    let language = sources
        .iter()
        .map(|p| language_of(p, Language::Unknown))
        .find(|l| *l != Language::Unknown)
        .unwrap_or(Language::Unknown);
    let error_type = cut.class.take().or(cut.code.take());
    let mut error = RawError::new(language, error_type, cut.message.trim());
    if let Some(tool) = &cut.tool {
        error = error.tool(tool);
    }
    for path in &sources {
        if let Some(ext) = source_extension(path) {
            let entry = format!("src:{ext}");
            if !error.context.contains(&entry) {
                error.context.push(entry);
            }
        }
    }
    error.frames = frames;
    error.paths = cut.paths;
    Some(error)
}

/// The first [`MAX_LINE_BYTES`] of a line, cut at a character boundary.
fn bounded(line: &str) -> &str {
    if line.len() <= MAX_LINE_BYTES {
        return line;
    }
    let end = (0..=MAX_LINE_BYTES)
        .rev()
        .find(|i| line.is_char_boundary(*i))
        .unwrap_or(0);
    &line[..end]
}

/// A line's parts and score; `None` for lines that cannot be a headline (frames, excerpts,
/// rules, warnings).
fn cut(line: &str) -> Option<Cut> {
    if line.trim().is_empty() || FRAME.is_match(line) || NOISE.is_match(line) {
        return None;
    }
    let indented = line.starts_with(char::is_whitespace);
    let text = MARKERS.replace(line.trim(), "");
    let text = text.trim();
    let mut cut = Cut {
        opens: text.ends_with(':'),
        ..Cut::default()
    };
    let segments: Vec<&str> = text.split(": ").collect();
    let mut at = 0;
    let (mut located, mut labelled) = (false, false);
    // A line that starts with the location (`a.go:4:2: x declared and not used`): what
    // compilers print for an error, where warnings carry a label.
    let mut leads = false;
    let mut tool_only = true;
    while at < segments.len() {
        let segment = segments[at].trim().trim_end_matches(':').trim();
        if segment.is_empty() {
            at += 1;
            continue;
        }
        if let Some(paths) = location(segment) {
            cut.paths.extend(paths);
            leads |= tool_only && !indented;
            located = true;
        } else if let Some(label) = label(segment, at == 0) {
            if label.warning {
                return None;
            }
            labelled = true;
            if cut.code.is_none() {
                cut.code = label.code;
            }
            if cut.tool.is_none() {
                cut.tool = label.tool;
            }
        } else if let Some(class) = class_of(segment) {
            cut.class = Some(class);
            at += 1;
            break;
        } else if let Some(class) = trailing_class(segment).filter(|_| at + 1 < segments.len()) {
            // `Exception in thread "main" pkg.SomeException: message`.
            cut.class = Some(class);
            at += 1;
            break;
        } else if at == 0 && at + 1 < segments.len() && is_tool(segment) {
            cut.tool = Some(segment.to_string());
            at += 1;
            continue;
        } else {
            break;
        }
        tool_only = false;
        at += 1;
    }
    let mut message = segments[at.min(segments.len())..].join(": ");
    // `message (SomeError)` and `(SomeError) message`: the class in parentheses.
    for pattern in [&*PAREN_CLASS_END, &*PAREN_CLASS_START] {
        if cut.class.is_some() {
            break;
        }
        if let Some(found) = pattern.captures(&message) {
            let class = &found["class"];
            if is_class(class) {
                cut.class = Some(class.to_string());
                message = pattern.replace(&message, " ").into_owned();
            }
        }
    }
    // ` at x.ext line 4.`, ` in /a/x.ext:3`, `…, line 1:`: where, not what.
    if LOCATION_CLAUSE.is_match(&message) {
        for found in LOCATION_CLAUSE.captures_iter(&message) {
            cut.paths.push(found["path"].to_string());
        }
        message = LOCATION_CLAUSE.replace_all(&message, " ").into_owned();
        located = true;
    }
    if TRAILING_POSITION.is_match(&message) {
        message = TRAILING_POSITION.replace(&message, "").into_owned();
        located = true;
    }
    let message = message.trim().trim_end_matches(':').trim();
    let message = MARKERS.replace(message, "");
    let message = message.trim();
    cut.message = message.to_string();

    let cues = cue_count(message);
    cut.cue = cues > 0 || labelled || cut.class.is_some() || leads && !message.is_empty();
    // A location with nothing else (`a.ext:3: x = ;`) may be an excerpt of code: it is a
    // headline only when no line says more.
    let only_located = leads && cues == 0 && !labelled && cut.class.is_none();
    cut.score = 2 * i32::from(located && !only_located)
        + i32::from(only_located)
        + 3 * i32::from(labelled)
        + 2 * i32::from(cut.code.is_some())
        + 4 * i32::from(cut.class.is_some())
        + cues.min(3) as i32
        - i32::from(indented)
        - i32::from(message.is_empty())
        - 4 * i32::from(SUMMARY.is_match(message))
        - i32::from(message.len() > 300);
    Some(cut)
}

/// Fills a headline that ended in `:` from the lines after it: skips headers that only say
/// where (`Suite#test [t.rb:9]:`), takes up to [`MAX_CONTINUATION`] lines up to a blank line
/// or a frame, and cuts them like a headline. Returns the index of the line after them.
fn continue_message(lines: &[&str], claimed: &[bool], from: usize, cut: &mut Cut) -> usize {
    let mut taken: Vec<&str> = Vec::new();
    let mut at = from;
    while at < lines.len() && taken.len() < MAX_CONTINUATION {
        let line = bounded(lines[at]);
        if line.trim().is_empty() && !taken.is_empty() {
            break;
        }
        if claimed.get(at).copied().unwrap_or(false)
            || FRAME.is_match(line)
            || NOISE.is_match(line) && !line.trim().is_empty()
            || RULE.is_match(line)
            || is_note(line)
        {
            break;
        }
        at += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.ends_with(':')
            && let Some(paths) = location(trimmed.trim_end_matches(':'))
        {
            cut.paths.extend(paths);
            continue;
        }
        taken.push(trimmed);
    }
    if let Some(more) = self::cut(&taken.join(" ")) {
        if cut.class.is_none() {
            cut.class = more.class;
        }
        if cut.code.is_none() {
            cut.code = more.code;
        }
        cut.paths.extend(more.paths);
        cut.message = if cut.message.is_empty() {
            more.message
        } else {
            format!("{} {}", cut.message, more.message)
        };
    }
    at
}

/// Whether a message has too few words to tell errors apart (`Failed test <Q>`).
fn is_thin(message: &str) -> bool {
    let (pattern, _) = crate::signature::normalize_message(message);
    crate::terms::terms(&pattern)
        .iter()
        .filter(|t| *t != crate::terms::PLACEHOLDER)
        .count()
        <= THIN_WORDS
}

/// Appends to a thin message the labelled detail lines right after it (`got: 1`,
/// `expected: 2`, `Actual: 3`), skipping lines that only say where; stops at anything else.
/// Returns the index of the line after them.
fn add_details(lines: &[&str], claimed: &[bool], from: usize, cut: &mut Cut) -> usize {
    let mut at = from;
    let mut added = 0;
    while at < lines.len() && added < MAX_DETAILS {
        let line = bounded(lines[at]);
        if claimed.get(at).copied().unwrap_or(false) || FRAME.is_match(line) || RULE.is_match(line)
        {
            break;
        }
        let text = MARKERS.replace(line.trim(), "");
        let text = text.trim();
        let bare = LOCATION_CLAUSE.replace_all(text, " ");
        if !text.is_empty() && bare.trim().trim_end_matches('.').trim().is_empty()
            || location(text.trim_end_matches([':', '.'])).is_some()
        {
            // `at t.ext line 8.`: where, not what.
            at += 1;
            continue;
        }
        // A detail, not another diagnostic (`collect2: error: …`, `tool: a.ext:3: …`) or a
        // summary.
        let segments: Vec<&str> = text.split(": ").collect();
        let head = segments[0].trim();
        let labelled = segments[..segments.len() - 1]
            .iter()
            .any(|s| label(s.trim(), false).is_some() || location(s.trim()).is_some())
            || cut.tool.as_deref() == Some(head);
        if !DETAIL.is_match(text) || labelled || SUMMARY.is_match(text) || is_note(line) {
            break;
        }
        cut.message = format!("{} {text}", cut.message);
        added += 1;
        at += 1;
    }
    at
}

/// The stack frames printed after the headline, innermost first as printed.
fn frames(lines: &[&str], from: usize) -> Vec<Frame> {
    let mut frames = Vec::new();
    for line in lines.iter().skip(from).take(FRAME_WINDOW) {
        if frames.len() == MAX_STACK_PATTERNS {
            break;
        }
        let line = bounded(line);
        if !FRAME.is_match(line) {
            // `    (file "a.ext" line 3)`: a frame that only says where.
            let trimmed = line.trim();
            if line.starts_with(char::is_whitespace)
                && let Some(found) = LOCATION.captures(trimmed)
                && location(trimmed).is_some()
            {
                frames.push(Frame {
                    file: Some(found["path"].to_string()),
                    function: None,
                });
            }
            continue;
        }
        let rest = line
            .trim()
            .trim_start_matches(|c: char| c == '#' || c.is_ascii_digit())
            .trim_start();
        let rest = ["at ", "from ", "in ", "by ", "called from "]
            .iter()
            .find_map(|k| rest.strip_prefix(k))
            .unwrap_or(rest);
        let file = LOCATION.captures(rest).map(|c| c["path"].to_string());
        let bare = PARENTHESISED.replace_all(rest, " ");
        let function = quoted_name(rest).or_else(|| {
            bare.split_whitespace()
                .find(|t| {
                    !LOCATION.is_match(t)
                        && t.chars().any(char::is_alphabetic)
                        && !t.starts_with(['(', '[', '<'])
                })
                .map(|t| t.trim_end_matches(['(', ',', ':']).to_string())
        });
        if file.is_some() || function.is_some() {
            frames.push(Frame {
                file,
                function: function.filter(|f| !f.is_empty()),
            });
        }
    }
    frames
}

#[cfg(test)]
mod tests;
