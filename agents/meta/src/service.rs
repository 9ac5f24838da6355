//! [`MetaService`]: the Meta-Agent's entry point, used by the MCP tools. Loops are stored
//! rows; a command-driven loop also has a background task. Every read goes through the
//! caller's tenant, so another tenant's loop is "not found" like a missing one.
//!
//! Restart recovery: at start, a command-driven loop found `queued`/`running` is marked
//! `failed` ("server restarted while the loop was running"): its processes died with the
//! server, and running a tenant's commands again unasked could repeat their side effects. A
//! client-driven loop resumes: all its state is in the row, and the agent's next
//! `meta_loop_step` continues it.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use aeterna_context::ContextArchitect;
use aeterna_hindsight::HindsightService;
use aeterna_memory::{Identity, MemoryService, Timestamp, now_millis};
use aeterna_notes::NotesService;
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::analysis::{Analyzer, clip};
use crate::answer::StepAnswer;
use crate::config::MetaConfig;
use crate::error::{MetaError, Result};
use crate::learning::Learning;
use crate::loops::{PhaseOutcome, failing_tests};
use crate::metrics::MetaMetrics;
use crate::model::{
    BuildReport, Driver, LoopCommands, LoopLimits, LoopRecord, LoopState, LoopSummary, Phase,
    TestReport, TestStatus,
};
use crate::runner;
use crate::store::{LoopStore, StoredLoop};

/// The reason a command-driven loop gets when a restart finds it running.
pub const RESTART_REASON: &str = "server restarted while the loop was running";

/// Start a loop.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StartRequest {
    pub task: String,
    /// Command-driven when given; client-driven otherwise.
    pub commands: Option<CommandsRequest>,
    pub max_iterations: Option<u32>,
    pub build_timeout_ms: Option<u64>,
    pub test_timeout_ms: Option<u64>,
    pub loop_timeout_ms: Option<u64>,
}

/// The allowed commands to run, by name, and where.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandsRequest {
    pub build: Option<String>,
    pub test: String,
    pub working_dir: String,
}

/// A phase's outcome, reported by the agent (client-driven).
#[derive(Debug, Clone, PartialEq)]
pub struct StepRequest {
    pub loop_id: Uuid,
    pub phase: Phase,
    pub success: bool,
    pub output: String,
    pub duration_ms: u64,
    pub failing_tests: Vec<String>,
    pub notes: Option<String>,
    pub tokens_used: u64,
}

/// A page of loops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoopList {
    /// Newest first.
    pub loops: Vec<LoopSummary>,
}

/// An active loop, in memory.
struct Active {
    tenant: String,
    driver: Driver,
    deadline_at: Timestamp,
    /// Serialises the steps of one client-driven loop.
    lock: Arc<tokio::sync::Mutex<()>>,
    cancel: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

pub struct MetaService {
    pub(crate) config: MetaConfig,
    pub(crate) store: LoopStore,
    pub(crate) learning: Learning,
    pub(crate) metrics: MetaMetrics,
    pub(crate) analyzer: Option<Arc<dyn Analyzer>>,
    pub(crate) context: Arc<ContextArchitect>,
    pub(crate) memory: Arc<MemoryService>,
    active: Mutex<HashMap<Uuid, Active>>,
    changes: watch::Sender<u64>,
    recovered: watch::Sender<bool>,
    closed: CancellationToken,
}

impl MetaService {
    /// Starts the agent on the deployment's database, and (in the background) recovers the
    /// loops an earlier run left active. Call inside a Tokio runtime.
    pub fn start(
        config: MetaConfig,
        memory: Arc<MemoryService>,
        hindsight: Arc<HindsightService>,
        notes: Arc<NotesService>,
        context: Arc<ContextArchitect>,
        analyzer: Option<Arc<dyn Analyzer>>,
    ) -> Result<Arc<Self>> {
        config.validate().map_err(MetaError::invalid)?;
        let db = memory.database().clone();
        let service = Arc::new(MetaService {
            config,
            store: LoopStore::new(db),
            learning: Learning { hindsight, notes },
            metrics: MetaMetrics::new(),
            analyzer,
            context,
            memory,
            active: Mutex::new(HashMap::new()),
            changes: watch::channel(0).0,
            recovered: watch::channel(false).0,
            closed: CancellationToken::new(),
        });
        let recovering = service.clone();
        tokio::spawn(async move {
            if let Err(error) = recovering.recover().await {
                tracing::error!(%error, "cannot recover the meta-loops of an earlier run");
            }
            recovering.recovered.send_replace(true);
        });
        Ok(service)
    }

