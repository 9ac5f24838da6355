//! The connection to the memory server: an MCP client over Streamable HTTP, kept up by one
//! background task that (re)connects with exponential backoff.
//!
//! Calls never wait for a connection: while the server is down they fail at once with
//! [`RemoteError::Unreachable`], and every call is bounded by `call_timeout`. A transport
//! failure marks the connection down and wakes the task, which reconnects and lists the
//! server's tools again. The last tool list is kept on disk, so a bridge started while the
//! server is down still lists (and queues) the server's tools.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, Tool,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ErrorData, RoleClient, ServiceError, ServiceExt};
use tokio::sync::{Notify, watch};

/// How the bridge reaches the memory server.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// The server's MCP endpoint, such as `http://127.0.0.1:7878/mcp`.
    pub url: String,
    /// Sent as `Authorization: Bearer …`.
    pub token: Option<String>,
    /// Longest a forwarded call may take.
    pub call_timeout: Duration,
    /// Longest a connection attempt (TCP connect + MCP initialisation + tool listing) may take.
    pub connect_timeout: Duration,
    /// First and longest wait between connection attempts.
    pub backoff_min: Duration,
    pub backoff_max: Duration,
    /// Where the last tool list is kept (`tools.json`), if anywhere.
    pub tools_cache: Option<PathBuf>,
}

impl RemoteConfig {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            token: None,
            call_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            backoff_min: Duration::from_millis(200),
            backoff_max: Duration::from_secs(5),
            tools_cache: None,
        }
    }
}

/// Why a forwarded request got no answer from the server.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RemoteError {
    /// Not connected, or the connection failed while sending: the server did not get it.
    #[error("memory server unreachable at {url} ({reason}); reconnecting in the background")]
    Unreachable { url: String, reason: String },
    /// Sent, but no answer in time: the server may or may not have done it.
    #[error(
        "the memory server at {url} did not answer within {timeout_ms} ms; the request may or \
         may not have been carried out"
    )]
    Timeout { url: String, timeout_ms: u64 },
    /// The server answered with a protocol error; passed on as it is.
    #[error("{0}")]
    Protocol(ErrorData),
}

type Client = RunningService<RoleClient, ()>;

/// The memory server as seen from the bridge. Cheap to share (`Arc`).
pub struct Remote {
    config: RemoteConfig,
    http: reqwest::Client,
    client: RwLock<Option<Arc<Client>>>,
    last_error: RwLock<String>,
    tools: RwLock<Arc<Vec<Tool>>>,
    /// Wakes the connection task after a failure.
    wake: Arc<Notify>,
    /// Counts successful connections; receivers learn about (re)connects.
    connected: watch::Sender<u64>,
}

