//! `aeterna backup`: a consistent copy of the embedded database, taken while the server runs
//! (`VACUUM INTO`, see `aeterna_memory::storage::sqlite::backup`).

use std::path::PathBuf;
use std::process::ExitCode;

use aeterna_memory::storage::sqlite::{SqliteDatabase, backup_file};
use anyhow::Context;

use super::serve::{CommonArgs, load};

#[derive(Debug, clap::Args)]
pub struct BackupArgs {
    /// The file to write, which must not exist (such as aeterna-backup.db). Restore by stopping
    /// the server and putting it in the data dir as `aeterna.db`.
    #[arg(long, value_name = "FILE")]
    pub to: PathBuf,
    #[command(flatten)]
    pub common: CommonArgs,
}

pub async fn run(args: BackupArgs) -> anyhow::Result<ExitCode> {
    let config = load(&args.common, None)?;
    let data_dir = config.data_dir()?;
    let source = data_dir.join(SqliteDatabase::FILE_NAME);
    let bytes = backup_file(&source, &args.to)
        .await
        .with_context(|| format!("cannot back up {}", source.display()))?;
    println!(
        "copied {} to {} ({bytes} bytes)",
        source.display(),
        args.to.display()
    );
    if let Some(url) = &config.database_url {
        println!(
            "the memory records are in PostgreSQL (database_url); back them up with\n  pg_dump \
             --format=custom --file=aeterna-records.dump '{}'",
            aeterna_redact::redact_url_password(url)
        );
    }
    Ok(ExitCode::SUCCESS)
}
