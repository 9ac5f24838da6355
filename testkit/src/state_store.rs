//! The contract of [`aeterna_host::StateStore`], as one suite every backend runs: the built-in
//! memory store and the Redis store, each with one line:
//!
//! ```ignore
//! aeterna_testkit::state_store_suite!(
//!     |quota_bytes| async move { MyStore::new(quota_bytes) },
//!     |quota_bytes| async move { /* two handles on one backend */ (a, b) }
//! );
//! ```
//!
//! The first closure builds a store whose per-scope quota is `quota_bytes`; the second builds two
//! `Arc<dyn StateStore>` handles on one shared backend (two connections to one Redis; the same
//! memory store twice), as two hosts see it. Each case uses its own random tenant, so a shared
//! backend (one Redis for many test processes) needs no cleanup between cases. The host cases run
//! the store under the real host with real components, for what the host adds on top: writes
//! reach the store only when the callback returned `ok`, and two hosts committing to one scope at
//! once never leave it over its quota.

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use aeterna_host::state::{StateBatch, StateStore};
use aeterna_host::{CallContext, ExtensionHost, HostConfig, Outcome, QuotaUsage, StateScope};

/// Two handles on one backend, as two hosts hold it.
pub type SharedPair = (Arc<dyn StateStore>, Arc<dyn StateStore>);

/// Generates one `#[tokio::test]` per case of the suite, for the store `make(quota_bytes)` builds.
#[macro_export]
macro_rules! state_store_suite {
    ($make:expr, $make_shared:expr $(,)?) => {
        $crate::state_store_suite!(@shared $make_shared;
            concurrent_commits_through_two_handles_keep_the_quota,
            two_hosts_writing_one_scope_keep_the_quota,
        );
        $crate::state_store_suite!(@cases $make;
            round_trip_counts_key_plus_value,
            scopes_differing_in_any_part_are_isolated,
            past_the_quota_least_recently_used_keys_are_evicted,
            an_entry_larger_than_the_quota_rejects_the_whole_batch,
            entries_are_listed_least_recently_used_first,
            entry_size_does_not_count_as_use,
            deletes_and_clear_release_bytes,
            overwriting_a_key_replaces_its_size,
            the_host_commits_only_what_an_ok_callback_wrote,
        );
    };
    (@shared $make_shared:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                $crate::state_store::$case(|quota: u64| $make_shared(quota)).await;
            }
        )*
    };
    (@cases $make:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() {
                $crate::state_store::$case(|quota: u64| $make(quota)).await;
            }
        )*
    };
}

/// A scope of its own for one case: a random tenant.
fn scope(session: &str, extension: &str) -> StateScope {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    StateScope::new(
        format!("suite-{:016x}", hasher.finish()),
        session,
        extension,
    )
}

fn set(key: &str, value: &[u8]) -> StateBatch {
    StateBatch {
        clear: false,
        writes: vec![(key.to_owned(), Some(value.to_vec()))],
    }
}

async fn keys(store: &dyn StateStore, scope: &StateScope) -> Vec<String> {
    store
        .entries(scope)
        .await
        .expect("entries")
        .into_iter()
        .map(|entry| entry.key)
        .collect()
}

pub async fn round_trip_counts_key_plus_value<S, F>(make: impl Fn(u64) -> F)
where
    S: StateStore,
    F: Future<Output = S>,
{
    let store = make(1000).await;
    let s = scope("s", "ext");
    let usage = store.commit(&s, set("key", b"value")).await.unwrap();
    let expected = QuotaUsage {
        used_bytes: 8,
        quota_bytes: 1000,
        keys: 1,
    };
    assert_eq!(usage, expected);
    assert_eq!(store.usage(&s).await.unwrap(), expected);
    assert_eq!(store.get(&s, "key").await.unwrap(), Some(b"value".to_vec()));
    assert_eq!(store.get(&s, "other").await.unwrap(), None);
    assert_eq!(store.entry_size(&s, "key").await.unwrap(), Some(8));
    assert_eq!(store.quota_bytes(), 1000);
    let empty = scope("never-written", "ext");
    assert_eq!(
        store.usage(&empty).await.unwrap(),
        QuotaUsage {
            used_bytes: 0,
            quota_bytes: 1000,
            keys: 0
        }
    );
}

pub async fn scopes_differing_in_any_part_are_isolated<S, F>(make: impl Fn(u64) -> F)
where
    S: StateStore,
    F: Future<Output = S>,
{
    let store = make(1000).await;
    let base = scope("s", "ext");
    store.commit(&base, set("k", b"mine")).await.unwrap();
    let others = [
        StateScope::new(format!("{}-other", base.tenant), "s", "ext"),
        StateScope::new(base.tenant.clone(), "s2", "ext"),
        StateScope::new(base.tenant.clone(), "s", "ext2"),
    ];
    for other in &others {
        assert_eq!(store.get(other, "k").await.unwrap(), None, "{other:?}");
        assert!(keys(&store, other).await.is_empty(), "{other:?}");
        assert_eq!(store.usage(other).await.unwrap().keys, 0, "{other:?}");
    }
}

