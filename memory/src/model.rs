//! The memory domain: layers, identities, records and the requests the service answers.
//!
//! These types are shared by every storage backend, by the agents and by the transports, so
//! they carry no storage or transport concerns. They serialise to the JSON that MCP tools and
//! the REST API return.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::grants::Grants;

/// Where a memory lives, from the narrowest to the broadest audience.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Private to one agent (`agent_id`).
    Agent,
    /// One user across sessions (`user_id`).
    User,
    /// One working session (`session_id`).
    Session,
    /// One project or repository (`project_id`).
    Project,
    /// One team (`team_id`).
    Team,
    /// One organisation (`org_id`).
    Org,
    /// The whole tenant.
    Company,
}

impl Layer {
    /// Every layer, narrowest first.
    pub const ALL: [Layer; 7] = [
        Layer::Agent,
        Layer::User,
        Layer::Session,
        Layer::Project,
        Layer::Team,
        Layer::Org,
        Layer::Company,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Agent => "agent",
            Layer::User => "user",
            Layer::Session => "session",
            Layer::Project => "project",
            Layer::Team => "team",
            Layer::Org => "org",
            Layer::Company => "company",
        }
    }

    /// The next broader layer that knowledge is promoted to, if any
    /// (project → team → org → company).
    pub fn broader(self) -> Option<Layer> {
        match self {
            Layer::Agent | Layer::User | Layer::Session => Some(Layer::Project),
            Layer::Project => Some(Layer::Team),
            Layer::Team => Some(Layer::Org),
            Layer::Org => Some(Layer::Company),
            Layer::Company => None,
        }
    }

    /// The identity field that names this layer's scope, for error messages.
    pub fn scope_field(self) -> &'static str {
        match self {
            Layer::Agent => "agent_id",
            Layer::User => "user_id",
            Layer::Session => "session_id",
            Layer::Project => "project_id",
            Layer::Team => "team_id",
            Layer::Org => "org_id",
            Layer::Company => "tenant",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Layer {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Layer::ALL
            .into_iter()
            .find(|layer| layer.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown layer `{s}`; expected one of agent, user, session, project, team, org, company"
                )
            })
    }
}

/// The scope id of the company layer: there is one company per tenant.
pub const COMPANY_SCOPE: &str = "company";

/// Who a call is made for. The tenant always comes from authentication, never from arguments;
/// the other fields come from tool arguments with defaults from the token's configuration,
/// within the token's [`Grants`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Identity {
    pub tenant_id: String,
    pub agent_id: Option<String>,
    pub user_id: Option<String>,
    pub session_id: Option<String>,
    pub project_id: Option<String>,
    pub team_id: Option<String>,
    pub org_id: Option<String>,
    /// What the caller's token proves. Not stored with the objects an identity is recorded
    /// on: a stored identity read back reaches everything, as the system acting for itself.
    #[serde(skip)]
    pub grants: Arc<Grants>,
}

impl Identity {
    pub fn new(tenant_id: impl Into<String>) -> Self {
        Identity {
            tenant_id: tenant_id.into(),
            ..Default::default()
        }
    }

    /// The scope id this identity has in `layer`, if it has one.
    pub fn scope(&self, layer: Layer) -> Option<&str> {
        match layer {
            Layer::Agent => self.agent_id.as_deref(),
            Layer::User => self.user_id.as_deref(),
            Layer::Session => self.session_id.as_deref(),
            Layer::Project => self.project_id.as_deref(),
            Layer::Team => self.team_id.as_deref(),
            Layer::Org => self.org_id.as_deref(),
            Layer::Company => Some(COMPANY_SCOPE),
        }
    }

    /// The identity that owns `scope` in `tenant_id`, for work the system does on a scope's
    /// behalf (a background refresh, a knowledge sync). Its grants reach everything.
    pub fn owning(tenant_id: &str, scope: &Scope) -> Identity {
        let mut who = Identity::new(tenant_id);
        let id = Some(scope.scope_id.clone());
        match scope.layer {
            Layer::Agent => who.agent_id = id,
            Layer::User => who.user_id = id,
            Layer::Session => who.session_id = id,
            Layer::Project => who.project_id = id,
            Layer::Team => who.team_id = id,
            Layer::Org => who.org_id = id,
            Layer::Company => {}
        }
        who
    }

    /// Whether the caller's grants reach `scope`: what a lookup by id checks.
    pub fn reaches(&self, scope: &Scope) -> bool {
        self.grants.reaches(scope.layer, &scope.scope_id)
    }

