//! The ecosystem of an error whose language the `Language` list does not name: the
//! extensions of the source files its location names and the tool that printed it (`src:`,
//! `tool:` context, see `signature::recognize::headline`), compared between two errors and
//! with the words of a description.

use crate::signature::ErrorSignature;

use super::common;

/// The names of a signature's tool and source-file extension as a person writes them: the
/// tool without directory, extension or version (`/usr/bin/lua5.4` → `lua`), lower case.
pub(super) fn ecosystem_names(signature: &ErrorSignature) -> Vec<String> {
    let mut names: Vec<String> = signature
        .context_patterns
        .iter()
        .filter_map(|c| {
            let name = c
                .strip_prefix("tool:")
                .map(|tool| {
                    let tool = tool.rsplit('/').next().unwrap_or(tool);
                    tool.split('.').next().unwrap_or(tool)
                })
                .or_else(|| c.strip_prefix("src:"))?;
            let name = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
            (name.len() >= 2 && name.chars().all(|c| c.is_ascii_alphanumeric()))
                .then(|| name.to_ascii_lowercase())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Whether a description names one of an error's ecosystem names (`sqlite3` for `sqlite`,
/// `Tcl` for `tclsh`, `Erl…` for `erl`): the word and the name are equal, or the one of at
/// least three letters begins (or, for a tool, ends) the other.
pub(super) fn mentions_ecosystem(description: &str, names: &[String]) -> bool {
    if names.is_empty() {
        return false;
    }
    description
        .split(|c: char| !(c.is_alphanumeric() || c == '#' || c == '+'))
        .filter(|w| w.len() >= 2)
        .map(|w| {
            w.trim_end_matches(|c: char| c.is_ascii_digit())
                .to_lowercase()
        })
        .any(|word| {
            names.iter().any(|name| {
                word == *name
                    || name.len() >= 3
                        && (word.starts_with(name.as_str()) || word.ends_with(name.as_str()))
                    || word.len() >= 3 && name.starts_with(word.as_str())
            })
        })
}

/// Whether two errors of unknown language come from one ecosystem, by the extensions of the
/// source files their locations name and the tools that printed them: 1 when they share one,
/// 0 when both name some and share none, `None` when either names none.
pub(super) fn dialect_similarity(a: &[u64], b: &[u64]) -> Option<f32> {
    (!a.is_empty() && !b.is_empty()).then(|| if common(a, b) > 0 { 1.0 } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::Language;

    fn with_context(context: &[&str]) -> ErrorSignature {
        ErrorSignature {
            error_type: "x".into(),
            message_pattern: "x".into(),
            stack_patterns: vec![],
            context_patterns: context.iter().map(|c| c.to_string()).collect(),
            language: Language::Unknown,
            embedding: None,
        }
    }

    #[test]
    fn names_drop_directories_extensions_and_versions() {
        let names = ecosystem_names(&with_context(&[
            "tool:/usr/bin/calc5.4",
            "src:zz",
            "tool:job.sh",
            "file:a.zz",
        ]));
        assert_eq!(names, ["calc", "job", "zz"]);
    }

    #[test]
    fn a_description_mentions_a_name_whole_or_by_a_prefix_of_three_letters() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(mentions_ecosystem(
            "the Calc script stops",
            &names(&["calc"])
        ));
        assert!(mentions_ecosystem("calcium", &names(&["calc"])));
        assert!(mentions_ecosystem("an sqlite3 query", &names(&["sqlite"])));
        assert!(mentions_ecosystem("the Zz file", &names(&["zz"])));
        assert!(!mentions_ecosystem("a zzz file", &names(&["zz"])));
        assert!(!mentions_ecosystem("anything", &[]));
        assert_eq!(dialect_similarity(&[1], &[2]), Some(0.0));
        assert_eq!(dialect_similarity(&[1, 2], &[2]), Some(1.0));
        assert_eq!(dialect_similarity(&[], &[2]), None);
    }
}
