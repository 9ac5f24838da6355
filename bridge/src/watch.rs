//! Hot reload: the extensions directory is watched (`notify`) and reloaded after a quiet
//! period, so a component written in several steps is loaded once, complete.
//!
//! The `notify` callback only wakes the reload task (a [`tokio::sync::Notify`] holds at most
//! one wake-up, so a burst of file events costs nothing). The task waits until no event arrived
//! for `debounce` (at most `max_delay` after the first one) and calls
//! [`Extensions::reload`]: compilation runs there, never on a tool call, and chains keep the
//! previous registry snapshot until the new one is swapped in. A directory that does not exist
//! yet is retried every second.

use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio::sync::Notify;

use crate::extensions::Extensions;

/// Quiet time after the last file event before reloading.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(100);
/// A directory that keeps changing is still reloaded this long after the first event.
const MAX_DELAY: Duration = Duration::from_secs(2);
/// How often a missing directory is looked for.
const RETRY_WATCH: Duration = Duration::from_secs(1);

/// Watches the directory of `extensions` until dropped.
pub struct DirWatcher {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for DirWatcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl DirWatcher {
    /// Starts watching (and loads the directory once the watch is in place, so no change made
    /// between the first load and the watch is missed). Needs a Tokio runtime.
    pub fn start(extensions: Arc<Extensions>, debounce: Duration) -> Self {
        let task = tokio::spawn(watch_loop(extensions, debounce));
        Self { task }
    }
}

async fn watch_loop(extensions: Arc<Extensions>, debounce: Duration) {
    let changed = Arc::new(Notify::new());
    let mut reported_missing = false;
    // The watcher lives as long as this task.
    let _watcher = loop {
        match watch(&extensions, &changed) {
            Ok(watcher) => break watcher,
            Err(error) => {
                if !reported_missing {
                    tracing::error!(
                        dir = %extensions.dir().display(),
                        %error,
                        "cannot watch the extensions directory; retrying every second until it exists"
                    );
                    // Records the directory error for extensions_list.
                    extensions.reload().await;
                    reported_missing = true;
                }
                tokio::time::sleep(RETRY_WATCH).await;
            }
        }
    };
    extensions.reload().await;
    loop {
        changed.notified().await;
        let deadline = tokio::time::Instant::now() + MAX_DELAY;
        // Quiet period: every further event restarts it, up to the deadline.
        while tokio::time::timeout_at(
            deadline.min(tokio::time::Instant::now() + debounce),
            changed.notified(),
        )
        .await
        .is_ok()
        {}
        extensions.reload().await;
    }
}

fn watch(
    extensions: &Extensions,
    changed: &Arc<Notify>,
) -> notify::Result<notify::RecommendedWatcher> {
    let changed = changed.clone();
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event) if is_relevant(&event) => changed.notify_one(),
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(%error, "extensions directory watch error; reloading");
                changed.notify_one();
            }
        })?;
    watcher.watch(extensions.dir(), RecursiveMode::NonRecursive)?;
    tracing::info!(dir = %extensions.dir().display(), "watching the extensions directory");
    Ok(watcher)
}

/// Component and manifest changes; reads and metadata-only changes are not.
fn is_relevant(event: &notify::Event) -> bool {
    use notify::EventKind;
    let kind_matters = matches!(
        event.kind,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any
    ) && !matches!(
        event.kind,
        EventKind::Modify(notify::event::ModifyKind::Metadata(_))
    );
    kind_matters
        && (event.paths.is_empty()
            || event.paths.iter().any(|path| {
                path.extension()
                    .is_some_and(|ext| ext == "wasm" || ext == "toml")
            }))
}
