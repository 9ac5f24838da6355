//! The extension tools, shared by the bridge and the server: `extensions_list`,
//! `extensions_apply` and `extensions_prompt` as plain functions over one [`Extensions`] (an
//! [`ExtensionHost`] and the directory it serves). Argument and result types carry the JSON
//! schemas agents see; the MCP layers only parse, call and shape.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use aeterna_host::{
    CallContext, ExtensionHost, ExtensionInfo, HostError, Message, RunOutput, RunReport,
};
use parking_lot::RwLock;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Longest `session`, `user` or `project` accepted by `extensions_apply`, in bytes.
pub const MAX_ID_BYTES: usize = 256;

/// An extension host over one directory, with what the last load of that directory said.
pub struct Extensions {
    host: ExtensionHost,
    dir: PathBuf,
    status: RwLock<DirStatus>,
    /// Serialises directory loads so the status always describes the registry in force.
    reloads: tokio::sync::Mutex<()>,
}

/// What the last load of the directory reported.
#[derive(Debug, Clone, Default)]
struct DirStatus {
    rejected: Vec<RejectedFile>,
    disabled: Vec<String>,
    /// Why the directory itself could not be read, if it could not.
    error: Option<String>,
    reloads: u64,
}

/// A component file the last load refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RejectedFile {
    pub file: String,
    pub reason: String,
}

impl Extensions {
    /// Serves `dir` with `host`. Nothing is loaded until [`reload`](Self::reload).
    pub fn new(host: ExtensionHost, dir: impl Into<PathBuf>) -> Arc<Self> {
        Arc::new(Self {
            host,
            dir: dir.into(),
            status: RwLock::new(DirStatus::default()),
            reloads: tokio::sync::Mutex::new(()),
        })
    }

