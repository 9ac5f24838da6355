//! Knowledge items: Markdown with YAML front matter, parsed and rendered so that a rendered item
//! parses back to itself and a canonical file renders back to the same bytes.
//!
//! ```text
//! ---
//! id: sqlx-offline-in-ci
//! type: pattern
//! title: Build with SQLX_OFFLINE in CI
//! layer: team
//! scope: core
//! status: accepted
//! tags: [ci, sqlx]
//! ---
//! The CI runners have no database; `cargo sqlx prepare` keeps the query data in the repository.
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use aeterna_memory::Layer;
use serde::{Deserialize, Serialize};

use crate::error::{KnowledgeError, Result};

/// The opening and closing line of the front matter.
const FENCE: &str = "---";
/// The longest item id: ids are file names, and short ones read well in a listing.
pub const MAX_ID_BYTES: usize = 80;

/// What kind of knowledge an item is. Each kind has its own directory in the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemType {
    /// An architecture decision record.
    Adr,
    /// A rule the team follows.
    Policy,
    /// A way of doing something that works.
    Pattern,
    /// How something is meant to behave.
    Spec,
    /// What was learned from a failure (Hindsight).
    Lesson,
    /// A distilled note (the notes agent).
    Note,
}

impl ItemType {
    pub const ALL: [ItemType; 6] = [
        ItemType::Adr,
        ItemType::Policy,
        ItemType::Pattern,
        ItemType::Spec,
        ItemType::Lesson,
        ItemType::Note,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ItemType::Adr => "adr",
            ItemType::Policy => "policy",
            ItemType::Pattern => "pattern",
            ItemType::Spec => "spec",
            ItemType::Lesson => "lesson",
            ItemType::Note => "note",
        }
    }

    /// The repository directory that holds items of this type.
    pub fn directory(self) -> &'static str {
        match self {
            ItemType::Adr => "adr",
            ItemType::Policy => "policies",
            ItemType::Pattern => "patterns",
            ItemType::Spec => "specs",
            ItemType::Lesson => "lessons",
            ItemType::Note => "notes",
        }
    }

    /// The type whose directory is `directory`.
    pub fn of_directory(directory: &str) -> Option<ItemType> {
        ItemType::ALL
            .into_iter()
            .find(|kind| kind.directory() == directory)
    }
}

impl FromStr for ItemType {
    type Err = KnowledgeError;

    fn from_str(text: &str) -> Result<ItemType> {
        ItemType::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text.trim())
            .ok_or_else(|| {
                KnowledgeError::Invalid(format!(
                    "`{text}` is not a knowledge type: use adr, policy, pattern, spec, lesson or note"
                ))
            })
    }
}

impl fmt::Display for ItemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an item stands in review.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Written, not yet reviewed.
    Proposed,
    /// Reviewed and in force.
    #[default]
    Accepted,
    /// No longer recommended, kept for the record.
    Deprecated,
    /// Replaced by the item that names it in `supersedes`.
    Superseded,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Proposed => "proposed",
            Status::Accepted => "accepted",
            Status::Deprecated => "deprecated",
            Status::Superseded => "superseded",
        }
    }

    /// Whether agents should follow the item (what the exports include).
    pub fn in_force(self) -> bool {
        self == Status::Accepted
    }
}

/// Where an item came from: the memories, signatures, loops or files it was made of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// `memory`, `signature`, `resolution`, `loop`, `note` or `file`.
    pub kind: String,
    /// The id (or, for a file, the path) of what it came from.
    pub id: String,
}

/// The front matter of an item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrontMatter {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: ItemType,
    pub title: String,
    /// One or two sentences on what the item says and when it applies: the line an index or a
    /// skill listing shows before the whole item is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub layer: Layer,
    /// The scope id within the layer (`core` for team core); absent for `company`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default)]
    pub status: Status,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Ids of the items this one replaces.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Source>,
    /// Keys this version does not know, kept as written so a hand-edited file round-trips.
    #[serde(flatten, default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_yaml_ng::Value>,
}

/// One knowledge item: its front matter and its Markdown body.
#[derive(Debug, Clone, PartialEq)]
pub struct KnowledgeItem {
    pub front: FrontMatter,
    pub body: String,
}

impl KnowledgeItem {
    /// A new accepted item with no tags, sources or description.
    pub fn new(
        id: impl Into<String>,
        kind: ItemType,
        title: impl Into<String>,
        layer: Layer,
        scope: Option<String>,
        body: impl Into<String>,
    ) -> KnowledgeItem {
        KnowledgeItem {
            front: FrontMatter {
                id: id.into(),
                kind,
                title: title.into(),
                description: None,
                layer,
                scope,
                status: Status::Accepted,
                tags: Vec::new(),
                supersedes: Vec::new(),
                sources: Vec::new(),
                extra: BTreeMap::new(),
            },
            body: body.into(),
        }
    }

