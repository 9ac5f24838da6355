//! MCP prompts: ready-made starts for the moments memory helps most. Each fills its message
//! from the caller's own memory, so a user picking one in their client gets a message that
//! already carries what is known.
//!
//! * `start-task` — the task, with the context the Context Architect assembles for it;
//! * `fix-error` — a failure's output, with the fixes Hindsight knows for it;
//! * `record-lesson` — how to store a lesson so later searches find it;
//! * `use-skill` — a pattern or lesson of the knowledge repositories, loaded whole only when
//!   asked for (Agent Skills' progressive loading: `completion/complete` lists the names).
//!
//! Arguments are strings (as the protocol has them); identity arguments (`project_id`, …)
//! scope the lookup like a tool call's. A missing or wrong argument is a `-32602` error that
//! names it.

use aeterna_context::ContextError;
use aeterna_memory::{Layer, MemoryError};
use rmcp::ErrorData;
use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, JsonObject, ListPromptsResult, Prompt, PromptArgument,
    PromptMessage, Role,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::AgentError;
use crate::auth::Principal;
use crate::config::IdentityFields;
use crate::domain::context::{self, AssembleArgs};
use crate::domain::hindsight::{self, QueryArgs};
use crate::domain::knowledge::{self, GetArgs};
use crate::domain::memory::parse_layer;
use crate::state::AppState;

pub const START_TASK: &str = "start-task";
pub const FIX_ERROR: &str = "fix-error";
pub const RECORD_LESSON: &str = "record-lesson";
pub const USE_SKILL: &str = "use-skill";

/// The identity arguments every prompt accepts.
const IDENTITY_ARGUMENTS: [(&str, &str); 3] = [
    (
        "project_id",
        "The project or repository (defaults to your token's)",
    ),
    (
        "session_id",
        "The working session (defaults to your token's)",
    ),
    ("user_id", "The user (defaults to your token's)"),
];

/// `prompts/list`.
pub fn list() -> ListPromptsResult {
    let with_identity = |mut arguments: Vec<PromptArgument>| {
        arguments.extend(IDENTITY_ARGUMENTS.iter().map(|(name, description)| {
            PromptArgument::new(*name)
                .with_description(*description)
                .with_required(false)
        }));
        Some(arguments)
    };
    let required = |name: &str, description: &str| {
        PromptArgument::new(name)
            .with_description(description)
            .with_required(true)
    };
    ListPromptsResult::with_all_items(vec![
        Prompt::new(
            START_TASK,
            Some("Start a task with what memory knows about it: the most relevant memories and layer summaries, within a token budget"),
            with_identity(vec![required("task", "The task, in a sentence or a few keywords")]),
        )
        .with_title("Start a task with context"),
        Prompt::new(
            FIX_ERROR,
            Some("Fix a failing build, test or command with the fixes that worked before for the same kind of error"),
            with_identity(vec![required(
                "error_output",
                "The raw output of the failing compiler, test run or command",
            )]),
        )
        .with_title("Fix an error with hindsight"),
        Prompt::new(
            RECORD_LESSON,
            Some("Record a lesson, decision or convention in long-term memory so later tasks find it"),
            with_identity(vec![
                required("lesson", "What was learned, in your own words"),
                PromptArgument::new("layer")
                    .with_description("Where it applies: agent, user, session, project (default), team, org or company")
                    .with_required(false),
            ]),
        )
        .with_title("Record a lesson"),
        Prompt::new(
            USE_SKILL,
            Some("Load a skill: a pattern or lesson from the team's reviewed knowledge, whole, to follow now"),
            with_identity(vec![
                required("skill", "The skill's name: a pattern's or lesson's id (completion lists them)"),
                PromptArgument::new("team_id")
                    .with_description("The team whose knowledge holds it (defaults to your token's)")
                    .with_required(false),
                PromptArgument::new("org_id")
                    .with_description("The org whose knowledge holds it (defaults to your token's)")
                    .with_required(false),
            ]),
        )
        .with_title("Use a skill"),
    ])
}

#[derive(Deserialize)]
struct StartTaskArguments {
    task: String,
    #[serde(flatten)]
    identity: IdentityFields,
}

#[derive(Deserialize)]
struct FixErrorArguments {
    error_output: String,
    #[serde(flatten)]
    identity: IdentityFields,
}

#[derive(Deserialize)]
struct UseSkillArguments {
    skill: String,
    #[serde(flatten)]
    identity: IdentityFields,
}

#[derive(Deserialize)]
struct RecordLessonArguments {
    lesson: String,
    #[serde(default)]
    layer: Option<String>,
}

