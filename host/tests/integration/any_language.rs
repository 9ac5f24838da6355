//! Extensions in JavaScript and Python, built from source with componentize-js and
//! componentize-py (installed under `target/` by `scripts/guest-toolchains`), run in the real
//! host with their example manifests and the default limits. Skipped, with the reason printed,
//! only where those toolchains cannot be installed.

use crate::common;

use aeterna_host::{ExtensionHost, FaultKind, HostConfig, Outcome, StateScope};
use aeterna_testkit::ExtensionsDir;
use common::ctx;
use serde_json::{Value, json};

/// A host with the default limits (and the tests' shared compile cache).
fn host() -> ExtensionHost {
    let config = HostConfig {
        cache_dir: common::test_config().cache_dir,
        ..HostConfig::default()
    };
    ExtensionHost::new(config).unwrap()
}

async fn state(host: &ExtensionHost, extension: &str, key: &str) -> Option<Value> {
    let scope = StateScope::new("tenant-a", "session-1", extension);
    let bytes = host.state_store().get(&scope, key).await.unwrap()?;
    Some(serde_json::from_slice(&bytes).unwrap())
}

/// Loads `dir` and asserts nothing was rejected.
async fn load(host: &ExtensionHost, dir: &ExtensionsDir) {
    let report = host.load_dir(dir.path()).await.unwrap();
    let rejected: Vec<String> = report
        .rejected
        .iter()
        .map(|(file, error)| format!("{}: {error}", file.display()))
        .collect();
    assert!(rejected.is_empty(), "{rejected:?}");
}

#[tokio::test]
async fn a_javascript_extension_compacts_json_with_state_and_keeps_its_error_messages() {
    let dir = ExtensionsDir::new().unwrap();
    if dir.add_script_sample("json-compactor").unwrap().is_none() {
        return;
    }
    let host = host();
    load(&host, &dir).await;
    let info = host.extension("json-compactor").unwrap();
    assert_eq!(info.registration.priority, -50);

    let document = json!({
        "name": "aeterna",
        "owner": null,
        "items": (0..120).collect::<Vec<_>>(),
    });
    let pretty = serde_json::to_string_pretty(&document).unwrap();
    let run = host.run_plain_text(&ctx(), pretty.clone()).await.unwrap();
    assert_eq!(run.report.rows[0].outcome, Outcome::Ok);
    // The example manifest keeps 50 items of an array, then a note.
    let compacted: Value = serde_json::from_str(&run.output).unwrap();
    assert_eq!(compacted["items"].as_array().unwrap().len(), 51);
    assert_eq!(compacted["items"][50], "… 70 more items");
    assert!(!run.output.contains('\n'));
    let saved = state(&host, "json-compactor", "saved").await.unwrap();
    assert_eq!(saved["calls"], 1);
    assert_eq!(saved["bytes"], pretty.len() - run.output.len());

    // Text that is not JSON passes through, and state is untouched.
    let run = host
        .run_plain_text(&ctx(), "cargo test: 12 passed".into())
        .await
        .unwrap();
    assert_eq!(run.output, "cargo test: 12 passed");
    assert_eq!(
        state(&host, "json-compactor", "saved").await.unwrap()["calls"],
        1
    );

    // A refusal thrown in JavaScript keeps its code and message.
    let dir = ExtensionsDir::new().unwrap();
    let wasm = dir.add_script_sample("json-compactor").unwrap().unwrap();
    std::fs::write(
        wasm.with_extension("toml"),
        "[config]\nmax_array_items = -1\n",
    )
    .unwrap();
    let host = self::host();
    load(&host, &dir).await;
    let run = host.run_plain_text(&ctx(), pretty).await.unwrap();
    let fault = run.report.rows[0].outcome.fault().unwrap();
    assert_eq!(fault.kind, FaultKind::ExtError);
    assert_eq!(fault.code.as_deref(), Some("invalid-config"));
    assert!(
        fault.message.contains("max_array_items"),
        "{}",
        fault.message
    );
}

