//! Loading, validation, reload/unload and the compile cache, with real components.

use crate::common;

use std::time::Duration;

use aeterna_host::{CallContext, ExtensionHost, HostError, LoadError};
use common::{ExtDir, ctx, guest, host, load_all, test_config};

/// Loads `dir` and returns the rejection message of `file` (which must be the only rejection).
async fn rejection(host: &ExtensionHost, dir: &ExtDir, file: &str) -> (LoadError, String) {
    let mut report = host.load_dir(dir.path()).await.unwrap();
    assert_eq!(report.rejected.len(), 1, "{:?}", report.rejected);
    let (path, error) = report.rejected.remove(0);
    assert_eq!(path, dir.path().join(file));
    let message = HostError::Load {
        path: path.clone(),
        reason: error,
    }
    .to_string();
    let HostError::Load { reason, .. } = host.check_file(&path).await.unwrap_err() else {
        panic!("check_file must report a load error")
    };
    assert!(
        message.starts_with(&path.display().to_string()),
        "the error names the file: {message}"
    );
    (reason, message)
}

#[tokio::test]
async fn garbage_core_modules_and_text_are_rejected_with_clear_errors() {
    let dir = ExtDir::new();
    dir.write(
        "garbage.wasm",
        &[0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8],
    );
    let host = host();
    let (reason, message) = rejection(&host, &dir, "garbage.wasm").await;
    assert!(matches!(reason, LoadError::NotWasm), "{message}");
    assert!(message.contains("not a WebAssembly binary"), "{message}");

    let dir = ExtDir::new();
    dir.write("core.wasm", b"\0asm\x01\0\0\0");
    let (reason, message) = rejection(&host, &dir, "core.wasm").await;
    assert!(matches!(reason, LoadError::CoreModule), "{message}");
    assert!(
        message.contains("core WebAssembly module, not a component"),
        "{message}"
    );

    // WAT text is not accepted either, even though wasmtime could parse it.
    let dir = ExtDir::new();
    dir.write("text.wasm", b"(component)");
    let (reason, _) = rejection(&host, &dir, "text.wasm").await;
    assert!(matches!(reason, LoadError::NotWasm));

    // A component header with a truncated body.
    let dir = ExtDir::new();
    let mut bytes = std::fs::read(guest("probe")).unwrap();
    bytes.truncate(bytes.len() / 2);
    dir.write("truncated.wasm", &bytes);
    let (reason, message) = rejection(&host, &dir, "truncated.wasm").await;
    assert!(matches!(reason, LoadError::Compile(_)), "{message}");
}

#[tokio::test]
async fn a_component_for_another_world_is_not_an_extension() {
    let dir = ExtDir::new();
    dir.add("command", "not-an-extension", "");
    let (reason, message) = rejection(&host(), &dir, "command.wasm").await;
    assert!(
        matches!(reason, LoadError::NotAnExtension { .. }),
        "{message}"
    );
    assert!(message.contains("not an Aeterna extension"), "{message}");
    assert!(message.contains("`register`"), "{message}");
    assert!(
        message.contains("wasi:cli/run"),
        "it says what the component is instead: {message}"
    );
}

#[tokio::test]
async fn a_component_for_another_contract_version_is_rejected() {
    let dir = ExtDir::new();
    dir.add("future", "wrong-version", "");
    let (reason, message) = rejection(&host(), &dir, "future.wasm").await;
    assert!(
        matches!(reason, LoadError::ContractVersion { .. }),
        "{message}"
    );
    assert!(
        message.contains("aeterna:extension/types@0.2.0"),
        "{message}"
    );
    assert!(message.contains("aeterna:extension@0.1.0"), "{message}");
}

#[tokio::test]
async fn invalid_registrations_are_rejected() {
    let cases = [
        ("reg-id = \"Not Valid\"", "[a-z0-9][a-z0-9._-]*"),
        ("reg-hooks = \"\"", "`hooks` is empty"),
        (
            "reg-hooks = \"plain-text\"",
            "the `tag` hook is not declared",
        ),
        ("reg-hooks = \"tag\"\nreg-tags = \"\"", "`tags` is empty"),
        (
            "reg-hooks = \"tag\"\nreg-tags = \"has space\"",
            "tag name \"has space\" is invalid",
        ),
        (
            "reg-schema = \"{not json\"",
            "input-schema is not valid JSON",
        ),
    ];
    let host = host();
    for (config, expected) in cases {
        let dir = ExtDir::new();
        // No id override, so the registered id is what gets validated.
        dir.add("p", "probe", &format!("[config]\n{config}\n"));
        let (reason, message) = rejection(&host, &dir, "p.wasm").await;
        assert!(
            matches!(reason, LoadError::Registration(_)),
            "{config}: {message}"
        );
        assert!(message.contains(expected), "{config}: {message}");
    }
}