    pub fn host(&self) -> &ExtensionHost {
        &self.host
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Loads the directory again. Components whose bytes are already linked are reused, new
    /// ones compile off the call path (runs keep the previous snapshot until the new one is
    /// swapped in), and a rejected file is logged and listed without affecting the others. An
    /// unreadable directory keeps what was loaded and is reported by `extensions_list`.
    pub async fn reload(&self) {
        let _reload = self.reloads.lock().await;
        let started = Instant::now();
        let result = self.host.load_dir(&self.dir).await;
        let mut status = self.status.write();
        status.reloads += 1;
        match result {
            Ok(report) => {
                status.error = None;
                status.rejected = report
                    .rejected
                    .iter()
                    .map(|(file, error)| RejectedFile {
                        file: file.display().to_string(),
                        reason: error.to_string(),
                    })
                    .collect();
                status.disabled = report
                    .disabled
                    .iter()
                    .map(|file| file.display().to_string())
                    .collect();
                tracing::info!(
                    dir = %self.dir.display(),
                    loaded = report.loaded.len(),
                    rejected = report.rejected.len(),
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "extensions directory loaded"
                );
            }
            Err(error) => {
                let message = format!(
                    "cannot read the extensions directory {}: {error}; create it or pass an \
                     existing directory with --extensions",
                    self.dir.display()
                );
                tracing::error!("{message}");
                status.error = Some(message);
            }
        }
    }

    /// How many directory loads have finished (for tests and benchmarks waiting on a reload).
    pub fn reload_count(&self) -> u64 {
        self.status.read().reloads
    }

    /// `extensions_list`: what is loaded, in execution order, with health; what was refused.
    pub fn list(&self) -> ExtensionsList {
        let health = self.host.status();
        let extensions = self
            .host
            .extensions()
            .into_iter()
            .map(|info| {
                let status = health
                    .iter()
                    .find(|status| status.id == info.registration.id);
                LoadedExtension::new(info, status)
            })
            .collect();
        let status = self.status.read().clone();
        ExtensionsList {
            dir: self.dir.display().to_string(),
            extensions,
            rejected: status.rejected,
            disabled: status.disabled,
            dir_error: status.error,
        }
    }

    /// `extensions_prompt`: the prompt additions and tool configuration of the loaded
    /// extensions, in execution order, and the tool configuration merged over them.
    pub fn prompt(&self) -> PromptResult {
        let prompt_additions = self
            .host
            .prompt_additions()
            .into_iter()
            .map(|addition| PromptAdditionView {
                extension: addition.extension,
                text: addition.text,
            })
            .collect();
        let mut merged = ToolConfigView::default();
        let tool_configs = self
            .host
            .tool_configs()
            .into_iter()
            .map(|(extension, config)| {
                let view = ToolConfigView {
                    add: config.add.iter().map(ToolView::from).collect(),
                    remove: config.remove.clone(),
                    override_: config.override_.iter().map(ToolView::from).collect(),
                };
                merged.add.extend(view.add.iter().cloned());
                merged.remove.extend(view.remove.iter().cloned());
                merged.override_.extend(view.override_.iter().cloned());
                ExtensionToolConfig {
                    extension,
                    config: view,
                }
            })
            .collect();
        PromptResult {
            prompt_additions,
            tool_configs,
            merged_tool_config: merged,
        }
    }

    /// `extensions_apply`: runs `args.hook`'s chain over `args.payload` for `tenant` and
    /// `args.session` (extension state is kept per tenant, session and extension).
    pub async fn apply(&self, tenant: &str, args: ApplyArgs) -> Result<ApplyResult, ApplyError> {
        let hook: aeterna_host::Hook = args.hook.parse().map_err(ApplyError::Hook)?;
        check_id("session", &args.session)?;
        let mut ctx = CallContext::new(tenant, &args.session);
        if let Some(user) = args.user {
            check_id("user", &user)?;
            ctx = ctx.with_user(user);
        }
        if let Some(project) = args.project {
            check_id("project", &project)?;
            ctx = ctx.with_project(project);
        }
        let limit = self.host.config().max_run_output_bytes;
        let run = match hook {
            aeterna_host::Hook::InputMessages => {
                let messages: Vec<Message> =
                    serde_json::from_value(args.payload).map_err(|error| ApplyError::Payload {
                        hook,
                        expected: "an array of {\"role\", \"content\"} messages",
                        detail: error.to_string(),
                    })?;
                let bytes: usize = messages
                    .iter()
                    .map(|m| m.content.len() + m.role.len())
                    .sum();
                check_size(bytes, limit)?;
                shape(
                    self.host.run_input_messages(&ctx, messages).await,
                    |messages| serde_json::json!(messages),
                )?
            }
            _ => {
                let Value::String(text) = args.payload else {
                    return Err(ApplyError::Payload {
                        hook,
                        expected: "a string",
                        detail: format!("got {}", kind_of(&args.payload)),
                    });
                };
                check_size(text.len(), limit)?;
                let run = match hook {
                    aeterna_host::Hook::PlainText => self.host.run_plain_text(&ctx, text).await,
                    aeterna_host::Hook::Tag => self.host.run_tags(&ctx, &text).await,
                    _ => self.host.run_llm_output(&ctx, &text).await,
                };
                shape(run, Value::String)?
            }
        };
        Ok(ApplyResult {
            hook: hook.as_str().to_owned(),
            output: run.0,
            report: run.1,
        })
    }
}

fn check_id(argument: &'static str, value: &str) -> Result<(), ApplyError> {
    if value.is_empty() || value.len() > MAX_ID_BYTES {
        return Err(ApplyError::Id {
            argument,
            bytes: value.len(),
        });
    }
    Ok(())
}

fn check_size(bytes: usize, limit: usize) -> Result<(), ApplyError> {
    if bytes > limit {
        return Err(ApplyError::TooLarge { bytes, limit });
    }
    Ok(())
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn shape<T>(
    run: Result<RunOutput<T>, HostError>,
    output: impl FnOnce(T) -> Value,
) -> Result<(Value, Vec<Value>), ApplyError> {
    match run {
        Ok(run) => Ok((output(run.output), report_rows(&run.report))),
        Err(HostError::ChainStopped(stopped)) => Err(ApplyError::ChainStopped {
            message: stopped.to_string(),
            report: report_rows(&stopped.report),
        }),
        Err(error) => Err(ApplyError::Host(error.to_string())),
    }
}

fn report_rows(report: &RunReport) -> Vec<Value> {
    match serde_json::to_value(report) {
        Ok(Value::Array(rows)) => rows,
        _ => Vec::new(),
    }
}

/// Arguments of `extensions_apply`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyArgs {
    /// The hook whose chain runs: `input-messages`, `plain-text`, `tag` or `llm-output`.
    #[schemars(schema_with = "hook_schema")]
    pub hook: String,
    /// For `input-messages`, an array of `{"role", "content"}` messages; for the other hooks,
    /// the text (a tool's output, an LLM response…).
    pub payload: Value,
    /// The agent's session: extensions keep their state per session.
    pub session: String,
    /// The user, visible to extensions.
    #[serde(default)]
    pub user: Option<String>,
    /// The project, visible to extensions.
    #[serde(default)]
    pub project: Option<String>,
}

fn hook_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["input-messages", "plain-text", "tag", "llm-output"]
    })
}