#[tokio::test]
async fn a_javascript_extension_does_useful_work_on_a_mebibyte_under_the_default_limits() {
    let dir = ExtensionsDir::new().unwrap();
    if dir.add_script_sample("json-compactor").unwrap().is_none() {
        return;
    }
    let host = host();
    load(&host, &dir).await;
    let rows: Vec<Value> = (0..12_000)
        .map(|i| json!({"id": i, "path": format!("src/module_{i}/lib.rs"), "ok": i % 7 != 0}))
        .collect();
    let pretty = serde_json::to_string_pretty(&json!({ "results": [rows] })).unwrap();
    assert!(pretty.len() > 1024 * 1024, "{}", pretty.len());
    let run = host.run_plain_text(&ctx(), pretty.clone()).await.unwrap();
    let row = &run.report.rows[0];
    assert_eq!(row.outcome, Outcome::Ok, "{row:?}");
    assert!(run.output.len() < pretty.len() / 2, "{}", run.output.len());
    // About 9.7 G: the former fixed budget of 1 G stopped this at a tenth of the way.
    assert!(row.fuel_used > 1_000_000_000, "{row:?}");
}

#[tokio::test]
async fn a_python_extension_collapses_repeated_lines_with_state() {
    let dir = ExtensionsDir::new().unwrap();
    if dir.add_script_sample("log-dedup").unwrap().is_none() {
        return;
    }
    let host = host();
    load(&host, &dir).await;
    assert_eq!(
        host.extension("log-dedup").unwrap().registration.priority,
        -60
    );

    let log: String = std::iter::once("   Compiling aeterna v0.1.0".to_owned())
        .chain((0..200).map(|i| format!("  Downloaded crate-{i} v1.{i}.0 ({} KB)", i * 3)))
        .chain(std::iter::once("    Finished in 41.2s".to_owned()))
        .collect::<Vec<_>>()
        .join("\n");
    let run = host.run_plain_text(&ctx(), log).await.unwrap();
    assert_eq!(run.report.rows[0].outcome, Outcome::Ok);
    assert_eq!(
        run.output,
        "   Compiling aeterna v0.1.0\n  Downloaded crate-0 v1.0.0 (0 KB)\n[… 199 similar lines]\n    Finished in 41.2s"
    );
    let removed = state(&host, "log-dedup", "removed").await.unwrap();
    assert_eq!(removed, json!({"calls": 1, "lines": 198}));

    // A refusal raised in Python keeps its code and message.
    let dir = ExtensionsDir::new().unwrap();
    let wasm = dir.add_script_sample("log-dedup").unwrap().unwrap();
    std::fs::write(wasm.with_extension("toml"), "[config]\nmin_run = 1\n").unwrap();
    let host = self::host();
    load(&host, &dir).await;
    let run = host.run_plain_text(&ctx(), "a\na\na".into()).await.unwrap();
    let fault = run.report.rows[0].outcome.fault().unwrap();
    assert_eq!(fault.kind, FaultKind::ExtError);
    assert_eq!(fault.code.as_deref(), Some("invalid-config"));
    assert!(fault.message.contains("min_run"), "{}", fault.message);
}

#[tokio::test]
async fn rust_javascript_and_python_extensions_chain_in_priority_order() {
    let dir = ExtensionsDir::new().unwrap();
    if dir.add_script_sample("json-compactor").unwrap().is_none()
        || dir.add_script_sample("log-dedup").unwrap().is_none()
    {
        return;
    }
    dir.add_sample_with(
        "output-compactor",
        "priority = -100\n[config]\nmax_tokens = 64\n",
    )
    .unwrap();
    let host = host();
    load(&host, &dir).await;
    let text = (0..400)
        .map(|i| format!("warning: unused variable `x{i}` in src/lib.rs:{i}"))
        .collect::<Vec<_>>()
        .join("\n");
    let run = host.run_plain_text(&ctx(), text).await.unwrap();
    let order: Vec<&str> = run
        .report
        .rows
        .iter()
        .map(|r| r.extension.as_str())
        .collect();
    assert_eq!(order, ["json-compactor", "log-dedup", "output-compactor"]);
    assert!(
        run.report.rows.iter().all(|r| r.outcome.is_ok()),
        "{:?}",
        run.report
    );
    // log-dedup collapsed the 400 warnings, so output-compactor had nothing left to cut.
    assert_eq!(
        run.output,
        "warning: unused variable `x0` in src/lib.rs:0\n[… 399 similar lines]"
    );
}
