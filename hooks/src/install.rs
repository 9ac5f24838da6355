//! `aeterna hooks install claude-code`: our hooks merged into a Claude Code settings file.
//!
//! The file's other keys are kept as written (order and formatting: only `hooks` is rewritten),
//! and so are the user's own hooks. Our entries are recognised by their command (an `aeterna`
//! program running `hook <Event>`), so installing again replaces them instead of adding a
//! second copy, and `uninstall` removes exactly them.

use std::path::{Path, PathBuf};

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::claude_code::Event;

/// Where the settings live.
#[derive(Debug, Clone)]
pub enum Scope {
    /// `<dir>/.claude/settings.json`: this repository, shared with whoever clones it.
    Project(PathBuf),
    /// `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`): every session of
    /// this user.
    User,
}

impl Scope {
    pub fn settings_path(&self) -> Result<PathBuf, InstallError> {
        match self {
            Scope::Project(dir) => Ok(dir.join(".claude").join("settings.json")),
            Scope::User => {
                if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
                    return Ok(PathBuf::from(dir).join("settings.json"));
                }
                let home = std::env::var_os("HOME")
                    .filter(|home| !home.is_empty())
                    .ok_or(InstallError::NoHome)?;
                Ok(PathBuf::from(home).join(".claude").join("settings.json"))
            }
        }
    }
}

/// The command the hooks run: `program hook <Event> args…`.
#[derive(Debug, Clone)]
pub struct HookCommand {
    pub program: PathBuf,
    /// Flags after the event (`--server URL`, `--token-env VAR`).
    pub args: Vec<String>,
}

impl HookCommand {
    /// The shell command line for `event`, every word quoted.
    pub fn line(&self, event: Event) -> String {
        let mut words = vec![
            quote(&self.program.to_string_lossy()),
            "hook".to_owned(),
            event.name().to_owned(),
        ];
        words.extend(self.args.iter().map(|arg| quote(arg)));
        words.join(" ")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(
        "cannot find the user's Claude Code settings: HOME is not set (set CLAUDE_CONFIG_DIR or use --project)"
    )]
    NoHome,
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid JSON ({source}); fix or move it, then install again")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{path}: {what}; fix it by hand, then install again")]
    Shape { path: PathBuf, what: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What an install or uninstall changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub path: PathBuf,
    /// Our entries before the change (replaced by an install, removed by an uninstall).
    pub previous: usize,
    /// Our entries after it.
    pub installed: usize,
}

/// Hook timeouts Claude Code enforces, in seconds; ours are far shorter.
const CONTEXT_TIMEOUT_SECS: u64 = 10;
const WRITE_TIMEOUT_SECS: u64 = 20;

/// Installs our hooks into the settings at `path`, creating it if needed.
pub fn install(path: &Path, command: &HookCommand) -> Result<Report, InstallError> {
    rewrite(path, |hooks| {
        let previous = remove_ours(hooks);
        for event in Event::ALL {
            let groups = hooks
                .entry(event.name())
                .or_insert_with(|| Value::Array(Vec::new()));
            let timeout = match event {
                Event::SessionStart | Event::UserPromptSubmit => CONTEXT_TIMEOUT_SECS,
                _ => WRITE_TIMEOUT_SECS,
            };
            let mut group = json!({
                "hooks": [{ "type": "command", "command": command.line(event), "timeout": timeout }],
            });
            if matches!(event, Event::PostToolUse | Event::PostToolUseFailure) {
                group["matcher"] = "*".into();
            }
            if let Value::Array(groups) = groups {
                groups.push(group);
            }
        }
        (previous, Event::ALL.len())
    })
}

/// Removes our hooks from the settings at `path` (a missing file has none).
pub fn uninstall(path: &Path) -> Result<Report, InstallError> {
    if !path.exists() {
        return Ok(Report {
            path: path.to_owned(),
            previous: 0,
            installed: 0,
        });
    }
    rewrite(path, |hooks| (remove_ours(hooks), 0))
}

