//! Command-line entry points. Each subcommand lives in its own module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod backup;
pub mod bridge;
pub mod export;
pub mod ext;
pub mod hooks;
pub mod import;
pub mod knowledge;
pub mod migrate;
pub mod purge;
pub mod serve;

/// Aeterna: an extension host and memory server for AI coding agents.
#[derive(Debug, Parser)]
#[command(name = "aeterna", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over Streamable HTTP at /mcp, plus health, metrics and REST endpoints.
    Serve(serve::ServeArgs),
    /// Serve the same MCP tools over stdio.
    Mcp(serve::McpArgs),
    /// Run the client bridge on stdio: local extensions plus the memory server's tools.
    Bridge(bridge::BridgeArgs),
    /// Check and run WebAssembly extensions.
    #[command(subcommand)]
    Ext(ext::ExtCommand),
    /// Copy the embedded database to a file, consistently, while the server runs.
    Backup(backup::BackupArgs),
    /// Copy an embedded deployment (its data dir) into PostgreSQL; resumable.
    Migrate(migrate::MigrateArgs),
    /// Forget everything one tenant owns (memories, vectors, versions, agents' records).
    Purge(purge::PurgeArgs),
    /// Write everything one tenant owns into a bundle file (or Markdown files to read).
    Export(export::ExportArgs),
    /// Read a bundle (or another tool's memory) into the configured stores; idempotent.
    Import(import::ImportArgs),
    /// Handle one coding-agent hook: the event's JSON on stdin, context for the model on stdout.
    Hook(hooks::HookArgs),
    /// Install or remove the hooks that give a coding agent memory (Claude Code).
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    /// The knowledge repository: export into AGENTS.md, CLAUDE.md and skills, import, list.
    #[command(subcommand)]
    Knowledge(knowledge::KnowledgeCommand),
}

/// Parses the command line and runs the chosen subcommand.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // An agent may read exit status 2 (clap's) from a hook as "block the agent".
        Err(error) if std::env::args().nth(1).as_deref() == Some("hook") && error.use_stderr() => {
            let message = error.to_string();
            let first_line = message.lines().next().unwrap_or_default();
            eprintln!("aeterna hook: {first_line} (see `aeterna hook --help`)");
            return ExitCode::SUCCESS;
        }
        Err(error) => error.exit(),
    };
    // A hook is one short request: a runtime of its own on this thread, nothing else to start.
    let cli = match cli.command {
        Command::Hook(args) => return hooks::run_hook(args),
        Command::Hooks(command) => return finish(hooks::run_hooks(command)),
        Command::Knowledge(command) => return finish(knowledge::run(command)),
        command => Cli { command },
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("aeterna: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Serve(args) => serve::run_serve(args).await,
            Command::Mcp(args) => serve::run_mcp(args).await,
            Command::Ext(command) => ext::run(command).await,
            Command::Bridge(args) => bridge::run(args).await,
            Command::Backup(args) => backup::run(args).await,
            Command::Migrate(args) => migrate::run(args).await,
            Command::Purge(args) => purge::run(args).await,
            Command::Export(args) => export::run(args).await,
            Command::Import(args) => import::run(args).await,
            Command::Hook(_) | Command::Hooks(_) | Command::Knowledge(_) => {
                unreachable!("handled before the runtime")
            }
        }
    });
    finish(result)
}

fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("aeterna: {error:#}");
            ExitCode::FAILURE
        }
    }
}
