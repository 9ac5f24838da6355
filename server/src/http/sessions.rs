//! MCP sessions (the `initialize` handshake revisions) bounded in number and bound to the
//! principal that opened them.
//!
//! [`SessionRegistry`] wraps rmcp's [`LocalSessionManager`] (which runs the sessions and reaps
//! idle ones) and adds two things it lacks: a cap, held as one semaphore permit per session
//! that [`crate::http::mcp`] takes *before* a session is created, so a burst can never exceed
//! it; and an owner per session, so a session id is useless with another principal's token.
//! A session leaves the registry, and its permit is returned, when rmcp closes it: on
//! `DELETE`, after `http.session_idle_secs` without use, or at shutdown.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use parking_lot::Mutex;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::auth::Principal;

/// The open sessions, their owners and the slots left.
pub struct SessionRegistry {
    inner: LocalSessionManager,
    slots: Arc<Semaphore>,
    max_sessions: usize,
    owners: Mutex<HashMap<SessionId, Owner>>,
}

struct Owner {
    principal: Principal,
    _slot: OwnedSemaphorePermit,
}

/// A reserved session slot; dropping it unused gives the slot back.
pub struct SessionSlot(OwnedSemaphorePermit);

impl SessionRegistry {
    pub fn new(max_sessions: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        SessionRegistry {
            inner,
            slots: Arc::new(Semaphore::new(max_sessions)),
            max_sessions,
            owners: Mutex::new(HashMap::new()),
        }
    }

    /// The cap, for error messages.
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
    }

    /// Sessions open (or being opened) now.
    pub fn open_sessions(&self) -> usize {
        self.max_sessions - self.slots.available_permits()
    }

    /// A slot for a session about to be created, or `None` at the cap.
    pub fn reserve(&self) -> Option<SessionSlot> {
        self.slots.clone().try_acquire_owned().ok().map(SessionSlot)
    }

    /// Records who opened session `id` with `slot`. A session rmcp already closed (its
    /// handshake failed, or it was reaped in between) keeps nothing.
    pub async fn bind(&self, id: SessionId, principal: Principal, slot: SessionSlot) {
        self.owners.lock().insert(
            id.clone(),
            Owner {
                principal,
                _slot: slot.0,
            },
        );
        if !matches!(self.inner.has_session(&id).await, Ok(true)) {
            self.owners.lock().remove(&id);
        }
    }

    /// Whether `principal` may use session `id`: it exists and they opened it.
    pub fn is_owned_by(&self, id: &str, principal: &Principal) -> bool {
        self.owners
            .lock()
            .get(id)
            .is_some_and(|owner| owner.principal == *principal)
    }
}

impl SessionManager for SessionRegistry {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let result = self.inner.close_session(id).await;
        self.owners.lock().remove(id);
        result
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.inner.restore_session(id).await
    }
}
