//! [`AppState`]: what every transport shares. Agents join it as fields (an `Arc` each), so
//! adding one never touches the transports.

use std::sync::Arc;

use aeterna_context::{ContextArchitect, SharedCacheConfig, SharedResultCache};
use aeterna_hindsight::HindsightService;
use aeterna_host::state::{RedisStateConfig, RedisStateStore};
use aeterna_knowledge::KnowledgeService;
use aeterna_llm::LlmRoles;
use aeterna_memory::MemoryService;
use aeterna_memory::storage::postgres::PgDatabase;
use aeterna_meta::MetaService;
use aeterna_notes::{DistillerChain, NotesService};
use anyhow::Context;

use crate::auth::Authenticator;
use crate::config::Config;
use crate::domain::compat::IngestQueue;
use crate::metrics::Metrics;

/// Prefix of the shared context cache's keys in Redis.
const SHARED_CACHE_PREFIX: &str = "aeterna:ctx";
/// Prefix of server-side extension state in Redis.
const EXTENSION_STATE_PREFIX: &str = "aeterna:ext-state";

/// Where trajectory events go when the store is down at shutdown (in the data dir).
const TRAJECTORY_SPILL_FILE: &str = "trajectory-spill.jsonl";

/// The services behind the MCP tools and the REST API. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub memory: Arc<MemoryService>,
    pub auth: Arc<Authenticator>,
    pub metrics: Arc<Metrics>,
    pub context: Arc<ContextArchitect>,
    pub hindsight: Arc<HindsightService>,
    pub notes: Arc<NotesService>,
    /// The LLM provider layer (disabled without `[llm]` providers).
    pub llm: Arc<LlmRoles>,
    /// Server-side extensions (only with `[extensions] dir`).
    pub extensions: Option<ServerExtensions>,
    /// The Meta-Agent's build → test → improve loops.
    pub meta: Arc<MetaService>,
    /// The knowledge repositories of `[knowledge]`, synced into memory.
    pub knowledge: Arc<KnowledgeService>,
    /// The CC-MemEx ingest queue and its workers (`[rest]`).
    pub ingest: Arc<IngestQueue>,
}

/// The operator's extensions and the watcher that hot-reloads them.
#[derive(Clone)]
pub struct ServerExtensions {
    pub extensions: Arc<aeterna_bridge::extensions::Extensions>,
    _watcher: Arc<aeterna_bridge::watch::DirWatcher>,
}

impl ServerExtensions {
    /// Starts the host over `[extensions] dir` (inside a Tokio runtime). The directory is
    /// loaded and watched in the background; a missing one is reported and retried. With
    /// `redis_url`, extension state lives in Redis, shared by every instance.
    async fn start(config: &Config) -> anyhow::Result<Option<Self>> {
        let Some(dir) = &config.extensions.dir else {
            return Ok(None);
        };
        let mut host_config = config.extensions.host.clone();
        if host_config.cache_dir.is_none() {
            host_config.cache_dir = Some(config.data_dir()?.join("component-cache"));
        }
        let host = match &config.redis_url {
            None => aeterna_host::ExtensionHost::new(host_config),
            Some(url) => {
                let store = RedisStateStore::connect(RedisStateConfig {
                    url: url.expose().to_owned(),
                    key_prefix: EXTENSION_STATE_PREFIX.into(),
                    quota_bytes: host_config.state.quota_bytes,
                    ..RedisStateConfig::default()
                })
                .await
                .context("cannot keep extension state in Redis (redis_url)")?;
                tracing::info!(redis_url = %url.redacted(), "extension state in Redis");
                aeterna_host::ExtensionHost::with_state_store(host_config, Arc::new(store))
            }
        }
        .context("invalid configuration: extensions.host")?;
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        let extensions = aeterna_bridge::extensions::Extensions::new(host, dir);
        let watcher = aeterna_bridge::watch::DirWatcher::start(
            extensions.clone(),
            aeterna_bridge::watch::DEFAULT_DEBOUNCE,
        );
        Ok(Some(Self {
            extensions,
            _watcher: Arc::new(watcher),
        }))
    }
}

impl AppState {
    /// Opens the stores: the embedded ones in the data directory, or PostgreSQL (the memory
    /// records and every agent's tables) when `database_url` is set; the vectors in Qdrant
    /// when `qdrant_url` is set.
    pub async fn open(mut config: Config) -> anyhow::Result<Self> {
        let data_dir = config.data_dir()?;
        config
            .notes
            .queue
            .spill_file
            .get_or_insert_with(|| data_dir.join(TRAJECTORY_SPILL_FILE));
        std::fs::create_dir_all(&data_dir)
            .with_context(|| format!("cannot create the data directory {}", data_dir.display()))?;
        let embedder = crate::embedder::build(&config.embedder)?;
        config.memory.qdrant.url = config.qdrant_url.clone();
        let memory = match &config.database_url {
            None => MemoryService::open_embedded(&data_dir, config.memory.clone(), embedder)
                .await
                .with_context(|| {
                    format!("cannot open the memory stores in {}", data_dir.display())
                })?,
            Some(url) => {
                let shown = aeterna_redact::redact_url_password(url);
                let db = connect_postgres(&config, url).await?;
                tracing::info!(database = %shown, "memory and agents on PostgreSQL");
                MemoryService::open_postgres(db, config.memory.clone(), embedder)
                    .await
                    .with_context(|| format!("cannot open the memory stores at {shown}"))?
            }
        };
        if let Some(url) = &config.qdrant_url {
            tracing::info!(qdrant = %url, "vectors in Qdrant");
        }
        let memory = Arc::new(memory);
        memory.follow_in_background();
        memory.repair_in_background();
        Self::new(config, memory).await
    }