#[tokio::test]
async fn manifest_errors_name_the_manifest() {
    let cases = [
        ("timeout = 5", "unknown field `timeout`"),
        ("fuel = 99999999999999", "exceeds the operator's limit"),
        ("memory_mb = 0", "`memory_mb` must be at least 1"),
        ("id = \"UPPER\"", "`id = \"UPPER\"`"),
        ("failure = \"maybe\"", "maybe"),
        ("priority = \"high\"", "priority"),
        ("[config]\nx = 1\n[config]", "duplicate"),
    ];
    let host = host();
    for (manifest, expected) in cases {
        let dir = ExtDir::new();
        dir.add("p", "probe", manifest);
        let (reason, message) = rejection(&host, &dir, "p.wasm").await;
        assert!(
            matches!(reason, LoadError::Manifest { .. }),
            "{manifest}: {message}"
        );
        assert!(message.contains("p.toml"), "{manifest}: {message}");
        assert!(message.contains(expected), "{manifest}: {message}");
    }
}

#[tokio::test]
async fn duplicate_ids_are_rejected_naming_both_files() {
    let dir = ExtDir::new();
    dir.add("a", "probe", "id = \"same\"");
    dir.add("b", "probe", "id = \"same\"");
    let mut report = host().load_dir(dir.path()).await.unwrap();
    assert_eq!(report.loaded.len(), 1);
    let (path, reason) = report.rejected.pop().expect("one rejection");
    assert_eq!(path, dir.path().join("b.wasm"));
    assert!(matches!(reason, LoadError::DuplicateId { .. }), "{reason}");
    let message = HostError::Load { path, reason }.to_string();
    assert!(
        message.contains("a.wasm") && message.contains("b.wasm"),
        "{message}"
    );
}

#[tokio::test]
async fn disabled_extensions_are_listed_not_loaded_but_still_checkable() {
    let dir = ExtDir::new();
    let wasm = dir.add("off", "probe", "enabled = false");
    dir.probe("on", 0, "");
    let host = host();
    let report = host.load_dir(dir.path()).await.unwrap();
    assert_eq!(report.disabled, std::slice::from_ref(&wasm));
    assert_eq!(report.loaded.len(), 1);
    let info = host.check_file(&wasm).await.unwrap();
    assert_eq!(info.registration.id, "probe");
    assert_eq!(info.registration.version, "1.2.3");
}

#[tokio::test]
async fn manifest_overrides_and_limits_show_in_the_info() {
    let dir = ExtDir::new();
    dir.add(
        "p",
        "probe",
        "id = \"renamed\"\npriority = 42\ntimeout_ms = 100\nfailure = \"closed\"\n[config]\nn = 3\n",
    );
    let host = host();
    load_all(&host, &dir).await;
    let info = host.extension("renamed").unwrap();
    assert_eq!(info.registration.priority, 42);
    assert_eq!(info.limits.timeout_ms, 100);
    assert_eq!(info.limits.fuel, test_config().limits.fuel);
    assert_eq!(info.failure, aeterna_host::FailurePolicy::Closed);
    assert_eq!(info.config, [("n".to_owned(), "3".to_owned())]);
    assert!(info.manifest.unwrap().ends_with("p.toml"));
}

#[tokio::test]
async fn a_missing_directory_is_an_error_and_changes_nothing() {
    let dir = ExtDir::new();
    dir.probe("p", 0, "");
    let host = host();
    load_all(&host, &dir).await;
    let error = host.load_dir(dir.path().join("missing")).await.unwrap_err();
    assert!(matches!(error, HostError::ReadDir { .. }), "{error}");
    assert_eq!(host.extensions().len(), 1);
}

#[tokio::test]
async fn load_unload_and_reload_at_run_time() {
    let dir = ExtDir::new();
    dir.probe("a", 1, "");
    let host = host();
    load_all(&host, &dir).await;
    assert_eq!(
        host.run_plain_text(&ctx(), String::new())
            .await
            .unwrap()
            .output,
        "[a:1]"
    );

    // Add one file.
    let b = dir.probe("b", 0, "");
    let info = host.load_file(&b).await.unwrap().unwrap();
    assert_eq!(info.registration.id, "b");
    assert_eq!(
        host.run_plain_text(&ctx(), String::new())
            .await
            .unwrap()
            .output,
        "[a:2][b:1]"
    );

    // Reload one extension after its manifest changed.
    std::fs::write(
        dir.path().join("b.toml"),
        "id = \"b\"\npriority = 5\n[config]\nmark = \"B2\"\n",
    )
    .unwrap();
    host.reload("b").await.unwrap();
    assert_eq!(
        host.run_plain_text(&ctx(), String::new())
            .await
            .unwrap()
            .output,
        "[B2:2][a:3]"
    );

    // Unload.
    let removed = host.unload("a").await.unwrap();
    assert_eq!(removed.registration.id, "a");
    assert!(matches!(
        host.unload("a").await,
        Err(HostError::UnknownExtension(_))
    ));
    assert_eq!(
        host.run_plain_text(&ctx(), String::new())
            .await
            .unwrap()
            .output,
        "[B2:3]"
    );

    // Reload the whole directory: `a` is back, a new file appears, a deleted one goes.
    dir.probe("c", -1, "");
    std::fs::remove_file(dir.path().join("b.wasm")).unwrap();
    let report = host.reload_all().await.unwrap();
    let ids: Vec<_> = report
        .loaded
        .iter()
        .map(|info| info.registration.id.as_str())
        .collect();
    assert_eq!(ids, ["a", "c"]);
    assert_eq!(
        host.run_plain_text(&ctx(), String::new())
            .await
            .unwrap()
            .output,
        "[a:4][c:1]"
    );
}

