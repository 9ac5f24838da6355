//! Running `aeterna serve`: bind, accept, serve, and shut down gracefully.
//!
//! Connections are accepted here rather than by `axum::serve` so that hyper's own bounds apply:
//! a client must send a request's headers within `http.header_read_timeout_secs` (which also
//! closes idle keep-alive connections), and at most `http.max_connections` are open at once —
//! beyond that the server stops accepting until one closes, so stalled clients cannot take
//! every file descriptor. The soft file-descriptor limit is raised to the hard one at start.
//!
//! Shutdown answers or refuses every request: ask every connection to finish its current
//! request and close, answer new connections with 503 (`shutting_down`), wait for the
//! requests in flight (up to `http.shutdown_grace_secs`), only then stop listening, end the
//! MCP sessions and their streams, close what is left, stop the ingest workers, and flush the
//! trajectory queue and the memory service.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use futures::FutureExt;
use http_body_util::{BodyExt, Limited};
use hyper::header::HeaderValue;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::config::HttpConfig;
use crate::http::in_flight::InFlight;
use crate::state::AppState;

/// A server accepting connections. Call [`RunningServer::shutdown`] to stop it.
pub struct RunningServer {
    addr: SocketAddr,
    state: AppState,
    stop: CancellationToken,
    closed: CancellationToken,
    mcp_shutdown: CancellationToken,
    in_flight: InFlight,
    serve: JoinHandle<()>,
}

/// Binds the configured address and starts serving. Refuses to expose an unauthenticated
/// server beyond loopback.
pub async fn start(state: AppState) -> anyhow::Result<RunningServer> {
    state.config.check_exposure()?;
    raise_file_limit();
    let listen = state.config.listen;
    let listener = TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let addr = listener
        .local_addr()
        .context("cannot read the bound address")?;
    let stop = CancellationToken::new();
    let closed = CancellationToken::new();
    let mcp_shutdown = CancellationToken::new();
    let in_flight = InFlight::default();
    let app = crate::http::router(state.clone(), mcp_shutdown.clone(), in_flight.clone())?;
    let serve = tokio::spawn(accept_loop(
        listener,
        app,
        state.config.http.clone(),
        stop.clone(),
        closed.clone(),
    ));
    tracing::info!(%addr, data_dir = ?state.config.data_dir, tokens = state.config.auth.tokens.len(), "serving MCP at /mcp");
    Ok(RunningServer {
        addr,
        state,
        stop,
        closed,
        mcp_shutdown,
        in_flight,
        serve,
    })
}

/// Accepts connections until `stop`; then asks each open connection to finish its current
/// request and close, and answers any new connection with 503 until `closed`, so no request
/// that reaches the server goes unanswered. Aborting this task closes every connection.
async fn accept_loop(
    listener: TcpListener,
    app: axum::Router,
    http: HttpConfig,
    stop: CancellationToken,
    closed: CancellationToken,
) {
    let builder = connection_builder(&http);
    let slots = Arc::new(Semaphore::new(http.max_connections));
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    loop {
        let slot = tokio::select! {
            () = stop.cancelled() => break,
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            () = stop.cancelled() => break,
            accepted = accept(&listener) => accepted,
        };
        let service = TowerToHyperService::new(app.clone());
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let connection = graceful.watch(connection);
        connections.spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
            drop(slot);
        });
        // Reap finished connection tasks so the set does not grow with the server's age.
        while connections.try_join_next().is_some() {}
    }
    let drained = tokio::spawn(graceful.shutdown());
    let refusal_limits = (
        http.max_body_bytes,
        Duration::from_secs(http.body_read_timeout_secs),
    );
    loop {
        let (stream, _) = tokio::select! {
            // Once closed, take what already waits in the backlog, then stop listening:
            // closing a listener resets the connections still queued in it.
            () = closed.cancelled() => match accept(&listener).now_or_never() {
                Some(accepted) => accepted,
                None => break,
            },
            accepted = accept(&listener) => accepted,
        };
        let refusal = builder
            .serve_connection(
                TokioIo::new(stream),
                service_fn(move |request| shutting_down(request, refusal_limits)),
            )
            .into_owned();
        connections.spawn(async move {
            let _ = refusal.await;
        });
    }
    drop(listener);
    let _ = drained.await;
    while connections.join_next().await.is_some() {}
}