    pub fn id(&self) -> &str {
        &self.front.id
    }

    /// The item's path in the repository: `<type directory>/<id>.md`. The id is checked, so
    /// the path never leaves the repository.
    pub fn path(&self) -> Result<String> {
        check_id(&self.front.id)?;
        Ok(format!(
            "{}/{}.md",
            self.front.kind.directory(),
            self.front.id
        ))
    }

    /// What the item says in one line: its description, or its title.
    pub fn summary(&self) -> &str {
        self.front
            .description
            .as_deref()
            .unwrap_or(&self.front.title)
    }

    /// Parses an item file. The front matter must open the file; its keys are checked (an
    /// unknown one is kept in `extra`, a wrong type or a missing key is an error naming it).
    pub fn parse(text: &str) -> Result<KnowledgeItem> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let rest = strip_line(text, FENCE).ok_or_else(|| {
            KnowledgeError::Invalid(
                "an item starts with a `---` line opening its front matter".into(),
            )
        })?;
        let (yaml, body) = split_front_matter(rest).ok_or_else(|| {
            KnowledgeError::Invalid("the front matter has no closing `---` line".into())
        })?;
        let front: FrontMatter = serde_yaml_ng::from_str(yaml)
            .map_err(|error| KnowledgeError::Invalid(format!("front matter: {error}")))?;
        let item = KnowledgeItem {
            front,
            body: body.to_owned(),
        };
        item.validate()?;
        Ok(item)
    }

    /// The item as a file: front matter between `---` lines, then the body.
    pub fn render(&self) -> Result<String> {
        self.validate()?;
        let yaml = serde_yaml_ng::to_string(&self.front)
            .map_err(|error| KnowledgeError::Invalid(format!("front matter: {error}")))?;
        let mut text = String::with_capacity(yaml.len() + self.body.len() + 8);
        text.push_str(FENCE);
        text.push('\n');
        text.push_str(&yaml);
        if !yaml.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(FENCE);
        text.push('\n');
        text.push_str(&self.body);
        Ok(text)
    }

    /// The rules every item keeps, whichever way it arrived.
    pub fn validate(&self) -> Result<()> {
        let front = &self.front;
        check_id(&front.id)?;
        if front.title.trim().is_empty() {
            return Err(KnowledgeError::Invalid(format!(
                "item `{}`: `title` is empty",
                front.id
            )));
        }
        match (front.layer, &front.scope) {
            (Layer::Company, Some(scope)) => Err(KnowledgeError::Invalid(format!(
                "item `{}`: `scope` is `{scope}` but the company layer has no scope; remove it",
                front.id
            ))),
            (Layer::Company, None) => Ok(()),
            (layer, None) => Err(KnowledgeError::Invalid(format!(
                "item `{}`: layer `{layer}` needs a `scope` (the {layer} id)",
                front.id,
                layer = layer.as_str()
            ))),
            (_, Some(scope)) if scope.trim().is_empty() => Err(KnowledgeError::Invalid(format!(
                "item `{}`: `scope` is empty",
                front.id
            ))),
            _ => Ok(()),
        }
    }
}

impl FromStr for KnowledgeItem {
    type Err = KnowledgeError;

    fn from_str(text: &str) -> Result<KnowledgeItem> {
        KnowledgeItem::parse(text)
    }
}

/// Checks an item id: lowercase letters, digits and `-`, `_`, `.` (not first), at most
/// [`MAX_ID_BYTES`]. Ids are file names, so this is what keeps paths inside the repository.
pub fn check_id(id: &str) -> Result<()> {
    let first_ok = id
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let rest_ok = id
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.'));
    if !first_ok || !rest_ok || id.len() > MAX_ID_BYTES || id.contains("..") {
        return Err(KnowledgeError::Invalid(format!(
            "item id `{}` is not a valid id: use 1 to {MAX_ID_BYTES} lowercase letters, digits, \
             `-`, `_` or `.`, starting with a letter or digit",
            id.escape_debug()
        )));
    }
    Ok(())
}

/// Makes an id out of free text (a title): lowercase words joined by `-`, cut to fit.
pub fn slug(text: &str) -> String {
    let mut slug = String::new();
    for word in text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
    {
        if slug.len() + word.len() + 1 > MAX_ID_BYTES - 10 {
            break;
        }
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&word.to_ascii_lowercase());
    }
    if slug.is_empty() {
        slug.push_str("item");
    }
    slug
}

/// `text` after its first line when that line is `line` (with `\n` or `\r\n`).
fn strip_line<'a>(text: &'a str, line: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(line)?;
    rest.strip_prefix('\n')
        .or_else(|| rest.strip_prefix("\r\n"))
}

