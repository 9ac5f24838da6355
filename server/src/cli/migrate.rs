//! `aeterna migrate`: copies an embedded deployment into PostgreSQL
//! (`aeterna_memory::migrate`) with a progress bar, then checks the rows of every table per
//! tenant on both sides; with `--qdrant`, then writes every vector into Qdrant (the repair
//! that compares Qdrant with the records, so it only writes what is missing or different).
//! Resumable: run it again after an interruption.

use std::path::PathBuf;
use std::process::ExitCode;

use aeterna_memory::migrate::{Progress, copy_to_postgres};
use aeterna_memory::storage::postgres::{PgDatabase, PgRecordStore};
use aeterna_memory::storage::sqlite::SqliteDatabase;
use aeterna_memory::vector::{QdrantVectorStore, VectorStore};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::serve::{CommonArgs, load};

#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    /// The data dir of the embedded deployment to copy; stop its server first.
    #[arg(long, value_name = "DATA_DIR")]
    pub from: PathBuf,
    /// The PostgreSQL to copy into, such as postgres://aeterna@db:5432/aeterna. The schema,
    /// pool and timeouts are the configuration's `[memory.postgres]`.
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// The Qdrant (gRPC, such as http://qdrant:6334) the scale-out servers will use
    /// (`qdrant_url`): the vectors are written there too. Collection settings are the
    /// configuration's `[memory.qdrant]`.
    #[arg(long, value_name = "URL")]
    pub qdrant: Option<String>,
    /// TOML configuration file; `AETERNA_*` variables override it.
    #[arg(long, value_name = "FILE", env = "AETERNA_CONFIG")]
    pub config: Option<PathBuf>,
}

pub async fn run(args: MigrateArgs) -> anyhow::Result<ExitCode> {
    let config = load(
        &CommonArgs {
            data_dir: Some(args.from.clone()),
            config: args.config.clone(),
            log_format: None,
        },
        None,
    )?;
    let memory = &config.memory;
    let shown = aeterna_redact::redact_url_password(&args.to);
    let source = SqliteDatabase::open(&args.from, &memory.sqlite)
        .await
        .with_context(|| {
            format!(
                "cannot open the embedded database in {} (is its server still running? stop \
                 it first)",
                args.from.display()
            )
        })?;
    let target = PgDatabase::connect(&args.to, &memory.postgres)
        .await
        .with_context(|| format!("cannot use the PostgreSQL database at {shown} (--to)"))?;

    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{msg:>30} [{bar:40}] {pos}/{len} rows ({elapsed})")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let mut table = String::new();
    let report = copy_to_postgres(
        &source,
        &memory.sqlite,
        &target,
        &memory.postgres,
        |Progress {
             table: now,
             copied,
             total,
         }| {
            if now != table {
                table = now.to_owned();
                bar.set_message(table.clone());
                bar.set_length(total);
            }
            bar.set_position(copied);
        },
    )
    .await
    .with_context(|| format!("copying {} to {shown}", args.from.display()))?;
    bar.finish_and_clear();

    for count in &report.counts {
        println!(
            "{:<30} {:<24} {:>9} → {:>9}",
            count.table, count.tenant_id, count.source, count.target
        );
    }
    if report.is_complete() {
        println!(
            "copied {} into {shown}: every tenant's rows are there",
            args.from.display()
        );
        if let Some(url) = &args.qdrant {
            let dims = crate::embedder::build(&config.embedder)?.dimensions();
            let qdrant = QdrantVectorStore::connect(url, dims, &memory.qdrant)
                .await
                .with_context(|| format!("cannot use the Qdrant at {url} (--qdrant)"))?;
            println!("writing the vectors into Qdrant ({})…", qdrant.collection());
            let records = PgRecordStore::new(target.clone(), &memory.postgres);
            let written = qdrant
                .repair(&records)
                .await
                .with_context(|| format!("writing the vectors into the Qdrant at {url}"))?;
            println!(
                "{} vectors checked, {} written, {} rewritten, {} removed; {} points in `{}`",
                written.checked,
                written.missing,
                written.stale,
                written.orphaned,
                qdrant.count().await?,
                qdrant.collection()
            );
        }
        Ok(ExitCode::SUCCESS)
    } else {
        for count in report.missing() {
            eprintln!(
                "aeterna: `{}` of tenant {:?} has {} rows in the target, {} in the data dir",
                count.table, count.tenant_id, count.target, count.source
            );
        }
        eprintln!("aeterna: the copy is incomplete; run the same command again to resume");
        Ok(ExitCode::FAILURE)
    }
}
