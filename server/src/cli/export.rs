//! `aeterna export --tenant T --to FILE`: everything tenant T owns — memories with their
//! history, notes, summaries, Hindsight, Meta loops, token usage — as a bundle
//! (`aeterna_memory::bundle`: zstd-compressed JSON Lines, streamed), from the configured
//! backend: the data dir's SQLite (stop its server first: the data dir is locked) or the
//! PostgreSQL of `database_url`. With `--format markdown`, a folder of Markdown files to read.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use aeterna_memory::bundle::{Phase, Progress, export_bundle, export_markdown};
use aeterna_memory::storage::Database;
use aeterna_memory::storage::sqlite::SqliteDatabase;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::serve::{CommonArgs, load};
use crate::config::Config;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// A bundle that `aeterna import` reads back (zstd-compressed JSON Lines).
    Bundle,
    /// One Markdown file per memory, with YAML front matter, in folders per layer and scope.
    Markdown,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The tenant whose memory is exported.
    #[arg(long, value_name = "TENANT")]
    pub tenant: String,
    /// The file to write (it must not exist; such as acme.aeterna), or with `--format
    /// markdown` the folder (new or empty).
    #[arg(long, value_name = "PATH")]
    pub to: PathBuf,
    #[arg(long, value_enum, default_value = "bundle")]
    pub format: ExportFormat,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The configured deployment's database: PostgreSQL with `database_url`, else the data dir's
/// SQLite, which must exist.
pub(super) async fn open_database(config: &Config) -> anyhow::Result<Database> {
    if let Some(url) = &config.database_url {
        let db = crate::state::connect_postgres(config, url).await?;
        return Ok(Database::Postgres(db));
    }
    let data_dir = config.data_dir()?;
    let file = data_dir.join(SqliteDatabase::FILE_NAME);
    anyhow::ensure!(
        file.exists(),
        "there is no database at {} (set --data-dir, or database_url for PostgreSQL)",
        file.display()
    );
    let db = SqliteDatabase::open(&data_dir, &config.memory.sqlite)
        .await
        .with_context(|| {
            format!(
                "cannot open the embedded database in {} (is its server still running? stop it \
                 first)",
                data_dir.display()
            )
        })?;
    Ok(Database::Sqlite(db))
}

/// A bar on stderr when it is a terminal, hidden otherwise.
pub(super) fn progress_bar(template: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    ProgressBar::new(0).with_style(
        ProgressStyle::with_template(template)
            .expect("a valid template")
            .progress_chars("=> "),
    )
}

pub async fn run(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let tenant = args.tenant.trim();
    anyhow::ensure!(
        !tenant.is_empty(),
        "--tenant is empty; name the tenant to export"
    );
    let config = load(&args.common, None)?;
    let db = open_database(&config).await?;
    let bar = progress_bar("{msg:>24} [{bar:40}] {pos}/{len} ({elapsed})");
    let mut current = String::new();
    let show = |p: Progress<'_>| {
        debug_assert_eq!(p.phase, Phase::Export);
        if p.table != current {
            current = p.table.to_owned();
            bar.set_message(current.clone());
        }
        bar.set_length(p.total);
        bar.set_position(p.done);
    };
    let to = args.to.display();
    match args.format {
        ExportFormat::Bundle => {
            let report = export_bundle(&db, tenant, &args.to, show)
                .await
                .with_context(|| format!("cannot export tenant `{tenant}` to {to}"))?;
            bar.finish_and_clear();
            let memories = report.counts.get("memories").copied().unwrap_or(0);
            let rows: u64 = report.counts.values().sum::<u64>() - memories;
            println!(
                "exported tenant `{tenant}` to {to}: {memories} memories and {rows} agent rows \
                 ({} bytes)",
                report.bytes
            );
        }
        ExportFormat::Markdown => {
            let report = export_markdown(&db, tenant, &args.to, show)
                .await
                .with_context(|| format!("cannot export tenant `{tenant}` to {to}"))?;
            bar.finish_and_clear();
            println!(
                "exported tenant `{tenant}` to {to}: {} Markdown files",
                report.files
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