#[tokio::test]
async fn reloading_while_chains_run_never_disturbs_a_run() {
    let dir = ExtDir::new();
    dir.probe("a", 1, "");
    dir.probe("b", 0, "");
    let host = host();
    load_all(&host, &dir).await;

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut runners = Vec::new();
    for session in 0..4 {
        let host = host.clone();
        let stop = stop.clone();
        runners.push(tokio::spawn(async move {
            let ctx = CallContext::new("t", format!("s{session}"));
            let mut runs = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let run = host
                    .run_plain_text(&ctx, "x".into())
                    .await
                    .expect("runs never fail");
                assert!(run.report.faults().next().is_none(), "{:?}", run.report);
                // Either snapshot: both probes, or only `a` while `b` is unloaded.
                assert!(run.output.starts_with("x[a:"), "{}", run.output);
                runs += 1;
            }
            runs
        }));
    }
    let b = dir.path().join("b.wasm");
    for _ in 0..5 {
        host.unload("b").await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        host.load_file(&b).await.unwrap();
        host.reload_all().await.unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for runner in runners {
        assert!(runner.await.unwrap() > 0);
    }
}

#[tokio::test]
async fn the_compile_cache_is_hit_on_a_second_start() {
    let cache = tempfile::tempdir().unwrap();
    let dir = ExtDir::new();
    dir.probe("a", 0, "");
    dir.add("h", "hostile", "");
    let config = || {
        let mut config = test_config();
        config.cache_dir = Some(cache.path().to_path_buf());
        config
    };

    let first = ExtensionHost::new(config()).unwrap();
    load_all(&first, &dir).await;
    let stats = first.cache_stats();
    assert_eq!((stats.hits, stats.compiles), (0, 2));
    let entries = std::fs::read_dir(cache.path()).unwrap().count();
    assert_eq!(
        entries, 2,
        "one entry per distinct component, no temporary files left"
    );

    let second = ExtensionHost::new(config()).unwrap();
    load_all(&second, &dir).await;
    let stats = second.cache_stats();
    assert_eq!(
        (stats.hits, stats.compiles),
        (2, 0),
        "a second start does not recompile"
    );
    assert_eq!(
        second
            .run_plain_text(&ctx(), String::new())
            .await
            .unwrap()
            .output,
        "[a:1]"
    );

    // The same bytes under another name reuse the loaded component: not even a cache read.
    dir.probe("b", 0, "");
    second.load_file(dir.path().join("b.wasm")).await.unwrap();
    let stats = second.cache_stats();
    assert_eq!((stats.hits, stats.compiles), (2, 0));
}

#[tokio::test]
async fn a_corrupt_cache_entry_is_recompiled_not_fatal() {
    let cache = tempfile::tempdir().unwrap();
    let dir = ExtDir::new();
    dir.probe("a", 0, "");
    let mut config = test_config();
    config.cache_dir = Some(cache.path().to_path_buf());

    let host = ExtensionHost::new(config.clone()).unwrap();
    load_all(&host, &dir).await;
    let entry = std::fs::read_dir(cache.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();

    for corruption in [b"garbage".to_vec(), {
        let mut bytes = std::fs::read(&entry).unwrap();
        bytes.truncate(bytes.len() / 3);
        bytes
    }] {
        std::fs::write(&entry, corruption).unwrap();
        let host = ExtensionHost::new(config.clone()).unwrap();
        load_all(&host, &dir).await;
        let stats = host.cache_stats();
        assert_eq!(
            (stats.hits, stats.rejected_entries, stats.compiles),
            (0, 1, 1)
        );
        assert_eq!(
            host.run_plain_text(&ctx(), String::new())
                .await
                .unwrap()
                .output,
            "[a:1]"
        );
    }
    // The rewritten entry is good again.
    let host = ExtensionHost::new(config).unwrap();
    load_all(&host, &dir).await;
    assert_eq!(host.cache_stats().hits, 1);
}

#[tokio::test]
async fn operator_limits_are_validated() {
    let mut config = test_config();
    config.limits.timeout_ms = 0;
    let error = ExtensionHost::new(config).err().expect("invalid config");
    assert!(error.to_string().contains("limits.timeout_ms"), "{error}");
}
