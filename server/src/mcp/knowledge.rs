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

/// Knowledge items as resources, by template: `aeterna://knowledge/{layer}/{scope_id}/{id}`
/// (`knowledge_search` and `knowledge_get` return each item's `uri`).
pub(super) mod resources {
    use aeterna_knowledge::KnowledgeError;
    use aeterna_knowledge::tools::RESOURCE_URI_PREFIX;
    use aeterna_memory::Layer;
    use rmcp::ErrorData;
    use rmcp::model::{ReadResourceResult, ResourceTemplate};

    use crate::auth::Principal;
    use crate::domain::knowledge::{self, GetArgs};
    use crate::mcp::{AgentError, markdown_and_json, summaries};
    use crate::state::AppState;

    pub fn template() -> ResourceTemplate {
        ResourceTemplate::new(
            format!("{RESOURCE_URI_PREFIX}{{layer}}/{{scope_id}}/{{id}}"),
            "knowledge",
        )
        .with_title("Knowledge item")
        .with_description(
            "A reviewed knowledge item (decision, policy, pattern, spec, lesson or note) of \
             the repository of one team, org or project (`company` for the company's): the \
             file as Markdown with front matter, and the item with its history as JSON",
        )
        .with_mime_type("text/markdown")
    }

    /// `(layer, scope_id, id)` of a knowledge URI.
    fn parse_uri(uri: &str) -> Result<(Layer, String, String), ErrorData> {
        let not_found = |why: &str| {
            ErrorData::resource_not_found(
                format!(
                    "no resource `{uri}`: {why}; knowledge items are \
                     `{RESOURCE_URI_PREFIX}{{layer}}/{{scope_id}}/{{id}}`, e.g. \
                     `{RESOURCE_URI_PREFIX}team/platform/retry-once` (knowledge_search returns \
                     each item's uri)"
                ),
                Some(serde_json::json!({ "uri": uri })),
            )
        };
        let rest = uri
            .strip_prefix(RESOURCE_URI_PREFIX)
            .ok_or_else(|| not_found("not a knowledge item"))?;
        let (scope, id) = rest
            .rsplit_once('/')
            .ok_or_else(|| not_found("the item id is missing"))?;
        let summary_uri = format!("{}{scope}", summaries::URI_PREFIX);
        let (layer, scope_id) =
            summaries::parse_uri(&summary_uri).map_err(|_| not_found("the scope is not valid"))?;
        if id.is_empty() {
            return Err(not_found("the item id is empty"));
        }
        Ok((layer, scope_id, id.to_owned()))
    }

    /// `resources/read` of a knowledge item the caller's identity reaches.
    pub async fn read(
        state: &AppState,
        caller: &Principal,
        uri: &str,
    ) -> Result<ReadResourceResult, ErrorData> {
        let (layer, scope_id, id) = parse_uri(uri)?;
        let args = GetArgs {
            id,
            identity: summaries::scoped(layer, scope_id.clone()),
        };
        let document = knowledge::get(&state.knowledge, caller, args)
            .await
            .map_err(|error| match error {
                KnowledgeError::NotFound(_) => ErrorData::resource_not_found(
                    format!("no resource `{uri}`: {error}"),
                    Some(serde_json::json!({ "uri": uri })),
                ),
                error if error.is_callers() => {
                    ErrorData::invalid_params(format!("{uri}: {error}"), None)
                }
                error => {
                    tracing::warn!(uri, %error, "reading a knowledge item failed");
                    ErrorData::internal_error(format!("{uri}: {error}"), None)
                }
            })?;
        // The narrowest repository holding the id answered; the URI names one.
        if document.layer != layer || document.scope_id != scope_id {
            return Err(ErrorData::resource_not_found(
                format!(
                    "no resource `{uri}`: that repository holds no item `{}`",
                    document.id
                ),
                Some(serde_json::json!({ "uri": uri })),
            ));
        }
        let json = serde_json::to_string(&document).map_err(|error| {
            ErrorData::internal_error(format!("cannot encode the item: {error}"), None)
        })?;
        Ok(markdown_and_json(uri, document.text, json))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn uris_parse_and_bad_ones_say_what_an_item_uri_looks_like() {
            assert_eq!(
                parse_uri("aeterna://knowledge/team/core/retry-once").unwrap(),
                (Layer::Team, "core".into(), "retry-once".into())
            );
            assert_eq!(
                parse_uri("aeterna://knowledge/company/company/x").unwrap(),
                (Layer::Company, "company".into(), "x".into())
            );
            for bad in [
                "aeterna://knowledge/team/core/",
                "aeterna://knowledge/team/core",
                "aeterna://knowledge/galaxy/core/x",
                "aeterna://notes/x",
            ] {
                let error = parse_uri(bad).unwrap_err();
                assert!(
                    error.message.contains("{layer}/{scope_id}/{id}"),
                    "{bad}: {error:?}"
                );
            }
        }
    }
}
