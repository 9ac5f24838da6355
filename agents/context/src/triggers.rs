//! The background task that keeps summaries fresh.
//!
//! Writes are counted per (tenant, scope). A scope is refreshed when its count reaches its
//! layer's `after_changes`, or `interval_secs` after its first uncounted write, whichever comes
//! first; and at once when an assembly found it without summaries. Scopes nobody wrote to are
//! never refreshed on the interval: their source hash could not have changed (the data dir has
//! a single writer), so the refresh would be skipped anyway.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use aeterna_memory::{MemoryChange, Scope};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, mpsc};

use crate::architect::ContextArchitect;

/// How often pending scopes are checked against their interval, at most.
const MAX_TICK: Duration = Duration::from_secs(30);

struct Pending {
    changes: u32,
    since: Instant,
}

pub(crate) async fn run(
    architect: Weak<ContextArchitect>,
    mut changes: broadcast::Receiver<MemoryChange>,
    mut requests: mpsc::Receiver<(String, Scope)>,
) {
    let tick = match architect.upgrade() {
        Some(this) => tick_period(&this),
        None => return,
    };
    let mut ticker = tokio::time::interval(tick);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut pending: HashMap<(String, Scope), Pending> = HashMap::new();
    loop {
        tokio::select! {
            change = changes.recv() => {
                let Some(this) = architect.upgrade() else { return };
                match change {
                    Ok(change) => on_change(&this, &mut pending, change),
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "summary triggers missed change notifications; refreshing hot scopes");
                        for key in this.store.hot_scopes() {
                            pending.entry(key).or_insert(Pending { changes: 0, since: Instant::now() });
                        }
                    }
                    Err(RecvError::Closed) => return,
                }
            }
            request = requests.recv() => {
                let (Some(this), Some((tenant_id, scope))) = (architect.upgrade(), request) else {
                    return;
                };
                spawn_refresh(&this, tenant_id, scope);
            }
            _ = ticker.tick() => {
                let Some(this) = architect.upgrade() else { return };
                let now = Instant::now();
                let due: Vec<(String, Scope)> = pending
                    .iter()
                    .filter(|((_, scope), entry)| {
                        let interval = this.config.summaries.triggers(scope.layer).interval_secs;
                        interval > 0 && now.duration_since(entry.since) >= Duration::from_secs(interval)
                    })
                    .map(|(key, _)| key.clone())
                    .collect();
                for key in due {
                    pending.remove(&key);
                    spawn_refresh(&this, key.0, key.1);
                }
            }
        }
    }
}

fn on_change(
    this: &Arc<ContextArchitect>,
    pending: &mut HashMap<(String, Scope), Pending>,
    change: MemoryChange,
) {
    let triggers = this.config.summaries.triggers(change.scope.layer);
    let after = triggers.after_changes;
    if after == 0 && triggers.interval_secs == 0 {
        return;
    }
    let key = (change.tenant_id, change.scope);
    let entry = pending.entry(key.clone()).or_insert(Pending {
        changes: 0,
        since: Instant::now(),
    });
    entry.changes += 1;
    if after > 0 && entry.changes >= after {
        pending.remove(&key);
        spawn_refresh(this, key.0, key.1);
    }
}

fn spawn_refresh(this: &Arc<ContextArchitect>, tenant_id: String, scope: Scope) {
    let this = this.clone();
    tokio::spawn(async move {
        let Ok(_permit) = this.background_refreshes.clone().acquire_owned().await else {
            return;
        };
        if let Err(error) = this.refresh_scope(&tenant_id, &scope).await {
            tracing::warn!(tenant = %tenant_id, %scope, %error, "background summary refresh failed");
        }
    });
}

/// The check period: the shortest configured interval, at most [`MAX_TICK`], at least 1 s.
fn tick_period(this: &ContextArchitect) -> Duration {
    let summaries = &this.config.summaries;
    std::iter::once(&summaries.triggers)
        .chain(summaries.layers.values())
        .map(|t| t.interval_secs)
        .filter(|secs| *secs > 0)
        .map(Duration::from_secs)
        .min()
        .unwrap_or(MAX_TICK)
        .clamp(Duration::from_secs(1), MAX_TICK)
}
