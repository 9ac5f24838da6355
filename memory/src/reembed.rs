//! One vector space per database: what happens when the configured embedder changes.
//!
//! `memory_meta.embedder_id` names the embedder whose vectors are stored. Opening with a
//! different embedder either refuses, with a message saying what to do, or re-embeds every
//! record in batches ([`EmbedderChange`]; by default it re-embeds when the new embedder runs in
//! process and refuses for a remote API). A re-embedding records its target first
//! (`reembed_pending`) and converts only records not yet made by the target, so an interrupted
//! one resumes where it stopped and is never mistaken for a finished one.

use crate::config::{EmbedderChange, MemoryConfig};
use crate::embed::{Embedder, check_vectors};
use crate::error::{MemoryError, Result};
use crate::storage::RecordStore;

const EMBEDDER_KEY: &str = "embedder_id";
const PENDING_KEY: &str = "reembed_pending";

/// Makes every stored vector come from `embedder`, or refuses; see the module documentation.
pub(crate) async fn prepare(
    records: &dyn RecordStore,
    embedder: &dyn Embedder,
    config: &MemoryConfig,
) -> Result<()> {
    let active = embedder.id();
    let stored = records.meta(EMBEDDER_KEY).await?;
    let pending = records
        .meta(PENDING_KEY)
        .await?
        .filter(|target| !target.is_empty());
    if stored.as_deref() == Some(active) && pending.is_none() {
        return Ok(());
    }
    let count = records.counts().await?.records;
    if count == 0 {
        records.set_meta(EMBEDDER_KEY, active).await?;
        records.set_meta(PENDING_KEY, "").await?;
        return Ok(());
    }
    let reembed = match config.on_embedder_change {
        EmbedderChange::Auto => embedder.is_local(),
        EmbedderChange::Refuse => false,
        EmbedderChange::Reembed => true,
    };
    if reembed {
        return reembed_all(records, embedder, config, count).await;
    }
    Err(MemoryError::EmbedderMismatch(match pending {
        Some(target) => format!(
            "a re-embedding of the {count} stored memories with embedder `{target}` was interrupted, and the \
                 configured embedder is `{active}`; set `on_embedder_change = \"reembed\"` in the memory \
                 configuration to finish re-embedding them with `{active}`"
        ),
        None => format!(
            "the {count} stored memories were embedded with `{}`, but the configured embedder is `{active}`, \
                 and vectors of different embedders are never mixed; configure `{0}` again, or set \
                 `on_embedder_change = \"reembed\"` in the memory configuration to re-embed them all with \
                 `{active}` when the server starts",
            stored.as_deref().unwrap_or("an unknown embedder")
        ),
    }))
}

async fn reembed_all(
    records: &dyn RecordStore,
    embedder: &dyn Embedder,
    config: &MemoryConfig,
    count: u64,
) -> Result<()> {
    let active = embedder.id();
    let started = std::time::Instant::now();
    tracing::info!(
        embedder = active,
        memories = count,
        "re-embedding stored memories"
    );
    records.set_meta(PENDING_KEY, active).await?;
    let mut position = 0;
    let mut done = 0u64;
    loop {
        let batch = records
            .stale_records(active, position, config.reembed_batch.max(1))
            .await?;
        let Some(last) = batch.last() else { break };
        position = last.position;
        let texts: Vec<&str> = batch.iter().map(|record| record.content.as_str()).collect();
        let context = || format!("re-embedding with `{active}` (rerun to resume)");
        let vectors = embedder
            .embed(&texts)
            .await
            .map_err(|error| MemoryError::storage(context(), error))?;
        check_vectors(embedder, texts.len(), &vectors)
            .map_err(|error| MemoryError::storage(context(), error))?;
        done += batch.len() as u64;
        let updates = batch
            .into_iter()
            .zip(vectors)
            .map(|(record, vector)| (record.tenant_id, record.id, vector))
            .collect();
        records.replace_vectors(active, updates).await?;
        tracing::info!(embedder = active, done, total = count, "re-embedding");
    }
    records.set_meta(EMBEDDER_KEY, active).await?;
    records.set_meta(PENDING_KEY, "").await?;
    tracing::info!(
        embedder = active,
        memories = done,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "re-embedding finished"
    );
    Ok(())
}
