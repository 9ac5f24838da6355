//! `[knowledge]`: the repositories knowledge lives in and how often they are read.
//!
//! ```toml
//! [knowledge]
//! poll_interval_ms = 1000
//!
//! [[knowledge.repositories]]
//! path = "/srv/knowledge/core"   # created when missing
//! tenant = "acme"
//! layer = "team"
//! scope = "core"
//! remote = "origin"              # proposals are pushed here for review
//!
//! [knowledge.repositories.capture]
//! lessons = true                 # fixes Hindsight promotes into team core → lesson proposals
//! notes = false                  # distilled notes of this scope → note proposals
//! min_note_quality = 0.7
//! ```

use std::path::PathBuf;

use aeterna_memory::Layer;
use serde::{Deserialize, Serialize};

use crate::repo::Limits;

/// Most repositories one server reads.
pub const MAX_REPOSITORIES: usize = 64;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KnowledgeConfig {
    /// How often each repository's branch is looked at, in ms (1000). A new commit (a pull, a
    /// merge, a hand edit) is in memory within about this long.
    pub poll_interval_ms: u64,
    /// The largest item file, in bytes (64 KiB).
    pub max_item_bytes: usize,
    /// The most items one repository's branch may hold (10 000).
    pub max_items: usize,
    /// The most revisions an item's history lists (200).
    pub max_history: usize,
    /// The most bytes of items one branch may hold in all (64 MiB): what one sync reads.
    pub max_branch_bytes: usize,
    pub repositories: Vec<RepositoryConfig>,
}

impl Default for KnowledgeConfig {
    fn default() -> KnowledgeConfig {
        let limits = Limits::default();
        KnowledgeConfig {
            poll_interval_ms: 1000,
            max_item_bytes: limits.max_item_bytes,
            max_items: limits.max_items,
            max_history: limits.max_history,
            max_branch_bytes: limits.max_branch_bytes,
            repositories: Vec::new(),
        }
    }
}

impl KnowledgeConfig {
    pub fn limits(&self) -> Limits {
        Limits {
            max_item_bytes: self.max_item_bytes,
            max_items: self.max_items,
            max_history: self.max_history,
            max_branch_bytes: self.max_branch_bytes,
        }
    }

    /// Checks the configuration; errors name the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.poll_interval_ms == 0 {
            return Err("`knowledge.poll_interval_ms` must be at least 1".into());
        }
        if self.max_item_bytes == 0
            || self.max_items == 0
            || self.max_history == 0
            || self.max_branch_bytes == 0
        {
            return Err(
                "`knowledge.max_item_bytes`, `max_items`, `max_history` and \
                 `max_branch_bytes` must be at least 1"
                    .into(),
            );
        }
        if self.repositories.len() > MAX_REPOSITORIES {
            return Err(format!(
                "`knowledge.repositories` lists {} repositories; at most {MAX_REPOSITORIES}",
                self.repositories.len()
            ));
        }
        let mut scopes = std::collections::BTreeSet::new();
        for (index, repository) in self.repositories.iter().enumerate() {
            let key = format!("knowledge.repositories[{index}]");
            match (repository.layer, &repository.scope) {
                (Layer::Company, None) => {}
                (Layer::Company, Some(_)) => {
                    return Err(format!("`{key}.scope`: the company layer has no scope"));
                }
                (layer, None) => {
                    return Err(format!(
                        "`{key}.scope` is missing: a {} repository needs the {0} id",
                        layer.as_str()
                    ));
                }
                (_, Some(scope)) if scope.trim().is_empty() => {
                    return Err(format!("`{key}.scope` is empty"));
                }
                _ => {}
            }
            if !(0.0..=1.0).contains(&repository.capture.min_note_quality) {
                return Err(format!(
                    "`{key}.capture.min_note_quality` is {}; use 0 to 1",
                    repository.capture.min_note_quality
                ));
            }
            if repository.tenant.trim().is_empty() {
                return Err(format!("`{key}.tenant` is empty"));
            }
            let scope = (&repository.tenant, repository.layer, &repository.scope);
            if !scopes.insert(scope) {
                return Err(format!(
                    "`{key}` is a second repository for the same tenant and scope; one scope \
                     has one repository"
                ));
            }
        }
        Ok(())
    }
}

/// One knowledge repository: where it is, which branch is read, and whose knowledge it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RepositoryConfig {
    /// A checkout (or a bare repository); created when missing.
    pub path: PathBuf,
    /// The protected branch reads see (`main`).
    #[serde(default = "default_branch")]
    pub branch: String,
    /// The tenant whose memory it feeds (`default`, the single-user tenant).
    #[serde(default = "default_tenant")]
    pub tenant: String,
    /// `team`, `org`, `project` or `company`.
    pub layer: Layer,
    /// The layer's id (`core` for team core); none for `company`.
    #[serde(default)]
    pub scope: Option<String>,
    /// Where `knowledge_propose` pushes its review branches: a remote's name, a path or a
    /// `file://` URL. None: proposals stay in this repository.
    #[serde(default)]
    pub remote: Option<String>,
    /// What the agents learn in this scope that becomes a proposal here.
    #[serde(default)]
    pub capture: CaptureRules,
}

/// Which learned things become knowledge proposals (on `aeterna/proposals/<id>`, pushed to
/// `remote` when set; never the protected branch). Off unless configured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CaptureRules {
    /// A Hindsight fix promoted into this scope (automatically, or approved) becomes a
    /// `lesson` proposal.
    pub lessons: bool,
    /// A note distilled in this scope becomes a `note` proposal when its quality is at least
    /// `min_note_quality`.
    pub notes: bool,
    /// 0..1 (0.7): how complete and specific a note must be to be proposed.
    pub min_note_quality: f32,
}

impl Default for CaptureRules {
    fn default() -> CaptureRules {
        CaptureRules {
            lessons: false,
            notes: false,
            min_note_quality: 0.7,
        }
    }
}

fn default_branch() -> String {
    "main".into()
}

fn default_tenant() -> String {
    "default".into()
}
