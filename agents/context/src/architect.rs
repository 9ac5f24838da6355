//! [`ContextArchitect`]: the service behind `context_assemble`, `summary_get` and
//! `summary_refresh`, over a [`MemoryService`].
//!
//! It owns the summary store, the result cache and one background task. The task listens to
//! [`MemoryService::subscribe`]: it counts writes per scope and regenerates a scope's summaries
//! after `after_changes` writes, or `interval_secs` after its first unsummarised write,
//! whichever comes first. The result cache does not depend on that task for correctness: every
//! assembly first drains its own change subscription, so a write that returned before an
//! assembly started is never answered from a stale cache entry.

use std::num::NonZeroUsize;
use std::sync::Arc;

use aeterna_memory::{Identity, Layer, MemoryChange, MemoryError, MemoryService, Scope};
use lru::LruCache;
use parking_lot::Mutex;
use tokio::sync::broadcast::error::TryRecvError;
use tokio::sync::{Semaphore, broadcast, mpsc};

use crate::cache::ResultCache;
use crate::config::ContextConfig;
use crate::error::{ContextError, Result};
use crate::metrics::ContextMetrics;
use crate::publish::VersionPublisher;
use crate::shared_cache::SharedResultCache;
use crate::store::SummaryStore;
use crate::summarize::{Summarizer, SummaryGenerator};
use crate::tokens::{Tokenizer, text_key};

/// Token counts of rendered memories kept at most (keyed by 128 bits of the content hash: 16
/// bytes per entry where the 64-character hex string took a heap allocation).
const TOKEN_COUNT_CACHE: usize = 200_000;
/// Scope refreshes running at once in the background.
const BACKGROUND_REFRESHES: usize = 2;
/// Queued requests for missing summaries, at most; more are dropped and asked for again later.
const REFRESH_QUEUE: usize = 256;
/// Stripes of the per-scope refresh lock.
const REFRESH_STRIPES: usize = 32;

pub struct ContextArchitect {
    pub(crate) memory: Arc<MemoryService>,
    pub(crate) config: ContextConfig,
    pub(crate) tokenizer: Tokenizer,
    pub(crate) store: SummaryStore,
    pub(crate) generator: SummaryGenerator,
    pub(crate) results: ResultCache,
    pub(crate) metrics: ContextMetrics,
    /// Tokens of `render::item(content)` by 128 bits of the content hash.
    pub(crate) token_counts: Mutex<LruCache<u128, usize>>,
    /// The result cache's own change subscription, drained before every lookup.
    cache_changes: Mutex<broadcast::Receiver<MemoryChange>>,
    /// Two refreshes of one scope never run at once (they would both regenerate).
    pub(crate) refresh_locks: Vec<tokio::sync::Mutex<()>>,
    pub(crate) refresh_requests: mpsc::Sender<(String, Scope)>,
    pub(crate) background_refreshes: Arc<Semaphore>,
    /// The shared Redis cache and its version publisher, in place of `results`, when
    /// configured.
    pub(crate) shared: Option<Arc<VersionPublisher>>,
    background: Mutex<Vec<tokio::task::AbortHandle>>,
}

impl ContextArchitect {
    /// Starts the Context Architect over `memory`, with the deterministic summarizer. Must be
    /// called inside a Tokio runtime, which runs its background task.
    pub fn start(memory: Arc<MemoryService>, config: ContextConfig) -> Result<Arc<Self>> {
        Self::start_with(memory, config, None)
    }

    /// As [`start`](Self::start), with `summarizer` (an LLM provider) tried before the
    /// deterministic path.
    pub fn start_with(
        memory: Arc<MemoryService>,
        config: ContextConfig,
        summarizer: Option<Arc<dyn Summarizer>>,
    ) -> Result<Arc<Self>> {
        Self::start_shared(memory, config, summarizer, None)
    }

