//! Summary refresh: list a scope's newest memories, hash them, and regenerate the three depths
//! only when the hash differs from the stored one.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Instant;

use aeterna_memory::{Identity, Layer, ListRequest, MemoryRecord, Scope, now_millis};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::architect::{ContextArchitect, require_tenant};
use crate::error::Result;
use crate::model::{Depth, LayerSummary};
use crate::store::ScopeSummaries;
use crate::summarize::{SourceDoc, SummaryInput};

/// What a refresh of one scope did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RefreshOutcome {
    /// The layer refreshed.
    pub layer: Layer,
    /// The scope within the layer.
    pub scope_id: String,
    /// False when the sources were unchanged and nothing was written.
    pub regenerated: bool,
    /// How many memories the summaries cover.
    pub source_count: usize,
    /// Hex SHA-256 over the ids and content hashes of those memories.
    pub source_hash: String,
    /// Which summariser wrote the summaries, e.g. `extractive-v1`.
    pub generator: String,
    /// When the summaries were generated, in milliseconds since the Unix epoch (UTC).
    pub generated_at: i64,
    /// What did not serve before `generator`, and why: when these are the extractive
    /// summaries, every LLM provider skipped (or an answer over its budget); when a provider
    /// wrote them, those skipped before it. Absent when nothing was regenerated, when the first
    /// choice wrote them, or when no LLM is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

impl ContextArchitect {
    /// The summary of `layer` at `depth` for `who`, generated first if there is none yet.
    #[tracing::instrument(name = "summary_get", skip_all, fields(tenant = %who.tenant_id, %layer, %depth))]
    pub async fn summary(
        &self,
        who: &Identity,
        layer: Layer,
        depth: Depth,
    ) -> Result<LayerSummary> {
        let scope = self.scopes(who, Some(&[layer]))?.remove(0);
        let tenant_id = require_tenant(who)?;
        let summaries = match self.store.get(tenant_id, &scope).await? {
            Some(summaries) => summaries,
            None => self.refresh_scope(tenant_id, &scope).await?.1,
        };
        Ok(summaries.get(depth).clone())
    }

    /// Refreshes the summaries of `layers` (every visible layer when `None`) for `who`.
    #[tracing::instrument(name = "summary_refresh", skip_all, fields(tenant = %who.tenant_id))]
    pub async fn refresh(
        &self,
        who: &Identity,
        layers: Option<&[Layer]>,
    ) -> Result<Vec<RefreshOutcome>> {
        let tenant_id = require_tenant(who)?;
        let mut outcomes = Vec::new();
        for scope in self.scopes(who, layers)? {
            outcomes.push(self.refresh_scope(tenant_id, &scope).await?.0);
        }
        Ok(outcomes)
    }

    /// Regenerates the summaries of one scope unless its sources are unchanged.
    pub(crate) async fn refresh_scope(
        &self,
        tenant_id: &str,
        scope: &Scope,
    ) -> Result<(RefreshOutcome, Arc<ScopeSummaries>)> {
        let _serialised = self.refresh_lock(tenant_id, scope).lock().await;
        let started = Instant::now();
        let records = self.sources(tenant_id, scope).await?;
        let source_hash = source_hash(&records);
        let existing = self.store.get(tenant_id, scope).await?;
        let (summaries, regenerated, fallback) = match existing {
            Some(existing) if existing.source_hash() == source_hash => (existing, false, None),
            _ => {
                let (summaries, fallback) = self
                    .regenerate(tenant_id, scope, &records, source_hash)
                    .await?;
                (summaries, true, fallback)
            }
        };
        if regenerated {
            self.results.invalidate(tenant_id, scope);
            if let Some(shared) = self.shared_cache() {
                shared.bump([tenant_id.to_owned()]).await;
            }
        }
        self.metrics.refreshed(regenerated, started.elapsed());
        let first = summaries.get(Depth::Sentence);
        tracing::debug!(%scope, regenerated, sources = records.len(), "summaries refreshed");
        let outcome = RefreshOutcome {
            layer: scope.layer,
            scope_id: scope.scope_id.clone(),
            regenerated,
            source_count: first.source_count,
            source_hash: first.source_hash.clone(),
            generator: first.generator.clone(),
            generated_at: first.generated_at,
            fallback,
        };
        Ok((outcome, summaries))
    }

    /// The newest `max_source_items` memories of the scope, newest first.
    async fn sources(&self, tenant_id: &str, scope: &Scope) -> Result<Vec<MemoryRecord>> {
        let who = Identity::owning(tenant_id, scope);
        let wanted = self.config.summaries.max_source_items;
        let page_size = self.memory.config().max_page_size;
        let mut records = Vec::new();
        let mut cursor = None;
        while records.len() < wanted {
            let page = self
                .memory
                .list(
                    &who,
                    ListRequest {
                        layers: Some(vec![scope.layer]),
                        tags: Vec::new(),
                        kinds: Vec::new(),
                        cursor,
                        limit: page_size.min(wanted - records.len()),
                        metadata_only: false,
                    },
                )
                .await?;
            records.extend(page.items);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        Ok(records)
    }

    async fn regenerate(
        &self,
        tenant_id: &str,
        scope: &Scope,
        records: &[MemoryRecord],
        source_hash: String,
    ) -> Result<(Arc<ScopeSummaries>, Option<String>)> {
        let docs: Vec<SourceDoc<'_>> = records
            .iter()
            .map(|r| SourceDoc {
                text: r.content.as_deref().unwrap_or_default(),
                updated_at: r.updated_at,
            })
            .collect();
        let budgets = Depth::ALL.map(|depth| self.config.summaries.budget(depth));
        let input = SummaryInput {
            tenant_id,
            layer: scope.layer,
            scope_id: &scope.scope_id,
            docs: &docs,
            budgets,
        };
        let generated = self.generator.generate(&input).await;
        let generated_at = now_millis();
        let depths = Depth::ALL.map(|depth| LayerSummary {
            tenant_id: tenant_id.to_owned(),
            layer: scope.layer,
            scope_id: scope.scope_id.clone(),
            depth,
            content: generated.texts[depth.index()].clone(),
            token_count: generated.token_counts[depth.index()],
            source_hash: source_hash.clone(),
            source_count: records.len(),
            generated_at,
            generator: generated.generator.clone(),
        });
        let summaries = self
            .store
            .put(ScopeSummaries::new(depths, self.tokenizer))
            .await?;
        Ok((summaries, generated.fallback))
    }

    fn refresh_lock(&self, tenant_id: &str, scope: &Scope) -> &tokio::sync::Mutex<()> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (tenant_id, scope).hash(&mut hasher);
        &self.refresh_locks[hasher.finish() as usize % self.refresh_locks.len()]
    }

    /// Asks the background task to generate a scope's missing summaries; never waits.
    pub(crate) fn request_refresh(&self, tenant_id: &str, scope: &Scope) {
        // A full queue drops the request; the next assembly that needs it asks again.
        let _ = self
            .refresh_requests
            .try_send((tenant_id.to_owned(), scope.clone()));
    }
}

/// Hex SHA-256 over the ids and content hashes of `records`, in order.
pub fn source_hash(records: &[MemoryRecord]) -> String {
    let mut hasher = Sha256::new();
    for record in records {
        hasher.update(record.id.as_bytes());
        hasher.update(record.content_hash.as_bytes());
    }
    hex::encode(hasher.finalize())
}