/// `prompts/get` for `caller`.
pub async fn get(
    state: &AppState,
    caller: &Principal,
    request: GetPromptRequestParams,
) -> Result<GetPromptResult, ErrorData> {
    let name = request.name.as_str();
    let arguments = request.arguments.unwrap_or_default();
    match name {
        START_TASK => start_task(state, caller, parse(name, arguments)?).await,
        FIX_ERROR => fix_error(state, caller, parse(name, arguments)?).await,
        RECORD_LESSON => record_lesson(name, parse(name, arguments)?),
        USE_SKILL => use_skill(state, caller, parse(name, arguments)?).await,
        _ => Err(ErrorData::invalid_params(
            format!(
                "unknown prompt `{name}`: this server offers {START_TASK}, {FIX_ERROR}, \
                 {RECORD_LESSON} and {USE_SKILL} (prompts/list)"
            ),
            None,
        )),
    }
}

async fn start_task(
    state: &AppState,
    caller: &Principal,
    arguments: StartTaskArguments,
) -> Result<GetPromptResult, ErrorData> {
    let task = required(START_TASK, "task", arguments.task)?;
    let assembled = context::assemble(
        &state.context,
        caller,
        AssembleArgs {
            query: task.clone(),
            token_budget: None,
            layers: None,
            min_relevance: None,
            identity: arguments.identity,
        },
    )
    .await
    .map_err(|error| {
        let caller_fault = !matches!(
            error,
            ContextError::Storage { .. }
                | ContextError::Tokenizer(_)
                | ContextError::Memory(MemoryError::Storage { .. })
        );
        failed(START_TASK, error, caller_fault)
    })?;
    let known = match assembled.content.trim() {
        "" => "Memory holds nothing relevant to this task yet.".to_owned(),
        content => format!("What memory knows that is relevant:\n\n{content}"),
    };
    let text = format!(
        "I am starting this task: {task}\n\n{known}\n\nWork from this context. Search memory \
         (memory_search) when stuck; when a build or test fails, call hindsight_query with the \
         raw error output. When the task is done, record what you learned with memory_add."
    );
    Ok(message(format!("Context for: {task}"), text))
}

async fn fix_error(
    state: &AppState,
    caller: &Principal,
    arguments: FixErrorArguments,
) -> Result<GetPromptResult, ErrorData> {
    let output = required(FIX_ERROR, "error_output", arguments.error_output)?;
    let found = hindsight::query(
        &state.hindsight,
        caller,
        QueryArgs {
            error_text: Some(output.clone()),
            signature: None,
            form: None,
            limit: None,
            threshold: None,
            identity: arguments.identity,
        },
    )
    .await
    .map_err(|error| {
        let caller_fault = error.is_caller_error();
        failed(FIX_ERROR, error, caller_fault)
    })?;
    let encode = |answers| {
        serde_json::to_string_pretty(answers).map_err(|error| {
            ErrorData::internal_error(format!("cannot encode the answers: {error}"), None)
        })
    };
    let advice = if !found.matched.is_empty() {
        let known = encode(&found.matched)?;
        format!(
            "Fixes that worked before for this kind of error, best first (each with how often \
             it worked):\n\n```json\n{known}\n```\n\nApply the most suitable one, then report \
             with hindsight_feedback whether it worked."
        )
    } else if !found.related.is_empty() {
        let related = encode(&found.related)?;
        format!(
            "No known fix matches this error closely enough to apply as is. These stored errors \
             are related (with the evidence for each); check whether one is the same problem \
             before reusing its fix:\n\n```json\n{related}\n```\n\nOnce fixed, record the fix \
             with hindsight_resolve (with `resolution_id` when a related fix was the one)."
        )
    } else {
        "No fix is known for this kind of error. Find the cause, fix it, then record the fix with \
         hindsight_resolve so the next occurrence is quicker."
            .to_owned()
    };
    let text = format!("This failed:\n\n```\n{output}\n```\n\n{advice}");
    Ok(message("Fix an error with known resolutions", text))
}

fn record_lesson(
    name: &str,
    arguments: RecordLessonArguments,
) -> Result<GetPromptResult, ErrorData> {
    let lesson = required(name, "lesson", arguments.lesson)?;
    let layer = match arguments.layer.as_deref().map(str::trim) {
        None | Some("") => Layer::Project,
        Some(layer) => parse_layer("layer", layer).map_err(|error| failed(name, error, true))?,
    };
    let text = format!(
        "Record this lesson in long-term memory with memory_add, in the `{layer}` layer:\n\n\
         {lesson}\n\nFirst rewrite it as one or two self-contained sentences that still make \
         sense without this conversation: name the tool, file or command it concerns and the \
         reason. Add two to five lowercase tags (the language, the tool, the kind of problem). \
         Search first (memory_search) and update an existing memory (memory_update) rather \
         than storing the same lesson twice."
    );
    Ok(message("Record a lesson", text))
}