/// Reads the settings, lets `change` edit its `hooks` object, and writes the file back with
/// every other key as it was.
fn rewrite(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> (usize, usize),
) -> Result<Report, InstallError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => "{}".to_owned(),
        Err(source) => {
            return Err(InstallError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    let shape = |what: &str| InstallError::Shape {
        path: path.to_owned(),
        what: what.to_owned(),
    };
    let text = if text.trim().is_empty() { "{}" } else { &text };
    let mut keys = parse_object(text).map_err(|source| match source.is_data() {
        true => shape("the settings are not a JSON object"),
        false => InstallError::Parse {
            path: path.to_owned(),
            source,
        },
    })?;
    let position = keys.iter().position(|(key, _)| key == "hooks");
    let mut hooks = match position {
        Some(index) => match serde_json::from_str::<Value>(keys[index].1.get()) {
            Ok(Value::Object(hooks)) => hooks,
            _ => return Err(shape("`hooks` is not an object")),
        },
        None => Map::new(),
    };
    for (event, groups) in &hooks {
        if !groups.is_array() {
            return Err(shape(&format!("`hooks.{event}` is not an array")));
        }
    }
    let (previous, installed) = change(&mut hooks);
    hooks.retain(|_, groups| groups.as_array().is_none_or(|groups| !groups.is_empty()));
    let hooks_text = serde_json::to_string_pretty(&Value::Object(hooks.clone()))
        .expect("a JSON value serialises");
    let hooks_raw = RawValue::from_string(indent(&hooks_text)).expect("valid JSON");
    match (position, hooks.is_empty()) {
        (Some(index), true) => {
            keys.remove(index);
        }
        (Some(index), false) => keys[index].1 = hooks_raw,
        (None, true) => {}
        (None, false) => keys.push(("hooks".to_owned(), hooks_raw)),
    }
    let write = |source| InstallError::Write {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(write)?;
    }
    let temp = path.with_extension("json.aeterna-tmp");
    std::fs::write(&temp, render(&keys)).map_err(write)?;
    std::fs::rename(&temp, path).map_err(write)?;
    Ok(Report {
        path: path.to_owned(),
        previous,
        installed,
    })
}

/// Removes our hook entries from every event; the number removed.
fn remove_ours(hooks: &mut Map<String, Value>) -> usize {
    let mut removed = 0;
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        for group in groups.iter_mut() {
            if let Some(entries) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = entries.len();
                entries.retain(|entry| !is_ours(entry, event));
                removed += before - entries.len();
            }
        }
        groups.retain(|group| {
            group["hooks"]
                .as_array()
                .is_none_or(|entries| !entries.is_empty())
        });
    }
    removed
}

/// Whether a hook entry runs `aeterna hook <event>`.
fn is_ours(entry: &Value, event: &str) -> bool {
    let Some(command) = entry["command"].as_str() else {
        return false;
    };
    let words = shell_words(command);
    let is_aeterna = words.first().is_some_and(|program| {
        Path::new(program)
            .file_name()
            .is_some_and(|name| name == "aeterna")
    });
    is_aeterna
        && words.get(1).is_some_and(|word| word == "hook")
        && words.get(2).is_some_and(|word| word == event)
}

