//! The deterministic distiller: template distillation over the session's [`Analysis`]. The
//! same events always give the same note.

use super::analysis::{Analysis, Episode, ranked};
use super::render::{clip, code, duration, utc_minute};
use super::signals::{Action, language_of};
use super::{Declined, DistillInput, Distillation, DistilledNote, Distiller};

/// List lengths that keep a note readable (and far below the memory service's size limit).
const MAX_EPISODES: usize = 5;
const MAX_FILES: usize = 10;
const MAX_TOOLS: usize = 8;
const MAX_THEMES: usize = 5;
const MAX_STEPS: usize = 12;
const MAX_TAGS: usize = 16;
const MAX_KEYWORDS: usize = 12;
const MAX_TEXT: usize = 240;
const MAX_DESCRIPTION: usize = 300;

/// Template distillation; needs nothing and cannot fail.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeterministicDistiller;

impl DeterministicDistiller {
    pub const ID: &'static str = "deterministic-v1";

    /// The note of `input`, whatever it holds.
    pub fn distill_now(&self, input: DistillInput<'_>) -> DistilledNote {
        Self::write(input, &Analysis::of(input.events))
    }

    /// The note of `input`, or "nothing worth a note" when nothing failed and nothing was
    /// changed: a session that only searched, read, built or tested teaches nothing to reuse.
    pub fn judge(&self, input: DistillInput<'_>) -> Distillation {
        let analysis = Analysis::of(input.events);
        let changed = analysis
            .signals
            .iter()
            .any(|signal| matches!(signal.action, Action::Edit | Action::Run));
        if analysis.episodes.is_empty() && !changed {
            let calls = input.events.len();
            return Distillation::Declined(Declined {
                reason: format!(
                    "nothing failed and nothing was changed: the {calls} {} only searched, read,                      built or tested",
                    if calls == 1 { "call" } else { "calls" }
                ),
                distiller: Self::ID.to_owned(),
            });
        }
        Distillation::Note(Self::write(input, &analysis))
    }

    fn write(input: DistillInput<'_>, analysis: &Analysis<'_>) -> DistilledNote {
        let writer = NoteWriter { input, analysis };
        let problem = writer.problem();
        let solution = writer.solution();
        let tags = writer.tags();
        DistilledNote {
            title: writer.title(),
            description: writer.summary(&solution),
            keywords: writer.keywords(&tags),
            context: writer.context(),
            problem,
            solution,
            patterns: writer.patterns(),
            tags,
            quality: writer.quality(),
            distiller: Self::ID.to_owned(),
            fallbacks: Vec::new(),
        }
    }
}

#[async_trait::async_trait]
impl Distiller for DeterministicDistiller {
    fn id(&self) -> &str {
        Self::ID
    }

    async fn distill(&self, input: DistillInput<'_>) -> anyhow::Result<Distillation> {
        Ok(self.judge(input))
    }
}

struct NoteWriter<'a, 'e> {
    input: DistillInput<'e>,
    analysis: &'a Analysis<'e>,
}

impl NoteWriter<'_, '_> {
    fn label(&self, index: usize) -> String {
        self.analysis.signals[index].label(&self.analysis.events[index])
    }

    fn description(&self, index: usize) -> Option<String> {
        let text = self.analysis.events[index].description.trim();
        (!text.is_empty()).then(|| clip(text, MAX_TEXT))
    }

    fn failing_tests(&self, episode: &Episode) -> Vec<String> {
        ranked(
            episode
                .failures
                .iter()
                .flat_map(|&index| self.analysis.signals[index].failing_tests.iter().cloned()),
        )
    }

    /// "test `a`" or "tests `a`, `b` and 3 more", and the matching verb ending.
    fn tests_phrase(tests: &[String]) -> (String, &'static str) {
        let noun = if tests.len() == 1 { "test" } else { "tests" };
        let verb_ending = if tests.len() == 1 { "es" } else { "" };
        (format!("{noun} {}", codes(tests, 3)), verb_ending)
    }

