//! `completion/complete`: argument suggestions while a user fills in a resource URI or a
//! prompt — note ids for `aeterna://notes/{id}` (the caller's tenant only), layer names for
//! `aeterna://summaries/{layer}/…` and the prompts' `layer`, skill names for `use-skill`. Values start with what was typed; at most
//! [`CompletionInfo::MAX_VALUES`] are returned, with `hasMore` when there were more.

use aeterna_memory::Layer;
use aeterna_notes::note;
use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};

use super::{prompts, summaries};
use crate::auth::Principal;
use crate::config::IdentityFields;
use crate::state::AppState;

/// Notes looked at per completion, at most: a bound on the work one keystroke costs.
const MAX_NOTES_SCANNED: usize = 2_000;
const NOTES_PAGE: usize = 200;

pub async fn complete(
    state: &AppState,
    caller: &Principal,
    request: CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let argument = &request.argument;
    let typed = argument.value.trim();
    let candidates = match &request.r#ref {
        Reference::Resource(reference) if reference.uri == note_template() => {
            match argument.name.as_str() {
                "id" => note_ids(state, caller, typed).await?,
                _ => Vec::new(),
            }
        }
        Reference::Resource(reference) if reference.uri == summaries::template().uri_template => {
            match argument.name.as_str() {
                "layer" => layers(typed),
                _ => Vec::new(),
            }
        }
        Reference::Resource(reference) => {
            return Err(ErrorData::invalid_params(
                format!(
                    "no resource template `{}`: this server's are `{}` and `{}`",
                    reference.uri,
                    note_template(),
                    summaries::template().uri_template
                ),
                None,
            ));
        }
        Reference::Prompt(reference) => {
            let known = prompts::list();
            if !known.prompts.iter().any(|p| p.name == reference.name) {
                return Err(ErrorData::invalid_params(
                    format!("unknown prompt `{}` (prompts/list)", reference.name),
                    None,
                ));
            }
            match argument.name.as_str() {
                "layer" => layers(typed),
                "skill" => skills(state, caller, &request, typed).await?,
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    };
    Ok(CompleteResult::new(bounded(candidates)))
}

fn note_template() -> String {
    format!("{}{{id}}", note::URI_PREFIX)
}

/// The caller's note ids starting with `typed`, scanning at most [`MAX_NOTES_SCANNED`].
async fn note_ids(
    state: &AppState,
    caller: &Principal,
    typed: &str,
) -> Result<Vec<String>, ErrorData> {
    let who = caller
        .identity(&IdentityFields::default())
        .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
    let typed = typed.to_ascii_lowercase();
    let mut ids = Vec::new();
    let mut cursor = None;
    let mut scanned = 0;
    while scanned < MAX_NOTES_SCANNED {
        let page = state
            .notes
            .tenant_notes(&who, cursor.as_deref(), NOTES_PAGE)
            .await
            .map_err(|error| {
                tracing::warn!(%error, "cannot list notes for completion");
                ErrorData::internal_error(format!("cannot list notes: {error}"), None)
            })?;
        scanned += page.notes.len();
        ids.extend(
            page.notes
                .iter()
                .map(|summary| summary.id.to_string())
                .filter(|id| id.starts_with(&typed)),
        );
        match page.next_cursor {
            Some(next) if !page.notes.is_empty() => cursor = Some(next),
            _ => break,
        }
    }
    Ok(ids)
}

/// Ids of the patterns and lessons the caller sees, scoped by the prompt's arguments filled in
/// so far (`team_id`, …).
async fn skills(
    state: &AppState,
    caller: &Principal,
    request: &CompleteRequestParams,
    typed: &str,
) -> Result<Vec<String>, ErrorData> {
    let filled = request
        .context
        .as_ref()
        .and_then(|context| context.arguments.clone())
        .unwrap_or_default()
        .into_iter()
        .filter(|(name, value)| name.ends_with("_id") && !value.trim().is_empty())
        .collect::<std::collections::HashMap<_, _>>();
    let fields: IdentityFields =
        serde_json::from_value(serde_json::to_value(filled).unwrap_or_default())
            .unwrap_or_default();
    let who = caller
        .identity(&fields)
        .map_err(|error| ErrorData::invalid_params(error.to_string(), None))?;
    state
        .knowledge
        .skill_ids(&who, &typed.to_ascii_lowercase())
        .await
        .map_err(|error| {
            tracing::warn!(%error, "cannot list skills for completion");
            ErrorData::internal_error(format!("cannot list skills: {error}"), None)
        })
}

fn layers(typed: &str) -> Vec<String> {
    let typed = typed.to_ascii_lowercase();
    Layer::ALL
        .iter()
        .map(|layer| layer.as_str())
        .filter(|name| name.starts_with(&typed))
        .map(str::to_owned)
        .collect()
}

/// At most [`CompletionInfo::MAX_VALUES`], saying how many there were.
fn bounded(mut values: Vec<String>) -> CompletionInfo {
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let has_more = total > values.len();
    let total = Some(total.try_into().unwrap_or(u32::MAX));
    CompletionInfo::with_pagination(values, total, has_more)
        .expect("truncated to the most values a completion may carry")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_complete_by_prefix() {
        assert_eq!(layers("pro"), ["project"]);
        assert_eq!(layers("S"), ["session"]);
        assert_eq!(layers("").len(), Layer::ALL.len());
        assert!(layers("x").is_empty());
    }

    #[test]
    fn completions_are_bounded_and_say_so() {
        let info = bounded((0..150).map(|n| n.to_string()).collect());
        assert_eq!(info.values.len(), CompletionInfo::MAX_VALUES);
        assert_eq!(info.total, Some(150));
        assert_eq!(info.has_more, Some(true));
    }
}
