//! [`ExtensionHost`]: the public face of the crate.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::RwLock;
use serde::Serialize;
use wasmtime::component::{HasSelf, Linker};

use crate::bindings::Extension;
use crate::cache::{CacheStats, ComponentCache};
use crate::config::HostConfig;
use crate::engine::{EpochTicker, build_engine};
use crate::error::{HostError, LoadError};
use crate::executor::Executor;
use crate::imports::StoreData;
use crate::loader::{Loaded, Loader, wasm_files};
use crate::registry::{ExtensionInfo, Registry};
use crate::report::RunOutput;
use crate::state::{MemoryStateStore, StateStore};
use crate::types::{CallContext, Hook, Message, ToolConfig, ToolDefinition};

/// Runs Aeterna extensions: loads a directory of components, keeps them ready, and runs hooks
/// through them. Cheap to clone (all clones share one host); safe to use from many tasks at once,
/// including loading and reloading while chains run.
#[derive(Clone)]
pub struct ExtensionHost {
    inner: Arc<HostInner>,
}

pub(crate) struct HostInner {
    loader: Arc<Loader>,
    pub(crate) state: Arc<dyn StateStore>,
    registry: RwLock<Arc<Registry>>,
    /// Serialises registry updates, so concurrent loads never lose one another's changes.
    updates: tokio::sync::Mutex<()>,
    /// Numbers loads in the order they start, so a slow load never replaces a newer one.
    generations: AtomicU64,
    _ticker: EpochTicker,
}

impl HostInner {
    pub(crate) fn config(&self) -> &HostConfig {
        &self.loader.config
    }
}

/// The outcome of loading a directory.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Extensions now loaded, in execution order.
    pub loaded: Vec<ExtensionInfo>,
    /// Files whose manifest says `enabled = false`.
    pub disabled: Vec<PathBuf>,
    /// Files that were rejected, each with the reason.
    pub rejected: Vec<(PathBuf, LoadError)>,
}

/// A prompt addition of one extension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptAddition {
    pub extension: String,
    pub text: String,
}

/// Run-time status of a loaded extension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExtensionStatus {
    pub id: String,
    pub consecutive_faults: u32,
    /// Milliseconds left in quarantine, if quarantined.
    pub quarantined_ms: Option<u64>,
}

impl ExtensionHost {
    /// A host with the built-in in-memory state store.
    pub fn new(config: HostConfig) -> Result<Self, HostError> {
        let state = Arc::new(MemoryStateStore::new(config.state));
        Self::with_state_store(config, state)
    }