    pub fn config(&self) -> &MetaConfig {
        &self.config
    }

    pub fn metrics(&self) -> &MetaMetrics {
        &self.metrics
    }

    async fn ready(&self) {
        let mut ready = self.recovered.subscribe();
        let _ = ready.wait_for(|done| *done).await;
    }

    /// Fails the command-driven loops an earlier run left running (their commands died with
    /// it) and takes the client-driven ones back. On a shared database another instance may
    /// still be running a command-driven loop: it is failed here only once past its deadline.
    async fn recover(&self) -> Result<()> {
        let shared = self.memory.database().shared();
        for StoredLoop {
            identity,
            mut record,
        } in self.store.unfinished().await?
        {
            match record.driver {
                Driver::Command if shared && record.deadline_at > now_millis() => {}
                Driver::Command => {
                    self.finish(
                        &identity,
                        &mut record,
                        LoopState::Failed,
                        RESTART_REASON.to_owned(),
                        None,
                        &[],
                    )
                    .await;
                    self.save(&identity, &record).await;
                    tracing::info!(loop_id = %record.loop_id, "meta-loop marked failed: {RESTART_REASON}");
                }
                Driver::Client => {
                    self.active.lock().insert(
                        record.loop_id,
                        Active {
                            tenant: identity.tenant_id.clone(),
                            driver: Driver::Client,
                            deadline_at: record.deadline_at,
                            lock: Arc::default(),
                            cancel: CancellationToken::new(),
                            task: None,
                        },
                    );
                }
            }
        }
        Ok(())
    }

    pub(crate) fn notify(&self) {
        self.changes.send_modify(|version| *version += 1);
    }

    pub(crate) fn deactivate(&self, id: Uuid) {
        self.active.lock().remove(&id);
    }

    /// Redacts and caps a phase's output: (kept, bytes omitted).
    pub(crate) fn keep_output(&self, output: &str) -> (String, u64) {
        let redacted = aeterna_redact::redact(output);
        runner::cap_text(redacted.text(), self.config.max_output_bytes)
    }

    fn limits(&self, request: &StartRequest) -> Result<LoopLimits> {
        let config = &self.config;
        let max_iterations = request.max_iterations.unwrap_or(config.default_iterations);
        if max_iterations == 0 || max_iterations > config.max_iterations {
            return Err(MetaError::invalid(format!(
                "`max_iterations` is {max_iterations}; it must be 1..={} (meta.max_iterations)",
                config.max_iterations
            )));
        }
        let within = |argument: &str, value: Option<u64>, default: u64, max: u64, key: &str| {
            let value = value.unwrap_or(default);
            if value == 0 || value > max {
                Err(MetaError::invalid(format!(
                    "`{argument}` is {value}; it must be 1..={max} ({key})"
                )))
            } else {
                Ok(value)
            }
        };
        Ok(LoopLimits {
            max_iterations,
            build_timeout_ms: within(
                "build_timeout_ms",
                request.build_timeout_ms,
                config.build_timeout_ms,
                config.max_phase_timeout_ms,
                "meta.max_phase_timeout_ms",
            )?,
            test_timeout_ms: within(
                "test_timeout_ms",
                request.test_timeout_ms,
                config.test_timeout_ms,
                config.max_phase_timeout_ms,
                "meta.max_phase_timeout_ms",
            )?,
            loop_timeout_ms: within(
                "loop_timeout_ms",
                request.loop_timeout_ms,
                config.loop_timeout_ms,
                config.max_loop_timeout_ms,
                "meta.max_loop_timeout_ms",
            )?,
        })
    }

