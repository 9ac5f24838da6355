//! `aeterna bridge`: the client bridge on stdio (see the `aeterna-bridge` crate). This module
//! only turns flags into a [`BridgeConfig`].

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use aeterna_bridge::BridgeConfig;
use aeterna_host::HostConfig;
use anyhow::Context;

use crate::config::LogFormat;

#[derive(Debug, clap::Args)]
pub struct BridgeArgs {
    /// The memory server's MCP endpoint, such as http://127.0.0.1:7878/mcp.
    #[arg(long, value_name = "URL")]
    pub server: String,
    /// Name of the environment variable holding the server token (sent as a Bearer token).
    #[arg(long, value_name = "VAR")]
    pub token_env: Option<String>,
    /// Directory of `*.wasm` extensions (each with an optional `<name>.toml`); watched, so
    /// changes take effect without a restart.
    #[arg(long, value_name = "DIR")]
    pub extensions: PathBuf,
    /// Where the write queue, the cached tool list and the compile cache live [default:
    /// $XDG_DATA_HOME/aeterna/bridge or ~/.local/share/aeterna/bridge].
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Extension state backend; only `memory` (per bridge process) for now.
    #[arg(long, value_name = "memory", default_value = "memory")]
    pub state: String,
    /// Host configuration (TOML, `aeterna_host::HostConfig`): limits, quarantine, cache…
    #[arg(long, value_name = "FILE")]
    pub host_config: Option<PathBuf>,
    /// Directory of precompiled components [default: <data dir>/component-cache].
    #[arg(long, env = "AETERNA_CACHE_DIR", value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Longest a forwarded call may take, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 30_000)]
    pub call_timeout_ms: u64,
    /// Longest a connection attempt to the server may take, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 5_000)]
    pub connect_timeout_ms: u64,
    /// Most writes kept in the local queue while the server is unreachable.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub queue_max_entries: usize,
    /// Most bytes kept in the local queue while the server is unreachable.
    #[arg(long, value_name = "BYTES", default_value_t = 64 * 1024 * 1024)]
    pub queue_max_bytes: u64,
    /// Log line format on stderr.
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

pub async fn run(args: BridgeArgs) -> anyhow::Result<ExitCode> {
    crate::telemetry::init(args.log_format, "info");
    if args.state != "memory" {
        anyhow::bail!(
            "--state {}: only `memory` is supported by the bridge for now",
            args.state
        );
    }
    let data_dir = match args.data_dir {
        Some(dir) => dir,
        None => crate::config::default_data_dir()?.join("bridge"),
    };
    let mut config = BridgeConfig::new(args.server, args.extensions, data_dir);
    if let Some(path) = &args.host_config {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the host configuration {}", path.display()))?;
        config.host = toml::from_str::<HostConfig>(&text)
            .with_context(|| format!("invalid host configuration {}", path.display()))?;
    }
    if let Some(dir) = args.cache_dir {
        config.host.cache_dir = Some(dir);
    }
    if let Some(var) = &args.token_env {
        match std::env::var(var) {
            Ok(token) if !token.is_empty() => config.remote.token = Some(token),
            _ => tracing::error!(
                variable = %var,
                "--token-env names a variable that is not set or empty; connecting without a token"
            ),
        }
    }
    config.remote.call_timeout = Duration::from_millis(args.call_timeout_ms.max(1));
    config.remote.connect_timeout = Duration::from_millis(args.connect_timeout_ms.max(1));
    config.queue.max_entries = args.queue_max_entries;
    config.queue.max_bytes = args.queue_max_bytes;
    aeterna_bridge::serve_stdio(config).await?;
    Ok(ExitCode::SUCCESS)
}
