//! The structure of a session: its themes (events linked by the files and tags they share) and
//! its episodes (a failure, the attempts that followed, and the call that finally succeeded).

use std::collections::HashMap;

use super::signals::{Action, Signals};
use crate::event::CapturedEvent;

/// A group of events about the same thing.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    /// Indices into the session's events, in order.
    pub events: Vec<usize>,
    /// Files touched, most mentioned first.
    pub files: Vec<String>,
    /// Tags, most used first.
    pub tags: Vec<String>,
}

/// Problem → attempts → outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    /// The failing calls of this problem, in order; the first one opened the episode.
    pub failures: Vec<usize>,
    /// Other calls made while the problem was open.
    pub attempts: Vec<usize>,
    /// The call that succeeded where the failures failed, if the session got there.
    pub resolution: Option<usize>,
}

impl Episode {
    pub fn first_failure(&self) -> usize {
        self.failures[0]
    }

    pub fn last_failure(&self) -> usize {
        *self.failures.last().expect("an episode has a failure")
    }

    /// The attempts after the last failure: what made the difference.
    pub fn fix(&self) -> impl Iterator<Item = usize> + '_ {
        let last = self.last_failure();
        self.attempts
            .iter()
            .copied()
            .filter(move |&index| index > last)
    }

    /// The attempts before the last failure: what was tried and did not work.
    pub fn tried(&self) -> impl Iterator<Item = usize> + '_ {
        let last = self.last_failure();
        self.attempts
            .iter()
            .copied()
            .filter(move |&index| index < last)
    }
}

/// Everything the renderer needs about a session.
pub struct Analysis<'a> {
    pub events: &'a [CapturedEvent],
    pub signals: Vec<Signals>,
    pub themes: Vec<Theme>,
    pub episodes: Vec<Episode>,
}

impl<'a> Analysis<'a> {
    pub fn of(events: &'a [CapturedEvent]) -> Analysis<'a> {
        let signals: Vec<Signals> = events.iter().map(Signals::of).collect();
        let episodes = episodes(events, &signals);
        let themes = themes(events, &signals, &episodes);
        Analysis {
            events,
            signals,
            themes,
            episodes,
        }
    }

    /// Files of the whole session, most mentioned first.
    pub fn files(&self) -> Vec<String> {
        ranked(
            self.signals
                .iter()
                .flat_map(|signals| signals.files.iter().cloned()),
        )
    }

    /// Files changed by edit calls, in the order first edited.
    pub fn edited_files(&self) -> Vec<String> {
        let mut files: Vec<String> = Vec::new();
        for signals in self.signals.iter().filter(|s| s.action == Action::Edit) {
            for file in &signals.files {
                if !files.contains(file) {
                    files.push(file.clone());
                }
            }
        }
        files
    }
}

/// What makes two calls "the same" for resolving a failure: tests and builds by what they are
/// (any test run that passes after a failing one), other calls by tool and command word.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Signature {
    Check(Action),
    Call {
        tool: String,
        command: Option<String>,
    },
}

fn signature(event: &CapturedEvent, signals: &Signals) -> Signature {
    match signals.action {
        Action::Test | Action::Build => Signature::Check(signals.action),
        _ => Signature::Call {
            tool: event.tool_name.clone(),
            // The program run, past `VAR=value` prefixes: `TOKEN=… git push` is `git`.
            command: signals
                .command
                .as_deref()
                .and_then(|command| command.split_whitespace().find(|word| !word.contains('=')))
                .map(str::to_owned),
        },
    }
}

fn episodes(events: &[CapturedEvent], signals: &[Signals]) -> Vec<Episode> {
    let mut closed: Vec<Episode> = Vec::new();
    let mut open: Vec<(Signature, Episode)> = Vec::new();
    for (index, event) in events.iter().enumerate() {
        let sig = signature(event, &signals[index]);
        let matching = open.iter().position(|(open_sig, _)| *open_sig == sig);
        // Every open problem other than the one this call repeats sees it as an attempt.
        for (position, (_, episode)) in open.iter_mut().enumerate() {
            if Some(position) != matching {
                episode.attempts.push(index);
            }
        }
        match (event.success, matching) {
            (false, Some(position)) => open[position].1.failures.push(index),
            (false, None) => open.push((
                sig,
                Episode {
                    failures: vec![index],
                    attempts: vec![],
                    resolution: None,
                },
            )),
            (true, Some(position)) => {
                let (_, mut episode) = open.remove(position);
                episode.resolution = Some(index);
                closed.push(episode);
            }
            (true, None) => {}
        }
    }
    closed.extend(open.into_iter().map(|(_, episode)| episode));
    closed.sort_by_key(Episode::first_failure);
    closed
}

