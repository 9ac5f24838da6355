//! MCP tool round trip over real HTTP: rmcp's Streamable HTTP client against an in-process
//! `aeterna serve` on loopback. The bar is p50 ≤ 2 ms for a small call.
//!
//! Prints p50/p95/p99 over 2,000 sequential calls per tool, then runs the criterion group.
//! `cargo bench -p aeterna-server --bench mcp_round_trip`

use std::time::{Duration, Instant};

use aeterna_server::config::Config;
use aeterna_server::server::{RunningServer, start};
use aeterna_server::state::AppState;
use criterion::Criterion;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

struct Fixture {
    runtime: tokio::runtime::Runtime,
    client: RunningService<RoleClient, ()>,
    server: Option<RunningServer>,
    memory_id: String,
    _dir: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let config = Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        data_dir: Some(dir.path().to_path_buf()),
        ..Config::default()
    };
    let (server, client, memory_id) = runtime.block_on(async {
        let state = AppState::open(config).await.expect("open stores");
        let server = start(state).await.expect("start");
        let url = format!("http://{}/mcp", server.local_addr());
        let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.expect("connect");
        for i in 0..200 {
            let content =
                format!("memory {i}: the build uses cargo workspaces and sqlx migrations");
            call(
                &client,
                "memory_add",
                json!({ "content": content, "layer": "company" }),
            )
            .await;
        }
        let added = call(
            &client,
            "memory_add",
            json!({ "content": "Benchmarks run with criterion", "layer": "company" }),
        )
        .await;
        let memory_id = added["record"]["id"].as_str().expect("id").to_owned();
        (server, client, memory_id)
    });
    Fixture {
        runtime,
        client,
        server: Some(server),
        memory_id,
        _dir: dir,
    }
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, arguments: Value) -> Value {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .expect("tool call");
    assert_ne!(result.is_error, Some(true), "{tool} failed: {result:?}");
    result.structured_content.unwrap_or(Value::Null)
}

fn percentiles(fixture: &Fixture, tool: &str, arguments: &Value) {
    let mut samples: Vec<Duration> = fixture.runtime.block_on(async {
        for _ in 0..100 {
            call(&fixture.client, tool, arguments.clone()).await;
        }
        let mut samples = Vec::with_capacity(2000);
        for _ in 0..2000 {
            let started = Instant::now();
            call(&fixture.client, tool, arguments.clone()).await;
            samples.push(started.elapsed());
        }
        samples
    });
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q) as usize];
    println!(
        "mcp_http_round_trip/{tool}: p50 {:?}  p95 {:?}  p99 {:?}  (n = {})",
        at(0.50),
        at(0.95),
        at(0.99),
        samples.len()
    );
}

fn main() {
    let fixture = fixture();
    let get = json!({ "id": fixture.memory_id });
    let search = json!({ "query": "criterion benchmarks", "limit": 5 });
    let list = json!({ "limit": 10, "metadata_only": true });
    percentiles(&fixture, "memory_get", &get);
    percentiles(&fixture, "memory_search", &search);
    percentiles(&fixture, "memory_list", &list);

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("mcp_http_round_trip");
    for (tool, arguments) in [
        ("memory_get", &get),
        ("memory_search", &search),
        ("memory_list", &list),
    ] {
        group.bench_function(tool, |bencher| {
            bencher
                .to_async(&fixture.runtime)
                .iter(|| call(&fixture.client, tool, arguments.clone()));
        });
    }
    group.finish();
    criterion.final_summary();

    let Fixture {
        runtime,
        client,
        mut server,
        ..
    } = fixture;
    runtime.block_on(async {
        let _ = client.cancel().await;
        if let Some(server) = server.take() {
            server.shutdown().await.expect("shutdown");
        }
    });
}