impl Remote {
    /// Starts the connection task and returns at once.
    pub fn start(config: RemoteConfig) -> anyhow::Result<Arc<Self>> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|error| anyhow::anyhow!("cannot build the HTTP client: {error}"))?;
        let tools = config
            .tools_cache
            .as_ref()
            .and_then(|path| std::fs::read(path).ok())
            .and_then(|bytes| serde_json::from_slice::<Vec<Tool>>(&bytes).ok())
            .unwrap_or_default();
        let remote = Arc::new(Self {
            config,
            http,
            client: RwLock::new(None),
            last_error: RwLock::new("not connected yet".into()),
            tools: RwLock::new(Arc::new(tools)),
            wake: Arc::new(Notify::new()),
            connected: watch::channel(0).0,
        });
        tokio::spawn(connection_task(
            Arc::downgrade(&remote),
            remote.wake.clone(),
        ));
        Ok(remote)
    }

    pub fn url(&self) -> &str {
        &self.config.url
    }

    pub fn is_connected(&self) -> bool {
        self.client.read().is_some()
    }

    /// Why the last connection attempt or request failed.
    pub fn last_error(&self) -> String {
        self.last_error.read().clone()
    }

    /// The server's tools, as last listed (possibly from the cache file while disconnected).
    pub fn tools(&self) -> Arc<Vec<Tool>> {
        self.tools.read().clone()
    }

    /// A receiver that changes on every successful (re)connection.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.connected.subscribe()
    }

    /// Waits until connected, at most `timeout`; returns whether it is.
    pub async fn wait_connected(&self, timeout: Duration) -> bool {
        let mut changes = self.subscribe();
        let connected = async {
            while !self.is_connected() {
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, connected).await.is_ok()
    }

    /// Forwards a tool call.
    pub async fn call_tool(
        &self,
        params: CallToolRequestParams,
    ) -> Result<CallToolResponse, RemoteError> {
        self.request(|client| async move { client.peer().call_tool_once(params).await })
            .await
    }

    pub async fn list_resources(
        &self,
        params: Option<PaginatedRequestParams>,
    ) -> Result<ListResourcesResult, RemoteError> {
        self.request(|client| async move { client.peer().list_resources(params).await })
            .await
    }

    pub async fn list_resource_templates(
        &self,
        params: Option<PaginatedRequestParams>,
    ) -> Result<ListResourceTemplatesResult, RemoteError> {
        self.request(|client| async move { client.peer().list_resource_templates(params).await })
            .await
    }

    pub async fn read_resource(
        &self,
        params: ReadResourceRequestParams,
    ) -> Result<ReadResourceResponse, RemoteError> {
        self.request(|client| async move { client.peer().read_resource_once(params).await })
            .await
    }

    async fn request<T, F>(&self, send: impl FnOnce(Arc<Client>) -> F) -> Result<T, RemoteError>
    where
        F: Future<Output = Result<T, ServiceError>>,
    {
        let client = self.client.read().clone();
        let Some(client) = client else {
            return Err(self.unreachable(self.last_error.read().clone()));
        };
        match tokio::time::timeout(self.config.call_timeout, send(client.clone())).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(ServiceError::McpError(error))) => Err(RemoteError::Protocol(error)),
            Ok(Err(error)) => {
                let reason = error.to_string();
                self.mark_down(&client, &reason);
                Err(self.unreachable(reason))
            }
            Err(_elapsed) => Err(RemoteError::Timeout {
                url: self.config.url.clone(),
                timeout_ms: self.config.call_timeout.as_millis() as u64,
            }),
        }
    }

    fn unreachable(&self, reason: String) -> RemoteError {
        RemoteError::Unreachable {
            url: self.config.url.clone(),
            reason,
        }
    }

    /// Drops `failed` (if it is still the current connection) and wakes the connection task.
    fn mark_down(&self, failed: &Arc<Client>, reason: &str) {
        let mut client = self.client.write();
        if client
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, failed))
        {
            tracing::warn!(url = %self.config.url, reason, "lost the memory server");
            *client = None;
            *self.last_error.write() = reason.to_owned();
            self.wake.notify_one();
        }
    }

    async fn connect(&self) -> anyhow::Result<(Client, Vec<Tool>)> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.config.url.clone());
        if let Some(token) = &self.config.token {
            config = config.auth_header(token.clone());
        }
        let transport = StreamableHttpClientTransport::with_client(self.http.clone(), config);
        let client = ().serve(transport).await.map_err(|error| {
            let hint = if error.is_authorization_required() {
                "; the server refused the token: check the variable named by --token-env"
            } else {
                ""
            };
            anyhow::anyhow!("{error}{hint}")
        })?;
        let tools = client
            .peer()
            .list_all_tools()
            .await
            .map_err(|error| anyhow::anyhow!("cannot list the server's tools: {error}"))?;
        Ok((client, tools))
    }

    fn store_tools(&self, tools: Vec<Tool>) {
        if let Some(path) = &self.config.tools_cache
            && let Ok(bytes) = serde_json::to_vec(&tools)
        {
            let temp = path.with_extension("json.tmp");
            if let Err(error) =
                std::fs::write(&temp, &bytes).and_then(|()| std::fs::rename(&temp, path))
            {
                tracing::warn!(path = %path.display(), %error, "cannot keep the tool list");
            }
        }
        *self.tools.write() = Arc::new(tools);
    }
}

/// Keeps the connection up while the [`Remote`] lives.
async fn connection_task(remote: std::sync::Weak<Remote>, wake: Arc<Notify>) {
    let mut backoff = None::<Duration>;
    let mut failures = 0u32;
    loop {
        let Some(this) = remote.upgrade() else { return };
        if this.is_connected() {
            drop(this);
            wake.notified().await;
            continue;
        }
        let attempt = tokio::time::timeout(this.config.connect_timeout, this.connect()).await;
        let result = match attempt {
            Ok(result) => result,
            Err(_) => Err(anyhow::anyhow!(
                "no answer within {} ms",
                this.config.connect_timeout.as_millis()
            )),
        };
        match result {
            Ok((client, tools)) => {
                tracing::info!(url = %this.config.url, tools = tools.len(), "connected to the memory server");
                this.store_tools(tools);
                *this.client.write() = Some(Arc::new(client));
                this.connected.send_modify(|count| *count += 1);
                backoff = None;
                failures = 0;
            }
            Err(error) => {
                let reason = format!("{error:#}");
                if failures == 0 {
                    tracing::warn!(url = %this.config.url, %reason, "cannot reach the memory server; retrying with backoff");
                } else {
                    tracing::debug!(url = %this.config.url, %reason, failures, "still cannot reach the memory server");
                }
                failures += 1;
                *this.last_error.write() = reason;
                let wait = backoff.map_or(this.config.backoff_min, |last| {
                    (last * 2).min(this.config.backoff_max)
                });
                backoff = Some(wait);
                drop(this);
                tokio::time::sleep(wait).await;
            }
        }
    }
}
