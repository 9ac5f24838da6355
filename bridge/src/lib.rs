//! `aeterna-bridge`: the client bridge. `aeterna bridge` is a local MCP server on stdio that a
//! coding agent or editor plugin spawns. It embeds [`aeterna_host`] over a hot-reloaded
//! extensions directory and offers its chains as tools, and it proxies the memory server's tools
//! (schemas passed through) so the agent needs one MCP connection.
//!
//! # Modules
//!
//! * [`extensions`] — [`Extensions`](extensions::Extensions): the host over one directory and
//!   the domain functions behind `extensions_list`, `extensions_apply` and `extensions_prompt`
//!   (shared with `aeterna serve`); [`tools`] their MCP definitions and dispatcher.
//! * [`watch`] — hot reload: `notify` events, debounced, reload off the call path.
//! * [`remote`] — the MCP client to the memory server: reconnection with backoff, bounded calls,
//!   the last tool list cached on disk.
//! * [`queue`] — the durable, bounded write queue; [`forward`] — forwarding and delivery.
//! * [`commands`] — the local command runner (`meta_run_local`): a client-driven Meta-Agent
//!   loop's build and test commands run here, from the bridge's allow-list, reported to the
//!   server's loop.
//! * [`mcp`] — [`BridgeMcp`](mcp::BridgeMcp), the stdio server handler.
//!
//! # Guarantees
//!
//! * Local tools never wait on the server: forwarded calls are bounded by `call_timeout` and fail
//!   at once while the server is unreachable.
//! * A `memory_add` or `trajectory_capture` made while the server is unreachable is on disk
//!   before the call returns, and is removed only after the server acknowledged it.

pub mod commands;
pub mod extensions;
pub mod forward;
pub mod mcp;
pub mod queue;
pub mod remote;
pub mod tools;
pub mod watch;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use aeterna_host::state::{RedisStateConfig, RedisStateStore};
use aeterna_host::{ExtensionHost, HostConfig};
use anyhow::Context;
use rmcp::ServiceExt;

use crate::extensions::Extensions;
use crate::forward::Forwarder;
use crate::mcp::BridgeMcp;
use crate::queue::{QueueLimits, WriteQueue};
use crate::remote::{Remote, RemoteConfig};
use crate::watch::DirWatcher;

/// Everything `aeterna bridge` needs.
#[derive(Debug, Clone)]
pub struct BridgeConfig {
    pub remote: RemoteConfig,
    pub extensions_dir: PathBuf,
    /// The write queue (`queue/`), the cached tool list (`tools.json`) and, unless the host
    /// configuration names one, the compile cache (`component-cache/`).
    pub data_dir: PathBuf,
    pub host: HostConfig,
    pub queue: QueueLimits,
    /// How long start-up waits for the server before serving without it.
    pub initial_connect_wait: Duration,
    pub debounce: Duration,
    /// Where extension state lives.
    pub state: StateBackend,
    /// The local command runner's allow-list (`--commands`); without it `meta_run_local` is
    /// not offered.
    pub commands: Option<aeterna_meta::MetaConfig>,
}

/// Where the extensions' state lives.
#[derive(Debug, Clone, Default)]
pub enum StateBackend {
    /// In the bridge process (lost when it exits).
    #[default]
    Memory,
    /// In Redis: survives bridge restarts and is shared by the bridges that use the same Redis
    /// and key prefix. The quota is the host's (`state.quota_bytes`).
    Redis(RedisStateConfig),
}

impl BridgeConfig {
    pub fn new(url: impl Into<String>, extensions_dir: PathBuf, data_dir: PathBuf) -> Self {
        Self {
            remote: RemoteConfig::new(url),
            extensions_dir,
            data_dir,
            host: HostConfig::default(),
            queue: QueueLimits::default(),
            initial_connect_wait: Duration::from_secs(2),
            debounce: watch::DEFAULT_DEBOUNCE,
            state: StateBackend::Memory,
            commands: None,
        }
    }
}

/// A running bridge: the handler and what keeps it alive.
pub struct Bridge {
    pub handler: BridgeMcp,
    pub extensions: Arc<Extensions>,
    pub forwarder: Arc<Forwarder>,
    _watcher: DirWatcher,
}

impl Bridge {
    /// Opens the data directory, starts the host, the watcher, the connection and delivery.
    /// Never fails for a missing extensions directory or an unreachable server: both are
    /// reported (log, `extensions_list`, tool errors) and retried.
    pub async fn start(mut config: BridgeConfig) -> anyhow::Result<Self> {
        std::fs::create_dir_all(&config.data_dir).with_context(|| {
            format!(
                "cannot create the data directory {}",
                config.data_dir.display()
            )
        })?;
        if config.host.cache_dir.is_none() {
            config.host.cache_dir = Some(config.data_dir.join("component-cache"));
        }
        let host = match &config.state {
            StateBackend::Memory => ExtensionHost::new(config.host.clone()),
            StateBackend::Redis(redis) => {
                let mut redis = redis.clone();
                redis.quota_bytes = config.host.state.quota_bytes;
                let store = RedisStateStore::connect(redis).await?;
                ExtensionHost::with_state_store(config.host.clone(), Arc::new(store))
            }
        }
        .context("invalid extension host configuration")?;
        let dir = std::path::absolute(&config.extensions_dir)
            .unwrap_or_else(|_| config.extensions_dir.clone());
        let extensions = Extensions::new(host, dir);
        // Loaded before serving, so the first call sees the extensions.
        extensions.reload().await;
        let watcher = DirWatcher::start(extensions.clone(), config.debounce);

        config.remote.tools_cache = Some(config.data_dir.join("tools.json"));
        let remote = Remote::start(config.remote.clone())?;
        let queue = WriteQueue::open(config.data_dir.join("queue"), config.queue)?;
        let forwarder = Forwarder::new(remote.clone(), Arc::new(queue));
        forwarder.spawn_delivery();
        if !remote.wait_connected(config.initial_connect_wait).await {
            tracing::warn!(
                url = %remote.url(),
                reason = %remote.last_error(),
                "starting without the memory server; its tools answer with an error until it is reachable"
            );
        }
        let handler = BridgeMcp::new(extensions.clone(), forwarder.clone(), config.commands);
        Ok(Self {
            handler,
            extensions,
            forwarder,
            _watcher: watcher,
        })
    }
}

/// Serves the bridge on stdin/stdout until the client closes stdin.
pub async fn serve_stdio(config: BridgeConfig) -> anyhow::Result<()> {
    let bridge = Bridge::start(config).await?;
    tracing::info!(
        extensions = %bridge.extensions.dir().display(),
        server = %bridge.forwarder.remote().url(),
        "serving the bridge on stdio"
    );
    let service = bridge
        .handler
        .clone()
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP client did not complete initialisation on stdio")?;
    if let Err(error) = service.waiting().await {
        tracing::warn!(%error, "the stdio session ended abnormally");
    }
    tracing::info!(queued = bridge.forwarder.queue().len(), "bridge stopped");
    Ok(())
}