/// Why `extensions_apply` refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("invalid `hook`: {0}")]
    Hook(String),
    #[error("invalid `payload` for hook {hook}: expected {expected} ({detail})")]
    Payload {
        hook: aeterna_host::Hook,
        expected: &'static str,
        detail: String,
    },
    #[error("invalid `{argument}`: must be 1 to {MAX_ID_BYTES} bytes (got {bytes})")]
    Id {
        argument: &'static str,
        bytes: usize,
    },
    #[error(
        "`payload` is {bytes} bytes, over the limit of {limit} bytes (max_run_output_bytes); \
         split it or raise the limit in the host configuration"
    )]
    TooLarge { bytes: usize, limit: usize },
    #[error("the chain stopped: {message}")]
    ChainStopped { message: String, report: Vec<Value> },
    #[error("the extension host failed: {0}")]
    Host(String),
}

/// What `extensions_apply` returns.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ApplyResult {
    /// The hook that ran.
    pub hook: String,
    /// The chain's output: messages for `input-messages`, text otherwise.
    pub output: Value,
    /// One row per extension callback in execution order: `extension`, `hook`, `outcome`
    /// (`status` ok, fault or quarantined), `duration_us`, `fuel_used`.
    pub report: Vec<Value>,
}

/// What `extensions_list` returns.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExtensionsList {
    /// The directory served (and watched).
    pub dir: String,
    /// Loaded extensions in execution order (priority descending, then id).
    pub extensions: Vec<LoadedExtension>,
    /// Component files the last load refused, with the reason.
    pub rejected: Vec<RejectedFile>,
    /// Component files their manifest disables.
    pub disabled: Vec<String>,
    /// Why the directory could not be read, if it could not.
    pub dir_error: Option<String>,
}

/// One loaded extension.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LoadedExtension {
    pub id: String,
    pub version: String,
    pub priority: i32,
    /// The hooks it handles.
    pub hooks: Vec<String>,
    /// The tags it handles (for the `tag` hook).
    pub tags: Vec<String>,
    pub file: String,
    /// `open` (a fault passes the input on) or `closed` (a fault stops the chain).
    pub failure: String,
    pub health: Health,
}

/// Faults and quarantine of an extension.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Health {
    pub consecutive_faults: u32,
    /// Milliseconds left in quarantine, when quarantined.
    pub quarantined_ms: Option<u64>,
}

impl LoadedExtension {
    fn new(info: ExtensionInfo, status: Option<&aeterna_host::ExtensionStatus>) -> Self {
        let failure = serde_json::to_value(info.failure)
            .ok()
            .and_then(|value| value.as_str().map(str::to_owned))
            .unwrap_or_default();
        Self {
            id: info.registration.id,
            version: info.registration.version,
            priority: info.registration.priority,
            hooks: info
                .registration
                .hooks
                .iter()
                .map(|hook| hook.as_str().to_owned())
                .collect(),
            tags: info.registration.tags,
            file: info.file.display().to_string(),
            failure,
            health: Health {
                consecutive_faults: status.map_or(0, |status| status.consecutive_faults),
                quarantined_ms: status.and_then(|status| status.quarantined_ms),
            },
        }
    }
}

/// What `extensions_prompt` returns.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PromptResult {
    /// Text the extensions want in the system prompt, in execution order.
    pub prompt_additions: Vec<PromptAdditionView>,
    /// Each extension's tool configuration, in execution order.
    pub tool_configs: Vec<ExtensionToolConfig>,
    /// All of them together, applied in execution order: removals, then overrides, then
    /// additions.
    pub merged_tool_config: ToolConfigView,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PromptAdditionView {
    pub extension: String,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExtensionToolConfig {
    pub extension: String,
    pub config: ToolConfigView,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ToolConfigView {
    pub add: Vec<ToolView>,
    pub remove: Vec<String>,
    #[serde(rename = "override")]
    pub override_: Vec<ToolView>,
}

/// A tool definition from an extension; `input_schema` is JSON Schema as JSON text.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ToolView {
    pub name: String,
    pub description: String,
    pub input_schema: String,
}

impl From<&aeterna_host::ToolDefinition> for ToolView {
    fn from(tool: &aeterna_host::ToolDefinition) -> Self {
        Self {
            name: tool.name.clone(),
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
        }
    }
}

/// Arguments of `extensions_list` and `extensions_prompt` (none).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}