/// Union-find over events: events sharing a file or a tag, and the events of one episode,
/// belong together; an event with neither joins the event before it.
fn themes(events: &[CapturedEvent], signals: &[Signals], episodes: &[Episode]) -> Vec<Theme> {
    let mut parent: Vec<usize> = (0..events.len()).collect();
    fn find(parent: &mut [usize], mut index: usize) -> usize {
        while parent[index] != index {
            parent[index] = parent[parent[index]];
            index = parent[index];
        }
        index
    }
    fn union(parent: &mut [usize], a: usize, b: usize) {
        let (a, b) = (find(parent, a), find(parent, b));
        if a != b {
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut first_with_key: HashMap<&str, usize> = HashMap::new();
    for (index, event) in events.iter().enumerate() {
        let keys = signals[index].files.iter().chain(event.tags.iter());
        let mut linked = false;
        for key in keys {
            linked = true;
            match first_with_key.get(key.as_str()) {
                Some(&first) => union(&mut parent, first, index),
                None => {
                    first_with_key.insert(key.as_str(), index);
                }
            }
        }
        if !linked && index > 0 {
            union(&mut parent, index - 1, index);
        }
    }
    for episode in episodes {
        let members = episode.failures.iter().chain(episode.resolution.iter());
        for &member in members {
            union(&mut parent, episode.first_failure(), member);
        }
    }
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for index in 0..events.len() {
        let root = find(&mut parent, index);
        match groups
            .iter_mut()
            .find(|(group_root, _)| *group_root == root)
        {
            Some((_, members)) => members.push(index),
            None => groups.push((root, vec![index])),
        }
    }
    groups
        .into_iter()
        .map(|(_, members)| Theme {
            files: ranked(
                members
                    .iter()
                    .flat_map(|&i| signals[i].files.iter().cloned()),
            ),
            tags: ranked(members.iter().flat_map(|&i| events[i].tags.iter().cloned())),
            events: members,
        })
        .collect()
}

/// Distinct values, most frequent first, ties in order of first appearance.
pub fn ranked(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for value in values {
        match counts.iter_mut().find(|(seen, _)| *seen == value) {
            Some((_, count)) => *count += 1,
            None => counts.push((value, 1)),
        }
    }
    // Stable sort keeps first-appearance order among equal counts.
    counts.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    counts.into_iter().map(|(value, _)| value).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distill::testing::{call, shell};

    #[test]
    fn a_failure_fixed_by_an_edit_is_one_resolved_episode() {
        let events = vec![
            call(
                "grep",
                "find the parser",
                "parse_expr",
                "src/parser.rs:10",
                true,
            ),
            call(
                "read_file",
                "read the parser",
                r#"{"path":"src/parser.rs"}"#,
                "fn parse",
                true,
            ),
            call(
                "edit_file",
                "first change",
                r#"{"path":"src/parser.rs"}"#,
                "ok",
                true,
            ),
            shell("cargo test", "test parser::t ... FAILED", false),
            call(
                "edit_file",
                "the fix",
                r#"{"path":"src/parser.rs"}"#,
                "ok",
                true,
            ),
            shell("cargo test", "test result: ok", true),
        ];
        let analysis = Analysis::of(&events);
        assert_eq!(
            analysis.episodes,
            vec![Episode {
                failures: vec![3],
                attempts: vec![4],
                resolution: Some(5)
            }]
        );
        assert_eq!(analysis.episodes[0].fix().collect::<Vec<_>>(), vec![4]);
        assert_eq!(
            analysis.themes.len(),
            1,
            "one theme: everything is about src/parser.rs"
        );
        assert_eq!(analysis.themes[0].files, vec!["src/parser.rs"]);
        assert_eq!(analysis.edited_files(), vec!["src/parser.rs"]);
    }

    #[test]
    fn repeated_failures_separate_what_was_tried_from_the_fix() {
        let events = vec![
            shell("cargo test", "test a ... FAILED", false),
            call("edit_file", "try one", r#"{"path":"src/a.rs"}"#, "ok", true),
            shell("cargo test", "test a ... FAILED", false),
            call("edit_file", "try two", r#"{"path":"src/a.rs"}"#, "ok", true),
            shell("cargo test", "ok", true),
        ];
        let analysis = Analysis::of(&events);
        let episode = &analysis.episodes[0];
        assert_eq!(episode.failures, vec![0, 2]);
        assert_eq!(episode.tried().collect::<Vec<_>>(), vec![1]);
        assert_eq!(episode.fix().collect::<Vec<_>>(), vec![3]);
        assert_eq!(episode.resolution, Some(4));
    }

    #[test]
    fn unresolved_and_interleaved_problems_are_kept_apart() {
        let events = vec![
            shell("cargo build", "error[E0308]: mismatched types", false),
            call("deploy", "push it", "", "connection refused", false),
            call(
                "edit_file",
                "fix types",
                r#"{"path":"src/a.rs"}"#,
                "ok",
                true,
            ),
            shell("cargo build", "Finished", true),
        ];
        let analysis = Analysis::of(&events);
        assert_eq!(analysis.episodes.len(), 2);
        assert_eq!(analysis.episodes[0].resolution, Some(3));
        assert_eq!(analysis.episodes[0].attempts, vec![1, 2]);
        assert_eq!(analysis.episodes[1].resolution, None);
        assert_eq!(analysis.episodes[1].attempts, vec![2, 3]);
    }

    #[test]
    fn unrelated_work_forms_separate_themes() {
        let mut docs = call("edit_file", "docs", r#"{"path":"README.md"}"#, "ok", true);
        docs.tags = vec!["docs".into()];
        let events = vec![
            call("edit_file", "code", r#"{"path":"src/a.rs"}"#, "ok", true),
            shell("cargo test", "ok", true),
            docs,
        ];
        let analysis = Analysis::of(&events);
        let groups: Vec<Vec<usize>> = analysis.themes.iter().map(|t| t.events.clone()).collect();
        assert_eq!(groups, vec![vec![0, 1], vec![2]]);
        assert_eq!(analysis.themes[1].tags, vec!["docs"]);
    }

    #[test]
    fn ranking_is_by_count_then_first_appearance() {
        let values = ["b", "a", "c", "a", "c"].iter().map(|s| s.to_string());
        assert_eq!(ranked(values), vec!["a", "c", "b"]);
    }
}