    /// Whether the caller's grants reach every claimed scope `other` names: what a lookup of
    /// an object recorded with an identity (a loop) checks.
    pub fn reaches_identity(&self, other: &Identity) -> bool {
        [Layer::User, Layer::Team, Layer::Org]
            .into_iter()
            .all(|layer| {
                other
                    .scope(layer)
                    .is_none_or(|scope_id| self.grants.reaches(layer, scope_id))
            })
    }

    /// The layers this identity can see, narrowest first, with their scope ids.
    pub fn visible_scopes(&self) -> Vec<Scope> {
        Layer::ALL
            .into_iter()
            .filter_map(|layer| self.scope(layer).map(|id| Scope::new(layer, id)))
            .collect()
    }
}

/// One (layer, scope id) pair: "session s-42", "project aeterna", "company".
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub struct Scope {
    pub layer: Layer,
    pub scope_id: String,
}

impl Scope {
    pub fn new(layer: Layer, scope_id: impl Into<String>) -> Self {
        Scope {
            layer,
            scope_id: scope_id.into(),
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.layer, self.scope_id)
    }
}

/// What a memory is. Plain memories are written by clients; the agents write the others.
pub mod kind {
    pub const MEMORY: &str = "memory";
    pub const NOTE: &str = "note";
    pub const HINDSIGHT: &str = "hindsight";
    /// An item of a knowledge repository, synced from git (`aeterna-knowledge`).
    pub const KNOWLEDGE: &str = "knowledge";
}

/// Milliseconds since the Unix epoch, UTC.
pub type Timestamp = i64;

/// The current time as a [`Timestamp`].
pub fn now_millis() -> Timestamp {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// A stored memory. The embedding is kept by the vector index, not in this struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryRecord {
    /// The memory's id (a UUID), for `memory_get`, `memory_update` and `memory_delete`.
    pub id: Uuid,
    /// The tenant that owns it (from the caller's token).
    pub tenant_id: String,
    /// The layer it lives in.
    pub layer: Layer,
    /// The scope within the layer: the `session_id`, `project_id`, … it was stored under
    /// (`company` for the company layer).
    pub scope_id: String,
    /// What it is: `memory` (written by a client), `note` (distilled by the Note-Taking agent)
    /// or `hindsight` (a recorded fix); the constants are in the `kind` module.
    pub kind: String,
    /// The text. Omitted when a listing asks for metadata only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Labels to filter by.
    pub tags: Vec<String>,
    /// A JSON object (`{}` when none was given). The memory service only stores objects.
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub metadata: serde_json::Value,
    /// Hex SHA-256 of the content; exact duplicates in one scope are stored once.
    pub content_hash: String,
    /// Which embedder produced the stored vector.
    pub embedder_id: String,
    /// When it was stored, in milliseconds since the Unix epoch (UTC).
    pub created_at: Timestamp,
    /// When it last changed, in milliseconds since the Unix epoch (UTC).
    pub updated_at: Timestamp,
    /// When this version took effect (ms since the epoch): `created_at`, unless a supersede
    /// opened this version (then the time the caller said the change took effect).
    pub valid_from: Timestamp,
    /// When this version stopped being valid: set only on past versions (`memory_history`,
    /// a search `as_of` a past time). The memory as it is now has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<Timestamp>,
    /// 1 for a memory never superseded; each supersede adds one.
    pub version: u32,
}

impl MemoryRecord {
    pub fn scope(&self) -> Scope {
        Scope::new(self.layer, self.scope_id.clone())
    }
}

/// A memory to add. The scope comes from the caller's [`Identity`] for `layer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewMemory {
    pub layer: Layer,
    pub content: String,
    #[serde(default)]
    pub tags: Vec<String>,
    /// A JSON object; `null` is stored as `{}`.
    #[serde(default)]
    pub metadata: serde_json::Value,
    /// Defaults to [`kind::MEMORY`].
    #[serde(default)]
    pub kind: Option<String>,
}

/// The result of an add: the stored record, and whether an identical one already existed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AddOutcome {
    /// The stored memory (the existing one when deduplicated).
    pub record: MemoryRecord,
    /// True when the content already existed in that scope and nothing new was written.
    pub deduplicated: bool,
}

/// How a new memory relates to an existing one of its scope ([`Conflict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConflictRelation {
    /// Same subject, a different value: probably one replaces the other.
    Contradicts,
    /// Says the same thing (perhaps with a detail more or less).
    Repeats,
}

