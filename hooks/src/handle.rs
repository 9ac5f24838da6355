//! What each event does with the memory server. Every path is fail-open: an error becomes a
//! warning line, never a blocked agent.

use serde_json::{Map, Value, json};

use crate::claude_code::{Event, HookInput};
use crate::client::McpClient;
use crate::failure;
use crate::workspace::{self, Workspace};
use crate::writes::{Writer, Written};
use crate::{HookConfig, Outcome};

/// The agent id memories and events are recorded under.
const AGENT_ID: &str = "claude-code";

/// The most of a tool's input or output sent with a trajectory event (the notes agent keeps
/// less; this only bounds the request).
const MAX_EVENT_FIELD_BYTES: usize = 16 * 1024;

/// The longest prompt used as a search query.
const MAX_QUERY_BYTES: usize = 2048;

/// One hook invocation's view of the world.
struct Hook<'a> {
    config: &'a HookConfig,
    client: McpClient,
    input: &'a HookInput,
    workspace: Workspace,
    outcome: Outcome,
}

pub(crate) async fn handle(event: Event, input: &HookInput, config: &HookConfig) -> Outcome {
    let client = McpClient::new(&config.server, config.token.clone(), config.connect_timeout);
    let cwd = input
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default();
    let mut workspace = workspace::discover(&cwd);
    if let Some(project_id) = &config.project_id {
        workspace.project_id = project_id.clone();
    }
    let mut hook = Hook {
        config,
        client,
        input,
        workspace,
        outcome: Outcome::default(),
    };
    match event {
        Event::SessionStart => hook.session_start().await,
        Event::UserPromptSubmit => hook.prompt_submitted().await,
        Event::PostToolUse => hook.tool_used(false).await,
        Event::PostToolUseFailure => hook.tool_used(true).await,
        Event::Stop | Event::SessionEnd => hook.distill().await,
    }
    hook.outcome
}

impl Hook<'_> {
    /// The identity fields every call carries.
    fn identity(&self) -> Map<String, Value> {
        let mut identity = Map::new();
        identity.insert(
            "project_id".into(),
            self.workspace.project_id.clone().into(),
        );
        identity.insert("agent_id".into(), AGENT_ID.into());
        if !self.input.session_id.is_empty() {
            let session = workspace::truncate(&self.input.session_id, 128);
            identity.insert("session_id".into(), session.into());
        }
        identity
    }

    fn with_identity(&self, arguments: Value) -> Map<String, Value> {
        let mut arguments = match arguments {
            Value::Object(arguments) => arguments,
            _ => Map::new(),
        };
        arguments.extend(self.identity());
        arguments
    }

    async fn session_start(&mut self) {
        let workspace = &self.workspace;
        let query = match &workspace.branch {
            Some(branch) => format!("{} {branch}", workspace.project_id),
            None => workspace.project_id.clone(),
        };
        let heading = match &workspace.branch {
            Some(branch) => format!(
                "Memory for {} (branch {branch}), from Aeterna:",
                workspace.project_id
            ),
            None => format!("Memory for {}, from Aeterna:", workspace.project_id),
        };
        // Everything visible is a candidate at the start of a session, most relevant first.
        let arguments = json!({
            "query": query,
            "token_budget": self.config.session_token_budget,
            "min_relevance": 0.0,
        });
        self.assemble(arguments, &heading).await;
    }

    async fn prompt_submitted(&mut self) {
        let prompt = self.input.prompt.as_deref().unwrap_or("").trim();
        if prompt.is_empty() {
            return;
        }
        let arguments = json!({
            "query": workspace::truncate(prompt, MAX_QUERY_BYTES),
            "token_budget": self.config.prompt_token_budget,
        });
        self.assemble(
            arguments,
            "Memories relevant to this request, from Aeterna:",
        )
        .await;
    }

    /// `context_assemble` → the answer's context, under `heading`.
    async fn assemble(&mut self, arguments: Value, heading: &str) {
        let arguments = self.with_identity(arguments);
        let answer = self
            .client
            .call(
                "context_assemble",
                Value::Object(arguments),
                self.config.context_timeout,
            )
            .await;
        match answer {
            Ok(assembled) => {
                let content = assembled["content"].as_str().unwrap_or("").trim();
                if !content.is_empty() {
                    self.outcome.context = Some(format!("{heading}\n\n{content}"));
                }
            }
            Err(error) => self
                .outcome
                .warn(format!("{error}; continuing without memory")),
        }
    }

    /// A trajectory event for every call; a failing shell command also goes to Hindsight, and a
    /// fix it knows becomes context for the model.
    async fn tool_used(&mut self, failed: bool) {
        let input = self.input;
        let tool = input.tool_name.as_deref().unwrap_or("unknown");
        let response = input.tool_response.clone().unwrap_or(Value::Null);
        let error_text = match (failed, tool) {
            (true, "Bash") if !input.is_interrupt => {
                input.error.as_deref().map(failure::failure_from_error)
            }
            (false, "Bash") => failure::failure_in_output(&response),
            _ => None,
        };
        let output = match (&input.error, failed) {
            (Some(error), true) => error.clone(),
            _ => failure::response_text(&response),
        };
        let event = json!({
            "tool_name": tool,
            "description": input.tool_input.as_ref()
                .and_then(|input| input["description"].as_str())
                .unwrap_or(""),
            "input": bounded(input.tool_input.clone().unwrap_or(Value::Null)),
            "output": failure::head_and_tail(&output, MAX_EVENT_FIELD_BYTES),
            "success": !failed && error_text.is_none(),
            "duration_ms": input.duration_ms.unwrap_or(0),
            "tags": ["claude-code"],
        });
        let writer = self.writer();
        let trajectory = self.with_identity(json!({ "event": event }));
        let Some(error_text) = error_text else {
            let written = writer.write("trajectory_capture", trajectory).await;
            self.report("trajectory_capture", written);
            return;
        };
        let query = self.with_identity(json!({ "error_text": error_text, "limit": 3 }));
        let capture = self.with_identity(json!({ "error_text": error_text }));
        let (written, captured, known) = tokio::join!(
            writer.write("trajectory_capture", trajectory),
            writer.write("hindsight_capture", capture),
            self.client.call(
                "hindsight_query",
                Value::Object(query),
                self.config.context_timeout
            ),
        );
        self.report("trajectory_capture", written);
        self.report("hindsight_capture", captured);
        match known {
            Ok(answer) => self.outcome.context = known_fix(&answer, self.config.max_fix_bytes),
            Err(error) => self.outcome.warn(error.to_string()),
        }
    }

    /// `note_distill` for the session: what it learned becomes notes.
    async fn distill(&mut self) {
        if self.input.session_id.is_empty() {
            return;
        }
        let arguments = self.with_identity(json!({}));
        let written = self.writer().write("note_distill", arguments).await;
        self.report("note_distill", written);
    }

    fn writer(&self) -> Writer {
        Writer::new(
            self.client.clone(),
            self.config.data_dir.join("queue"),
            self.config.queue,
            self.config.write_timeout,
        )
    }

    fn report(&mut self, tool: &str, written: Written) {
        match written {
            Written::Stored(_) => {}
            Written::Queued { why, position } => self.outcome.warn(format!(
                "{why}; {tool} queued (position {position}) in {}, sent when the server is back",
                self.config.data_dir.join("queue").display()
            )),
            Written::Lost { why } => self.outcome.warn(format!("{tool} not stored: {why}")),
        }
    }
}