    /// Wraps an already opened memory service and starts the agents over it (inside a Tokio
    /// runtime: agents run background tasks). Connects to `redis_url` when configured.
    pub async fn new(config: Config, memory: Arc<MemoryService>) -> anyhow::Result<Self> {
        let shared_cache = match &config.redis_url {
            Some(url) => {
                let mut cache = SharedCacheConfig::new(
                    url.expose(),
                    std::time::Duration::from_secs(config.context.cache.ttl_secs),
                );
                cache.key_prefix = SHARED_CACHE_PREFIX.into();
                let cache = SharedResultCache::connect(cache).await?;
                tracing::info!(redis_url = %url.redacted(), "context cache shared in Redis");
                Some(Arc::new(cache))
            }
            None => None,
        };
        let auth = Arc::new(Authenticator::from_config(
            &config.auth,
            config.memory.max_id_bytes,
        ));
        let mut metrics = Metrics::new();
        let llm = if config.llm.is_enabled() {
            LlmRoles::start(config.llm.clone(), Some(memory.database().clone()))
                .context("cannot start the LLM providers")?
        } else {
            LlmRoles::disabled()
        };
        llm.register_metrics(metrics.registry_mut());
        let mut context_config = config.context.clone();
        if config.knowledge.repositories.is_empty() {
            // No repository, no knowledge to reserve room for (and no search for it).
            context_config.knowledge_share = 0.0;
        }
        let context = ContextArchitect::start_shared(
            memory.clone(),
            context_config,
            llm.summarizer(),
            shared_cache,
        )
        .context("cannot start the Context Architect")?;
        context.metrics().register(metrics.registry_mut());
        let hindsight = HindsightService::new(memory.clone(), config.hindsight.clone())
            .context("cannot start Hindsight")?;
        let distillers =
            DistillerChain::new(llm.distillers().context("cannot start the LLM distiller")?);
        let notes = NotesService::start_with(config.notes.clone(), memory.clone(), distillers)
            .context("cannot start the Note-Taking agent")?;
        notes.register_metrics(metrics.registry_mut());
        let extensions = ServerExtensions::start(&config).await?;
        let hindsight = Arc::new(hindsight);
        let meta = MetaService::start(
            config.meta.clone(),
            memory.clone(),
            hindsight.clone(),
            notes.clone(),
            context.clone(),
            None,
        )
        .context("cannot start the Meta-Agent")?;
        meta.metrics().register(metrics.registry_mut());
        let knowledge = KnowledgeService::start(config.knowledge.clone(), memory.clone())
            .context("cannot open the knowledge repositories ([knowledge])")?;
        // What the agents learn becomes proposals in the repositories whose rules take it.
        hindsight.set_learned_sink(knowledge.clone());
        notes.set_learned_sink(knowledge.clone());
        expire_in_background(&memory, &context);
        let metrics = Arc::new(metrics);
        let ingest = IngestQueue::start(
            config.rest.clone(),
            memory.clone(),
            context.clone(),
            metrics.clone(),
        );
        Ok(AppState {
            config: Arc::new(config),
            memory,
            auth,
            metrics,
            context,
            hindsight,
            notes,
            llm,
            extensions,
            meta,
            knowledge,
            ingest,
        })
    }
}

/// Runs the retention pass (`[memory.retention]`) at start and every `interval_secs`, when a
/// layer has a retention. The task holds the services weakly between passes, so it never keeps
/// a shut-down server's stores (and the data dir's lock) alive; it ends with them.
fn expire_in_background(memory: &Arc<MemoryService>, context: &Arc<ContextArchitect>) {
    let retention = &memory.config().retention;
    if retention.days.is_empty() {
        return;
    }
    let interval = std::time::Duration::from_secs(retention.interval_secs.max(1));
    let (memory, context) = (Arc::downgrade(memory), Arc::downgrade(context));
    tokio::spawn(async move {
        loop {
            let (Some(memory), Some(context)) = (memory.upgrade(), context.upgrade()) else {
                return;
            };
            match crate::domain::memory::expire(&memory, &context).await {
                Ok(0) => {}
                Ok(forgotten) => tracing::info!(forgotten, "retention forgot expired memories"),
                Err(error) => tracing::warn!(%error, "the retention pass failed; retrying later"),
            }
            drop((memory, context));
            tokio::time::sleep(interval).await;
        }
    });
}

/// The PostgreSQL of `database_url` (`url`), migrated, with `[memory.postgres]`'s pool and
/// schema; the error names the database without its password.
pub(crate) async fn connect_postgres(config: &Config, url: &str) -> anyhow::Result<PgDatabase> {
    PgDatabase::connect(url, &config.memory.postgres)
        .await
        .with_context(|| {
            let shown = aeterna_redact::redact_url_password(url);
            format!("cannot use the PostgreSQL database at {shown} (database_url)")
        })
}
