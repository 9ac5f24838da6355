//! The client bridge, measured as an agent uses it: the real `aeterna bridge` process on stdio
//! (rmcp client on its pipes) in front of the real `aeterna serve` process.
//!
//! | what | bar |
//! |---|---|
//! | `extensions_apply`, chain of the 4 Rust samples, 1 KB, over stdio | p50 ≤ 1 ms |
//! | forwarded small call, bridge overhead over a direct HTTP call | ≤ 0.3 ms p50 |
//! | hot reload: file written → new extension serving | ≤ 500 ms |
//!
//! Prints p50/p95/p99. `cargo bench -p aeterna-server --bench bridge`

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

mod support;
use support::{report, spawn_server};

const CALLS: usize = 2_000;
const RELOADS: usize = 20;

type Client = RunningService<RoleClient, ()>;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}

async fn run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let extensions = aeterna_testkit::ExtensionsDir::new().expect("extensions dir");
    for sample in [
        "secret_redactor",
        "todo_tags",
        "context_injector",
        "output_compactor",
    ] {
        extensions.add_sample(sample).expect("sample");
    }
    let mut server = spawn_server(&dir.path().join("server"));
    let url = server.1.clone();
    let direct =
        ().serve(StreamableHttpClientTransport::from_uri(url.clone()))
            .await
            .expect("direct client");
    let bridge = spawn_bridge(&url, extensions.path(), &dir.path().join("bridge")).await;

    let kilobyte = "The build failed in crates/parser: error[E0308] mismatched types. ".repeat(16);
    let kilobyte = &kilobyte[..1024];
    let messages = json!({
        "hook": "input-messages",
        "session": "bench",
        "payload": [{"role": "user", "content": kilobyte}],
    });
    let rows = call(&bridge, "extensions_apply", &messages).await["report"]
        .as_array()
        .map_or(0, Vec::len);
    println!("extensions loaded: 4 samples; input-messages runs {rows} callbacks");
    measure(
        &bridge,
        "extensions_apply input-messages 1KB (stdio)",
        &messages,
    )
    .await;
    let llm_output = json!({
        "hook": "llm-output",
        "session": "bench",
        "payload": format!("{}<todo owner=\"ana\">write the migration</todo>", &kilobyte[..990]),
    });
    measure(
        &bridge,
        "extensions_apply llm-output 1KB (stdio)",
        &llm_output,
    )
    .await;

    let added = call(
        &direct,
        "memory_add",
        &json!({"content": "benchmarks run with the bridge", "layer": "company"}),
    )
    .await;
    let get = json!({"id": added["record"]["id"]});
    let direct_p50 = measure(&direct, "memory_get direct (HTTP)", &get).await;
    let bridged_p50 = measure(
        &bridge,
        "memory_get through the bridge (stdio + HTTP)",
        &get,
    )
    .await;
    println!(
        "forwarding overhead p50: {:.3} ms",
        (bridged_p50.as_secs_f64() - direct_p50.as_secs_f64()) * 1e3
    );

    hot_reload(&bridge, extensions.path()).await;

    drop(bridge);
    let _ = server.0.kill();
    let _ = server.0.wait();
}

async fn spawn_bridge(url: &str, extensions: &Path, data: &Path) -> Client {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_aeterna"))
        .args(["bridge", "--server", url, "--extensions"])
        .arg(extensions)
        .arg("--data-dir")
        .arg(data)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn aeterna bridge");
    let stdout = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take().expect("stdin");
    // The child lives as long as the process: the bench ends by exiting.
    std::mem::forget(child);
    ().serve((stdout, stdin)).await.expect("bridge client")
}

async fn call(client: &Client, tool: &str, arguments: &Value) -> Value {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .expect("call");
    assert_ne!(result.is_error, Some(true), "{tool}: {:?}", result.content);
    result.structured_content.unwrap_or(Value::Null)
}

/// Sequential calls; prints and returns p50.
async fn measure(client: &Client, label: &str, arguments: &Value) -> Duration {
    let tool = if label.starts_with("extensions_apply") {
        "extensions_apply"
    } else {
        "memory_get"
    };
    for _ in 0..100 {
        call(client, tool, arguments).await;
    }
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        call(client, tool, arguments).await;
        times.push(started.elapsed());
    }
    report(label, &mut times)
}

/// Writes a component (bytes already compiled once, as after an edit that is reverted, or a
/// copy) and polls `extensions_list` until it serves; then removes it and waits until gone.
async fn hot_reload(bridge: &Client, dir: &Path) {
    let component = aeterna_testkit::sample("secret_redactor").expect("sample");
    let mut added = Vec::new();
    let mut removed = Vec::new();
    for round in 0..RELOADS {
        let id = format!("copy-{round}");
        let manifest = dir.join(format!("{id}.toml"));
        std::fs::write(&manifest, format!("id = \"{id}\"\npriority = 5\n")).expect("manifest");
        let wasm = dir.join(format!("{id}.wasm"));
        let started = Instant::now();
        std::fs::copy(&component, &wasm).expect("copy");
        wait_for(bridge, &id, true).await;
        added.push(started.elapsed());
        let started = Instant::now();
        std::fs::remove_file(&wasm).expect("remove");
        wait_for(bridge, &id, false).await;
        removed.push(started.elapsed());
        std::fs::remove_file(&manifest).expect("remove manifest");
    }
    report("hot reload: file written -> serving", &mut added);
    report("hot reload: file removed -> gone", &mut removed);
}

async fn wait_for(bridge: &Client, id: &str, present: bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let listed = call(bridge, "extensions_list", &json!({})).await;
        let found = listed["extensions"]
            .as_array()
            .is_some_and(|list| list.iter().any(|ext| ext["id"] == id));
        if found == present {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{id} never became present={present}"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}