    fn title(&self) -> String {
        let episodes = &self.analysis.episodes;
        let chosen = episodes
            .iter()
            .find(|e| e.resolution.is_some())
            .or(episodes.first());
        if let Some(episode) = chosen {
            let tests = self.failing_tests(episode);
            let what = match tests.first() {
                Some(test) => format!("failing test {}", code(test)),
                None => format!("failing {}", self.label(episode.first_failure())),
            };
            return match episode.resolution {
                Some(_) => {
                    let file = episode
                        .fix()
                        .filter(|&i| self.analysis.signals[i].action == Action::Edit)
                        .find_map(|i| self.analysis.signals[i].files.first().cloned());
                    match file {
                        Some(file) => format!("Fix for {what} in {}", code(&file)),
                        None => format!("Fix for {what}"),
                    }
                }
                None => format!("Unresolved: {what}"),
            };
        }
        if let Some(goal) = (0..self.analysis.events.len()).find_map(|i| self.description(i)) {
            return clip(&goal, 100);
        }
        match self.analysis.edited_files().first() {
            Some(file) => format!("Work on {}", code(file)),
            None => format!("Session of {} tool calls", self.analysis.events.len()),
        }
    }

    /// What failed first and how the session ended, or what was done: one or two sentences
    /// from which a reader decides whether the note is relevant.
    fn summary(&self, solution: &[String]) -> String {
        let analysis = self.analysis;
        let text = match analysis.episodes.first() {
            Some(episode) => {
                let first = episode.first_failure();
                let mut text = format!("{} failed", self.label(first));
                let tests = self.failing_tests(episode);
                if !tests.is_empty() {
                    text.push_str(&format!(": {}", Self::tests_phrase(&tests).0));
                }
                if let Some(error) = &analysis.signals[first].error {
                    text.push_str(&format!(" with {}", code(&clip(error_gist(error), 100))));
                }
                let resolved = analysis.episodes.iter().all(|e| e.resolution.is_some());
                match (resolved, episode.resolution) {
                    (true, Some(passed)) => {
                        let edited: Vec<String> = ranked(
                            episode
                                .fix()
                                .filter(|&i| analysis.signals[i].action == Action::Edit)
                                .flat_map(|i| analysis.signals[i].files.iter().cloned()),
                        );
                        let how = if edited.is_empty() {
                            String::new()
                        } else {
                            format!(" by editing {}", codes(&edited, 2))
                        };
                        text.push_str(&format!(". Fixed{how}; {} passed.", self.label(passed)));
                    }
                    _ => text.push_str(". Not resolved in the session."),
                }
                text
            }
            None => {
                let mut text = format!("{} tool calls", analysis.events.len());
                if let Some(goal) = (0..analysis.events.len()).find_map(|i| self.description(i)) {
                    text.push_str(&format!(" to {}", goal.trim_end_matches('.')));
                }
                let edited = analysis.edited_files();
                if !edited.is_empty() {
                    text.push_str(&format!("; edited {}", codes(&edited, 3)));
                }
                match solution.last().filter(|step| step.ends_with("passed.")) {
                    Some(last) => text.push_str(&format!("; {last}")),
                    None => text.push('.'),
                }
                text
            }
        };
        clip(&text, MAX_DESCRIPTION)
    }

    /// Search terms: failing tests, edited files, then the tags that name a topic.
    fn keywords(&self, tags: &[String]) -> Vec<String> {
        let tests = self
            .analysis
            .episodes
            .iter()
            .flat_map(|episode| self.failing_tests(episode))
            .take(3);
        let files = self.analysis.edited_files().into_iter().take(4);
        let topics = tags
            .iter()
            .filter(|tag| {
                !matches!(
                    tag.as_str(),
                    "fixed" | "unresolved" | "test-failure" | "build-failure" | "tool-failure"
                )
            })
            .cloned();
        let mut keywords: Vec<String> = Vec::new();
        for keyword in tests.chain(files).chain(topics) {
            if !keywords.contains(&keyword) {
                keywords.push(keyword);
            }
        }
        keywords.truncate(MAX_KEYWORDS);
        keywords
    }

