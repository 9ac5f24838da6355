//! The contract of [`aeterna_host::StateStore`], as one suite every backend runs: the built-in
//! memory store, and any other (a Redis store) with one line:
//!
//! ```ignore
//! aeterna_testkit::state_store_suite!(|quota_bytes| async move { MyStore::new(quota_bytes) });
//! ```
//!
//! The closure builds a store whose per-scope quota is `quota_bytes`. Each case uses its own
//! random tenant, so a shared backend (one Redis for many test processes) needs no cleanup
//! between cases. The last case runs the store under the real host with a real component, for
//! what the host adds on top: writes reach the store only when the callback returned `ok`.

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use aeterna_host::state::{StateBatch, StateStore};
use aeterna_host::{CallContext, ExtensionHost, HostConfig, QuotaUsage, StateScope};

/// Generates one `#[tokio::test]` per case of the suite, for the store `make(quota_bytes)` builds.
#[macro_export]
macro_rules! state_store_suite {
    ($make:expr) => {
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
