//! `aeterna bridge`: the client bridge on stdio (see the `aeterna-bridge` crate). This module
//! only turns flags into a [`BridgeConfig`].

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use aeterna_bridge::{BridgeConfig, StateBackend};
use aeterna_host::HostConfig;
use aeterna_host::state::RedisStateConfig;
use aeterna_meta::MetaConfig;
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
    /// Where extension state lives: `memory` (this process) or a Redis URL
    /// (`redis://[user:password@]host:port[/db]`), where it survives restarts and is shared by
    /// every bridge on that Redis.
    #[arg(long, value_name = "memory|redis://…", default_value = "memory")]
    pub state: String,
    /// The local command runner's allow-list (TOML, as the server's `[meta]` table:
    /// `allowed_roots`, `[commands.NAME] argv = […]`, timeouts); enables `meta_run_local`.
    #[arg(long, value_name = "FILE")]
    pub commands: Option<PathBuf>,
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
    let state = state_backend(&args.state)?;
    let data_dir = match args.data_dir {
        Some(dir) => dir,
        None => crate::config::default_data_dir()?.join("bridge"),
    };
    let mut config = BridgeConfig::new(args.server, args.extensions, data_dir);
    config.state = state;
    if let Some(path) = &args.commands {
        config.commands = Some(read_commands(path)?);
    }
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

/// `--state`: `memory` or a Redis URL.
fn state_backend(value: &str) -> anyhow::Result<StateBackend> {
    if value == "memory" {
        return Ok(StateBackend::Memory);
    }
    if value.starts_with("redis://") || value.starts_with("rediss://") {
        return Ok(StateBackend::Redis(RedisStateConfig {
            url: value.to_owned(),
            key_prefix: "aeterna:bridge-state".into(),
            ..RedisStateConfig::default()
        }));
    }
    anyhow::bail!(
        "--state {}: expected `memory` or a Redis URL (redis://host:port)",
        aeterna_redact::redact_url_password(value)
    )
}

/// `--commands FILE`: the allow-list, checked as the server checks `[meta]`.
fn read_commands(path: &std::path::Path) -> anyhow::Result<MetaConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--commands: cannot read {}", path.display()))?;
    let config: MetaConfig = toml::from_str(&text)
        .with_context(|| format!("--commands: invalid allow-list {}", path.display()))?;
    config
        .validate()
        .map_err(|error| anyhow::anyhow!("--commands {}: {error}", path.display()))?;
    if config.commands.is_empty() || config.allowed_roots.is_empty() {
        anyhow::bail!(
            "--commands {}: name at least one command ([commands.NAME] argv = [...]) and one \
             directory in allowed_roots",
            path.display()
        );
    }
    Ok(config)
}
