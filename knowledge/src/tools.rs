//! What agents ask of knowledge (the `knowledge_*` MCP tools): search it, read one item with its
//! history, and propose a new or changed item for review. Every call acts as an [`Identity`]:
//! only the repositories of scopes it sees and its token reaches are read or written.

use aeterna_memory::{COMPANY_SCOPE, Identity, Layer, ListRequest, Scope, SearchRequest};
use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{KnowledgeError, Result};
use crate::item::{ItemType, KnowledgeItem, Status, slug};
use crate::repo::{Author, Change, Revision};
use crate::service::{KnowledgeService, Repository, blocking};
use crate::sync::KIND;

/// The branch prefix of proposals.
pub const PROPOSAL_BRANCH_PREFIX: &str = "aeterna/proposals/";
/// Most hits one search returns.
pub const MAX_SEARCH_LIMIT: usize = 50;
/// Knowledge items as MCP resources: `aeterna://knowledge/{layer}/{scope_id}/{id}`.
pub const RESOURCE_URI_PREFIX: &str = "aeterna://knowledge/";
/// Skill-like items (patterns and lessons) looked at per [`KnowledgeService::skill_ids`] call.
const MAX_SKILLS_SCANNED: usize = 2_000;

/// The resource URI of item `id` of a repository of `layer` / `scope_id`.
pub fn resource_uri(layer: Layer, scope_id: &str, id: &str) -> String {
    format!("{RESOURCE_URI_PREFIX}{layer}/{scope_id}/{id}")
}

/// One search hit: what the item is and why it was found.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct KnowledgeHit {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub layer: Layer,
    pub scope_id: String,
    /// The item's path in its repository.
    pub path: String,
    /// The item as an MCP resource (`resources/read`).
    pub uri: String,
    /// Relevance in 0..1.
    pub score: f32,
    /// The item's text as memory holds it (title, description, body).
    pub text: String,
}

/// One item with where it lives and how it came to be.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct KnowledgeDocument {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub description: Option<String>,
    pub status: String,
    pub layer: Layer,
    pub scope_id: String,
    pub tags: Vec<String>,
    pub supersedes: Vec<String>,
    pub path: String,
    /// The item as an MCP resource (`resources/read`).
    pub uri: String,
    /// The whole file: front matter and Markdown body.
    pub text: String,
    /// The commits that changed it, newest first.
    pub history: Vec<HistoryEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HistoryEntry {
    pub commit: String,
    pub author: String,
    /// Seconds since the Unix epoch.
    pub time: i64,
    pub message: String,
    pub removed: bool,
}

impl From<Revision> for HistoryEntry {
    fn from(revision: Revision) -> HistoryEntry {
        HistoryEntry {
            commit: revision.commit,
            author: revision.author,
            time: revision.time,
            message: revision.message,
            removed: revision.removed,
        }
    }
}

/// A new or changed item for review.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// Made from the title when absent; an existing id proposes a change to that item.
    pub id: Option<String>,
    pub kind: ItemType,
    pub title: String,
    pub description: Option<String>,
    pub body: String,
    pub tags: Vec<String>,
    pub supersedes: Vec<String>,
    /// The layer whose repository it goes to (its scope is the caller's).
    pub layer: Layer,
    /// Why: the commit message's body.
    pub why: String,
}

/// Where a proposal went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ProposalReceipt {
    pub id: String,
    /// The review branch (never the protected branch).
    pub branch: String,
    pub commit: String,
    pub path: String,
    /// The remote the branch was pushed to, when the repository has one.
    pub pushed_to: Option<String>,
}

