//! The state store contract, run against the built-in memory store (the suite lives in the
//! testkit so that every backend runs the same cases), and the host against a store that fails
//! or hangs, as a remote store can: the callback that needed it faults (and nothing it wrote is
//! committed), the chain goes on, the host stays up.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use aeterna_host::state::{EntryMeta, StateBatch, StateStoreError};
use aeterna_host::{
    ExtensionHost, FaultKind, MemoryStateStore, Outcome, QuotaUsage, StateConfig, StateScope,
    StateStore,
};
use common::{ExtDir, ctx, load_all, test_config};

fn memory_store(quota_bytes: u64) -> MemoryStateStore {
    MemoryStateStore::new(StateConfig {
        quota_bytes,
        max_total_bytes: 64 * 1024 * 1024,
    })
}

aeterna_testkit::state_store_suite!(
    |quota_bytes| async move { memory_store(quota_bytes) },
    // Two hosts in one process share one memory store.
    |quota_bytes| async move {
        let shared: Arc<dyn StateStore> = Arc::new(memory_store(quota_bytes));
        (shared.clone(), shared)
    }
);

const HEALTHY: u8 = 0;
const FAILING: u8 = 1;
const HANGING: u8 = 2;
const REJECTING_COMMITS: u8 = 3;

/// A memory store whose reads and commits can be made to fail or hang.
struct FlakyStore {
    inner: MemoryStateStore,
    mode: AtomicU8,
}

impl FlakyStore {
    async fn gate(&self) -> Result<(), StateStoreError> {
        match self.mode.load(Ordering::SeqCst) {
            FAILING => Err(StateStoreError::Unavailable("connection refused".into())),
            HANGING => std::future::pending().await,
            _ => Ok(()),
        }
    }
}

#[async_trait::async_trait]
impl StateStore for FlakyStore {
    fn quota_bytes(&self) -> u64 {
        self.inner.quota_bytes()
    }

    async fn get(&self, scope: &StateScope, key: &str) -> Result<Option<Vec<u8>>, StateStoreError> {
        self.gate().await?;
        self.inner.get(scope, key).await
    }

    async fn usage(&self, scope: &StateScope) -> Result<QuotaUsage, StateStoreError> {
        self.gate().await?;
        self.inner.usage(scope).await
    }

    async fn entry_size(
        &self,
        scope: &StateScope,
        key: &str,
    ) -> Result<Option<u64>, StateStoreError> {
        self.gate().await?;
        self.inner.entry_size(scope, key).await
    }

    async fn entries(&self, scope: &StateScope) -> Result<Vec<EntryMeta>, StateStoreError> {
        self.gate().await?;
        self.inner.entries(scope).await
    }

    async fn commit(
        &self,
        scope: &StateScope,
        batch: StateBatch,
    ) -> Result<QuotaUsage, StateStoreError> {
        if self.mode.load(Ordering::SeqCst) == REJECTING_COMMITS {
            return Err(StateStoreError::Unavailable("write timed out".into()));
        }
        self.gate().await?;
        self.inner.commit(scope, batch).await
    }
}

async fn setup(timeout_ms: u64) -> (ExtensionHost, Arc<FlakyStore>, ExtDir) {
    let store = Arc::new(FlakyStore {
        inner: MemoryStateStore::new(StateConfig::default()),
        mode: AtomicU8::new(HEALTHY),
    });
    let host = ExtensionHost::with_state_store(test_config(), store.clone()).unwrap();
    let dir = ExtDir::new();
    dir.add(
        "stateful",
        "probe",
        &format!("id = \"stateful\"\npriority = 1\ntimeout_ms = {timeout_ms}\n[config]\nmark = \"stateful\"\n"),
    );
    dir.add(
        "stateless",
        "echo",
        &format!("id = \"stateless\"\ntimeout_ms = {timeout_ms}"),
    );
    load_all(&host, &dir).await;
    (host, store, dir)
}

async fn calls(store: &FlakyStore) -> Option<Vec<u8>> {
    let scope = StateScope::new("tenant-a", "session-1", "stateful");
    store.inner.get(&scope, "calls").await.unwrap()
}

#[tokio::test]
async fn an_unavailable_store_faults_the_callback_that_needs_it_and_the_chain_goes_on() {
    let (host, store, _dir) = setup(2_000).await;
    store.mode.store(FAILING, Ordering::SeqCst);
    let run = host.run_plain_text(&ctx(), "x".into()).await.unwrap();
    let fault = run.report.rows[0]
        .outcome
        .fault()
        .expect("the stateful probe faults");
    assert_eq!(fault.kind, FaultKind::Host);
    assert!(
        fault.message.contains("connection refused"),
        "{}",
        fault.message
    );
    assert_eq!(
        run.report.rows[1].outcome,
        Outcome::Ok,
        "the stateless extension still runs"
    );
    assert_eq!(run.output, "x");

    store.mode.store(HEALTHY, Ordering::SeqCst);
    let run = host.run_plain_text(&ctx(), "x".into()).await.unwrap();
    assert_eq!(
        run.output, "x[stateful:1]",
        "nothing from the faulted call was committed"
    );
}

#[tokio::test]
async fn a_hanging_store_is_cut_off_after_the_deadline() {
    let (host, store, _dir) = setup(200).await;
    store.mode.store(HANGING, Ordering::SeqCst);
    let started = Instant::now();
    let run = host.run_plain_text(&ctx(), "x".into()).await.unwrap();
    let fault = run.report.rows[0]
        .outcome
        .fault()
        .expect("the stateful probe faults");
    assert_eq!(fault.kind, FaultKind::Timeout, "{}", fault.message);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded: {:?}",
        started.elapsed()
    );
    assert_eq!(run.report.rows[1].outcome, Outcome::Ok);
}

#[tokio::test]
async fn a_failed_commit_turns_success_into_a_fault() {
    let (host, store, _dir) = setup(2_000).await;
    store.mode.store(REJECTING_COMMITS, Ordering::SeqCst);
    let run = host.run_plain_text(&ctx(), "x".into()).await.unwrap();
    let fault = run.report.rows[0]
        .outcome
        .fault()
        .expect("the commit failure is a fault");
    assert_eq!(fault.kind, FaultKind::Host);
    assert!(
        fault.message.contains("could not be committed"),
        "{}",
        fault.message
    );
    assert_eq!(
        run.output, "x",
        "the output of a callback whose state was lost is not used"
    );
    store.mode.store(HEALTHY, Ordering::SeqCst);
    assert_eq!(calls(&store).await, None);
}
