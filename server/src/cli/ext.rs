//! `aeterna ext`: check and run extensions with the embedded host.

use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum ExtCommand {}

pub async fn run(command: ExtCommand) -> anyhow::Result<ExitCode> {
    match command {}
}
