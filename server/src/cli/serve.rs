//! `aeterna serve` and `aeterna mcp`.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {}

#[derive(Debug, clap::Args)]
pub struct McpArgs {}

pub async fn run_serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("not yet implemented")
}

pub async fn run_mcp(args: McpArgs) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("not yet implemented")
}