    fn context(&self) -> Vec<String> {
        let events = self.analysis.events;
        let session = self.input.session;
        let failed = events.iter().filter(|e| !e.success).count();
        let first = events
            .iter()
            .map(|e| e.captured_at)
            .min()
            .unwrap_or_default();
        let last = events
            .iter()
            .map(|e| e.captured_at)
            .max()
            .unwrap_or_default();
        let mut place = String::new();
        if !session.session_id.is_empty() {
            place.push_str(&format!("Session {} ", code(&session.session_id)));
        }
        if !session.project_id.is_empty() {
            place.push_str(&format!("in project {} ", code(&session.project_id)));
        }
        let mut lines = vec![format!(
            "{place}{}{} tool calls from {} over {}: {} succeeded, {failed} failed.",
            if place.is_empty() { "" } else { "— " },
            events.len(),
            utc_minute(first),
            duration((last - first).max(0) as u64),
            events.len() - failed,
        )];
        if let Some(goal) = (0..events.len()).find_map(|i| self.description(i)) {
            lines.push(format!("Started with: {goal}"));
        }
        let tools = counted(events.iter().map(|e| e.tool_name.clone()), MAX_TOOLS);
        lines.push(format!("Tools: {tools}."));
        let files = self.analysis.files();
        if !files.is_empty() {
            lines.push(format!("Files: {}.", codes(&files, MAX_FILES)));
        }
        if self.analysis.themes.len() > 1 {
            let themes: Vec<String> = self
                .analysis
                .themes
                .iter()
                .take(MAX_THEMES)
                .enumerate()
                .map(|(n, theme)| {
                    let about = if !theme.files.is_empty() {
                        codes(&theme.files, 3)
                    } else if !theme.tags.is_empty() {
                        codes(&theme.tags, 3)
                    } else {
                        counted(theme.events.iter().map(|&i| events[i].tool_name.clone()), 3)
                    };
                    format!("({}) {about} — {} calls", n + 1, theme.events.len())
                })
                .collect();
            lines.push(format!("Themes: {}.", themes.join("; ")));
        }
        let truncated = events.iter().filter(|e| !e.truncated.is_empty()).count();
        if truncated > 0 {
            lines.push(format!(
                "{truncated} events were cut to the capture size limits."
            ));
        }
        lines
    }

    fn problem(&self) -> Vec<String> {
        let episodes = &self.analysis.episodes;
        if episodes.is_empty() {
            return vec!["No call failed in this session.".to_owned()];
        }
        episodes
            .iter()
            .take(MAX_EPISODES)
            .map(|episode| {
                let first = episode.first_failure();
                let mut line = format!("{} failed", self.label(first));
                if episode.failures.len() > 1 {
                    line.push_str(&format!(" {} times", episode.failures.len()));
                }
                let tests = self.failing_tests(episode);
                if !tests.is_empty() {
                    line.push_str(&format!(": {}", Self::tests_phrase(&tests).0));
                }
                if let Some(error) = &self.analysis.signals[first].error {
                    line.push_str(&format!(" — {}", code(error)));
                }
                if let Some(description) = self.description(first) {
                    line.push_str(&format!(" (while: {description})"));
                }
                line
            })
            .chain(
                (episodes.len() > MAX_EPISODES)
                    .then(|| format!("…and {} more failing calls.", episodes.len() - MAX_EPISODES)),
            )
            .collect()
    }

    /// What a step did, for the solution: edits by file and purpose, other calls by label.
    fn step(&self, index: usize) -> String {
        let signals = &self.analysis.signals[index];
        let purpose = self
            .description(index)
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        match (signals.action, signals.files.first()) {
            (Action::Edit, Some(file)) => format!("Edited {}{purpose}", code(file)),
            _ => format!("Ran {}{purpose}", self.label(index)),
        }
    }

    fn is_change(&self, index: usize) -> bool {
        !matches!(
            self.analysis.signals[index].action,
            Action::Search | Action::Read
        )
    }