/// The words of a shell command line (quotes and backslashes as the shell reads them; no
/// expansion).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(open), c) if c == open => quote = None,
            (Some('"'), '\\') | (None, '\\') => {
                word.extend(chars.next());
                in_word = true;
            }
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// A JSON object's members in their order, each value as written.
fn parse_object(text: &str) -> Result<Vec<(String, Box<RawValue>)>, serde_json::Error> {
    struct Members;
    impl<'de> Visitor<'de> for Members {
        type Value = Vec<(String, Box<RawValue>)>;
        fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
            formatter.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut members = Vec::new();
            while let Some(member) = map.next_entry::<String, Box<RawValue>>()? {
                members.push(member);
            }
            Ok(members)
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let members = (&mut deserializer).deserialize_map(Members)?;
    deserializer.end()?;
    Ok(members)
}

/// The object again, two-space indented, one member per line.
fn render(members: &[(String, Box<RawValue>)]) -> String {
    let body: Vec<String> = members
        .iter()
        .map(|(key, value)| format!("  {}: {}", Value::from(key.as_str()), value.get()))
        .collect();
    match body.is_empty() {
        true => "{}\n".to_owned(),
        false => format!("{{\n{}\n}}\n", body.join(",\n")),
    }
}

/// A pretty-printed value indented one level, to sit inside the top object.
fn indent(text: &str) -> String {
    text.replace('\n', "\n  ")
}

/// `word` as one shell word.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&byte));
    match plain {
        true => word.to_owned(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command() -> HookCommand {
        HookCommand {
            program: PathBuf::from("/opt/my tools/aeterna"),
            args: vec!["--server".into(), "http://127.0.0.1:7878/mcp".into()],
        }
    }

    const USER_SETTINGS: &str = r#"{
  "model": "opus",
  "permissions": {"allow": ["Bash(cargo test:*)"]},
  "hooks": {
    "PostToolUse": [
      {"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}
    ]
  },
  "env": {"A": "1"}
}"#;

    #[test]
    fn install_keeps_the_users_settings_and_hooks_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, USER_SETTINGS).unwrap();
        let report = install(&path, &command()).unwrap();
        assert_eq!((report.previous, report.installed), (0, 6));
        let first = std::fs::read_to_string(&path).unwrap();
        let settings: Value = serde_json::from_str(&first).unwrap();
        // Other keys kept, in their order and as written.
        let order: Vec<usize> = ["\"model\"", "\"permissions\"", "\"hooks\"", "\"env\""]
            .iter()
            .map(|key| first.find(key).unwrap())
            .collect();
        assert!(order.windows(2).all(|pair| pair[0] < pair[1]), "{first}");
        assert!(
            first.contains(r#"{"allow": ["Bash(cargo test:*)"]}"#),
            "{first}"
        );
        // The user's hook stays beside ours.
        let post = settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 2);
        assert_eq!(post[0]["hooks"][0]["command"], "prettier --write");
        assert_eq!(post[1]["matcher"], "*");
        assert_eq!(
            settings["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "'/opt/my tools/aeterna' hook SessionStart --server http://127.0.0.1:7878/mcp"
        );

        let again = install(&path, &command()).unwrap();
        assert_eq!((again.previous, again.installed), (6, 6));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            first,
            "re-install changes nothing"
        );
    }

    #[test]
    fn uninstall_removes_only_ours() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, USER_SETTINGS).unwrap();
        install(&path, &command()).unwrap();
        let report = uninstall(&path).unwrap();
        assert_eq!((report.previous, report.installed), (6, 0));
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let original: Value = serde_json::from_str(USER_SETTINGS).unwrap();
        assert_eq!(settings, original);
        assert_eq!(
            uninstall(&dir.path().join("absent.json")).unwrap().previous,
            0
        );
    }

    #[test]
    fn a_new_file_is_created_and_broken_ones_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("project/.claude/settings.json");
        install(&path, &command()).unwrap();
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(settings["hooks"].as_object().unwrap().len(), 6);

        for (text, expected) in [
            ("{\"a\": 1,", "not valid JSON"),
            ("[1, 2]", "not a JSON object"),
            ("{\"hooks\": []}", "`hooks` is not an object"),
            (
                "{\"hooks\": {\"Stop\": {}}}",
                "`hooks.Stop` is not an array",
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            let error = install(&path, &command()).unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                text,
                "left as it was"
            );
        }
    }

    #[test]
    fn only_aeterna_hook_commands_are_ours() {
        let ours = json!({"command": "'/x/aeterna' hook Stop --server u"});
        assert!(is_ours(&ours, "Stop"));
        assert!(!is_ours(&ours, "SessionEnd"));
        assert!(!is_ours(
            &json!({"command": "my-aeterna-wrapper hook Stop"}),
            "Stop"
        ));
        assert!(!is_ours(
            &json!({"command": "echo aeterna hook Stop"}),
            "Stop"
        ));
        let spaced = command().line(Event::Stop);
        assert!(is_ours(&json!({ "command": spaced }), "Stop"), "{spaced}");
        assert_eq!(
            shell_words(r#"'a b'\ c "d\"e" 'it'\''s'"#),
            ["a b c", "d\"e", "it's"]
        );
    }
}