    /// As [`start_with`](Self::start_with), with assembled contexts cached in `shared` (Redis,
    /// shared by every instance) instead of in process; this instance's memory writes bump the
    /// written tenants' versions there.
    pub fn start_shared(
        memory: Arc<MemoryService>,
        config: ContextConfig,
        summarizer: Option<Arc<dyn Summarizer>>,
        shared: Option<Arc<SharedResultCache>>,
    ) -> Result<Arc<Self>> {
        config.validate().map_err(ContextError::invalid)?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            ContextError::invalid("the Context Architect must be started inside a Tokio runtime")
        })?;
        let tokenizer = Tokenizer::get()?;
        let db = memory.database().clone();
        let generator = match summarizer {
            Some(primary) => SummaryGenerator::with_primary(primary, tokenizer),
            None => SummaryGenerator::extractive(tokenizer),
        };
        let (refresh_requests, requests) = mpsc::channel(REFRESH_QUEUE);
        let mut background = Vec::new();
        let shared = shared.map(|cache| {
            let (publisher, task) = VersionPublisher::start(cache, memory.subscribe());
            background.push(task);
            publisher
        });
        let architect = Arc::new(ContextArchitect {
            store: SummaryStore::new(db, config.summaries.hot_capacity, tokenizer),
            results: ResultCache::new(
                config.cache.capacity,
                std::time::Duration::from_secs(config.cache.ttl_secs),
            ),
            cache_changes: Mutex::new(memory.subscribe()),
            token_counts: Mutex::new(LruCache::new(
                NonZeroUsize::new(TOKEN_COUNT_CACHE).unwrap_or(NonZeroUsize::MIN),
            )),
            refresh_locks: (0..REFRESH_STRIPES)
                .map(|_| tokio::sync::Mutex::new(()))
                .collect(),
            refresh_requests,
            background_refreshes: Arc::new(Semaphore::new(BACKGROUND_REFRESHES)),
            shared,
            background: Mutex::new(background),
            metrics: ContextMetrics::new(),
            generator,
            tokenizer,
            config,
            memory,
        });
        let task = runtime.spawn(crate::triggers::run(
            Arc::downgrade(&architect),
            architect.memory.subscribe(),
            requests,
        ));
        architect.background.lock().push(task.abort_handle());
        Ok(architect)
    }

    pub fn config(&self) -> &ContextConfig {
        &self.config
    }

    pub fn metrics(&self) -> &ContextMetrics {
        &self.metrics
    }

    pub fn memory(&self) -> &Arc<MemoryService> {
        &self.memory
    }

    /// The shared Redis cache, when configured.
    pub fn shared_cache(&self) -> Option<&Arc<SharedResultCache>> {
        self.shared.as_ref().map(|publisher| publisher.cache())
    }

    /// Returns once every memory write this instance notified so far is visible to the other
    /// instances' caches (a no-op without a shared cache). Write paths call it before answering.
    pub async fn writes_published(&self) {
        if let Some(publisher) = &self.shared {
            publisher.flush().await;
        }
    }

    /// Deletes the stored summaries of `scopes` in `tenant_id`: memories they were made from
    /// were forgotten. The next assembly of a scope asks for new ones from what remains.
    pub async fn forget_summaries(&self, tenant_id: &str, scopes: &[Scope]) -> Result<()> {
        for scope in scopes {
            self.store.forget(tenant_id, scope).await?;
            self.results.invalidate(tenant_id, scope);
        }
        Ok(())
    }

    /// Applies every write notified so far to the result cache.
    ///
    /// The notifications are drained here, by the assemblies, not by a task of their own; so
    /// a burst of writes between two assemblies (an import, the seeding of a store) overruns
    /// the buffer in normal operation. The cache is then cleared, which is always correct, and
    /// the event is not worth an operator's attention: it is logged at debug level.
    pub(crate) fn sync_cache(&self) {
        let mut changes = self.cache_changes.lock();
        loop {
            match changes.try_recv() {
                Ok(change) => self.results.invalidate(&change.tenant_id, &change.scope),
                Err(TryRecvError::Lagged(missed)) => {
                    tracing::debug!(
                        missed,
                        "context cache missed change notifications; clearing it"
                    );
                    self.results.clear();
                }
                Err(TryRecvError::Empty | TryRecvError::Closed) => return,
            }
        }
    }

    /// The scopes of `layers` (all visible layers when `None`) for `who`, narrowest first.
    pub(crate) fn scopes(&self, who: &Identity, layers: Option<&[Layer]>) -> Result<Vec<Scope>> {
        require_tenant(who)?;
        let Some(layers) = layers else {
            return Ok(who.visible_scopes());
        };
        let mut layers = layers.to_vec();
        layers.sort_unstable();
        layers.dedup();
        layers
            .into_iter()
            .map(|layer| match who.scope(layer) {
                Some(id) => Ok(Scope::new(layer, id)),
                None => Err(MemoryError::MissingScope {
                    layer,
                    field: layer.scope_field(),
                }
                .into()),
            })
            .collect()
    }

    /// Tokens of a memory rendered as a list item, cached by content hash.
    pub(crate) fn item_tokens(&self, content_hash: &str, content: &str) -> usize {
        // A content hash is hex SHA-256, whose first 128 bits are a key already.
        let key = content_hash
            .get(..32)
            .filter(|hex| hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|hex| u128::from_str_radix(hex, 16).ok())
            .unwrap_or_else(|| text_key(content_hash));
        // `peek`, not `get`: a hit leaves the recency list alone (eviction is by insertion),
        // since relinking a node touched three cold cache lines per candidate.
        if let Some(count) = self.token_counts.lock().peek(&key) {
            return *count;
        }
        let count = self.tokenizer.count(&crate::render::item(content));
        self.token_counts.lock().put(key, count);
        count
    }
}

impl Drop for ContextArchitect {
    fn drop(&mut self) {
        for task in self.background.lock().drain(..) {
            task.abort();
        }
    }
}

pub(crate) fn require_tenant(who: &Identity) -> Result<&str> {
    if who.tenant_id.trim().is_empty() {
        return Err(ContextError::invalid(
            "the caller has no tenant; authenticate with a token that maps to one",
        ));
    }
    Ok(&who.tenant_id)
}