    /// Starts a loop. Returns at once: a command-driven loop runs in the background; a
    /// client-driven one waits for the agent's first `step`.
    pub async fn start_loop(
        self: &Arc<Self>,
        who: &Identity,
        request: StartRequest,
    ) -> Result<StepAnswer> {
        self.ready().await;
        if self.closed.is_cancelled() {
            return Err(MetaError::ShuttingDown);
        }
        let task = request.task.trim().to_owned();
        if task.is_empty() {
            return Err(MetaError::invalid(
                "`task` is empty; say what the loop should achieve (\"make the parser tests pass\")",
            ));
        }
        if task.len() > self.config.max_task_bytes {
            return Err(MetaError::invalid(format!(
                "`task` is {} bytes; the limit is {} (meta.max_task_bytes): shorten it",
                task.len(),
                self.config.max_task_bytes
            )));
        }
        let limits = self.limits(&request)?;
        let prepared = match &request.commands {
            None => None,
            Some(commands) => {
                let dir = runner::allowed_working_dir(&self.config, &commands.working_dir)?;
                let build = commands
                    .build
                    .as_deref()
                    .map(|name| runner::allowed_command(&self.config, "build_command", name, &dir))
                    .transpose()?;
                let test =
                    runner::allowed_command(&self.config, "test_command", &commands.test, &dir)?;
                Some((build, test, dir))
            }
        };
        self.expire_client_loops(&who.tenant_id).await;

        let now = now_millis();
        let record = LoopRecord {
            loop_id: Uuid::now_v7(),
            task,
            driver: if prepared.is_some() {
                Driver::Command
            } else {
                Driver::Client
            },
            state: if prepared.is_some() {
                LoopState::Queued
            } else {
                LoopState::Running
            },
            phase: Some(Phase::Build),
            iteration: 1,
            limits,
            commands: prepared.as_ref().map(|(build, test, dir)| LoopCommands {
                build: build.as_ref().map(|b| b.name.clone()),
                test: test.name.clone(),
                working_dir: dir.display().to_string(),
            }),
            iterations: Vec::new(),
            last_build: None,
            last_test: None,
            last_improve: None,
            applied_resolutions: Vec::new(),
            stored_signatures: Vec::new(),
            note_id: None,
            reason: None,
            escalation_report: None,
            learning_errors: Vec::new(),
            created_at: now,
            updated_at: now,
            deadline_at: now + limits.loop_timeout_ms as i64,
            finished_at: None,
        };
        let cancel = CancellationToken::new();
        {
            let mut active = self.active.lock();
            let count = active
                .values()
                .filter(|a| a.tenant == who.tenant_id)
                .count();
            if count >= self.config.max_active_loops_per_tenant {
                return Err(MetaError::TooManyLoops {
                    active: count,
                    limit: self.config.max_active_loops_per_tenant,
                });
            }
            active.insert(
                record.loop_id,
                Active {
                    tenant: who.tenant_id.clone(),
                    driver: record.driver,
                    deadline_at: record.deadline_at,
                    lock: Arc::default(),
                    cancel: cancel.clone(),
                    task: None,
                },
            );
        }
        if let Err(error) = self.store.insert(who, &record).await {
            self.deactivate(record.loop_id);
            return Err(error);
        }
        self.metrics.started(record.driver);
        if let Some((build, test, _)) = prepared {
            let task =
                tokio::spawn(
                    self.clone()
                        .drive(who.clone(), record.clone(), build, test, cancel),
                );
            if let Some(active) = self.active.lock().get_mut(&record.loop_id) {
                active.task = Some(task);
            }
        }
        Ok(self.answer(who, record, Vec::new()).await)
    }

    /// Times out this tenant's client-driven loops past their deadline (they hold a slot
    /// until then).
    async fn expire_client_loops(&self, tenant: &str) {
        let now = now_millis();
        let overdue: Vec<Uuid> = self
            .active
            .lock()
            .iter()
            .filter(|(_, a)| {
                a.tenant == tenant && a.driver == Driver::Client && a.deadline_at <= now
            })
            .map(|(id, _)| *id)
            .collect();
        for id in overdue {
            if let Ok(Some(mut stored)) = self.store.get(tenant, id).await
                && !stored.record.state.is_final()
            {
                self.time_out(&stored.identity.clone(), &mut stored.record)
                    .await;
            }
            self.deactivate(id);
        }
    }

    async fn time_out(&self, who: &Identity, record: &mut LoopRecord) {
        let reason = format!(
            "the loop's cumulative timeout ({} ms) passed",
            record.limits.loop_timeout_ms
        );
        self.finish(who, record, LoopState::TimedOut, reason, None, &[])
            .await;
        self.save(who, record).await;
    }

