//! Layer summaries as MCP resources, `aeterna://summaries/{layer}/{scope_id}` (the company
//! layer's scope id is `company`): the paragraph summary as Markdown, and the summary with
//! its metadata as JSON. They change whenever a memory of their scope does, which is what
//! clients subscribe to (see [`super::subscriptions`]).

use aeterna_context::ContextError;
use aeterna_memory::{COMPANY_SCOPE, Layer, MemoryChange, MemoryError};
use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, ResourceTemplate};

use crate::auth::Principal;
use crate::config::IdentityFields;
use crate::domain::context::{self, SummaryGetArgs};
use crate::domain::memory::parse_layer;
use crate::state::AppState;

pub const URI_PREFIX: &str = "aeterna://summaries/";

/// The resource template.
pub fn template() -> ResourceTemplate {
    ResourceTemplate::new(format!("{URI_PREFIX}{{layer}}/{{scope_id}}"), "summary")
        .with_title("Layer summary")
        .with_description(
            "The summary of one layer's memories in one scope (a project, session, user, …; \
             `company` for the company layer), regenerated as they change; subscribe to be \
             told when it does",
        )
        .with_mime_type("text/markdown")
}

/// The URI of the summary a memory change affects.
pub fn uri_of_change(change: &MemoryChange) -> String {
    uri(change.scope.layer, &change.scope.scope_id)
}

pub fn uri(layer: Layer, scope_id: &str) -> String {
    format!("{URI_PREFIX}{layer}/{scope_id}")
}

/// `(layer, scope_id)` of a summary URI, or an error saying what a summary URI looks like.
pub fn parse_uri(uri: &str) -> Result<(Layer, String), ErrorData> {
    let not_found = |why: String| {
        ErrorData::resource_not_found(
            format!(
                "no resource `{uri}`: {why}; summaries are `{URI_PREFIX}{{layer}}/{{scope_id}}`, \
                 e.g. `{URI_PREFIX}project/my-repo`"
            ),
            Some(serde_json::json!({ "uri": uri })),
        )
    };
    let rest = uri
        .strip_prefix(URI_PREFIX)
        .ok_or_else(|| not_found("not a summary".into()))?;
    let (layer, scope_id) = rest
        .split_once('/')
        .ok_or_else(|| not_found("the scope id is missing".into()))?;
    let layer = parse_layer("layer", layer).map_err(|error| not_found(error.to_string()))?;
    if scope_id.is_empty() || scope_id.contains('/') {
        return Err(not_found("the scope id is empty or has a `/`".into()));
    }
    if layer == Layer::Company && scope_id != COMPANY_SCOPE {
        return Err(not_found(format!(
            "the company layer's scope id is `{COMPANY_SCOPE}`"
        )));
    }
    Ok((layer, scope_id.to_owned()))
}

/// `resources/read` of a summary in the caller's tenant.
pub async fn read(
    state: &AppState,
    caller: &Principal,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let (layer, scope_id) = parse_uri(uri)?;
    let args = SummaryGetArgs {
        layer: layer.as_str().to_owned(),
        depth: None,
        identity: scoped(layer, scope_id),
    };
    let summary = context::summary_get(&state.context, caller, args)
        .await
        .map_err(|error| match error {
            ContextError::InvalidInput(_)
            | ContextError::Memory(
                MemoryError::InvalidInput(_)
                | MemoryError::MissingScope { .. }
                | MemoryError::Forbidden(_),
            ) => ErrorData::invalid_params(format!("{uri}: {error}"), None),
            error => {
                tracing::warn!(uri, %error, "reading a summary failed");
                ErrorData::internal_error(format!("{uri}: {error}"), None)
            }
        })?;
    let json = serde_json::to_string(&summary).map_err(|error| {
        ErrorData::internal_error(format!("cannot encode the summary: {error}"), None)
    })?;
    Ok(super::markdown_and_json(uri, summary.content, json))
}

/// Identity fields naming `scope_id` for `layer`.
pub(super) fn scoped(layer: Layer, scope_id: String) -> IdentityFields {
    let mut fields = IdentityFields::default();
    let slot = match layer {
        Layer::Agent => &mut fields.agent_id,
        Layer::User => &mut fields.user_id,
        Layer::Session => &mut fields.session_id,
        Layer::Project => &mut fields.project_id,
        Layer::Team => &mut fields.team_id,
        Layer::Org => &mut fields.org_id,
        Layer::Company => return fields,
    };
    *slot = Some(scope_id);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_round_trip_and_bad_ones_say_what_is_wrong() {
        let uri = uri(Layer::Project, "shop");
        assert_eq!(uri, "aeterna://summaries/project/shop");
        assert_eq!(parse_uri(&uri).unwrap(), (Layer::Project, "shop".into()));
        assert!(parse_uri("aeterna://summaries/company/company").is_ok());
        for bad in [
            "aeterna://summaries/galaxy/x",
            "aeterna://summaries/project",
            "aeterna://summaries/project/",
            "aeterna://summaries/company/acme",
            "aeterna://notes/x",
        ] {
            let error = parse_uri(bad).unwrap_err();
            assert!(error.message.contains(bad), "{error:?}");
            assert_eq!(error.data, Some(serde_json::json!({ "uri": bad })));
        }
    }
}
