//! [`KnowledgeService`]: the configured repositories, polled and synced into memory.
//!
//! One background task looks at every repository's branch each `poll_interval_ms`; when its
//! tip moved since the last sync (a pull, a merge, a commit by hand or by us), the branch is
//! read and synced ([`crate::sync`]). git work runs on the blocking pool. A repository that
//! fails (missing, corrupt, over a limit) is reported in its status and retried on the next
//! tick; the others go on.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use aeterna_memory::{MemoryService, now_millis};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::config::{KnowledgeConfig, RepositoryConfig};
use crate::error::{KnowledgeError, Result};
use crate::repo::{KnowledgeRepo, Snapshot};
use crate::sync::{self, SyncReport, SyncTarget};

/// Where one repository stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepositoryStatus {
    /// The commit memory holds, once synced.
    pub synced_commit: Option<String>,
    /// When the last sync finished, in ms since the Unix epoch.
    pub synced_at: Option<i64>,
    pub last_report: Option<SyncReport>,
    /// Why the last attempt failed, until one succeeds.
    pub last_error: Option<String>,
    /// Learned things proposed here since the server started.
    pub captured: u64,
    /// The review branch of the last learned thing proposed here.
    pub last_capture: Option<String>,
    /// Why the last learned thing could not be proposed, until one is.
    pub last_capture_error: Option<String>,
}

pub(crate) struct Repository {
    pub(crate) config: RepositoryConfig,
    pub(crate) repo: Arc<Mutex<KnowledgeRepo>>,
    status: Mutex<RepositoryStatus>,
    /// One sync at a time per repository (the poller and `sync_now`).
    syncing: tokio::sync::Mutex<()>,
}

impl Repository {
    /// Records the outcome of proposing a learned thing here.
    pub(crate) fn record_capture(
        &self,
        outcome: std::result::Result<crate::tools::ProposalReceipt, String>,
    ) {
        let mut status = self.status.lock().expect("status lock");
        match outcome {
            Ok(receipt) => {
                status.captured += 1;
                status.last_capture = Some(receipt.branch);
                status.last_capture_error = None;
            }
            Err(error) => status.last_capture_error = Some(error),
        }
    }
}

/// The knowledge repositories of one server.
pub struct KnowledgeService {
    config: KnowledgeConfig,
    memory: Arc<MemoryService>,
    repositories: Vec<Repository>,
    stop: CancellationToken,
    poller: Mutex<Option<JoinHandle<()>>>,
}

impl KnowledgeService {
    /// Opens (or creates) every configured repository and starts polling them (inside a Tokio
    /// runtime). With no repositories nothing runs.
    pub fn start(config: KnowledgeConfig, memory: Arc<MemoryService>) -> Result<Arc<Self>> {
        config.validate().map_err(KnowledgeError::Invalid)?;
        let mut repositories = Vec::with_capacity(config.repositories.len());
        for repository in &config.repositories {
            let repo =
                KnowledgeRepo::open_or_init(&repository.path, &repository.branch, config.limits())?;
            repositories.push(Repository {
                config: repository.clone(),
                repo: Arc::new(Mutex::new(repo)),
                status: Mutex::new(RepositoryStatus::default()),
                syncing: tokio::sync::Mutex::new(()),
            });
        }
        let service = Arc::new(KnowledgeService {
            config,
            memory,
            repositories,
            stop: CancellationToken::new(),
            poller: Mutex::new(None),
        });
        if !service.repositories.is_empty() {
            let poller = tokio::spawn(Arc::clone(&service).poll());
            *service.poller.lock().expect("poller lock") = Some(poller);
        }
        Ok(service)
    }

    pub(crate) fn memory(&self) -> &MemoryService {
        &self.memory
    }

    pub(crate) fn repositories(&self) -> &[Repository] {
        &self.repositories
    }

    /// Each configured repository's status, in configuration order.
    pub fn status(&self) -> Vec<(RepositoryConfig, RepositoryStatus)> {
        self.repositories
            .iter()
            .map(|repository| {
                let status = repository.status.lock().expect("status lock").clone();
                (repository.config.clone(), status)
            })
            .collect()
    }

    /// Syncs every repository whose tip moved, now; returns what each did (`None`: nothing
    /// new). Errors are also kept in the repository's status.
    pub async fn sync_now(&self) -> Vec<Result<Option<SyncReport>>> {
        let mut results = Vec::with_capacity(self.repositories.len());
        for repository in &self.repositories {
            results.push(self.sync_repository(repository).await);
        }
        results
    }

    /// Stops the poller (a sync in progress finishes first).
    pub async fn shutdown(&self) {
        self.stop.cancel();
        let poller = self.poller.lock().expect("poller lock").take();
        if let Some(poller) = poller {
            let _ = poller.await;
        }
    }

    async fn poll(self: Arc<Self>) {
        let mut tick = tokio::time::interval(Duration::from_millis(self.config.poll_interval_ms));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = self.stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            for repository in &self.repositories {
                let before = repository
                    .status
                    .lock()
                    .expect("status lock")
                    .last_error
                    .clone();
                if let Err(error) = self.sync_repository(repository).await {
                    // Once per distinct failure, not once per poll.
                    if before.as_deref() != Some(error.to_string().as_str()) {
                        tracing::warn!(
                            repository = %repository.config.path.display(),
                            %error,
                            "knowledge sync failed; retried on every poll"
                        );
                    }
                }
            }
        }
    }

    async fn sync_repository(&self, repository: &Repository) -> Result<Option<SyncReport>> {
        let _one_at_a_time = repository.syncing.lock().await;
        let result = self.sync_if_moved(repository).await;
        let mut status = repository.status.lock().expect("status lock");
        match &result {
            Ok(Some(report)) => {
                status.synced_commit = report.commit.clone();
                status.synced_at = Some(now_millis());
                status.last_report = Some(report.clone());
                status.last_error = None;
            }
            Ok(None) => status.last_error = None,
            Err(error) => status.last_error = Some(error.to_string()),
        }
        result
    }

    async fn sync_if_moved(&self, repository: &Repository) -> Result<Option<SyncReport>> {
        // `Some(commit)` once synced; an empty branch (no commit yet) is synced once too.
        let synced = {
            let status = repository.status.lock().expect("status lock");
            status.synced_at.map(|_| status.synced_commit.clone())
        };
        let repo = Arc::clone(&repository.repo);
        let branch = repository.config.branch.clone();
        let snapshot: Option<Snapshot> = blocking(move || {
            let repo = repo.lock().expect("repository lock");
            if synced.is_some() && synced == Some(repo.tip(&branch)?) {
                return Ok(None);
            }
            repo.snapshot().map(Some)
        })
        .await?;
        let Some(snapshot) = snapshot else {
            return Ok(None);
        };
        let target = SyncTarget {
            tenant_id: repository.config.tenant.clone(),
            layer: repository.config.layer,
            scope: repository.config.scope.clone(),
        };
        let report =
            sync::sync_into_memory(&self.memory, &target, &snapshot, self.config.max_items).await?;
        Ok(Some(report))
    }
}

/// Runs git work on the blocking pool.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|error| {
            Err(KnowledgeError::Invalid(format!(
                "the git task stopped: {error}"
            )))
        })
}
