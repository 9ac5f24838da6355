//! [`AppState`]: what every transport shares. Agents join it as fields (an `Arc` each), so
//! adding one never touches the transports.

use std::sync::Arc;

use aeterna_context::ContextArchitect;
use aeterna_hindsight::HindsightService;
use aeterna_llm::LlmRoles;
use aeterna_memory::MemoryService;
use aeterna_meta::MetaService;
use aeterna_notes::{DistillerChain, NotesService};
use anyhow::Context;

use crate::auth::Authenticator;
use crate::config::Config;
use crate::metrics::Metrics;

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
    /// The Meta-Agent's build → test → improve loops.
    pub meta: Arc<MetaService>,
}

impl AppState {
    /// Opens the embedded stores in the configured data directory.
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
        let memory = MemoryService::open_embedded(&data_dir, config.memory.clone(), embedder)
            .await
            .with_context(|| format!("cannot open the memory stores in {}", data_dir.display()))?;
        Self::new(config, Arc::new(memory))
    }

    /// Wraps an already opened memory service and starts the agents over it (inside a Tokio
    /// runtime: agents run background tasks).
    pub fn new(config: Config, memory: Arc<MemoryService>) -> anyhow::Result<Self> {
        let auth = Arc::new(Authenticator::from_config(
            &config.auth,
            config.memory.max_id_bytes,
        ));
        let mut metrics = Metrics::new();
        let llm = if config.llm.is_enabled() {
            LlmRoles::start(config.llm.clone(), memory.sqlite().cloned())
                .context("cannot start the LLM providers")?
        } else {
            LlmRoles::disabled()
        };
        llm.register_metrics(metrics.registry_mut());
        let context =
            ContextArchitect::start_with(memory.clone(), config.context.clone(), llm.summarizer())
                .context("cannot start the Context Architect")?;
        context.metrics().register(metrics.registry_mut());
        let hindsight = HindsightService::new(memory.clone(), config.hindsight.clone())
            .context("cannot start Hindsight")?;
        let distillers =
            DistillerChain::new(llm.distillers().context("cannot start the LLM distiller")?);
        let notes = NotesService::start_with(config.notes.clone(), memory.clone(), distillers)
            .context("cannot start the Note-Taking agent")?;
        notes.register_metrics(metrics.registry_mut());
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
        Ok(AppState {
            config: Arc::new(config),
            memory,
            auth,
            metrics: Arc::new(metrics),
            context,
            hindsight,
            notes,
            llm,
            meta,
        })
    }
}
