//! `aeterna ext`: create, check, run and test extensions with the embedded host (`aeterna-host`).
//!
//! * `aeterna ext new NAME [--lang rust|js|python]` scaffolds a project (`new.rs`).
//! * `aeterna ext check FILE.wasm` validates a component and its manifest and prints the
//!   registration as JSON.
//! * `aeterna ext run --extensions DIR --hook HOOK` runs a chain over input from a file or stdin
//!   and prints the output (with `--json`: `{"output": …, "report": […]}`).
//! * `aeterna ext test DIR` runs a built extension against fixtures (`test.rs`).
//!
//! Guest output, host warnings and compilation progress go to stderr, with colours only when it
//! is a terminal (and `NO_COLOR` is unset); stdout carries only the result.

mod new;
mod test;

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use aeterna_host::{
    CallContext, ExtensionHost, Hook, HostConfig, HostError, Message, RunOutput, RunReport,
    ToolDefinition,
};
use anyhow::{Context, bail};
use serde::Serialize;

#[derive(Debug, clap::Subcommand)]
pub enum ExtCommand {
    /// Create a new extension project (Rust, JavaScript or Python) that builds and passes its
    /// tests as generated.
    New(new::NewArgs),
    /// Validate an extension component (and its manifest, if present) and print its
    /// registration as JSON.
    Check {
        /// The component, e.g. `redactor.wasm` (its manifest is `redactor.toml` beside it).
        file: PathBuf,
        #[command(flatten)]
        host: HostArgs,
    },
    /// Run a hook through the extensions of a directory and print the result.
    Run(RunArgs),
    /// Run a built extension against the input/output pairs of its fixtures.
    Test(test::TestArgs),
}

/// How the embedded host is configured.
#[derive(Debug, clap::Args)]
pub struct HostArgs {
    /// Host configuration (TOML, `aeterna_host::HostConfig`): limits, pooling, quarantine…
    #[arg(long, value_name = "FILE")]
    host_config: Option<PathBuf>,
    /// Directory of precompiled components [default: the user cache directory].
    #[arg(long, env = "AETERNA_CACHE_DIR", value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Compile every component instead of using the compile cache.
    #[arg(long, conflicts_with = "cache_dir")]
    no_cache: bool,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Directory of `*.wasm` extensions (each with an optional `<name>.toml` manifest).
    #[arg(long, value_name = "DIR")]
    extensions: PathBuf,
    /// The hook to run: input-messages, plain-text, tag or llm-output.
    #[arg(long, value_parser = parse_hook)]
    hook: Hook,
    /// Input file, or `-` for stdin. For input-messages: a JSON array of {"role", "content"}.
    #[arg(long, default_value = "-", value_name = "FILE")]
    input: String,
    /// Print `{"output": …, "report": […]}` instead of the bare output.
    #[arg(long)]
    json: bool,
    #[arg(long, default_value = "local")]
    tenant: String,
    #[arg(long, default_value = "cli")]
    session: String,
    #[arg(long)]
    user: Option<String>,
    #[arg(long)]
    project: Option<String>,
    /// The agent's tools, as a JSON array of {"name", "description", "input_schema"}.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// Run with the valid extensions even if some files are rejected.
    #[arg(long)]
    skip_invalid: bool,
    #[command(flatten)]
    host: HostArgs,
}

fn parse_hook(value: &str) -> Result<Hook, String> {
    value.parse()
}

pub async fn run(command: ExtCommand) -> anyhow::Result<ExitCode> {
    init_logging();
    match command {
        ExtCommand::New(args) => new::run(args).map(|()| ExitCode::SUCCESS),
        ExtCommand::Check { file, host } => check(&file, &host).await,
        ExtCommand::Run(args) => run_chain(args).await,
        ExtCommand::Test(args) => test::run(args).await,
    }
}

/// Guest output, host warnings and compilation progress go to stderr; stdout carries only the
/// result. Colours only for a terminal, and never with `NO_COLOR` set.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("AETERNA_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(
            "warn,aeterna_host::guest=info,aeterna_host::compile=info",
        )
    });
    let colours = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colours)
        .try_init();
}

fn build_host(args: &HostArgs) -> anyhow::Result<ExtensionHost> {
    let mut config = match &args.host_config {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| {
                format!("cannot read the host configuration {}", path.display())
            })?;
            toml::from_str::<HostConfig>(&text)
                .with_context(|| format!("invalid host configuration {}", path.display()))?
        }
        None => HostConfig::default(),
    };
    if args.no_cache {
        config.cache_dir = None;
    } else if let Some(dir) = &args.cache_dir {
        config.cache_dir = Some(dir.clone());
    } else if config.cache_dir.is_none() {
        config.cache_dir = default_cache_dir();
    }
    Ok(ExtensionHost::new(config)?)
}