    fn solution(&self) -> Vec<String> {
        let mut steps = Vec::new();
        let episodes = &self.analysis.episodes;
        if episodes.is_empty() {
            let events = self.analysis.events;
            let changes = (0..events.len())
                .filter(|&i| matches!(self.analysis.signals[i].action, Action::Edit | Action::Run));
            steps.extend(changes.map(|i| self.step(i)));
            steps.truncate(MAX_STEPS);
            if let Some(last) = (0..events.len()).rev().find(|&i| {
                matches!(
                    self.analysis.signals[i].action,
                    Action::Test | Action::Build
                )
            }) {
                steps.push(format!("{} passed.", self.label(last)));
            }
            return steps;
        }
        // A call shared by overlapping problems is listed once, under the first.
        let mut listed = vec![false; self.analysis.events.len()];
        let mut take = |indices: Vec<usize>| -> Vec<usize> {
            indices
                .into_iter()
                .filter(|&i| !std::mem::replace(&mut listed[i], true))
                .collect()
        };
        for episode in episodes.iter().take(MAX_EPISODES) {
            let tried = take(episode.tried().filter(|&i| self.is_change(i)).collect());
            if !tried.is_empty() {
                let shown: Vec<String> = tried.iter().take(3).map(|&i| self.step(i)).collect();
                let more = match tried.len().saturating_sub(3) {
                    0 => String::new(),
                    more => format!(" and {more} more"),
                };
                steps.push(format!(
                    "Tried first, without success: {}{more}.",
                    shown.join("; ")
                ));
            }
            let looked: Vec<String> = episode
                .fix()
                .filter(|&i| !self.is_change(i))
                .flat_map(|i| self.analysis.signals[i].files.iter().cloned())
                .collect();
            if !looked.is_empty() {
                steps.push(format!(
                    "Investigated {}.",
                    codes(&ranked(looked.into_iter()), 5)
                ));
            }
            let changed = episode.fix().any(|i| self.is_change(i));
            let fix = take(episode.fix().filter(|&i| self.is_change(i)).collect());
            steps.extend(fix.iter().map(|&i| self.step(i)));
            match episode.resolution {
                Some(resolved) => {
                    if !changed {
                        steps.push("Re-ran without changes: the failure did not recur.".into());
                    }
                    let tests = self.failing_tests(episode);
                    let now = if tests.is_empty() {
                        String::new()
                    } else {
                        let (phrase, ending) = Self::tests_phrase(&tests);
                        format!("; {phrase} now pass{ending}")
                    };
                    steps.push(format!("{} passed{now}.", self.label(resolved)));
                }
                None => steps.push(format!(
                    "Not resolved in this session: {} was still failing.",
                    self.label(episode.last_failure())
                )),
            }
        }
        if steps.len() > MAX_STEPS {
            let more = steps.len() - MAX_STEPS;
            steps.truncate(MAX_STEPS);
            steps.push(format!("…and {more} more steps."));
        }
        steps
    }

    fn patterns(&self) -> Vec<String> {
        let analysis = self.analysis;
        let mut patterns = Vec::new();
        patterns.push(format!("Workflow: {}.", workflow(&analysis.signals)));
        for episode in analysis.episodes.iter().take(MAX_EPISODES) {
            let edits = episode
                .attempts
                .iter()
                .filter(|&&i| analysis.signals[i].action == Action::Edit)
                .count();
            let label = self.label(episode.first_failure());
            match episode.resolution {
                Some(resolved) => {
                    let runs = episode.failures.len();
                    patterns.push(format!(
                        "{label} fixed after {runs} failed {} and {edits} {}.",
                        if runs == 1 { "run" } else { "runs" },
                        if edits == 1 { "edit" } else { "edits" },
                    ));
                    if analysis.signals[resolved].action == Action::Test {
                        patterns
                            .push("The fix was confirmed by re-running the failing test.".into());
                    }
                }
                None => patterns.push(format!("Open problem: {label} still fails.")),
            }
        }
        let edited = analysis.edited_files();
        if edited.len() >= 2 {
            patterns.push(format!(
                "Files changed together: {}.",
                codes(&edited, MAX_FILES)
            ));
        }
        if let Some(slowest) =
            (0..analysis.events.len()).max_by_key(|&i| analysis.events[i].duration_ms)
            && analysis.events[slowest].duration_ms >= 1_000
        {
            patterns.push(format!(
                "Slowest call: {} ({}).",
                self.label(slowest),
                duration(analysis.events[slowest].duration_ms)
            ));
        }
        patterns.dedup();
        patterns
    }

    fn tags(&self) -> Vec<String> {
        let analysis = self.analysis;
        let mut tags = ranked(analysis.events.iter().flat_map(|e| e.tags.iter().cloned()));
        for language in analysis.files().iter().filter_map(|file| language_of(file)) {
            if !tags.iter().any(|tag| tag == language) {
                tags.push(language.to_owned());
            }
        }
        let episodes = &analysis.episodes;
        let kinds = episodes
            .iter()
            .map(|e| analysis.signals[e.first_failure()].action);
        for action in kinds {
            let tag = match action {
                Action::Test => "test-failure",
                Action::Build => "build-failure",
                _ => "tool-failure",
            };
            if !tags.iter().any(|t| t == tag) {
                tags.push(tag.to_owned());
            }
        }
        if !episodes.is_empty() {
            let resolved = episodes.iter().all(|e| e.resolution.is_some());
            tags.push(if resolved { "fixed" } else { "unresolved" }.to_owned());
        }
        tags.iter_mut()
            .for_each(|tag| *tag = tag.split_whitespace().collect::<Vec<_>>().join("-"));
        tags.retain(|tag| !tag.is_empty());
        tags.truncate(MAX_TAGS);
        tags
    }