impl KnowledgeService {
    /// Items of the repositories the caller sees, best first.
    pub async fn search(
        &self,
        who: &Identity,
        query: &str,
        kind: Option<ItemType>,
        limit: usize,
    ) -> Result<Vec<KnowledgeHit>> {
        if limit == 0 || limit > MAX_SEARCH_LIMIT {
            return Err(KnowledgeError::Invalid(format!(
                "`limit` is {limit}: use 1 to {MAX_SEARCH_LIMIT}"
            )));
        }
        let tags = kind
            .map(|kind| vec![format!("knowledge:{kind}")])
            .unwrap_or_default();
        let hits = self
            .memory()
            .search(
                who,
                SearchRequest {
                    query: query.to_owned(),
                    tags,
                    kinds: vec![KIND.to_owned()],
                    limit,
                    ..SearchRequest::default()
                },
            )
            .await
            .map_err(|source| KnowledgeError::Memory {
                doing: "searching knowledge".into(),
                source,
            })?;
        Ok(hits
            .into_iter()
            .filter_map(|hit| {
                let link = hit.record.metadata.get("knowledge")?;
                let text = hit.record.content.clone().unwrap_or_default();
                let id = link.get("id")?.as_str()?.to_owned();
                Some(KnowledgeHit {
                    uri: resource_uri(hit.layer, &hit.record.scope_id, &id),
                    id,
                    kind: link.get("type")?.as_str()?.to_owned(),
                    title: text.lines().next().unwrap_or_default().to_owned(),
                    layer: hit.layer,
                    scope_id: hit.record.scope_id.clone(),
                    path: link.get("path")?.as_str()?.to_owned(),
                    score: hit.score,
                    text,
                })
            })
            .collect())
    }

    /// Ids of the patterns and lessons in force that the caller sees, starting with `typed`
    /// (what can be loaded as a skill), from at most [`MAX_SKILLS_SCANNED`] items.
    pub async fn skill_ids(&self, who: &Identity, typed: &str) -> Result<Vec<String>> {
        let mut ids = std::collections::BTreeSet::new();
        for kind in [ItemType::Pattern, ItemType::Lesson] {
            let mut cursor = None;
            let mut scanned = 0;
            while scanned < MAX_SKILLS_SCANNED / 2 {
                let page = self
                    .memory()
                    .list(
                        who,
                        ListRequest {
                            layers: None,
                            tags: vec![format!("knowledge:{kind}")],
                            kinds: vec![KIND.to_owned()],
                            cursor,
                            limit: self.memory().config().max_page_size,
                            metadata_only: true,
                        },
                    )
                    .await
                    .map_err(|source| KnowledgeError::Memory {
                        doing: "listing skills".into(),
                        source,
                    })?;
                scanned += page.items.len();
                ids.extend(page.items.iter().filter_map(|record| {
                    let id = record.metadata.get("knowledge")?.get("id")?.as_str()?;
                    id.starts_with(typed).then(|| id.to_owned())
                }));
                match page.next_cursor {
                    Some(next) if !page.items.is_empty() => cursor = Some(next),
                    _ => break,
                }
            }
        }
        Ok(ids.into_iter().collect())
    }

    /// Item `id` from the first repository the caller sees that holds it (narrowest scope
    /// first), with its history.
    pub async fn get(&self, who: &Identity, id: &str) -> Result<KnowledgeDocument> {
        crate::item::check_id(id)?;
        for repository in self.visible(who) {
            let repo = repository.repo.clone();
            let item_id = id.to_owned();
            let found = blocking(move || {
                let repo = repo.lock().expect("repository lock");
                match repo.get(&item_id) {
                    Ok(item) => Ok(Some((item.render()?, item, repo.history(&item_id)?))),
                    Err(KnowledgeError::NotFound(_)) => Ok(None),
                    Err(error) => Err(error),
                }
            })
            .await?;
            if let Some((text, item, history)) = found {
                return Ok(document(repository, item, text, history));
            }
        }
        Err(KnowledgeError::NotFound(id.to_owned()))
    }

