//! Running `aeterna serve`: bind, serve, and shut down gracefully.
//!
//! Shutdown order: stop accepting connections, let in-flight tool calls and requests finish
//! (up to `http.shutdown_grace_secs`), end the open MCP sessions and streams, then flush the
//! memory service so the vector index is on disk.

use std::future::IntoFuture;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use axum::serve::ListenerExt;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::state::AppState;

/// A server accepting connections. Call [`RunningServer::shutdown`] to stop it.
pub struct RunningServer {
    addr: SocketAddr,
    state: AppState,
    stop: CancellationToken,
    mcp_shutdown: CancellationToken,
    serve: JoinHandle<std::io::Result<()>>,
}

/// Binds the configured address and starts serving. Refuses to expose an unauthenticated
/// server beyond loopback.
pub async fn start(state: AppState) -> anyhow::Result<RunningServer> {
    state.config.check_exposure()?;
    let listen = state.config.listen;
    let listener = TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener
        .local_addr()
        .context("cannot read the bound address")?;
    let stop = CancellationToken::new();
    let mcp_shutdown = CancellationToken::new();
    let app = crate::http::router(state.clone(), mcp_shutdown.clone());
    // Small JSON-RPC messages must not wait for Nagle's algorithm.
    let listener = listener.tap_io(|stream| {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
    });
    let serve = tokio::spawn(
        axum::serve(listener, app)
            .with_graceful_shutdown(stop.clone().cancelled_owned())
            .into_future(),
    );
    tracing::info!(%addr, data_dir = ?state.config.data_dir, tokens = state.config.auth.tokens.len(), "serving MCP at /mcp");
    Ok(RunningServer {
        addr,
        state,
        stop,
        mcp_shutdown,
        serve,
    })
}

impl RunningServer {
    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Resolves when the server stops on its own (an accept loop failure).
    pub async fn stopped(&mut self) -> anyhow::Result<()> {
        match (&mut self.serve).await {
            Ok(result) => result.context("the HTTP server failed"),
            Err(error) => Err(anyhow::anyhow!("the HTTP server task failed: {error}")),
        }
    }

    /// Drains in-flight work, closes MCP sessions and flushes the stores.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let grace = Duration::from_secs(self.state.config.http.shutdown_grace_secs);
        let deadline = tokio::time::Instant::now() + grace;
        tracing::info!(
            grace_secs = grace.as_secs(),
            "shutting down: draining in-flight calls"
        );
        self.stop.cancel();
        while self.state.metrics.in_flight_count() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.mcp_shutdown.cancel();
        let mut serve = self.serve;
        match tokio::time::timeout_at(deadline, &mut serve).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(error))) => tracing::warn!(%error, "the HTTP server ended with an error"),
            Ok(Err(error)) => tracing::warn!(%error, "the HTTP server task failed"),
            Err(_) => {
                tracing::warn!("connections still open after the grace period; closing them");
                serve.abort();
            }
        }
        // Captured trajectories reach storage (and their notes the memory) before it flushes.
        self.state.notes.shutdown().await;
        self.state
            .memory
            .flush()
            .await
            .context("cannot flush the memory stores")?;
        tracing::info!("shutdown complete");
        Ok(())
    }
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(error) => {
                tracing::warn!(%error, "cannot listen for SIGTERM; only Ctrl-C stops the server");
                let _ = interrupt.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