pub async fn past_the_quota_least_recently_used_keys_are_evicted<S, F>(make: impl Fn(u64) -> F)
where
    S: StateStore,
    F: Future<Output = S>,
{
    let store = make(30).await;
    let s = scope("s", "ext");
    for key in ["k1", "k2", "k3"] {
        store.commit(&s, set(key, &[0; 8])).await.unwrap(); // 10 bytes each
    }
    // Reading k1 makes k2 the least recently used.
    assert!(store.get(&s, "k1").await.unwrap().is_some());
    let usage = store.commit(&s, set("k4", &[0; 8])).await.unwrap();
    assert_eq!(usage.used_bytes, 30);
    assert_eq!(store.get(&s, "k2").await.unwrap(), None);
    for key in ["k1", "k3", "k4"] {
        assert!(
            store.get(&s, key).await.unwrap().is_some(),
            "{key} survives"
        );
    }
}

pub async fn an_entry_larger_than_the_quota_rejects_the_whole_batch<S, F>(make: impl Fn(u64) -> F)
where
    S: StateStore,
    F: Future<Output = S>,
{
    let store = make(10).await;
    let s = scope("s", "ext");
    let batch = StateBatch {
        clear: false,
        writes: vec![
            ("small".into(), Some(vec![1])),
            ("big".into(), Some(vec![0; 20])),
        ],
    };
    assert!(store.commit(&s, batch).await.is_err());
    assert_eq!(
        store.get(&s, "small").await.unwrap(),
        None,
        "nothing applied"
    );
}

pub async fn entries_are_listed_least_recently_used_first<S, F>(make: impl Fn(u64) -> F)
where
    S: StateStore,
    F: Future<Output = S>,
{
    let store = make(1000).await;
    let s = scope("s", "ext");
    for key in ["a", "b", "c"] {
        store.commit(&s, set(key, b"1")).await.unwrap();
    }
    store.get(&s, "a").await.unwrap();
    assert_eq!(keys(&store, &s).await, ["b", "c", "a"]);
    let sizes: Vec<u64> = store
        .entries(&s)
        .await
        .unwrap()
        .into_iter()
        .map(|entry| entry.size)
        .collect();
    assert_eq!(sizes, [2, 2, 2]);
}

pub async fn entry_size_does_not_count_as_use<S, F>(make: impl Fn(u64) -> F)
where
    S: StateStore,
    F: Future<Output = S>,
{
    let store = make(1000).await;
    let s = scope("s", "ext");
    for key in ["a", "b"] {
        store.commit(&s, set(key, b"1")).await.unwrap();
    }
    assert_eq!(store.entry_size(&s, "a").await.unwrap(), Some(2));
    assert_eq!(
        keys(&store, &s).await,
        ["a", "b"],
        "a is still the least recent"
    );
}

pub async fn deletes_and_clear_release_bytes<S, F>(make: impl Fn(u64) -> F)
where
    S: StateStore,
    F: Future<Output = S>,
{
    let store = make(1000).await;
    let s = scope("s", "ext");
    store.commit(&s, set("a", b"123")).await.unwrap();
    store.commit(&s, set("b", b"123")).await.unwrap();
    let delete = StateBatch {
        clear: false,
        writes: vec![("a".into(), None)],
    };
    assert_eq!(store.commit(&s, delete).await.unwrap().used_bytes, 4);
    let clear_then_set = StateBatch {
        clear: true,
        writes: vec![("c".into(), Some(vec![1]))],
    };
    assert_eq!(
        store.commit(&s, clear_then_set).await.unwrap(),
        QuotaUsage {
            used_bytes: 2,
            quota_bytes: 1000,
            keys: 1
        }
    );
    assert_eq!(keys(&store, &s).await, ["c"]);
}

pub async fn overwriting_a_key_replaces_its_size<S, F>(make: impl Fn(u64) -> F)
where
    S: StateStore,
    F: Future<Output = S>,
{
    let store = make(1000).await;
    let s = scope("s", "ext");
    store.commit(&s, set("k", &[0; 100])).await.unwrap();
    let usage = store.commit(&s, set("k", &[0; 10])).await.unwrap();
    assert_eq!((usage.used_bytes, usage.keys), (11, 1));
}

pub async fn the_host_commits_only_what_an_ok_callback_wrote<S, F>(make: impl Fn(u64) -> F)
where
    S: StateStore,
    F: Future<Output = S>,
{
    let store: Arc<dyn StateStore> = Arc::new(make(1024 * 1024).await);
    let dir = crate::ExtensionsDir::new().unwrap();
    dir.add_test_guest(
        "probe",
        "probe",
        Some("id = \"probe\"\n[config]\nmark = \"p\"\n"),
    )
    .unwrap();
    let config = HostConfig {
        cache_dir: Some(crate::target_dir().join("state-store-suite-compile-cache")),
        ..HostConfig::default()
    };
    let host = ExtensionHost::with_state_store(config, store.clone()).unwrap();
    let report = host.load_dir(dir.path()).await.unwrap();
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    let s = scope("session", "probe");
    let ctx = CallContext::new(s.tenant.clone(), "session");

    // The probe counts its calls in state: a faulting call's increment is discarded.
    let run = host.run_plain_text(&ctx, "x".into()).await.unwrap();
    assert_eq!(run.output, "x[p:1]");
    let run = host.run_plain_text(&ctx, "FAIL".into()).await.unwrap();
    assert!(run.report.rows[0].outcome.fault().is_some());
    assert_eq!(store.get(&s, "calls").await.unwrap(), Some(b"1".to_vec()));
    let run = host.run_plain_text(&ctx, "y".into()).await.unwrap();
    assert_eq!(
        run.output, "y[p:2]",
        "the faulting call's write never landed"
    );
}

