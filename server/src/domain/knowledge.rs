//! The knowledge repositories' operations behind `knowledge_search`, `knowledge_get` and
//! `knowledge_propose`: argument types (with the JSON schemas agents see) and plain functions
//! over [`KnowledgeService`].

use aeterna_knowledge::tools::{KnowledgeDocument, KnowledgeHit, Proposal, ProposalReceipt};
use aeterna_knowledge::{ItemType, KnowledgeError, KnowledgeService};
use aeterna_memory::MemoryError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::memory::parse_layer;
use crate::auth::Principal;
use crate::config::IdentityFields;

/// Hits of a search that does not say.
const DEFAULT_SEARCH_LIMIT: usize = 10;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// What to look for, in plain words.
    pub query: String,
    /// Only items of this type: adr, policy, pattern, spec, lesson or note.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Hits to return (default 10, at most 50).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SearchAnswer {
    pub hits: Vec<KnowledgeHit>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GetArgs {
    /// The item's id, as `knowledge_search` returns it.
    pub id: String,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ProposeArgs {
    /// adr, policy, pattern, spec, lesson or note.
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    /// The item's Markdown text.
    pub body: String,
    /// Why it should be accepted: the commit message reviewers read.
    pub why: String,
    /// One or two sentences on what it says and when it applies (shown before the body).
    #[serde(default)]
    pub description: Option<String>,
    /// Leave out for a new item (made from the title); an existing id proposes a change.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Ids of items this one replaces.
    #[serde(default)]
    pub supersedes: Vec<String>,
    /// The repository's layer: team (default), org, project or company; its scope is the
    /// call's `team_id`, `org_id`, … .
    #[serde(default)]
    pub layer: Option<String>,
    #[serde(flatten)]
    pub identity: IdentityFields,
}

fn identity(
    caller: &Principal,
    fields: &IdentityFields,
) -> Result<aeterna_memory::Identity, KnowledgeError> {
    caller.identity(fields).map_err(memory)
}

fn memory(source: MemoryError) -> KnowledgeError {
    KnowledgeError::Memory {
        doing: "reading the call's identity".into(),
        source,
    }
}

pub async fn search(
    knowledge: &KnowledgeService,
    caller: &Principal,
    args: SearchArgs,
) -> Result<SearchAnswer, KnowledgeError> {
    let who = identity(caller, &args.identity)?;
    let kind = args
        .kind
        .as_deref()
        .map(str::parse::<ItemType>)
        .transpose()?;
    let limit = args.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
    let hits = knowledge.search(&who, &args.query, kind, limit).await?;
    Ok(SearchAnswer { hits })
}

pub async fn get(
    knowledge: &KnowledgeService,
    caller: &Principal,
    args: GetArgs,
) -> Result<KnowledgeDocument, KnowledgeError> {
    let who = identity(caller, &args.identity)?;
    knowledge.get(&who, &args.id).await
}

pub async fn propose(
    knowledge: &KnowledgeService,
    caller: &Principal,
    args: ProposeArgs,
) -> Result<ProposalReceipt, KnowledgeError> {
    let who = identity(caller, &args.identity)?;
    let layer = match &args.layer {
        Some(layer) => parse_layer("layer", layer).map_err(memory)?,
        None => aeterna_memory::Layer::Team,
    };
    let proposal = Proposal {
        id: args.id,
        kind: args.kind.parse()?,
        title: args.title,
        description: args.description,
        body: args.body,
        tags: args.tags,
        supersedes: args.supersedes,
        layer,
        why: args.why,
    };
    knowledge.propose(&who, proposal).await
}