    /// A loop of the caller's tenant whose identity the caller's grants reach; loops of scopes
    /// they do not reach are indistinguishable from loops that do not exist.
    async fn load(&self, who: &Identity, id: Uuid) -> Result<StoredLoop> {
        self.store
            .get(&who.tenant_id, id)
            .await?
            .filter(|stored| who.reaches_identity(&stored.identity))
            .ok_or_else(|| MetaError::NotFound(id.to_string()))
    }

    fn loop_lock(&self, id: Uuid) -> Option<Arc<tokio::sync::Mutex<()>>> {
        self.active.lock().get(&id).map(|a| a.lock.clone())
    }

    /// Applies the agent's report of a phase (client-driven) and answers with what to do next.
    pub async fn step(&self, who: &Identity, request: StepRequest) -> Result<StepAnswer> {
        self.ready().await;
        let id = request.loop_id;
        let lock = self.loop_lock(id);
        let _guard = match &lock {
            Some(lock) => Some(lock.lock().await),
            None => None,
        };
        let StoredLoop {
            identity,
            mut record,
        } = self.load(who, id).await?;
        if record.driver == Driver::Command {
            return Err(MetaError::invalid(format!(
                "`loop_id` {id} runs its commands on the server; follow it with \
                 meta_loop_status instead of reporting steps"
            )));
        }
        if record.state.is_final() {
            return Err(MetaError::invalid(format!(
                "`loop_id` {id} has ended ({}); start a new loop with meta_loop_start",
                record.state.as_str()
            )));
        }
        if record.deadline_at <= now_millis() {
            self.time_out(&identity, &mut record).await;
            self.deactivate(id);
            return Ok(self.answer(who, record, Vec::new()).await);
        }
        let expected = record.phase.unwrap_or(Phase::Build);
        let accepted = match expected {
            Phase::Build => matches!(request.phase, Phase::Build | Phase::Test),
            other => request.phase == other,
        };
        if !accepted || request.phase == Phase::Improve {
            return Err(MetaError::invalid(format!(
                "`phase` is `{}`, but loop {id} expects `{}` next (iteration {}); IMPROVE is \
                 the server's answer, not a phase to report",
                request.phase.as_str(),
                expected.as_str(),
                record.iteration
            )));
        }
        let (output, omitted) = self.keep_output(&request.output);
        let outcome = match request.phase {
            Phase::Build => PhaseOutcome::Build(BuildReport {
                iteration: record.iteration,
                success: request.success,
                exit_code: None,
                timed_out: false,
                output,
                output_omitted_bytes: omitted,
                duration_ms: request.duration_ms,
                notes: request.notes.map(|n| self.keep_output(&clip(&n, 2_000)).0),
                tokens_used: request.tokens_used,
            }),
            _ => PhaseOutcome::Test(TestReport {
                iteration: record.iteration,
                status: if request.success {
                    TestStatus::Passed
                } else {
                    TestStatus::Failed
                },
                exit_code: None,
                failing_tests: if request.success {
                    Vec::new()
                } else {
                    failing_tests(&output, &request.failing_tests)
                },
                output,
                output_omitted_bytes: omitted,
                duration_ms: request.duration_ms,
            }),
        };
        let hits = self.advance(&identity, &mut record, outcome, None).await;
        self.store.save(&who.tenant_id, &record).await?;
        self.notify();
        if record.state.is_final() {
            self.deactivate(id);
        }
        Ok(self.answer(who, record, hits).await)
    }

    /// The loop now.
    pub async fn status(&self, who: &Identity, id: Uuid) -> Result<LoopRecord> {
        self.ready().await;
        let StoredLoop {
            identity,
            mut record,
        } = self.load(who, id).await?;
        if record.driver == Driver::Client
            && !record.state.is_final()
            && record.deadline_at <= now_millis()
        {
            let lock = self.loop_lock(id);
            let _guard = match &lock {
                Some(lock) => Some(lock.lock().await),
                None => None,
            };
            self.time_out(&identity, &mut record).await;
            self.deactivate(id);
        }
        Ok(record)
    }

