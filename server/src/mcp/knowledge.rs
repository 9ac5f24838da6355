//! The knowledge repositories' tools: `knowledge_search`, `knowledge_get` and
//! `knowledge_propose` (a review branch and a commit, never the protected branch).

use aeterna_knowledge::KnowledgeError;
use aeterna_knowledge::tools::{KnowledgeDocument, ProposalReceipt};
use rmcp::handler::server::common::schema_for_output;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::params::Parameters;
use super::{AeternaMcp, AgentError, Caller, answer};
use crate::domain::knowledge::{self, GetArgs, ProposeArgs, SearchAnswer, SearchArgs};
use aeterna_memory::MemoryError;

impl AgentError for KnowledgeError {
    fn into_memory(self) -> Result<MemoryError, Self> {
        match self {
            KnowledgeError::Memory { source, .. } => Ok(source),
            other => Err(other),
        }
    }

    fn is_callers(&self) -> bool {
        matches!(
            self,
            KnowledgeError::Invalid(_) | KnowledgeError::Limit(_) | KnowledgeError::NotFound(_)
        )
    }
}

#[tool_router(router = knowledge_router, vis = "pub(crate)")]
impl AeternaMcp {
    /// Search the team's reviewed knowledge (decisions, policies, patterns, specs, lessons,
    /// notes) kept in git: hits with id, type, title, path and text, best first. `type`
    /// narrows to one kind. Use knowledge_get for an item's whole file and history.
    #[tool(
        name = "knowledge_search",
        output_schema = schema_for_output::<SearchAnswer>(),
        annotations(title = "Search knowledge", read_only_hint = true, open_world_hint = false)
    )]
    async fn knowledge_search(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<SearchArgs>,
    ) -> CallToolResult {
        answer(
            "knowledge_search",
            knowledge::search(&self.state.knowledge, &caller, args).await,
        )
    }

    /// Read one knowledge item: its front matter, its Markdown file and the commits that
    /// changed it (newest first).
    #[tool(
        name = "knowledge_get",
        output_schema = schema_for_output::<KnowledgeDocument>(),
        annotations(title = "Read a knowledge item", read_only_hint = true, open_world_hint = false)
    )]
    async fn knowledge_get(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<GetArgs>,
    ) -> CallToolResult {
        answer(
            "knowledge_get",
            knowledge::get(&self.state.knowledge, &caller, args).await,
        )
    }

    /// Propose a new or changed knowledge item for review: it is committed on its own branch
    /// (`aeterna/proposals/<id>`, pushed when the repository has a remote), never on the
    /// protected branch; once a person merges it, memory_search and knowledge_search find it.
    /// `why` is the commit message reviewers read.
    #[tool(
        name = "knowledge_propose",
        output_schema = schema_for_output::<ProposalReceipt>(),
        annotations(
            title = "Propose knowledge",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn knowledge_propose(
        &self,
        Caller(caller): Caller,
        Parameters(args): Parameters<ProposeArgs>,
    ) -> CallToolResult {
        answer(
            "knowledge_propose",
            knowledge::propose(&self.state.knowledge, &caller, args).await,
        )
    }
}
