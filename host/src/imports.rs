//! The host side of the guest's imports: `state` (through the callback's overlay) and `host`
//! (session info, tools, manifest config, log), plus the views WASI and `wasi:http` need.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::bindings::host_api::{self, LogLevel, SessionInfo};
use crate::bindings::state_api::{self, QuotaUsage as WitQuotaUsage, StateError};
use crate::bindings::wit_types::{self, ToolDefinition as WitToolDefinition};
use crate::sandbox::{MemoryLimiter, OutputSink, RefuseHttp, WasiState};
use crate::state::QuotaUsage;
use crate::state::overlay::{SetError, StateOverlay};
use crate::types::CallContext;

/// The data of one callback's Store.
pub(crate) struct StoreData {
    pub(crate) wasi: WasiState,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) guest: GuestEnv,
}

/// What the guest's imports see during one callback.
pub(crate) struct GuestEnv {
    /// The manifest's `[config]` table.
    pub(crate) config: Arc<[(String, String)]>,
    /// `None` during `register()`, which runs outside any session.
    pub(crate) call: Option<Arc<CallContext>>,
    /// `None` during `register()`: registration must be side-effect free.
    pub(crate) state: Option<StateOverlay>,
    pub(crate) output: Arc<OutputSink>,
}

/// A failure on the host's side (such as an unreachable state store) that aborts the callback.
/// Reported as fault kind `host`.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct HostFailure(pub(crate) String);

fn host_failure(message: impl Into<String>) -> wasmtime::Error {
    wasmtime::Error::new(HostFailure(message.into()))
}

impl WasiView for StoreData {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi.ctx,
            table: &mut self.wasi.table,
        }
    }
}

impl WasiHttpView for StoreData {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.wasi.http,
            table: &mut self.wasi.table,
            hooks: &mut self.wasi.refuse_http,
        }
    }
}

impl StoreData {
    pub(crate) fn new(limiter: MemoryLimiter, guest: GuestEnv) -> Self {
        let wasi = WasiState {
            ctx: crate::sandbox::wasi_context(&guest.output),
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            refuse_http: RefuseHttp,
        };
        Self {
            wasi,
            limiter,
            guest,
        }
    }

    fn state(&mut self) -> wasmtime::Result<&mut StateOverlay> {
        self.guest
            .state
            .as_mut()
            .ok_or_else(|| host_failure("`state` is not available during register()"))
    }
}

impl wit_types::Host for StoreData {}

impl state_api::Host for StoreData {
    async fn get(&mut self, key: String) -> wasmtime::Result<Option<Vec<u8>>> {
        self.state()?
            .get(&key)
            .await
            .map_err(|error| host_failure(error.to_string()))
    }

    async fn set(
        &mut self,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), StateError>> {
        let result = self.state()?.set(key, value).await;
        Ok(
            match result.map_err(|error| host_failure(error.to_string()))? {
                Ok(()) => Ok(()),
                Err(SetError::QuotaExceeded(usage)) => {
                    Err(StateError::QuotaExceeded(wit_usage(usage)))
                }
                Err(SetError::InvalidKey(why)) => Err(StateError::InvalidKey(why)),
            },
        )
    }

    async fn delete(&mut self, key: String) -> wasmtime::Result<bool> {
        self.state()?
            .delete(&key)
            .await
            .map_err(|error| host_failure(error.to_string()))
    }

    async fn keys(&mut self) -> wasmtime::Result<Vec<String>> {
        self.state()?
            .keys()
            .await
            .map_err(|error| host_failure(error.to_string()))
    }

    async fn clear(&mut self) -> wasmtime::Result<()> {
        self.state()?.clear();
        Ok(())
    }

    async fn usage(&mut self) -> wasmtime::Result<WitQuotaUsage> {
        let usage = self
            .state()?
            .usage()
            .await
            .map_err(|error| host_failure(error.to_string()))?;
        Ok(wit_usage(usage))
    }
}

fn wit_usage(usage: QuotaUsage) -> WitQuotaUsage {
    WitQuotaUsage {
        used_bytes: usage.used_bytes,
        quota_bytes: usage.quota_bytes,
        keys: usage.keys,
    }
}

impl host_api::Host for StoreData {
    async fn session(&mut self) -> wasmtime::Result<SessionInfo> {
        Ok(match &self.guest.call {
            Some(call) => SessionInfo {
                tenant_id: call.tenant.clone(),
                session_id: call.session.clone(),
                user_id: call.user.clone(),
                project_id: call.project.clone(),
            },
            None => SessionInfo {
                tenant_id: String::new(),
                session_id: String::new(),
                user_id: None,
                project_id: None,
            },
        })
    }

    async fn tools(&mut self) -> wasmtime::Result<Vec<WitToolDefinition>> {
        let Some(call) = &self.guest.call else {
            return Ok(Vec::new());
        };
        Ok(call
            .tools
            .iter()
            .map(|tool| WitToolDefinition {
                name: tool.name.clone(),
                description: tool.description.clone(),
                input_schema: tool.input_schema.clone(),
            })
            .collect())
    }

    async fn config(&mut self) -> wasmtime::Result<Vec<(String, String)>> {
        Ok(self.guest.config.to_vec())
    }

    async fn log(&mut self, level: LogLevel, message: String) -> wasmtime::Result<()> {
        let level = match level {
            LogLevel::Trace => tracing::Level::TRACE,
            LogLevel::Debug => tracing::Level::DEBUG,
            LogLevel::Info => tracing::Level::INFO,
            LogLevel::Warn => tracing::Level::WARN,
            LogLevel::Error => tracing::Level::ERROR,
        };
        self.guest.output.log(level, &message);
        Ok(())
    }
}
