//! The MCP Tasks extension over command-driven Meta-Agent loops, through rmcp's client over
//! real HTTP: a client that declares the extension gets a task for a command-driven loop,
//! follows it with `tasks/get` and stops it with `tasks/cancel`; other loops and other clients
//! get the plain answer.

use std::time::Duration;

use aeterna_meta::CommandConfig;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, TaskPayload, TaskStatus,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use super::common::{ALPHA_TOKEN, BETA_TOKEN, TestServer, call_ok, two_tenants};

/// A server whose loops may run `pass` (`true`) and `slow` (`sleep 30`) in `root`.
async fn server(root: &std::path::Path) -> TestServer {
    let root = root.to_path_buf();
    TestServer::start(move |config| {
        two_tenants(config);
        config.meta.allowed_roots = vec![root];
        for (name, argv) in [("pass", vec!["true"]), ("slow", vec!["sleep", "30"])] {
            config.meta.commands.insert(
                name.into(),
                CommandConfig {
                    argv: argv.into_iter().map(str::to_owned).collect(),
                },
            );
        }
    })
    .await
}

/// An MCP client that declares the Tasks extension.
async fn tasks_client(
    server: &TestServer,
    token: &str,
) -> RunningService<RoleClient, ClientConfig> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(server.url("/mcp"))
            .auth_header(token.to_owned()),
    );
    ClientConfig::new(
        ClientCapabilities::builder().enable_tasks().build(),
        Implementation::new("tasks-test", "1.0.0"),
    )
    .serve(transport)
    .await
    .expect("MCP client connects")
}

async fn start(client: &RunningService<RoleClient, ClientConfig>, args: Value) -> CallToolResponse {
    let arguments = args.as_object().cloned().expect("an object");
    client
        .call_tool_once(CallToolRequestParams::new("meta_loop_start").with_arguments(arguments))
        .await
        .expect("no protocol error")
}

/// Polls `tasks/get` until the task leaves `working` (at most 30 s).
async fn settle(client: &RunningService<RoleClient, ClientConfig>, task_id: &str) -> TaskPayload {
    for _ in 0..300 {
        let got = client
            .get_task(GetTaskParams::new(task_id))
            .await
            .expect("tasks/get");
        assert_eq!(got.task.task.task_id, task_id);
        if got.task.status() != TaskStatus::Working {
            return got.task.payload;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("task {task_id} still working after 30 s");
}

#[tokio::test]
async fn a_command_driven_loop_is_a_task_that_completes_with_the_loop() {
    let root = tempfile::tempdir().expect("tempdir");
    let server = server(root.path()).await;
    let client = tasks_client(&server, ALPHA_TOKEN).await;
    let working_dir = root.path().to_str().expect("utf-8 path");

    let response = start(
        &client,
        json!({ "task": "keep it green", "test_command": "pass", "working_dir": working_dir }),
    )
    .await;
    let CallToolResponse::Task(created) = response else {
        panic!("a command-driven loop should be a task: {response:?}");
    };
    assert!(created.task.poll_interval_ms.is_some());
    assert!(
        created.task.created_at.ends_with('Z'),
        "{}",
        created.task.created_at
    );
    let task_id = created.task.task_id.clone();

    let TaskPayload::Completed { result } = settle(&client, &task_id).await else {
        panic!("the loop should complete");
    };
    assert_eq!(result["isError"], false, "{result:?}");
    assert_eq!(result["structuredContent"]["state"], "succeeded");
    assert_eq!(result["structuredContent"]["loop_id"], task_id.as_str());

    // The same loop through the plain tool.
    let status = call_ok(&client, "meta_loop_status", json!({ "loop_id": task_id })).await;
    assert_eq!(status["state"], "succeeded");

    // Another tenant's token cannot see the task.
    let stranger = tasks_client(&server, BETA_TOKEN).await;
    let error = stranger
        .get_task(GetTaskParams::new(task_id.as_str()))
        .await
        .expect_err("another tenant's task");
    assert!(error.to_string().contains(&task_id), "{error}");
    let error = client
        .get_task(GetTaskParams::new("not-a-loop"))
        .await
        .expect_err("an unknown task");
    assert!(error.to_string().contains("not a loop id"), "{error}");
}

#[tokio::test]
async fn cancelling_the_task_cancels_the_loop() {
    let root = tempfile::tempdir().expect("tempdir");
    let server = server(root.path()).await;
    let client = tasks_client(&server, ALPHA_TOKEN).await;
    let working_dir = root.path().to_str().expect("utf-8 path");

    let CallToolResponse::Task(created) = start(
        &client,
        json!({ "task": "wait", "test_command": "slow", "working_dir": working_dir }),
    )
    .await
    else {
        panic!("a command-driven loop should be a task");
    };
    let task_id = created.task.task_id;
    client
        .cancel_task(CancelTaskParams::new(task_id.as_str()))
        .await
        .expect("tasks/cancel");
    assert_eq!(settle(&client, &task_id).await, TaskPayload::Cancelled);
    let status = call_ok(&client, "meta_loop_status", json!({ "loop_id": task_id })).await;
    assert_eq!(status["state"], "cancelled");
}

#[tokio::test]
async fn client_driven_loops_and_clients_without_tasks_get_the_plain_answer() {
    let root = tempfile::tempdir().expect("tempdir");
    let server = server(root.path()).await;
    let client = tasks_client(&server, ALPHA_TOKEN).await;
    let response = start(&client, json!({ "task": "fix it by hand" })).await;
    let CallToolResponse::Complete(result) = response else {
        panic!("a client-driven loop is the client's work, not a task: {response:?}");
    };
    let answer = result.structured_content.expect("structured");
    assert_eq!(answer["loop"]["driver"], "client");

    let plain = server.mcp(Some(ALPHA_TOKEN)).await;
    let working_dir = root.path().to_str().expect("utf-8 path");
    let answer = call_ok(
        &plain,
        "meta_loop_start",
        json!({ "task": "keep it green", "test_command": "pass", "working_dir": working_dir }),
    )
    .await;
    assert_eq!(answer["loop"]["driver"], "command");
}