/// A tool input as sent: kept whole when small, else its text cut to the bound.
fn bounded(value: Value) -> Value {
    let text = match &value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    if text.len() <= MAX_EVENT_FIELD_BYTES {
        return value;
    }
    Value::String(failure::head_and_tail(&text, MAX_EVENT_FIELD_BYTES))
}

/// The fixes a `hindsight_query` answer calls `matched`, as context for the model.
fn known_fix(answer: &Value, max_bytes: usize) -> Option<String> {
    if answer["status"] != "matched" {
        return None;
    }
    let mut text = String::from(
        "Aeterna's memory has seen this error before. Fixes that worked for it, best first:\n",
    );
    let mut fixes = 0;
    for matched in answer["matched"].as_array().into_iter().flatten() {
        for resolution in matched["resolutions"]
            .as_array()
            .into_iter()
            .flatten()
            .take(2)
        {
            let description = resolution["description"].as_str().unwrap_or("").trim();
            if description.is_empty() {
                continue;
            }
            fixes += 1;
            let error_type = matched["error_type"].as_str().unwrap_or("error");
            let record = match resolution["application_count"].as_u64() {
                Some(applied) if applied > 0 => format!(
                    "worked {} of {applied} times",
                    resolution["success_count"].as_u64().unwrap_or(0)
                ),
                _ => "not yet reported applied".to_owned(),
            };
            text.push_str(&format!("\n- {error_type} ({record}): {description}"));
            if let Some(diff) = resolution["changes"]["diff"].as_str() {
                text.push_str(&format!("\n  ```diff\n{}\n  ```", diff.trim_end()));
            }
            for file in resolution["changes"]["files"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let (name, summary) = (file["file"].as_str(), file["summary"].as_str());
                if let (Some(name), Some(summary)) = (name, summary) {
                    text.push_str(&format!("\n  - {name}: {summary}"));
                }
            }
            if let Some(id) = resolution["id"].as_str() {
                text.push_str(&format!(
                    "\n  (After applying it, report the result with hindsight_feedback, \
                     resolution_id {id}.)"
                ));
            }
        }
    }
    (fixes > 0).then(|| failure::head_and_tail(&text, max_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matched_fixes_become_context_and_other_answers_do_not() {
        let answer = json!({
            "status": "matched",
            "matched": [{
                "error_type": "E0308",
                "resolutions": [{
                    "id": "0190",
                    "description": "parse the string with str::parse::<u32>()",
                    "changes": {"diff": "-let n = s;\n+let n: u32 = s.parse()?;", "files": []},
                    "application_count": 4,
                    "success_count": 3,
                }],
            }],
        });
        let context = known_fix(&answer, 4096).unwrap();
        assert!(
            context.contains("E0308 (worked 3 of 4 times): parse the string"),
            "{context}"
        );
        assert!(context.contains("+let n: u32"), "{context}");
        assert!(context.contains("resolution_id 0190"), "{context}");

        let related_only = json!({"status": "no_known_resolution", "matched": [], "related": [{}]});
        assert_eq!(known_fix(&related_only, 4096), None);
        let without_fixes = json!({"status": "matched", "matched": [{"resolutions": []}]});
        assert_eq!(known_fix(&without_fixes, 4096), None);
    }

    #[test]
    fn large_tool_inputs_are_cut_small_ones_kept() {
        let small = json!({"command": "ls"});
        assert_eq!(bounded(small.clone()), small);
        let large = json!({"content": "x".repeat(100_000)});
        assert!(bounded(large).as_str().unwrap().len() <= MAX_EVENT_FIELD_BYTES);
    }
}