    /// A host keeping extension state in `state`.
    pub fn with_state_store(
        config: HostConfig,
        state: Arc<dyn StateStore>,
    ) -> Result<Self, HostError> {
        config.validate()?;
        let engine = build_engine(&config)?;
        let mut linker = Linker::<StoreData>::new(&engine);
        let link_error =
            |error: wasmtime::Error| HostError::Engine(format!("cannot link imports: {error:#}"));
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(link_error)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).map_err(link_error)?;
        Extension::add_to_linker::<StoreData, HasSelf<StoreData>>(&mut linker, |data| data)
            .map_err(link_error)?;
        let ticker = EpochTicker::start(engine.clone(), config.epoch_tick())?;
        let cache = ComponentCache::new(&engine, config.cache_dir.clone());
        Ok(Self {
            inner: Arc::new(HostInner {
                loader: Arc::new(Loader {
                    config,
                    engine,
                    linker,
                    cache,
                }),
                state,
                registry: RwLock::new(Arc::new(Registry::default())),
                updates: tokio::sync::Mutex::new(()),
                generations: AtomicU64::new(0),
                _ticker: ticker,
            }),
        })
    }

    pub fn config(&self) -> &HostConfig {
        self.inner.config()
    }

    pub fn state_store(&self) -> &Arc<dyn StateStore> {
        &self.inner.state
    }

    /// Counters of the compile cache.
    pub fn cache_stats(&self) -> CacheStats {
        self.inner.loader.cache.stats()
    }

    // ----- loading -------------------------------------------------------------------------

    /// Loads every `*.wasm` file of `dir` (each with its optional `<name>.toml`), replacing all
    /// loaded extensions. A rejected file is reported in [`LoadReport::rejected`] and does not
    /// stop the others from loading; an unreadable directory is an error and changes nothing.
    ///
    /// Chains keep running on the extensions loaded before until the whole directory is ready.
    /// Components already loaded (same bytes) are reused, not compiled again.
    pub async fn load_dir(&self, dir: impl AsRef<Path>) -> Result<LoadReport, HostError> {
        let dir = dir.as_ref();
        let _update = self.inner.updates.lock().await;
        let generation = self.next_generation();
        let files = wasm_files(dir).map_err(|source| HostError::ReadDir {
            path: dir.to_path_buf(),
            source,
        })?;
        let current = self.snapshot();
        let mut report = LoadReport::default();
        let mut registry = Registry::new(Vec::new(), Some(dir.to_path_buf()));
        for file in files {
            let known =
                |digest: &[u8; 32]| current.linked(digest).or_else(|| registry.linked(digest));
            match self
                .inner
                .loader
                .load(&file, true, generation, &known)
                .await
            {
                Ok(Loaded::Extension(extension)) => match registry.with(extension) {
                    Ok(next) => registry = next,
                    Err(error) => report.rejected.push((file, error)),
                },
                Ok(Loaded::Disabled) => report.disabled.push(file),
                Err(error) => report.rejected.push((file, error)),
            }
        }
        for (file, error) in &report.rejected {
            tracing::warn!(file = %file.display(), %error, "extension rejected");
        }
        report.loaded = registry.iter().map(|ext| ext.info()).collect();
        tracing::info!(
            dir = %dir.display(),
            loaded = report.loaded.len(),
            rejected = report.rejected.len(),
            disabled = report.disabled.len(),
            "extensions loaded"
        );
        *self.inner.registry.write() = Arc::new(registry);
        Ok(report)
    }

    /// Reloads the directory last given to [`load_dir`](Self::load_dir).
    pub async fn reload_all(&self) -> Result<LoadReport, HostError> {
        let dir = self.snapshot().dir.clone().ok_or_else(|| {
            HostError::Config(
                "no extensions directory has been loaded, so there is nothing to reload".into(),
            )
        })?;
        self.load_dir(dir).await
    }

    /// Loads one extension file, replacing the extension previously loaded from the same file.
    /// Returns `None` if its manifest disables it (a previous version is then unloaded).
    ///
    /// Made for a file watcher: the component compiles in the background (on a thread of its
    /// own, within `compile_timeout_ms`, with progress in the log) while chains keep running on
    /// the previously loaded version, which is swapped out only once the new one is ready.
    /// Unchanged bytes (a manifest edit) are not compiled again. Loads of different files run
    /// concurrently; of two loads of the same file, the one that started last wins even if it
    /// finishes first. If the new version is rejected, the previous one stays loaded.
    pub async fn load_file(
        &self,
        wasm: impl AsRef<Path>,
    ) -> Result<Option<ExtensionInfo>, HostError> {
        let wasm = wasm.as_ref();
        let generation = self.next_generation();
        let current = self.snapshot();
        let known = |digest: &[u8; 32]| current.linked(digest);
        let loaded = self
            .inner
            .loader
            .load(wasm, true, generation, &known)
            .await
            .map_err(|reason| HostError::load(wasm, reason))?;

        let _update = self.inner.updates.lock().await;
        let current = self.snapshot();
        if let Some(newer) = current
            .by_file(wasm)
            .filter(|ext| ext.generation > generation)
        {
            tracing::debug!(
                file = %wasm.display(),
                "a newer load of this file finished first; this one is dropped"
            );
            return Ok(Some(newer.info()));
        }
        let (next, info) = match loaded {
            Loaded::Extension(extension) => {
                let info = extension.info();
                let next = current
                    .with(extension)
                    .map_err(|reason| HostError::load(wasm, reason))?;
                (next, Some(info))
            }
            Loaded::Disabled => {
                let remaining = current
                    .iter()
                    .filter(|ext| ext.file != wasm)
                    .cloned()
                    .collect();
                (Registry::new(remaining, current.dir.clone()), None)
            }
        };
        *self.inner.registry.write() = Arc::new(next);
        Ok(info)
    }

    /// Reloads the extension `id` from its file (picking up a new build or manifest).
    pub async fn reload(&self, id: &str) -> Result<Option<ExtensionInfo>, HostError> {
        let file = self
            .snapshot()
            .get(id)
            .map(|ext| ext.file.clone())
            .ok_or_else(|| HostError::UnknownExtension(id.to_owned()))?;
        self.load_file(file).await
    }

    /// Unloads the extension `id`. Runs already in flight finish with it.
    pub async fn unload(&self, id: &str) -> Result<ExtensionInfo, HostError> {
        let _update = self.inner.updates.lock().await;
        let current = self.snapshot();
        let info = current.get(id).map(|ext| ext.info());
        let next = current.without(id);
        match (info, next) {
            (Some(info), Some(next)) => {
                *self.inner.registry.write() = Arc::new(next);
                Ok(info)
            }
            _ => Err(HostError::UnknownExtension(id.to_owned())),
        }
    }

    /// Validates an extension file (and its manifest) without loading it, even if its manifest
    /// disables it: what `aeterna ext check` prints.
    pub async fn check_file(&self, wasm: impl AsRef<Path>) -> Result<ExtensionInfo, HostError> {
        let wasm = wasm.as_ref();
        let current = self.snapshot();
        let known = |digest: &[u8; 32]| current.linked(digest);
        let generation = self.next_generation();
        match self
            .inner
            .loader
            .load(wasm, false, generation, &known)
            .await
        {
            Ok(Loaded::Extension(extension)) => Ok(extension.info()),
            Ok(Loaded::Disabled) => Err(HostError::load(
                wasm,
                LoadError::Registration("the extension is disabled by its manifest".into()),
            )),
            Err(reason) => Err(HostError::load(wasm, reason)),
        }
    }

    // ----- what is loaded ------------------------------------------------------------------

    /// The loaded extensions, in execution order.
    pub fn extensions(&self) -> Vec<ExtensionInfo> {
        self.snapshot().iter().map(|ext| ext.info()).collect()
    }

    pub fn extension(&self, id: &str) -> Option<ExtensionInfo> {
        self.snapshot().get(id).map(|ext| ext.info())
    }

    /// Fault counts and quarantine of each loaded extension.
    pub fn status(&self) -> Vec<ExtensionStatus> {
        let now = Instant::now();
        self.snapshot()
            .iter()
            .map(|ext| {
                let health = ext.health.lock();
                ExtensionStatus {
                    id: ext.id.to_string(),
                    consecutive_faults: health.consecutive_faults(),
                    quarantined_ms: health
                        .quarantined(now)
                        .map(|left| u64::try_from(left.as_millis()).unwrap_or(u64::MAX)),
                }
            })
            .collect()
    }

    /// Prompt additions of all loaded extensions, in execution order.
    pub fn prompt_additions(&self) -> Vec<PromptAddition> {
        self.snapshot()
            .iter()
            .flat_map(|ext| {
                ext.registration
                    .prompt_additions
                    .iter()
                    .map(|text| PromptAddition {
                        extension: ext.id.to_string(),
                        text: text.clone(),
                    })
            })
            .collect()
    }

    /// Tool configuration of each loaded extension that has one, in execution order.
    pub fn tool_configs(&self) -> Vec<(String, ToolConfig)> {
        self.snapshot()
            .iter()
            .filter(|ext| !ext.registration.tool_config.is_empty())
            .map(|ext| (ext.id.to_string(), ext.registration.tool_config.clone()))
            .collect()
    }

    /// Applies every extension's tool configuration to `tools`, in execution order (so a
    /// lower-priority extension sees, and may change, what higher-priority ones did).
    pub fn apply_tool_config(&self, mut tools: Vec<ToolDefinition>) -> Vec<ToolDefinition> {
        for ext in self.snapshot().iter() {
            ext.registration.tool_config.apply(&mut tools);
        }
        tools
    }

    // ----- running chains ------------------------------------------------------------------

    /// Runs the input-messages chain.
    pub async fn run_input_messages(
        &self,
        ctx: &CallContext,
        messages: Vec<Message>,
    ) -> Result<RunOutput<Vec<Message>>, HostError> {
        let mut executor = Executor::new(&self.inner, self.snapshot(), ctx);
        let output = executor.input_messages(messages).await?;
        Ok(RunOutput {
            output,
            report: executor.report,
        })
    }

    /// Runs the plain-text chain (for text such as a tool's output).
    pub async fn run_plain_text(
        &self,
        ctx: &CallContext,
        text: String,
    ) -> Result<RunOutput<String>, HostError> {
        let mut executor = Executor::new(&self.inner, self.snapshot(), ctx);
        let output = executor.text(Hook::PlainText, text).await?;
        Ok(RunOutput {
            output,
            report: executor.report,
        })
    }

    /// Hands every registered tag block of `text` to `on-tag` and splices in the results.
    pub async fn run_tags(
        &self,
        ctx: &CallContext,
        text: &str,
    ) -> Result<RunOutput<String>, HostError> {
        let mut executor = Executor::new(&self.inner, self.snapshot(), ctx);
        let output = executor.tags(text).await?;
        Ok(RunOutput {
            output,
            report: executor.report,
        })
    }

    /// Processes a whole LLM response: the extensions handling `llm-output` or `tag` in one
    /// priority-ordered pipeline, where each llm-output extension transforms the whole text and
    /// each run of consecutive tag extensions replaces the blocks of their tags. So a
    /// high-priority redactor runs before every tag handler sees the text.
    pub async fn run_llm_output(
        &self,
        ctx: &CallContext,
        text: &str,
    ) -> Result<RunOutput<String>, HostError> {
        let mut executor = Executor::new(&self.inner, self.snapshot(), ctx);
        let output = executor.llm_output(text.to_owned()).await?;
        Ok(RunOutput {
            output,
            report: executor.report,
        })
    }

    fn snapshot(&self) -> Arc<Registry> {
        self.inner.registry.read().clone()
    }

    fn next_generation(&self) -> u64 {
        self.inner.generations.fetch_add(1, Ordering::Relaxed)
    }
}