    /// Commits `proposal` on a review branch of the repository of the caller's scope in
    /// `proposal.layer`, and pushes it when the repository has a remote. The protected
    /// branch is never written.
    pub async fn propose(&self, who: &Identity, proposal: Proposal) -> Result<ProposalReceipt> {
        let layer = proposal.layer;
        let scope_id = who.scope(layer).map(str::to_owned).ok_or_else(|| {
            KnowledgeError::Invalid(format!(
                "`layer` is {0} but the call names no {0}: pass `{0}_id`",
                layer.as_str()
            ))
        })?;
        let scope = Scope::new(layer, scope_id.clone());
        let repository = self
            .visible(who)
            .find(|repository| repository_scope(repository) == scope)
            .ok_or_else(|| {
                KnowledgeError::Invalid(format!(
                    "no knowledge repository holds {} `{scope_id}`'s knowledge; the operator \
                     adds one under [[knowledge.repositories]]",
                    layer.as_str()
                ))
            })?;
        if proposal.why.trim().is_empty() {
            return Err(KnowledgeError::Invalid(
                "`why` is empty: say why the item should be accepted (it is the commit message)"
                    .into(),
            ));
        }
        let id = proposal.id.clone().unwrap_or_else(|| slug(&proposal.title));
        let mut item = KnowledgeItem::new(
            id.clone(),
            proposal.kind,
            proposal.title.clone(),
            layer,
            repository.config.scope.clone(),
            format!("{}\n", proposal.body.trim_end()),
        );
        item.front.description = proposal.description;
        item.front.tags = proposal.tags;
        item.front.supersedes = proposal.supersedes;
        item.front.status = Status::Accepted;
        item.validate()?;
        let proposer = who.user_id.clone().unwrap_or_else(|| "an agent".into());
        let author = Author {
            name: proposer.clone(),
            email: format!("{}@{}.aeterna", slug(&proposer), slug(&who.tenant_id)),
        };
        let message = format!(
            "propose {}: {}\n\n{}\n\nProposed by {proposer} through knowledge_propose.",
            proposal.kind,
            proposal.title.trim(),
            proposal.why.trim()
        );
        let receipt = commit_proposal(repository, item, author, message).await?;
        tracing::info!(tenant = %who.tenant_id, branch = %receipt.branch, commit = %receipt.commit, "knowledge proposed");
        Ok(receipt)
    }

    /// The caller's tenant's repositories whose scope the caller sees and reaches, narrowest
    /// layer first.
    fn visible<'a>(&'a self, who: &'a Identity) -> impl Iterator<Item = &'a Repository> + 'a {
        let seen = who.visible_scopes();
        self.repositories().iter().filter(move |repository| {
            let scope = repository_scope(repository);
            repository.config.tenant == who.tenant_id
                && seen.contains(&scope)
                && who.reaches(&scope)
        })
    }
}

/// Commits `item` on its review branch (`aeterna/proposals/<id>`, forked from the protected
/// branch) and pushes the branch when the repository has a remote. Committing what the branch
/// already holds makes no commit.
pub(crate) async fn commit_proposal(
    repository: &Repository,
    item: KnowledgeItem,
    author: Author,
    message: String,
) -> Result<ProposalReceipt> {
    let id = item.id().to_owned();
    let path = item.path()?;
    let branch = format!("{PROPOSAL_BRANCH_PREFIX}{id}");
    let remote = repository.config.remote.clone();
    let repo = repository.repo.clone();
    let change = Change {
        put: vec![item],
        remove: Vec::new(),
    };
    let (commit, pushed_to) = {
        let branch = branch.clone();
        blocking(move || {
            let repo = repo.lock().expect("repository lock");
            let commit = repo.commit(&branch, &change, &author, &message)?;
            if let Some(remote) = &remote {
                repo.push(remote, &branch)?;
            }
            Ok((
                commit,
                remote.as_deref().map(aeterna_redact::redact_url_password),
            ))
        })
        .await?
    };
    Ok(ProposalReceipt {
        id,
        branch,
        commit,
        path,
        pushed_to,
    })
}

pub(crate) fn repository_scope(repository: &Repository) -> Scope {
    Scope::new(
        repository.config.layer,
        repository
            .config
            .scope
            .clone()
            .unwrap_or_else(|| COMPANY_SCOPE.to_owned()),
    )
}

fn document(
    repository: &Repository,
    item: KnowledgeItem,
    text: String,
    history: Vec<Revision>,
) -> KnowledgeDocument {
    let path = item.path().unwrap_or_default();
    let front = item.front;
    let scope_id = repository_scope(repository).scope_id;
    KnowledgeDocument {
        uri: resource_uri(repository.config.layer, &scope_id, &front.id),
        id: front.id,
        kind: front.kind.as_str().to_owned(),
        title: front.title,
        description: front.description,
        status: front.status.as_str().to_owned(),
        layer: front.layer,
        scope_id,
        tags: front.tags,
        supersedes: front.supersedes,
        path,
        text,
        history: history.into_iter().map(HistoryEntry::from).collect(),
    }
}
