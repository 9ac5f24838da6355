//! `aeterna backup`: a consistent copy of the embedded database, taken while the server runs
//! (`VACUUM INTO`, see `aeterna_memory::storage::sqlite::backup`). With `database_url` every
//! table is in PostgreSQL, so it says which `pg_dump` to run instead.

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
    if let Some(url) = &config.database_url {
        println!(
            "every table is in PostgreSQL (database_url); back it up with\n  pg_dump \
             --format=custom --file=aeterna.dump '{}'",
            aeterna_redact::redact_url_password(url)
        );
        return Ok(ExitCode::SUCCESS);
    }
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
    Ok(ExitCode::SUCCESS)
}
