//! `aeterna import --from FILE [--tenant NEW]`: reads a bundle written by `aeterna export`
//! back into the configured backend (the data dir's SQLite, or the PostgreSQL of
//! `database_url`: exporting from a data dir and importing with a PostgreSQL configuration is
//! the SQLite → PostgreSQL migration). Idempotent: importing a bundle again adds nothing.
//!
//! With `--format mcp-memory|basic-memory|mem0`, reads another tool's memory instead
//! (`aeterna_memory::bundle::importers`) into `--tenant` under `--user` or `--project`,
//! through the memory service (redaction, deduplication, embedding).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use aeterna_memory::bundle::importers::{self, Source};
use aeterna_memory::bundle::{ImportOptions, Phase, Progress, import_bundle};
use aeterna_memory::{Identity, Layer, MemoryService};
use anyhow::Context;

use super::export::progress_bar;
use super::serve::{CommonArgs, load};
use crate::config::Config;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    /// A bundle written by `aeterna export`.
    Bundle,
    /// The official MCP memory server's JSON Lines file (`memory.jsonl`).
    McpMemory,
    /// A basic-memory project folder of Markdown notes.
    BasicMemory,
    /// Mem0's export JSON (`{"results": [...]}` or a list).
    Mem0,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The bundle (or, with `--format`, the other tool's file or folder) to read.
    #[arg(long, value_name = "PATH")]
    pub from: PathBuf,
    /// The tenant to import into: by default a bundle's own; required with another format.
    #[arg(long, value_name = "TENANT")]
    pub tenant: Option<String>,
    #[arg(long, value_enum, default_value = "bundle")]
    pub format: ImportFormat,
    /// Another tool's memories go into this user's layer.
    #[arg(long, value_name = "USER", conflicts_with = "project")]
    pub user: Option<String>,
    /// Another tool's memories go into this project's layer.
    #[arg(long, value_name = "PROJECT")]
    pub project: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The memory service of the configured stores (as `aeterna serve` opens them, without the
/// agents).
async fn open_memory(mut config: Config) -> anyhow::Result<MemoryService> {
    let embedder = crate::embedder::build(&config.embedder)?;
    config.memory.qdrant.url = config.qdrant_url.clone();
    match &config.database_url {
        None => {
            let data_dir = config.data_dir()?;
            MemoryService::open_embedded(&data_dir, config.memory.clone(), embedder)
                .await
                .with_context(|| {
                    format!(
                        "cannot open the memory stores in {} (is its server still running? stop \
                         it first)",
                        data_dir.display()
                    )
                })
        }
        Some(url) => {
            let shown = aeterna_redact::redact_url_password(url);
            let db = crate::state::connect_postgres(&config, url).await?;
            MemoryService::open_postgres(db, config.memory.clone(), embedder)
                .await
                .with_context(|| format!("cannot open the memory stores at {shown}"))
        }
    }
}

pub async fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let config = load(&args.common, None)?;
    let from = args.from.display().to_string();
    anyhow::ensure!(args.from.exists(), "{from} does not exist (--from)");
    let tenant = args.tenant.as_deref().map(str::trim);
    anyhow::ensure!(tenant != Some(""), "--tenant is empty; name a tenant");
    let source = match args.format {
        ImportFormat::Bundle => None,
        ImportFormat::McpMemory => Some(Source::McpMemory),
        ImportFormat::BasicMemory => Some(Source::BasicMemory),
        ImportFormat::Mem0 => Some(Source::Mem0),
    };
    if source.is_none() {
        anyhow::ensure!(
            args.user.is_none() && args.project.is_none(),
            "--user and --project are for another tool's memory (--format); a bundle keeps the \
             scopes it was exported with"
        );
    }
    let memory = Arc::new(open_memory(config).await?);
    let bar = progress_bar("{msg:>24} [{bar:40}] {pos}/{len} ({elapsed})");

    let Some(source) = source else {
        let options = ImportOptions {
            tenant: tenant.map(str::to_owned),
            ..ImportOptions::default()
        };
        let mut phase = None;
        let report = import_bundle(&memory, &args.from, &options, |p: Progress<'_>| {
            if phase != Some(p.phase) {
                phase = Some(p.phase);
                bar.set_message(match p.phase {
                    Phase::Check => "checking (bytes)",
                    _ => "importing (items)",
                });
                bar.set_position(0);
            }
            bar.set_length(p.total);
            bar.set_position(p.done);
        })
        .await
        .with_context(|| format!("cannot import {from}"))?;
        bar.finish_and_clear();
        memory.flush().await?;
        for (kind, count) in report.counts.iter().filter(|(_, c)| c.read > 0) {
            println!(
                "{kind:<30} {:>9} read {:>9} written {:>9} already there{}",
                count.read,
                count.inserted,
                count.present,
                match count.skipped {
                    0 => String::new(),
                    n => format!(" {n:>6} skipped"),
                }
            );
        }
        let total = report.total();
        println!(
            "imported {from} into tenant `{}`: {} of {} items written, {} already there{}",
            report.tenant_id,
            total.inserted,
            total.read,
            total.present + total.skipped,
            match report.reembedded {
                0 => String::new(),
                n => format!(" ({n} re-embedded with `{}`)", memory.embedder().id()),
            }
        );
        return Ok(ExitCode::SUCCESS);
    };

    let tenant =
        tenant.context("--tenant is required with --format: name the tenant to import into")?;
    let mut who = Identity::new(tenant);
    let layer = match (&args.user, &args.project) {
        (Some(user), _) => {
            who.user_id = Some(user.clone());
            Layer::User
        }
        (None, Some(project)) => {
            who.project_id = Some(project.clone());
            Layer::Project
        }
        (None, None) => {
            anyhow::bail!("name where the memories go: --user USER or --project PROJECT")
        }
    };
    bar.set_message("importing (items)");
    let report = importers::import(&memory, &who, layer, source, &args.from, |read| {
        bar.set_position(read);
    })
    .await
    .with_context(|| format!("cannot import {from}"))?;
    bar.finish_and_clear();
    memory.flush().await?;
    println!(
        "imported {from} into tenant `{tenant}` ({layer} {}): {} memories added from {} items, \
         {} already there",
        who.scope(layer).unwrap_or_default(),
        report.added,
        report.read,
        report.duplicates
    );
    Ok(ExitCode::SUCCESS)
}