    /// Waits up to `wait` for the loop to end, calling `on_update` each time it changes;
    /// returns early when `cancel` fires (the request was cancelled).
    pub async fn wait<F, Fut>(
        &self,
        who: &Identity,
        id: Uuid,
        wait: Duration,
        cancel: &CancellationToken,
        mut on_update: F,
    ) -> Result<LoopRecord>
    where
        F: FnMut(LoopRecord) -> Fut,
        Fut: Future<Output = ()>,
    {
        if wait.as_millis() > u128::from(self.config.max_wait_ms) {
            return Err(MetaError::invalid(format!(
                "`wait_ms` is {}; the limit is {} (meta.max_wait_ms): poll again instead",
                wait.as_millis(),
                self.config.max_wait_ms
            )));
        }
        let deadline = tokio::time::Instant::now() + wait;
        let mut changes = self.changes.subscribe();
        let mut seen = None;
        loop {
            changes.mark_unchanged();
            let record = self.status(who, id).await?;
            let version = (
                record.updated_at,
                record.state,
                record.phase,
                record.iteration,
            );
            if seen.is_some() && seen != Some(version) {
                on_update(record.clone()).await;
            }
            seen = Some(version);
            if record.state.is_final() || tokio::time::Instant::now() >= deadline {
                return Ok(record);
            }
            tokio::select! {
                _ = changes.changed() => {}
                _ = tokio::time::sleep_until(deadline) => {}
                _ = cancel.cancelled() => return Ok(record),
                _ = self.closed.cancelled() => return Ok(record),
            }
        }
    }

    /// Cancels a loop (a finished loop is returned as it is).
    pub async fn cancel(&self, who: &Identity, id: Uuid) -> Result<LoopRecord> {
        self.ready().await;
        let StoredLoop {
            identity,
            mut record,
        } = self.load(who, id).await?;
        if record.state.is_final() {
            return Ok(record);
        }
        let (driver, token, lock) = match self.active.lock().get(&id) {
            Some(active) => (
                active.driver,
                Some(active.cancel.clone()),
                Some(active.lock.clone()),
            ),
            None => (record.driver, None, None),
        };
        if driver == Driver::Command
            && let Some(token) = token
        {
            token.cancel();
            // The task kills the phase's process group and records the end.
            let mut changes = self.changes.subscribe();
            let give_up = tokio::time::Instant::now() + Duration::from_secs(10);
            loop {
                changes.mark_unchanged();
                let record = self.load(who, id).await?.record;
                if record.state.is_final() || tokio::time::Instant::now() >= give_up {
                    return Ok(record);
                }
                tokio::select! {
                    _ = changes.changed() => {}
                    _ = tokio::time::sleep_until(give_up) => {}
                }
            }
        }
        let _guard = match &lock {
            Some(lock) => Some(lock.lock().await),
            None => None,
        };
        let fresh = self.load(who, id).await?;
        record = fresh.record;
        if !record.state.is_final() {
            self.finish(
                &identity,
                &mut record,
                LoopState::Cancelled,
                "cancelled with meta_loop_cancel".into(),
                None,
                &[],
            )
            .await;
            self.store.save(&who.tenant_id, &record).await?;
            self.notify();
        }
        self.deactivate(id);
        Ok(record)
    }

    /// The caller's loops, newest first.
    pub async fn list(
        &self,
        who: &Identity,
        state: Option<LoopState>,
        limit: usize,
    ) -> Result<LoopList> {
        self.ready().await;
        if limit == 0 || limit > self.config.max_listed {
            return Err(MetaError::invalid(format!(
                "`limit` is {limit}; it must be 1..={} (meta.max_listed)",
                self.config.max_listed
            )));
        }
        let loops = self
            .store
            .list(&who.tenant_id, state, limit, |identity| {
                who.reaches_identity(identity)
            })
            .await?;
        Ok(LoopList {
            loops: loops.iter().map(LoopSummary::from).collect(),
        })
    }

    /// Stops every loop task without recording an end (their process groups are killed):
    /// the next start finds them running and marks them failed, as after a crash. Returns once
    /// the tasks are gone.
    pub async fn shutdown(&self) {
        self.closed.cancel();
        let tasks: Vec<_> = self
            .active
            .lock()
            .drain()
            .filter_map(|(_, active)| active.task)
            .collect();
        for task in tasks {
            task.abort();
            let _ = task.await;
        }
    }
}
