//! `aeterna purge --tenant T --yes`: forgets everything one tenant owns — its memories with
//! their vectors and versions, its rows in every agent table and its queued REST ingests — on
//! the configured stores.
//! An audit row records the purge. Stop the embedded server first (its data dir is locked).

use std::process::ExitCode;

use anyhow::Context;

use super::serve::{CommonArgs, load};
use crate::state::AppState;

#[derive(Debug, clap::Args)]
pub struct PurgeArgs {
    /// The tenant whose data is forgotten.
    #[arg(long, value_name = "TENANT")]
    pub tenant: String,
    /// Confirm: without it, nothing is deleted and the command says what it would do.
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

pub async fn run(args: PurgeArgs) -> anyhow::Result<ExitCode> {
    let tenant = args.tenant.trim();
    anyhow::ensure!(
        !tenant.is_empty(),
        "--tenant is empty; name the tenant to purge"
    );
    if !args.yes {
        println!(
            "this would forget every memory and agent record of tenant `{tenant}`; run again \
             with --yes to do it"
        );
        return Ok(ExitCode::FAILURE);
    }
    let config = load(&args.common, None)?;
    let state = AppState::open(config).await?;
    // Queued REST ingests first, so no worker stores a chunk after the purge.
    state
        .ingest
        .purge_tenant(tenant)
        .await
        .with_context(|| format!("cannot delete the queued ingests of tenant `{tenant}`"))?;
    let forgotten = state
        .memory
        .purge_tenant(tenant, "operator")
        .await
        .with_context(|| format!("cannot purge tenant `{tenant}`"))?;
    state.memory.flush().await?;
    println!("purged tenant `{tenant}`: {forgotten} memories and its agents' records");
    Ok(ExitCode::SUCCESS)
}
