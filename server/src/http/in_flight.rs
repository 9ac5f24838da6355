//! Requests the server has accepted and not yet answered, so a graceful shutdown can wait for
//! each of them before it ends the MCP sessions.
//!
//! A request counts from the moment it reaches the router until its response body is done
//! (or dropped): an MCP call answered as a server-sent event stream is in flight until the
//! stream ends. Open-ended streams are not counted — `GET` requests (on `/mcp`, the
//! notification streams) and responses marked [`OpenEnded`] (`subscriptions/listen`) — since
//! shutdown itself closes them.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use tokio::sync::Notify;

/// The count of unanswered requests. Cheap to clone.
#[derive(Clone, Default)]
pub struct InFlight(Arc<Shared>);

#[derive(Default)]
struct Shared {
    count: AtomicUsize,
    idle: Notify,
}

/// A response extension: this response is a stream with no end of its own.
#[derive(Debug, Clone, Copy)]
pub struct OpenEnded;

/// Held while one request is in flight.
struct Guard(InFlight);

impl Drop for Guard {
    fn drop(&mut self) {
        if self.0.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.0.idle.notify_waiters();
        }
    }
}

impl InFlight {
    pub fn count(&self) -> usize {
        self.0.count.load(Ordering::Acquire)
    }

    /// Resolves once no request is in flight.
    pub async fn idle(&self) {
        loop {
            let notified = self.0.idle.notified();
            if self.count() == 0 {
                return;
            }
            notified.await;
        }
    }

    fn enter(&self) -> Guard {
        self.0.count.fetch_add(1, Ordering::AcqRel);
        Guard(self.clone())
    }
}

/// Middleware: counts the request until its response body is finished.
pub async fn track(State(in_flight): State<InFlight>, request: Request, next: Next) -> Response {
    if request.method() == Method::GET {
        return next.run(request).await;
    }
    let guard = in_flight.enter();
    let response = next.run(request).await;
    if response.extensions().get::<OpenEnded>().is_some() {
        return response;
    }
    response.map(|body| {
        Body::new(TrackedBody {
            body,
            _guard: guard,
        })
    })
}

/// A response body that keeps its request counted until it is finished or dropped.
struct TrackedBody {
    body: Body,
    _guard: Guard,
}

impl http_body::Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
