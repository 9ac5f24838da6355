//! Shared test support: a real server on an ephemeral loopback port with its own data
//! directory, and a real MCP client (rmcp over Streamable HTTP).
#![allow(dead_code)]

use aeterna_server::config::{Config, IdentityFields, TokenConfig};
use aeterna_server::server::{RunningServer, start};
use aeterna_server::state::AppState;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

pub const ALPHA_TOKEN: &str = "alpha-secret-token";
pub const BETA_TOKEN: &str = "beta-secret-token";

/// A config with a temp data dir on 127.0.0.1:0; with `AETERNA_TEST_BACKEND=postgres`, the
/// records and agent tables in the test PostgreSQL, in a schema named after the dir (so a
/// restart in the same dir finds them).
pub fn config(dir: &tempfile::TempDir) -> Config {
    let mut config = Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        data_dir: Some(dir.path().to_path_buf()),
        ..Config::default()
    };
    if aeterna_testkit::profile::backend() == aeterna_testkit::profile::Backend::Postgres {
        config.database_url = Some(aeterna_testkit::profile::database_url());
        config.memory.postgres.schema = aeterna_testkit::profile::test_schema(dir.path());
    }
    config
}

/// Two tenants: alpha (user ann in project p1 by default) and beta.
pub fn two_tenants(config: &mut Config) {
    config.auth.tokens = vec![
        TokenConfig {
            token: ALPHA_TOKEN.into(),
            tenant: "alpha".into(),
            defaults: IdentityFields {
                user_id: Some("ann".into()),
                project_id: Some("p1".into()),
                ..Default::default()
            },
            ..Default::default()
        },
        TokenConfig {
            token: BETA_TOKEN.into(),
            tenant: "beta".into(),
            defaults: IdentityFields {
                user_id: Some("ann".into()),
                project_id: Some("p1".into()),
                ..Default::default()
            },
            ..Default::default()
        },
    ];
}

pub struct TestServer {
    pub server: RunningServer,
    pub base: String,
    pub dir: tempfile::TempDir,
}

impl TestServer {
    pub async fn start(edit: impl FnOnce(&mut Config)) -> TestServer {
        let dir = tempfile::tempdir().expect("tempdir");
        Self::start_in(dir, edit).await
    }

    pub async fn start_in(dir: tempfile::TempDir, edit: impl FnOnce(&mut Config)) -> TestServer {
        let mut config = config(&dir);
        edit(&mut config);
        config.validate().expect("valid test config");
        let state = AppState::open(config).await.expect("open stores");
        let server = start(state).await.expect("start server");
        let base = format!("http://{}", server.local_addr());
        TestServer { server, base, dir }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn mcp(&self, token: Option<&str>) -> RunningService<RoleClient, ()> {
        mcp_client(&self.url("/mcp"), token)
            .await
            .expect("MCP client connects")
    }
}

pub async fn mcp_client(
    url: &str,
    token: Option<&str>,
) -> anyhow::Result<RunningService<RoleClient, ()>> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    Ok(().serve(transport).await?)
}

/// Calls a tool; protocol errors are returned as `Err`.
pub async fn call(
    client: &Peer<RoleClient>,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
}

/// Calls a tool that must succeed and returns its structured result.
pub async fn call_ok(client: &Peer<RoleClient>, tool: &str, arguments: Value) -> Value {
    let result = call(client, tool, arguments)
        .await
        .expect("no protocol error");
    assert_ne!(
        result.is_error,
        Some(true),
        "{tool} failed: {}",
        text(&result)
    );
    result
        .structured_content
        .clone()
        .expect("structured content")
}

/// Calls a tool that must fail as a tool error and returns the message.
pub async fn call_err(client: &Peer<RoleClient>, tool: &str, arguments: Value) -> String {
    let result = call(client, tool, arguments)
        .await
        .expect("no protocol error");
    assert_eq!(
        result.is_error,
        Some(true),
        "{tool} should fail: {}",
        text(&result)
    );
    text(&result)
}

pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}
