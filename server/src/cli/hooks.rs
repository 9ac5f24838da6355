//! `aeterna hook EVENT` (one agent hook: the event's JSON on stdin, context on stdout) and
//! `aeterna hooks install|uninstall claude-code` (see the `aeterna-hooks` crate). This module
//! only turns flags into an [`aeterna_hooks::HookConfig`] or an install.

use std::path::PathBuf;
use std::process::ExitCode;

use aeterna_hooks::install::{self, HookCommand, Scope};
use aeterna_hooks::{Event, HookConfig};
use anyhow::Context;

/// The server hooks talk to when neither `--server` nor `AETERNA_SERVER` says.
const DEFAULT_SERVER: &str = "http://127.0.0.1:7878/mcp";
/// The variable holding the token when `--token-env` does not name another.
const DEFAULT_TOKEN_ENV: &str = "AETERNA_TOKEN";

/// Where a hook finds the server.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// The memory server's MCP endpoint.
    #[arg(long, env = "AETERNA_SERVER", value_name = "URL", default_value = DEFAULT_SERVER)]
    pub server: String,
    /// Name of the environment variable holding the server token (sent as a Bearer token).
    #[arg(long, value_name = "VAR", default_value = DEFAULT_TOKEN_ENV)]
    pub token_env: String,
}

#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// The agent's event: SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure,
    /// Stop or SessionEnd.
    pub event: String,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Where writes wait while the server is down [default: $XDG_DATA_HOME/aeterna/hooks or
    /// ~/.local/share/aeterna/hooks].
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// The memory project id [default: the repository's directory name].
    #[arg(long, env = "AETERNA_PROJECT_ID", value_name = "ID")]
    pub project_id: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub enum HooksCommand {
    /// Write our hooks into an agent's settings, keeping everything else in them.
    Install(InstallArgs),
    /// Remove our hooks from an agent's settings, and nothing else.
    Uninstall(InstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The agent: `claude-code`.
    pub agent: Agent,
    /// This repository's `.claude/settings.json` (the default; DIR defaults to the current
    /// directory).
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".", conflicts_with = "user")]
    pub project: Option<PathBuf>,
    /// The user's `~/.claude/settings.json`, for every session.
    #[arg(long)]
    pub user: bool,
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Agent {
    ClaudeCode,
}

/// `aeterna hook EVENT`: always exits 0 (an agent may treat other codes as "block"); what went
/// wrong is one line on stderr.
pub fn run_hook(args: HookArgs) -> ExitCode {
    let warn = |line: String| eprintln!("aeterna hook {}: {line}", args.event);
    let event: Event = match args.event.parse() {
        Ok(event) => event,
        Err(error) => {
            warn(error);
            return ExitCode::SUCCESS;
        }
    };
    let input = match aeterna_hooks::read_input(std::io::stdin().lock()) {
        Ok(input) => input,
        Err(error) => {
            warn(error);
            return ExitCode::SUCCESS;
        }
    };
    let data_dir = match args.data_dir {
        Some(dir) => dir,
        None => match crate::config::default_data_dir() {
            Ok(dir) => dir.join("hooks"),
            Err(error) => {
                warn(format!("{error:#}"));
                std::env::temp_dir().join("aeterna-hooks")
            }
        },
    };
    let mut config = HookConfig::new(args.server.server, data_dir);
    config.token = std::env::var(&args.server.token_env)
        .ok()
        .filter(|token| !token.is_empty());
    config.project_id = args.project_id.filter(|id| !id.is_empty());
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            warn(format!("cannot start the async runtime: {error}"));
            return ExitCode::SUCCESS;
        }
    };
    let outcome = runtime.block_on(aeterna_hooks::run(event, &input, &config));
    if let Some(line) = outcome.stderr(event) {
        eprintln!("{line}");
    }
    let answer = outcome.stdout(event);
    if !answer.is_empty() {
        println!("{answer}");
    }
    ExitCode::SUCCESS
}

/// `aeterna hooks install|uninstall`.
pub fn run_hooks(command: HooksCommand) -> anyhow::Result<ExitCode> {
    let (args, installing) = match command {
        HooksCommand::Install(args) => (args, true),
        HooksCommand::Uninstall(args) => (args, false),
    };
    let Agent::ClaudeCode = args.agent;
    let scope = match (args.user, args.project) {
        (true, _) => Scope::User,
        (false, Some(dir)) => Scope::Project(dir),
        (false, None) => Scope::Project(PathBuf::from(".")),
    };
    let path = scope.settings_path()?;
    if !installing {
        let report = install::uninstall(&path)?;
        println!(
            "removed {} aeterna hooks from {}",
            report.previous,
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let program = std::env::current_exe().context("cannot find the aeterna executable's path")?;
    let mut hook_args = Vec::new();
    if args.server.server != DEFAULT_SERVER {
        hook_args.extend(["--server".to_owned(), args.server.server]);
    }
    if args.server.token_env != DEFAULT_TOKEN_ENV {
        hook_args.extend(["--token-env".to_owned(), args.server.token_env]);
    }
    let report = install::install(
        &path,
        &HookCommand {
            program,
            args: hook_args,
        },
    )?;
    let verb = if report.previous > 0 {
        "updated"
    } else {
        "installed"
    };
    println!(
        "{verb} {} aeterna hooks in {} ({})",
        report.installed,
        path.display(),
        Event::ALL.map(Event::name).join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
