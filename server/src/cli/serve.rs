//! `aeterna serve` (Streamable HTTP) and `aeterna mcp` (stdio).

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use rmcp::ServiceExt;

use crate::config::{Config, LogFormat, Overrides};
use crate::mcp::AeternaMcp;
use crate::state::AppState;

/// Options shared by both transports.
#[derive(Debug, clap::Args)]
pub struct CommonArgs {
    /// Directory of the embedded stores [env: AETERNA_DATA_DIR; default:
    /// $XDG_DATA_HOME/aeterna or ~/.local/share/aeterna].
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// TOML configuration file; `AETERNA_*` variables override it.
    #[arg(long, value_name = "FILE", env = "AETERNA_CONFIG")]
    pub config: Option<PathBuf>,
    /// Log line format on stderr [env: AETERNA_LOG_FORMAT; default: text].
    #[arg(long, value_enum)]
    pub log_format: Option<LogFormat>,
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 picks a free port [env: AETERNA_LISTEN; default:
    /// 127.0.0.1:7878]. A non-loopback address needs at least one token in the config.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Tenant of this stdio session [default: auth.default_tenant from the config, "default"].
    #[arg(long, value_name = "TENANT")]
    pub tenant: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

pub(super) fn load(common: &CommonArgs, listen: Option<SocketAddr>) -> anyhow::Result<Config> {
    let overrides = Overrides {
        listen,
        data_dir: common.data_dir.clone(),
        log_format: common.log_format,
    };
    let config = Config::load(common.config.as_deref(), &overrides)?;
    crate::telemetry::init(config.log_format, &config.log);
    Ok(config)
}

/// Serves until SIGINT/SIGTERM, then shuts down gracefully. Prints
/// `aeterna listening on http://ADDR/mcp` on stdout once the port is bound.
pub async fn run_serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = load(&args.common, args.listen)?;
    config.check_exposure()?;
    let state = AppState::open(config).await?;
    let mut server = crate::server::start(state).await?;
    let mut stdout = std::io::stdout();
    writeln!(
        stdout,
        "aeterna listening on http://{}/mcp",
        server.local_addr()
    )
    .and_then(|()| stdout.flush())
    .context("cannot write the listen address to stdout")?;
    tokio::select! {
        () = crate::server::shutdown_signal() => {}
        result = server.stopped() => {
            result?;
            anyhow::bail!("the HTTP server stopped unexpectedly");
        }
    }
    server.shutdown().await?;
    Ok(ExitCode::SUCCESS)
}

/// Serves MCP over stdin/stdout until the client closes stdin or a signal arrives. Logs go to
/// stderr only: stdout carries the protocol.
pub async fn run_mcp(args: McpArgs) -> anyhow::Result<ExitCode> {
    let mut config = load(&args.common, None)?;
    if let Some(tenant) = args.tenant {
        config.auth.default_tenant = tenant;
        config.validate()?;
    }
    let state = AppState::open(config).await?;
    let principal = state.auth.default_principal().clone();
    tracing::info!(tenant = %principal.tenant_id, "serving MCP on stdio");
    let handler = AeternaMcp::for_stdio(state.clone(), principal);
    let service = handler
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP client did not complete initialisation on stdio")?;
    let cancel = service.cancellation_token();
    tokio::select! {
        result = service.waiting() => {
            if let Err(error) = result {
                tracing::warn!(%error, "the stdio session ended abnormally");
            }
        }
        () = crate::server::shutdown_signal() => {
            cancel.cancel();
        }
    }
    state
        .ingest
        .shutdown(std::time::Duration::from_secs(
            state.config.http.shutdown_grace_secs,
        ))
        .await;
    state.knowledge.shutdown().await;
    state.meta.shutdown().await;
    state.notes.shutdown().await;
    state.llm.shutdown().await;
    state
        .memory
        .flush()
        .await
        .context("cannot flush the memory stores")?;
    tracing::info!("stdio session closed");
    Ok(ExitCode::SUCCESS)
}
