//! The background task that keeps summaries fresh.
//!
//! Writes are counted per (tenant, scope). A scope is refreshed when its count reaches its
//! layer's `after_changes`, or `interval_secs` after its first uncounted write, whichever comes
//! first; and at once when an assembly found it without summaries. A scope refreshed less than
//! `min_gap_secs` ago waits for the gap to end, so a scope under a stream of writes costs one
//! regeneration per gap, not one per `after_changes` writes. Scopes nobody wrote to are never
//! refreshed on the interval: their source hash could not have changed (the data dir has a
//! single writer), so the refresh would be skipped anyway.

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
    /// Due by `after_changes`, held back until the scope's gap ends.
    deferred_until: Option<Instant>,
}

/// The scopes waiting for a refresh, and when each scope was last refreshed by a trigger
/// (kept only while its gap lasts).
#[derive(Default)]
struct Triggers {
    pending: HashMap<(String, Scope), Pending>,
    refreshed: HashMap<(String, Scope), Instant>,
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
    let mut state = Triggers::default();
    loop {
        tokio::select! {
            change = changes.recv() => {
                let Some(this) = architect.upgrade() else { return };
                match change {
                    Ok(change) => on_change(&this, &mut state, change),
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "summary triggers missed change notifications; refreshing hot scopes");
                        for key in this.store.hot_scopes() {
                            state.pending.entry(key).or_insert(Pending {
                                changes: 0,
                                since: Instant::now(),
                                deferred_until: None,
                            });
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
                on_tick(&this, &mut state, Instant::now());
            }
        }
    }
}

/// Refreshes the scopes whose interval has passed or whose gap has ended.
fn on_tick(this: &Arc<ContextArchitect>, state: &mut Triggers, now: Instant) {
    let due: Vec<(String, Scope)> = state
        .pending
        .iter()
        .filter(|((_, scope), entry)| {
            let interval = this.config.summaries.triggers(scope.layer).interval_secs;
            let by_interval =
                interval > 0 && now.duration_since(entry.since) >= Duration::from_secs(interval);
            by_interval || entry.deferred_until.is_some_and(|until| until <= now)
        })
        .map(|(key, _)| key.clone())
        .collect();
    for key in due {
        state.pending.remove(&key);
        refresh(this, state, key, now);
    }
    state.refreshed.retain(|(_, scope), at| {
        let gap = this.config.summaries.triggers(scope.layer).min_gap_secs;
        now.duration_since(*at) < Duration::from_secs(gap)
    });
}

fn on_change(this: &Arc<ContextArchitect>, state: &mut Triggers, change: MemoryChange) {
    let triggers = this.config.summaries.triggers(change.scope.layer);
    let after = triggers.after_changes;
    if after == 0 && triggers.interval_secs == 0 {
        return;
    }
    let now = Instant::now();
    let key = (change.tenant_id, change.scope);
    let entry = state.pending.entry(key.clone()).or_insert(Pending {
        changes: 0,
        since: now,
        deferred_until: None,
    });
    entry.changes += 1;
    if after == 0 || entry.changes < after || entry.deferred_until.is_some() {
        return;
    }
    let gap = Duration::from_secs(triggers.min_gap_secs);
    match state.refreshed.get(&key) {
        Some(&last) if now.duration_since(last) < gap => entry.deferred_until = Some(last + gap),
        _ => {
            state.pending.remove(&key);
            refresh(this, state, key, now);
        }
    }
}

/// Starts a refresh of `key` and remembers when, for its gap.
fn refresh(this: &Arc<ContextArchitect>, state: &mut Triggers, key: (String, Scope), now: Instant) {
    if this.config.summaries.triggers(key.1.layer).min_gap_secs > 0 {
        state.refreshed.insert(key.clone(), now);
    }
    spawn_refresh(this, key.0, key.1);
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

/// The check period: the shortest configured interval or gap, at most [`MAX_TICK`], at least
/// 1 s.
fn tick_period(this: &ContextArchitect) -> Duration {
    let summaries = &this.config.summaries;
    std::iter::once(&summaries.triggers)
        .chain(summaries.layers.values())
        .flat_map(|t| [t.interval_secs, t.min_gap_secs])
        .filter(|secs| *secs > 0)
        .map(Duration::from_secs)
        .min()
        .unwrap_or(MAX_TICK)
        .clamp(Duration::from_secs(1), MAX_TICK)
}
