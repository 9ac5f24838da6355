//! Resource subscriptions: a client is told when a summary it watches changes
//! (`notifications/resources/updated`), because a memory of its scope was written.
//!
//! Both protocol generations are served from the memory service's change feed, filtered by
//! the caller's tenant and grants: `subscriptions/listen` (2026-07-28) runs for as long as its request,
//! and `resources/subscribe` (earlier revisions) adds URIs to the session's [`Subscriptions`],
//! whose one forwarding task ends with the session. A session watches at most
//! [`MAX_SUBSCRIPTIONS`] URIs. Notes are immutable, so only summaries can be subscribed to.

use std::collections::HashSet;
use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer};
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

use super::summaries;
use crate::auth::Principal;
use crate::state::AppState;

/// Resources one session or `listen` request may watch at once.
pub const MAX_SUBSCRIPTIONS: usize = 100;

/// The legacy subscriptions of one session.
#[derive(Default)]
pub struct Subscriptions {
    uris: Arc<Mutex<HashSet<String>>>,
    forwarder: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        if let Some(forwarder) = self.forwarder.get_mut().take() {
            forwarder.abort();
        }
    }
}

impl Subscriptions {
    /// `resources/subscribe`: watch `uri`, a summary of the caller's tenant.
    pub fn subscribe(
        &self,
        state: &AppState,
        caller: &Principal,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (layer, scope_id) = summaries::parse_uri(uri)?;
        caller
            .grants
            .check(layer, &scope_id)
            .map_err(|refusal| ErrorData::invalid_params(format!("{uri}: {refusal}"), None))?;
        {
            let mut uris = self.uris.lock();
            if uris.len() >= MAX_SUBSCRIPTIONS && !uris.contains(uri) {
                return Err(ErrorData::invalid_params(
                    format!(
                        "this session already watches {MAX_SUBSCRIPTIONS} resources (the \
                         limit); unsubscribe from some first"
                    ),
                    None,
                ));
            }
            uris.insert(uri.to_owned());
        }
        let mut forwarder = self.forwarder.lock();
        if forwarder.as_ref().is_none_or(JoinHandle::is_finished) {
            *forwarder = Some(tokio::spawn(forward(
                state.clone(),
                caller.tenant_id.to_string(),
                self.uris.clone(),
                context.peer.clone(),
            )));
        }
        Ok(())
    }

    /// `resources/unsubscribe`.
    pub fn unsubscribe(&self, uri: &str) {
        self.uris.lock().remove(uri);
    }
}

/// Sends `notifications/resources/updated` to `peer` for each watched URI that changes,
/// until the session's transport closes.
async fn forward(
    state: AppState,
    tenant_id: String,
    uris: Arc<Mutex<HashSet<String>>>,
    peer: Peer<RoleServer>,
) {
    let mut changes = state.memory.subscribe();
    loop {
        let change = match changes.recv().await {
            Ok(change) => change,
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(
                    missed,
                    "resource subscriptions lagged behind the change feed"
                );
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        if peer.is_transport_closed() {
            return;
        }
        if change.tenant_id != tenant_id {
            continue;
        }
        let uri = summaries::uri_of_change(&change);
        if !uris.lock().contains(&uri) {
            continue;
        }
        let updated = ResourceUpdatedNotificationParam::new(uri);
        if let Err(error) = peer.notify_resource_updated(updated).await {
            tracing::debug!(%error, "a subscriber went away");
            return;
        }
    }
}

/// The part of a `subscriptions/listen` filter this server honours: summary URIs (at most
/// [`MAX_SUBSCRIPTIONS`]); list-change notifications are not offered.
pub fn accepted_filter(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
        uris.iter()
            .filter(|uri| summaries::parse_uri(uri).is_ok())
            .take(MAX_SUBSCRIPTIONS)
            .cloned()
            .collect()
    });
    accepted
}

/// `subscriptions/listen`: forwards updates of the accepted URIs until the request ends.
pub async fn listen(
    state: &AppState,
    caller: &Principal,
    context: SubscriptionContext,
) -> Result<(), ErrorData> {
    // The accepted filter is chosen before the caller is known: summaries of scopes the
    // caller's grants do not reach are dropped here, and never reported.
    let uris: HashSet<String> = context
        .accepted()
        .resource_subscriptions
        .iter()
        .flatten()
        .filter(|uri| {
            summaries::parse_uri(uri)
                .is_ok_and(|(layer, scope_id)| caller.grants.reaches(layer, &scope_id))
        })
        .cloned()
        .collect();
    let mut changes = state.memory.subscribe();
    loop {
        let change = tokio::select! {
            () = context.cancelled() => return Ok(()),
            change = changes.recv() => change,
        };
        let change = match change {
            Ok(change) => change,
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return Ok(()),
        };
        if *change.tenant_id != *caller.tenant_id {
            continue;
        }
        let uri = summaries::uri_of_change(&change);
        if uris.contains(&uri) && context.sink().notify_resource_updated(uri).await.is_err() {
            return Ok(());
        }
    }
}