/// The front matter and the body after its closing fence.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == FENCE {
            return Some((&text[..offset], &text[offset + line.len()..]));
        }
        offset += line.len();
    }
    // A closing fence on the last line, with no newline after it.
    (text[offset..] == *FENCE).then(|| (&text[..offset], ""))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> KnowledgeItem {
        let mut item = KnowledgeItem::new(
            "sqlx-offline-in-ci",
            ItemType::Pattern,
            "Build with SQLX_OFFLINE in CI",
            Layer::Team,
            Some("core".into()),
            "The runners have no database.\n\n```sh\ncargo sqlx prepare\n```\n",
        );
        item.front.tags = vec!["ci".into(), "sqlx".into()];
        item.front.sources = vec![Source {
            kind: "resolution".into(),
            id: "0193a1b2-0000-7000-8000-000000000001".into(),
        }];
        item
    }

    #[test]
    fn a_rendered_item_parses_back_to_itself_and_renders_the_same_bytes() {
        let text = item().render().unwrap();
        assert!(
            text.starts_with("---\nid: sqlx-offline-in-ci\ntype: pattern\n"),
            "{text}"
        );
        let parsed = KnowledgeItem::parse(&text).unwrap();
        assert_eq!(parsed, item());
        assert_eq!(parsed.render().unwrap(), text);
    }

    #[test]
    fn hand_written_keys_and_crlf_files_are_kept() {
        let text = "---\r\nid: adr-0007\r\ntype: adr\r\ntitle: Use SQLite\r\nlayer: org\r\n\
                    scope: eng\r\nreviewers: [ana, bo]\r\n---\r\nWe use SQLite.\r\n";
        let parsed = KnowledgeItem::parse(text).unwrap();
        assert_eq!(parsed.front.kind, ItemType::Adr);
        assert_eq!(parsed.front.status, Status::Accepted);
        assert_eq!(parsed.body, "We use SQLite.\r\n");
        assert!(parsed.front.extra.contains_key("reviewers"));
        let again = KnowledgeItem::parse(&parsed.render().unwrap()).unwrap();
        assert_eq!(again, parsed);
    }

    #[test]
    fn bad_files_are_refused_naming_what_is_wrong() {
        let cases = [
            ("no front matter", "# Title\n", "starts with a `---` line"),
            ("unclosed", "---\nid: a\n", "no closing `---`"),
            (
                "missing key",
                "---\nid: a\ntype: adr\nlayer: team\nscope: x\n---\n",
                "missing field `title`",
            ),
            (
                "unknown type",
                "---\nid: a\ntype: rumour\ntitle: t\nlayer: team\nscope: x\n---\n",
                "unknown variant `rumour`",
            ),
            (
                "escaping id",
                "---\nid: ../../etc/passwd\ntype: adr\ntitle: t\nlayer: team\nscope: x\n---\n",
                "is not a valid id",
            ),
            (
                "scope missing",
                "---\nid: a\ntype: adr\ntitle: t\nlayer: team\n---\n",
                "needs a `scope`",
            ),
        ];
        for (case, text, needle) in cases {
            let error = KnowledgeItem::parse(text).expect_err(case).to_string();
            assert!(error.contains(needle), "{case}: {error}");
        }
    }

    #[test]
    fn ids_stay_file_names_and_slugs_are_ids() {
        for bad in ["", "-a", "A", "a/b", "a..b", ".hidden", &"a".repeat(81)] {
            assert!(check_id(bad).is_err(), "{bad:?}");
        }
        check_id("0001-use-sqlite.v2_final").unwrap();
        assert_eq!(
            slug("Use SQLite — not Postgres!"),
            "use-sqlite-not-postgres"
        );
        assert_eq!(slug("¿?"), "item");
        check_id(&slug(&"word ".repeat(100))).unwrap();
        assert_eq!(item().path().unwrap(), "patterns/sqlx-offline-in-ci.md");
    }

    proptest::proptest! {
        #[test]
        fn any_valid_item_round_trips(
            title in "[^\\x00-\\x1f]{1,40}",
            body in "(?s).{0,200}",
            tags in proptest::collection::vec("[a-z][a-z0-9 :#-]{0,12}", 0..4),
            description in proptest::option::of("[^\\x00-\\x1f]{1,60}"),
        ) {
            proptest::prop_assume!(!title.trim().is_empty());
            let mut item = item();
            item.front.title = title;
            item.body = body;
            item.front.tags = tags;
            item.front.description = description;
            let text = item.render().unwrap();
            let parsed = KnowledgeItem::parse(&text).unwrap();
            proptest::prop_assert_eq!(&parsed, &item);
            proptest::prop_assert_eq!(parsed.render().unwrap(), text);
        }
    }
}