/// An existing memory a new one probably contradicts or repeats. Only reported: the caller
/// decides whether to supersede, forget or keep both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Conflict {
    /// The existing memory.
    pub id: Uuid,
    pub relation: ConflictRelation,
    /// How sure, 0..1: the share of words the two have in common.
    pub score: f32,
    /// Why, in words: the shared subject and what differs.
    pub reason: String,
    /// The existing memory's content (its first 200 characters).
    pub content: String,
    /// Since when the existing memory holds (ms since the epoch).
    pub valid_from: Timestamp,
}

/// Changes to a memory; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryPatch {
    pub content: Option<String>,
    pub tags: Option<Vec<String>>,
    pub metadata: Option<serde_json::Value>,
    /// How the change is kept; `None` means [`UpdateMode::Supersede`] for a client's facts
    /// (kind `memory`) whose content or metadata change, else [`UpdateMode::Fix`].
    #[serde(default)]
    pub mode: Option<UpdateMode>,
    /// When a supersede took effect (ms since the epoch); now when absent. Between the current
    /// version's `valid_from` and now.
    #[serde(default)]
    pub valid_from: Option<Timestamp>,
}

/// Whether an update keeps what it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UpdateMode {
    /// The fact changed: the current version is closed (kept, readable with `memory_history`
    /// and by searches `as_of` a time before the change) and a new version opens.
    Supersede,
    /// The memory was wrong as written (a typo): rewritten in place, no history.
    Fix,
}

/// Every version of one memory, the current one first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MemoryHistory {
    /// The memory's id.
    pub id: Uuid,
    /// The current version first, then each closed version, newest first (each with its
    /// `valid_from`, `valid_to` and `version`).
    pub versions: Vec<MemoryRecord>,
}

/// Which memories a search or listing may return, beyond the tenant (always enforced).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryFilter {
    /// The scopes to look in. Empty means every scope visible to the identity.
    pub scopes: Vec<Scope>,
    /// Every listed tag must be present.
    pub tags: Vec<String>,
    /// Restrict to these kinds; empty means any.
    pub kinds: Vec<String>,
}

/// A hybrid (lexical + vector) search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchRequest {
    pub query: String,
    /// Restrict to these layers (resolved to scopes through the identity); `None` means all
    /// visible layers.
    pub layers: Option<Vec<Layer>>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub kinds: Vec<String>,
    pub limit: usize,
    /// Drop hits scoring below this (0..1).
    #[serde(default)]
    pub min_score: f32,
    /// Report each hit's signals ([`SearchExplanation`]).
    #[serde(default)]
    pub explain: bool,
    /// Answer as memory stood at this time (ms since the epoch): each memory in the version
    /// valid then, memories written later absent. `None` means now.
    #[serde(default)]
    pub as_of: Option<Timestamp>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchHit {
    /// The matching memory.
    pub record: MemoryRecord,
    /// The layer it was found in (the same as `record.layer`).
    pub layer: Layer,
    /// Relevance in 0..1, comparable across queries: the estimated probability that this memory
    /// answers the query.
    pub score: f32,
    /// Why it was found: each signal's value (only when the search asked to `explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<SearchExplanation>,
    /// Near-duplicates of this memory that were folded into this hit (it is the oldest of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub duplicates: Vec<Uuid>,
}

/// The evidence behind a hit: every signal in 0..1 (see `aeterna_memory::retrieval::signals`)
/// and where the first stage ranked it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchExplanation {
    pub signals: crate::retrieval::Signals,
    /// Rank in the lexical (BM25) list, from 1; absent when BM25 did not return it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical_rank: Option<usize>,
    /// Rank in the vector list, from 1; absent when the vector index did not return it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic_rank: Option<usize>,
}

/// A page of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListRequest {
    /// `None` means all visible layers.
    pub layers: Option<Vec<Layer>>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Opaque cursor from the previous page.
    pub cursor: Option<String>,
    pub limit: usize,
    /// Leave `content` out of the returned records.
    #[serde(default)]
    pub metadata_only: bool,
}

/// One page of records, newest first, and the cursor for the next page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Page {
    /// The records of this page, newest first.
    pub items: Vec<MemoryRecord>,
    /// Pass back as `cursor` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// Emitted after every committed write, so caches keyed by scope can invalidate.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MemoryChange {
    pub tenant_id: String,
    pub scope: Scope,
}