    /// 0..1: is there a problem, was it solved, by what, and how specific is the evidence.
    fn quality(&self) -> f32 {
        let analysis = self.analysis;
        let events = analysis.events;
        if events.is_empty() {
            return 0.0;
        }
        let mut score = 0.0f32;
        if analysis.episodes.is_empty() {
            // Without a problem a note documents less; it still records what was done.
            score += 0.2;
            if (0..events.len()).any(|i| analysis.signals[i].action == Action::Edit) {
                score += 0.15;
            }
            if events.last().is_some_and(|e| e.success) {
                score += 0.15;
            }
            if events.iter().any(|e| !e.tags.is_empty()) {
                score += 0.1;
            }
        } else {
            let resolved = analysis
                .episodes
                .iter()
                .filter(|e| e.resolution.is_some())
                .count();
            score += 0.25 + 0.25 * resolved as f32 / analysis.episodes.len() as f32;
            let fixed_by_edit = analysis.episodes.iter().any(|e| {
                e.resolution.is_some()
                    && e.fix().any(|i| analysis.signals[i].action == Action::Edit)
            });
            if fixed_by_edit {
                score += 0.15;
            }
            let evidence = analysis.episodes.iter().any(|e| {
                let first = e.first_failure();
                !analysis.signals[first].failing_tests.is_empty()
                    || analysis.signals[first].error.is_some()
            });
            if evidence {
                score += 0.1;
            }
        }
        if !analysis.files().is_empty() {
            score += 0.1;
        }
        let described = events
            .iter()
            .filter(|e| !e.description.trim().is_empty())
            .count();
        score += 0.15 * described as f32 / events.len() as f32;
        (score.min(1.0) * 100.0).round() / 100.0
    }
}

/// The message of an error line without a panic's location prefix:
/// `thread 'x' panicked at src/a.rs:3:9: boom` → `boom`.
fn error_gist(error: &str) -> &str {
    error
        .find(" panicked at ")
        .and_then(|at| error[at..].find(": ").map(|colon| at + colon + 2))
        .map_or(error, |start| &error[start..])
}

/// The sequence of actions with repeats folded: "search → read → (edit → test) ×3".
fn workflow(signals: &[super::signals::Signals]) -> String {
    let mut actions: Vec<&str> = Vec::new();
    for signal in signals {
        if actions.last() != Some(&signal.action.as_str()) {
            actions.push(signal.action.as_str());
        }
    }
    let mut parts: Vec<String> = Vec::new();
    let mut index = 0;
    while index < actions.len() {
        // Fold the longest-lasting repeat of a 2- or 3-step cycle starting here.
        let folded = [2usize, 3]
            .into_iter()
            .map(|width| {
                let unit = &actions[index..(index + width).min(actions.len())];
                let repeats = actions[index..]
                    .chunks(width)
                    .take_while(|chunk| *chunk == unit)
                    .count();
                (width, repeats)
            })
            .filter(|&(_, repeats)| repeats >= 2)
            .max_by_key(|&(width, repeats)| width * repeats);
        match folded {
            Some((width, repeats)) => {
                parts.push(format!(
                    "({}) ×{repeats}",
                    actions[index..index + width].join(" → ")
                ));
                index += width * repeats;
            }
            None => {
                parts.push(actions[index].to_owned());
                index += 1;
            }
        }
    }
    if parts.len() > MAX_STEPS {
        parts.truncate(MAX_STEPS);
        parts.push("…".to_owned());
    }
    parts.join(" → ")
}

/// "bash ×3, edit_file ×2".
fn counted(values: impl Iterator<Item = String>, max: usize) -> String {
    let values: Vec<String> = values.collect();
    ranked(values.iter().cloned())
        .into_iter()
        .take(max)
        .map(|value| {
            let count = values.iter().filter(|v| **v == value).count();
            format!("{value} ×{count}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "`a`, `b`, `c` and 2 more".
fn codes(values: &[String], max: usize) -> String {
    let shown: Vec<String> = values.iter().take(max).map(|value| code(value)).collect();
    match values.len().saturating_sub(max) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

#[cfg(test)]
#[path = "deterministic_tests.rs"]
mod tests;