async fn use_skill(
    state: &AppState,
    caller: &Principal,
    arguments: UseSkillArguments,
) -> Result<GetPromptResult, ErrorData> {
    let skill = required(USE_SKILL, "skill", arguments.skill)?;
    let document = knowledge::get(
        &state.knowledge,
        caller,
        GetArgs {
            id: skill.clone(),
            identity: arguments.identity,
        },
    )
    .await
    .map_err(|error| {
        let caller_fault = error.is_callers();
        failed(USE_SKILL, error, caller_fault)
    })?;
    if !matches!(document.kind.as_str(), "pattern" | "lesson") {
        return Err(ErrorData::invalid_params(
            format!(
                "prompt {USE_SKILL}: `{skill}` is of type `{}`, not a skill; skills are the \
                 patterns and lessons (knowledge_get reads any item)",
                document.kind
            ),
            None,
        ));
    }
    let about = document
        .description
        .as_deref()
        .map(|description| format!("{description}\n\n"))
        .unwrap_or_default();
    let text = format!(
        "Use this skill from the {} `{}` knowledge repository now: {}\n\n{about}{}\n\n\
         (Source: `{}`, {}.)",
        document.layer,
        document.scope_id,
        document.title,
        body_of(&document.text),
        document.path,
        document.uri
    );
    Ok(message(format!("Skill: {}", document.title), text))
}

/// An item file's Markdown body, without its front matter.
fn body_of(text: &str) -> &str {
    text.strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map_or(text, |(_, body)| body)
        .trim()
}

/// The prompt's arguments, or a `-32602` error naming the wrong one.
fn parse<T: DeserializeOwned>(prompt: &str, arguments: JsonObject) -> Result<T, ErrorData> {
    serde_path_to_error::deserialize(serde_json::Value::Object(arguments)).map_err(|error| {
        let path = error.path().to_string();
        let at = match path.as_str() {
            "." => String::new(),
            path => format!("`{path}`: "),
        };
        ErrorData::invalid_params(
            format!(
                "prompt {prompt}: invalid arguments: {at}{}; prompts/list lists its arguments",
                error.inner()
            ),
            None,
        )
    })
}

fn required(prompt: &str, argument: &str, value: String) -> Result<String, ErrorData> {
    match value.trim() {
        "" => Err(ErrorData::invalid_params(
            format!("prompt {prompt}: `{argument}` is empty; pass it"),
            None,
        )),
        value => Ok(value.to_owned()),
    }
}

/// `-32602` for what the caller can fix, `-32603` (and a warning) for a server failure.
fn failed(prompt: &str, error: impl std::fmt::Display, caller_fault: bool) -> ErrorData {
    let message = format!("prompt {prompt}: {error}");
    if caller_fault {
        return ErrorData::invalid_params(message, None);
    }
    tracing::warn!(prompt, %error, "prompt failed");
    ErrorData::internal_error(message, None)
}

fn message(description: impl Into<String>, text: String) -> GetPromptResult {
    GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
        .with_description(description)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_is_listed_with_its_required_arguments() {
        let listed = list();
        let names: Vec<&str> = listed.prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, [START_TASK, FIX_ERROR, RECORD_LESSON, USE_SKILL]);
        for prompt in &listed.prompts {
            let arguments = prompt.arguments.as_deref().unwrap_or_default();
            assert_eq!(
                arguments
                    .iter()
                    .filter(|a| a.required == Some(true))
                    .count(),
                1,
                "{}",
                prompt.name
            );
            assert!(arguments.iter().any(|a| a.name == "project_id"));
        }
    }

    #[test]
    fn a_skill_is_the_items_body_without_its_front_matter() {
        let file = "---\nid: retry\ntype: pattern\n---\n\nRetry once.\n";
        assert_eq!(body_of(file), "Retry once.");
        assert_eq!(body_of("no front matter"), "no front matter");
    }

    #[test]
    fn bad_arguments_are_named() {
        let error = parse::<StartTaskArguments>(START_TASK, JsonObject::new())
            .err()
            .unwrap();
        assert!(error.message.contains("missing field `task`"), "{error:?}");
        let error = record_lesson(
            RECORD_LESSON,
            RecordLessonArguments {
                lesson: "x".into(),
                layer: Some("galaxy".into()),
            },
        )
        .err()
        .unwrap();
        assert!(error.message.contains("galaxy"), "{error:?}");
        let error = required(FIX_ERROR, "error_output", "  ".into())
            .err()
            .unwrap();
        assert!(
            error.message.contains("`error_output` is empty"),
            "{error:?}"
        );
    }
}