/// `$XDG_CACHE_HOME/aeterna/components`, else `~/.cache/aeterna/components`.
fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".cache")))?;
    Some(base.join("aeterna").join("components"))
}

async fn check(file: &Path, args: &HostArgs) -> anyhow::Result<ExitCode> {
    let host = build_host(args)?;
    let info = host.check_file(file).await?;
    print_json(&info)?;
    Ok(ExitCode::SUCCESS)
}

async fn run_chain(args: RunArgs) -> anyhow::Result<ExitCode> {
    let host = build_host(&args.host)?;
    let report = host.load_dir(&args.extensions).await?;
    if !report.rejected.is_empty() {
        let list: Vec<String> = report
            .rejected
            .iter()
            .map(|(file, error)| format!("  {}: {error}", file.display()))
            .collect();
        if !args.skip_invalid {
            bail!(
                "{} extension(s) rejected (use --skip-invalid to run without them):\n{}",
                list.len(),
                list.join("\n")
            );
        }
        eprintln!(
            "aeterna: skipping {} rejected extension(s):\n{}",
            list.len(),
            list.join("\n")
        );
    }

    let input = read_input(&args.input)?;
    let mut ctx = CallContext::new(&args.tenant, &args.session);
    ctx.user = args.user.clone();
    ctx.project = args.project.clone();
    if let Some(path) = &args.tools {
        ctx.tools = Arc::from(read_tools(path)?);
    }

    let result = match args.hook {
        Hook::InputMessages => {
            let messages = parse_messages(&input)?;
            host.run_input_messages(&ctx, messages)
                .await
                .map(|run| shape(run, |messages| serde_json::json!(messages)))
        }
        Hook::PlainText => host
            .run_plain_text(&ctx, input)
            .await
            .map(|run| shape(run, |text| text.into())),
        Hook::Tag => host
            .run_tags(&ctx, &input)
            .await
            .map(|run| shape(run, |text| text.into())),
        Hook::LlmOutput => host
            .run_llm_output(&ctx, &input)
            .await
            .map(|run| shape(run, |text| text.into())),
    };
    match result {
        Ok(run) => {
            if args.json {
                print_json(&run)?;
            } else {
                print_output(&run.output)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(HostError::ChainStopped(stopped)) => {
            if args.json {
                print_json(&serde_json::json!({
                    "error": stopped.to_string(),
                    "extension": stopped.extension,
                    "fault": stopped.fault,
                    "report": stopped.report,
                }))?;
            }
            eprintln!("aeterna: {stopped}");
            Ok(ExitCode::FAILURE)
        }
        Err(error) => Err(error.into()),
    }
}

/// A run with its output as JSON, so every hook prints the same shape.
#[derive(Serialize)]
struct Shaped {
    output: serde_json::Value,
    report: RunReport,
}

fn shape<T>(run: RunOutput<T>, output: impl FnOnce(T) -> serde_json::Value) -> Shaped {
    Shaped {
        output: output(run.output),
        report: run.report,
    }
}

fn read_input(input: &str) -> anyhow::Result<String> {
    if input == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the input from stdin")?;
        Ok(text)
    } else {
        std::fs::read_to_string(input)
            .with_context(|| format!("cannot read the input file {input}"))
    }
}

fn parse_messages(input: &str) -> anyhow::Result<Vec<Message>> {
    serde_json::from_str(input).map_err(|error| {
        anyhow::anyhow!(
            "the input-messages hook takes a JSON array of {{\"role\": …, \"content\": …}} objects: {error}"
        )
    })
}

fn read_tools(path: &Path) -> anyhow::Result<Vec<ToolDefinition>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the tools file {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "the tools file {} must be a JSON array of {{\"name\", \"description\", \"input_schema\"}}",
            path.display()
        )
    })
}

fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut stdout, value)?;
    writeln!(stdout)?;
    Ok(())
}

/// Text is printed as is; messages as JSON.
fn print_output(output: &serde_json::Value) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match output {
        serde_json::Value::String(text) => stdout.write_all(text.as_bytes())?,
        other => {
            serde_json::to_writer_pretty(&mut stdout, other)?;
            writeln!(stdout)?;
        }
    }
    Ok(())
}