/// hyper's connection settings: the header read timeout (which also ends idle keep-alive
/// connections) and HTTP/2 keep-alive pings with the same patience.
fn connection_builder(http: &HttpConfig) -> auto::Builder<TokioExecutor> {
    let patience = Duration::from_secs(http.header_read_timeout_secs);
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(patience);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(patience)
        .keep_alive_timeout(patience);
    builder
}

/// The next connection, with `TCP_NODELAY` set. Errors (out of file descriptors, a connection
/// reset before it was accepted) are logged and waited out briefly, never fatal.
async fn accept(listener: &TcpListener) -> (TcpStream, SocketAddr) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                // Small JSON-RPC messages must not wait for Nagle's algorithm.
                if let Err(error) = stream.set_nodelay(true) {
                    tracing::debug!(%error, "cannot set TCP_NODELAY");
                }
                return (stream, peer);
            }
            Err(error) => {
                tracing::warn!(%error, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The answer to every request on a connection opened during shutdown. The body is read
/// first (within the usual bounds): closing a socket with unread input would reset the
/// connection and lose the answer.
async fn shutting_down(
    request: hyper::Request<hyper::body::Incoming>,
    (max_body_bytes, read_timeout): (usize, Duration),
) -> Result<hyper::Response<String>, Infallible> {
    let body = Limited::new(request.into_body(), max_body_bytes).collect();
    let _ = tokio::time::timeout(read_timeout, body).await;
    let body = serde_json::json!({ "error": {
        "code": "shutting_down",
        "message": "the server is shutting down and takes no new requests; retry against the \
                    restarted server",
    }});
    let mut response = hyper::Response::new(body.to_string());
    *response.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    headers.insert(hyper::header::RETRY_AFTER, HeaderValue::from_static("5"));
    Ok(response)
}

/// Raises the soft limit on open files to the hard limit, so `http.max_connections` can be
/// reached before the process runs out of descriptors.
fn raise_file_limit() {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => tracing::debug!(limit, "open file limit"),
        Err(error) => tracing::warn!(%error, "cannot raise the open file limit"),
    }
}

impl RunningServer {
    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Resolves when the server stops on its own (the accept loop ended).
    pub async fn stopped(&mut self) -> anyhow::Result<()> {
        (&mut self.serve)
            .await
            .map_err(|error| anyhow::anyhow!("the HTTP server task failed: {error}"))
    }

    /// Drains in-flight requests, closes MCP sessions and flushes the stores.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        let grace = Duration::from_secs(self.state.config.http.shutdown_grace_secs);
        let deadline = tokio::time::Instant::now() + grace;
        tracing::info!(
            grace_secs = grace.as_secs(),
            in_flight = self.in_flight.count(),
            "shutting down: draining in-flight requests"
        );
        self.stop.cancel();
        if tokio::time::timeout_at(deadline, self.in_flight.idle())
            .await
            .is_err()
        {
            tracing::warn!(
                in_flight = self.in_flight.count(),
                "requests still in flight after the grace period"
            );
        }
        self.closed.cancel();
        self.mcp_shutdown.cancel();
        let mut serve = self.serve;
        if tokio::time::timeout_at(deadline, &mut serve).await.is_err() {
            tracing::warn!("connections still open after the grace period; closing them");
            serve.abort();
        }
        // Ingest workers finish the job they hold (or leave it to the reclaim) before the
        // memory flushes.
        self.state.ingest.shutdown(grace).await;
        // Loop tasks stop (their process groups killed) before their trajectories drain.
        self.state.knowledge.shutdown().await;
        self.state.meta.shutdown().await;
        // Captured trajectories reach storage (and their notes the memory) before it flushes.
        self.state.notes.shutdown().await;
        self.state.llm.shutdown().await;
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