/// What the scope holds agrees with its usage, and the usage is within the quota.
async fn assert_consistent(store: &dyn StateStore, s: &StateScope) -> QuotaUsage {
    let usage = store.usage(s).await.unwrap();
    let entries = store.entries(s).await.unwrap();
    let sum: u64 = entries.iter().map(|entry| entry.size).sum();
    assert_eq!(usage.used_bytes, sum, "usage agrees with the entries");
    assert_eq!(usage.keys as usize, entries.len());
    assert!(
        usage.used_bytes <= usage.quota_bytes,
        "over the quota: {usage:?}"
    );
    usage
}

pub async fn concurrent_commits_through_two_handles_keep_the_quota<F>(make: impl Fn(u64) -> F)
where
    F: Future<Output = SharedPair>,
{
    const QUOTA: u64 = 2_000;
    let (a, b) = make(QUOTA).await;
    let s = scope("s", "ext");
    let mut tasks = tokio::task::JoinSet::new();
    for writer in 0..8u64 {
        let store = if writer % 2 == 0 {
            a.clone()
        } else {
            b.clone()
        };
        let s = s.clone();
        tasks.spawn(async move {
            for round in 0..25u64 {
                // Overlapping keys of varied sizes, some deletes and an occasional clear: every
                // commit goes past the quota from some writer's point of view.
                let writes = (0..4u64)
                    .map(|i| {
                        let key = format!("k{}", (writer * 7 + round * 3 + i) % 23);
                        let value = (round + i) % 5 != 0;
                        (
                            key,
                            value.then(|| {
                                vec![
                                    writer as u8;
                                    50 + ((writer * 131 + round * 17 + i * 29) % 400) as usize
                                ]
                            }),
                        )
                    })
                    .collect();
                let batch = StateBatch {
                    clear: round % 11 == 10,
                    writes,
                };
                let usage = store.commit(&s, batch).await.unwrap();
                assert!(usage.used_bytes <= QUOTA, "{usage:?}");
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
    let from_a = assert_consistent(&*a, &s).await;
    let from_b = assert_consistent(&*b, &s).await;
    assert_eq!(from_a, from_b, "both handles see one scope");
    assert!(from_a.keys > 0);
}

pub async fn two_hosts_writing_one_scope_keep_the_quota<F>(make: impl Fn(u64) -> F)
where
    F: Future<Output = SharedPair>,
{
    // The hostile guest's `state-abuse` writes 2 MiB of 100 KiB values into a 1 MiB quota, so
    // each host's overlay evicts from what it read, while the other host commits meanwhile.
    let (a, b) = make(1024 * 1024).await;
    let dir = crate::ExtensionsDir::new().unwrap();
    dir.add_test_guest(
        "hostile",
        "hostile",
        Some("id = \"hostile\"\n[config]\nmode = \"state-abuse\"\n"),
    )
    .unwrap();
    let mut hosts = Vec::new();
    for store in [a.clone(), b.clone()] {
        let config = HostConfig {
            cache_dir: Some(crate::target_dir().join("state-store-suite-compile-cache")),
            ..HostConfig::default()
        };
        let host = Arc::new(ExtensionHost::with_state_store(config, store).unwrap());
        let report = host.load_dir(dir.path()).await.unwrap();
        assert!(report.rejected.is_empty(), "{:?}", report.rejected);
        hosts.push(host);
    }
    let s = scope("session", "hostile");
    let mut runs = tokio::task::JoinSet::new();
    for round in 0..6 {
        let host = hosts[round % 2].clone();
        let ctx = CallContext::new(s.tenant.clone(), "session");
        runs.spawn(async move { host.run_plain_text(&ctx, "in".into()).await.unwrap() });
    }
    while let Some(run) = runs.join_next().await {
        let run = run.unwrap();
        assert_eq!(run.report.rows[0].outcome, Outcome::Ok, "{:?}", run.report);
        assert!(run.output.contains("keys=10"), "{}", run.output);
    }
    let usage = assert_consistent(&*a, &s).await;
    assert_eq!(usage, assert_consistent(&*b, &s).await);
    assert_eq!(usage.keys, 10, "the ten most recent chunks fit: {usage:?}");
    assert!(
        a.get(&s, "before-fault").await.unwrap().is_none(),
        "the guest deletes its marker on the ok path"
    );
}
