//! Server configuration: defaults, then a TOML file, then `AETERNA_*` environment variables,
//! then command-line flags. Unknown keys are rejected and errors name the offending key.
//!
//! Environment variables use `__` to reach nested keys: `AETERNA_LISTEN=0.0.0.0:7878`,
//! `AETERNA_MEMORY__MAX_CONTENT_BYTES=131072`, `AETERNA_AUTH__DEFAULT_TENANT=acme`. Variables
//! whose first segment is not a configuration section (such as `AETERNA_BIN`) are ignored.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use aeterna_context::ContextConfig;
use aeterna_hindsight::HindsightConfig;
use aeterna_knowledge::KnowledgeConfig;
use aeterna_llm::LlmConfig;
pub use aeterna_memory::embed::EmbedderConfig;
use aeterna_memory::{COMPANY_SCOPE, Claim, Grants, Layer, MemoryConfig, Scope};
use aeterna_meta::MetaConfig;
use aeterna_notes::NotesConfig;
use anyhow::{Context, bail};
use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

/// The top-level keys of [`Config`]; environment variables outside them are not ours.
const SECTIONS: [&str; 19] = [
    "listen",
    "redis_url",
    "qdrant_url",
    "data_dir",
    "database_url",
    "log_format",
    "log",
    "http",
    "auth",
    "memory",
    "embedder",
    "context",
    "hindsight",
    "notes",
    "llm",
    "extensions",
    "meta",
    "knowledge",
    "rest",
];

/// Everything `aeterna serve` and `aeterna mcp` can be told.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where `aeterna serve` listens (127.0.0.1:7878). Port 0 picks a free port.
    pub listen: SocketAddr,
    /// Where the embedded stores live. Defaults to `$XDG_DATA_HOME/aeterna` or
    /// `~/.local/share/aeterna`.
    pub data_dir: Option<PathBuf>,
    /// `postgres://user:password@host:port/database`: memory records and every agent's tables
    /// live in PostgreSQL, shared by every instance configured with it (the scale-out
    /// profile); pool and schema in `[memory.postgres]`. Unset (default): the embedded SQLite
    /// in `data_dir`.
    pub database_url: Option<String>,
    /// `http://host:6334` (Qdrant's gRPC port): vectors live in one Qdrant collection shared
    /// by every instance; collection, API key, timeout and drift repair in `[memory.qdrant]`.
    /// Unset (default): each process holds the vectors in memory, loaded from the records.
    pub qdrant_url: Option<String>,
    /// `text` (default) or `json` log lines, always on stderr.
    pub log_format: LogFormat,
    /// A `tracing` filter such as `info` or `aeterna_server=debug,info`; `RUST_LOG` wins.
    pub log: String,
    pub http: HttpConfig,
    pub auth: AuthConfig,
    pub memory: MemoryConfig,
    pub embedder: EmbedderConfig,
    /// The Context Architect: budgets, relevance, cache and summary triggers.
    pub context: ContextConfig,
    /// Hindsight Learning: match threshold, scoring weights and promotion rules.
    pub hindsight: HindsightConfig,
    /// The Note-Taking agent: capture modes, queue, truncation caps and distillation.
    pub notes: NotesConfig,
    /// LLM providers and the chain of each role (summaries, notes, loop analyses); none by
    /// default: every agent then uses its deterministic path.
    pub llm: LlmConfig,
    /// Redis for the hot cache shared by several instances (`context_assemble` results), such
    /// as `redis://:password@cache:6379/0`. Unset: the cache is in process. Unreachable at
    /// start: an error; lost later: assemblies run uncached until it answers again.
    pub redis_url: Option<RedisUrl>,
    /// Extensions run inside the server: the `extensions_*` tools (none without a `dir`).
    pub extensions: ExtensionsConfig,
    /// The Meta-Agent: loop limits, the per-tenant cap, and the operator's allow-list of
    /// commands and working roots for command-driven loops.
    pub meta: MetaConfig,
    /// Knowledge repositories (git) synced into memory; none by default.
    pub knowledge: KnowledgeConfig,
    /// The CC-MemEx REST API (`/v1/ingest-context`, `/v1/retrieve-context`): ingest queue
    /// bounds, chunking and the queue worker.
    pub rest: RestConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 7878)),
            data_dir: None,
            database_url: None,
            qdrant_url: None,
            log_format: LogFormat::Text,
            log: "info".into(),
            http: HttpConfig::default(),
            auth: AuthConfig::default(),
            memory: MemoryConfig::default(),
            embedder: EmbedderConfig::default(),
            context: ContextConfig::default(),
            hindsight: HindsightConfig::default(),
            notes: NotesConfig::default(),
            llm: LlmConfig::default(),
            redis_url: None,
            extensions: ExtensionsConfig::default(),
            meta: MetaConfig::default(),
            knowledge: KnowledgeConfig::default(),
            rest: RestConfig::default(),
        }
    }
}

/// The CC-MemEx REST API: how much a client may queue, how texts are chunked, and how the
/// queue worker runs (`docs/rest-api.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RestConfig {
    /// Largest `text_content` accepted, in bytes (512 KiB); larger gets 413. The request body
    /// is bounded by `http.max_body_bytes` too: the smaller limit applies.
    pub max_text_bytes: usize,
    /// Most tokens per chunk (256, `o200k_base`).
    pub chunk_tokens: usize,
    /// Tokens of words repeated at the start of the next chunk (32); less than half of
    /// `chunk_tokens`.
    pub chunk_overlap_tokens: usize,
    /// Most chunks one ingest may make (1000); a longer text gets 413.
    pub max_chunks_per_job: usize,
    /// Most jobs a tenant may have queued or in progress (1000); beyond, 429.
    pub max_queued_jobs_per_tenant: usize,
    /// Queue workers in this process (1); 0 leaves the queue to other instances.
    pub ingest_workers: usize,
    /// How often an idle worker looks for jobs, in milliseconds (1000); a job accepted by this
    /// process wakes its workers at once.
    pub poll_interval_ms: u64,
    /// Attempts per job before it is FAILED (5); invalid input fails at once.
    pub max_attempts: u32,
    /// Backoff before the first retry, in seconds (2); doubled per attempt, at most 300.
    pub retry_backoff_secs: u64,
    /// A job PROCESSING this long is taken to be abandoned by a process that died and is
    /// claimed again, in seconds (300). On SQLite (one process) jobs left PROCESSING are
    /// requeued at start.
    pub reclaim_after_secs: u64,
    /// COMPLETED and FAILED jobs (their status) are kept this long, in seconds (86400).
    pub job_retention_secs: u64,
}

impl Default for RestConfig {
    fn default() -> Self {
        RestConfig {
            max_text_bytes: 512 * 1024,
            chunk_tokens: 256,
            chunk_overlap_tokens: 32,
            max_chunks_per_job: 1000,
            max_queued_jobs_per_tenant: 1000,
            ingest_workers: 1,
            poll_interval_ms: 1000,
            max_attempts: 5,
            retry_backoff_secs: 2,
            reclaim_after_secs: 300,
            job_retention_secs: 86_400,
        }
    }
}

impl RestConfig {
    fn validate(&self) -> anyhow::Result<()> {
        for (key, value) in [
            ("rest.max_text_bytes", self.max_text_bytes as u64),
            ("rest.chunk_tokens", self.chunk_tokens as u64),
            ("rest.max_chunks_per_job", self.max_chunks_per_job as u64),
            (
                "rest.max_queued_jobs_per_tenant",
                self.max_queued_jobs_per_tenant as u64,
            ),
            ("rest.poll_interval_ms", self.poll_interval_ms),
            ("rest.max_attempts", u64::from(self.max_attempts)),
            ("rest.reclaim_after_secs", self.reclaim_after_secs),
            ("rest.job_retention_secs", self.job_retention_secs),
        ] {
            if value == 0 {
                bail!("invalid configuration: {key} must be at least 1");
            }
        }
        if self.chunk_overlap_tokens * 2 > self.chunk_tokens {
            bail!(
                "invalid configuration: rest.chunk_overlap_tokens ({}) must be at most half of \
                 rest.chunk_tokens ({})",
                self.chunk_overlap_tokens,
                self.chunk_tokens
            );
        }
        Ok(())
    }
}

/// A Redis URL: `redis://[[user]:password@]host[:port][/db]`, `rediss://…` (TLS) or
/// `redis+unix:///path`. Checked when the configuration loads; its password never appears in
/// `Debug` output, logs or errors.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct RedisUrl(String);

impl RedisUrl {
    pub fn parse(url: &str) -> Result<Self, String> {
        let shown = aeterna_context::shared_cache::redacted_url(url);
        let Some((scheme, rest)) = url.split_once("://") else {
            return Err(format!(
                "`{shown}` is not a URL; use redis://[:password@]host:port[/db]"
            ));
        };
        if !matches!(scheme, "redis" | "rediss" | "redis+unix" | "unix") {
            return Err(format!(
                "`{shown}` has scheme `{scheme}`; use redis://, rediss:// or redis+unix://"
            ));
        }
        let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
        if host.is_empty() || host.starts_with('/') && !scheme.contains("unix") {
            return Err(format!("`{shown}` names no host; use redis://host:port"));
        }
        Ok(RedisUrl(url.to_owned()))
    }

    /// The URL with its password, for connecting only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL with its password redacted, for logs and messages.
    pub fn redacted(&self) -> String {
        aeterna_context::shared_cache::redacted_url(&self.0)
    }
}

impl std::fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RedisUrl({})", self.redacted())
    }
}

impl<'de> Deserialize<'de> for RedisUrl {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let url = String::deserialize(deserializer)?;
        RedisUrl::parse(&url).map_err(serde::de::Error::custom)
    }
}

/// Server-side extensions: an operator's directory of components, watched and hot-reloaded,
/// run by `extensions_apply` with state per tenant and session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExtensionsConfig {
    /// Directory of `*.wasm` extensions (each with an optional `<name>.toml` manifest).
    pub dir: Option<PathBuf>,
    /// The extension host: limits, quarantine, state quota, compile cache (default
    /// `<data_dir>/component-cache`). See `aeterna_host::HostConfig`.
    pub host: aeterna_host::HostConfig,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    Text,
    Json,
}

/// HTTP transport settings: who may reach the server, and how much a client may hold.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    /// `Host` values every route but `/healthz` accepts (DNS-rebinding protection). Empty
    /// means the loopback names plus the listen address; an entry with a port matches only
    /// that port; `["*"]` accepts any host (only behind a proxy that checks it).
    pub allowed_hosts: Vec<String>,
    /// Browser `Origin`s accepted on every route but `/healthz`; requests without `Origin`
    /// (every non-browser client) pass. Empty means loopback pages only (`http://localhost:*`,
    /// `http://127.0.0.1:*`, `http://[::1]:*` and their `https` forms); entries are
    /// `scheme://host[:port]`, `:*` matching any port; `["*"]` accepts any origin.
    pub allowed_origins: Vec<String>,
    /// Largest accepted request body, in bytes (1 MiB). Larger bodies get 413.
    pub max_body_bytes: usize,
    /// How long a client may take to send a request's headers, in seconds (10); an idle
    /// keep-alive connection is closed after the same time.
    pub header_read_timeout_secs: u64,
    /// How long a client may take to send a request's body, in seconds (30); then 408.
    pub body_read_timeout_secs: u64,
    /// Open connections at most (1024); further clients wait in the listen backlog.
    pub max_connections: usize,
    /// Open MCP sessions (of the handshake protocol revisions) at most (1000); further
    /// `initialize` requests get 503 until sessions end.
    pub max_sessions: usize,
    /// An MCP session unused for this long is closed, in seconds (300).
    pub session_idle_secs: u64,
    /// How long a graceful shutdown waits for in-flight requests, in seconds (10).
    pub shutdown_grace_secs: u64,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body_bytes: 1024 * 1024,
            header_read_timeout_secs: 10,
            body_read_timeout_secs: 30,
            max_connections: 1024,
            max_sessions: 1000,
            session_idle_secs: 300,
            shutdown_grace_secs: 10,
        }
    }
}

/// Bearer tokens and the tenants they map to.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    /// Accepted tokens. Required when listening on a non-loopback address; when any is
    /// configured, every MCP and REST request must present one.
    pub tokens: Vec<TokenConfig>,
    /// The tenant of `aeterna mcp` (stdio) and of tokenless requests on loopback ("default").
    pub default_tenant: String,
    /// Identity defaults for the default tenant.
    pub defaults: IdentityFields,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            tokens: Vec::new(),
            default_tenant: "default".into(),
            defaults: IdentityFields::default(),
        }
    }
}

/// One accepted token.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// The secret a client presents as `Authorization: Bearer …` or `X-API-Key: …`.
    pub token: String,
    /// The tenant every call made with this token belongs to.
    pub tenant: String,
    /// The user this token acts as (`user_id`); `"*"` lets a service token act for any user.
    /// Left out: the user its `defaults` name, if any; otherwise no user.
    #[serde(default)]
    pub user: Option<String>,
    /// The teams it may act as (`team_id`), besides the one its `defaults` name; `["*"]` for
    /// any team.
    #[serde(default)]
    pub teams: Vec<String>,
    /// The organisations it may act as (`org_id`), besides the one its `defaults` name;
    /// `["*"]` for any organisation.
    #[serde(default)]
    pub orgs: Vec<String>,
    /// The roles it holds, and on which scopes.
    #[serde(default)]
    pub roles: RolesConfig,
    /// Identity used when a tool call leaves a field out.
    #[serde(default)]
    pub defaults: IdentityFields,
}

/// The roles of a token.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RolesConfig {
    /// Scopes where it decides Hindsight promotions (`hindsight_approve`): `team:<id>`,
    /// `org:<id>`, `company`, or `*` for every scope.
    pub approver: Vec<String>,
}

impl TokenConfig {
    /// What this token proves: its claims, with the scopes its `defaults` name.
    pub fn grants(&self) -> Grants {
        let with_default = |claimed: &[String], default: &Option<String>| {
            Claim::of(claimed.iter().chain(default).cloned())
        };
        let users = match &self.user {
            Some(user) => Claim::of([user.clone()]),
            None => with_default(&[], &self.defaults.user_id),
        };
        Grants {
            users,
            teams: with_default(&self.teams, &self.defaults.team_id),
            orgs: with_default(&self.orgs, &self.defaults.org_id),
            approves: Claim::of(self.roles.approver.iter().map(|entry| {
                approver_scope(entry).map_or_else(|_| entry.clone(), |scope| scope.to_string())
            })),
        }
    }

    /// Why this token's claims are inconsistent, if they are: an empty id, an approver scope
    /// that is not `team:<id>`, `org:<id>` or `company`, or one outside the token's claims, or
    /// a default the claims do not hold.
    fn check_claims(&self, key: &str) -> anyhow::Result<()> {
        let ids = self.user.iter().chain(&self.teams).chain(&self.orgs);
        if ids.clone().any(|id| id.trim().is_empty()) {
            bail!("invalid configuration: {key} names an empty user, team or org id");
        }
        let grants = self.grants();
        for entry in &self.roles.approver {
            if entry == "*" {
                continue;
            }
            let scope = approver_scope(entry).map_err(|why| {
                anyhow::anyhow!("invalid configuration: {key}.roles.approver: {why}")
            })?;
            if !grants.reaches(scope.layer, &scope.scope_id) {
                bail!(
                    "invalid configuration: {key}.roles.approver names `{entry}`, but the token                      may not act for {} `{}`: add it to the token's `{}s`",
                    scope.layer,
                    scope.scope_id,
                    scope.layer
                );
            }
        }
        for (layer, default) in [
            (Layer::User, &self.defaults.user_id),
            (Layer::Team, &self.defaults.team_id),
            (Layer::Org, &self.defaults.org_id),
        ] {
            if let Some(default) = default
                && let Err(refusal) = grants.check(layer, default)
            {
                bail!("invalid configuration: {key}.defaults: {refusal}");
            }
        }
        Ok(())
    }
}

/// The scope of an `approver` entry: `team:<id>`, `org:<id>` or `company`.
fn approver_scope(entry: &str) -> Result<Scope, String> {
    let scope = match entry.split_once(':') {
        Some(("team", id)) if !id.is_empty() => Scope::new(Layer::Team, id),
        Some(("org", id)) if !id.is_empty() => Scope::new(Layer::Org, id),
        Some(("company", COMPANY_SCOPE)) => Scope::new(Layer::Company, COMPANY_SCOPE),
        None if entry == "company" => Scope::new(Layer::Company, COMPANY_SCOPE),
        _ => {
            return Err(format!(
                "`{entry}` is not a scope; expected `team:<id>`, `org:<id>`, `company` or `*`                  (promotions go into teams, orgs and the company)"
            ));
        }
    };
    Ok(scope)
}

impl std::fmt::Debug for TokenConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenConfig")
            .field("token", &"<redacted>")
            .field("tenant", &self.tenant)
            .field("user", &self.user)
            .field("teams", &self.teams)
            .field("orgs", &self.orgs)
            .field("roles", &self.roles)
            .field("defaults", &self.defaults)
            .finish()
    }
}

/// The identity fields of a call, besides the tenant. In the configuration they are a token's
/// defaults; in tool arguments they name the scopes of the call, and win over the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct IdentityFields {
    /// The agent, for the `agent` layer. Defaults to the token's configured value.
    #[serde(deserialize_with = "named_field::agent_id")]
    pub agent_id: Option<String>,
    /// The user, for the `user` layer. Defaults to the token's configured value.
    #[serde(deserialize_with = "named_field::user_id")]
    pub user_id: Option<String>,
    /// The working session, for the `session` layer. Defaults to the token's configured value.
    #[serde(deserialize_with = "named_field::session_id")]
    pub session_id: Option<String>,
    /// The project or repository, for the `project` layer. Defaults to the token's configured
    /// value.
    #[serde(deserialize_with = "named_field::project_id")]
    pub project_id: Option<String>,
    /// The team, for the `team` layer. Defaults to the token's configured value.
    #[serde(deserialize_with = "named_field::team_id")]
    pub team_id: Option<String>,
    /// The organisation, for the `org` layer. Defaults to the token's configured value.
    #[serde(deserialize_with = "named_field::org_id")]
    pub org_id: Option<String>,
}

/// Deserialisers for the identity fields whose errors name the field. Identity fields are
/// flattened into every tool's arguments, and serde reports a wrong type inside a flattened
/// struct without the field (`invalid type: integer, expected a string`).
mod named_field {
    macro_rules! optional_strings {
        ($($field:ident),*) => {$(
            pub fn $field<'de, D: serde::Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Option<String>, D::Error> {
                <Option<String> as serde::Deserialize>::deserialize(deserializer).map_err(|error| {
                    serde::de::Error::custom(format_args!("`{}`: {error}", stringify!($field)))
                })
            }
        )*};
    }
    optional_strings!(agent_id, user_id, session_id, project_id, team_id, org_id);
}

impl IdentityFields {
    /// Each field with its argument name.
    pub fn named(&self) -> [(&'static str, Option<&str>); 6] {
        [
            ("agent_id", self.agent_id.as_deref()),
            ("user_id", self.user_id.as_deref()),
            ("session_id", self.session_id.as_deref()),
            ("project_id", self.project_id.as_deref()),
            ("team_id", self.team_id.as_deref()),
            ("org_id", self.org_id.as_deref()),
        ]
    }

    /// Each field of `self`, or `fallback`'s where `self` leaves it out; empty strings count as
    /// absent.
    pub fn or(&self, fallback: &IdentityFields) -> IdentityFields {
        fn pick(preferred: &Option<String>, fallback: &Option<String>) -> Option<String> {
            let present = |value: &&String| !value.trim().is_empty();
            preferred
                .as_ref()
                .filter(present)
                .or(fallback.as_ref().filter(present))
                .cloned()
        }
        IdentityFields {
            agent_id: pick(&self.agent_id, &fallback.agent_id),
            user_id: pick(&self.user_id, &fallback.user_id),
            session_id: pick(&self.session_id, &fallback.session_id),
            project_id: pick(&self.project_id, &fallback.project_id),
            team_id: pick(&self.team_id, &fallback.team_id),
            org_id: pick(&self.org_id, &fallback.org_id),
        }
    }
}

/// Command-line values that override the file and the environment.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Overrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<SocketAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_format: Option<LogFormat>,
}

impl Config {
    /// Defaults, then `file` (when given), then `AETERNA_*` variables, then `overrides`.
    pub fn load(file: Option<&Path>, overrides: &Overrides) -> anyhow::Result<Config> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        if let Some(file) = file {
            if !file.is_file() {
                bail!(
                    "config file {} does not exist or is not a file",
                    file.display()
                );
            }
            figment = figment.merge(Toml::file(file));
        }
        figment = figment
            .merge(Env::prefixed("AETERNA_").split("__").filter(|key| {
                let section = key.as_str().split('.').next().unwrap_or_default();
                SECTIONS
                    .iter()
                    .any(|known| known.eq_ignore_ascii_case(section))
            }))
            .merge(Serialized::defaults(overrides));
        let mut config: Config = figment.extract().map_err(|error| {
            let messages: Vec<String> = error.into_iter().map(|e| describe(&e)).collect();
            anyhow::anyhow!("invalid configuration: {}", messages.join("; "))
        })?;
        if config.data_dir.is_none() {
            config.data_dir = Some(default_data_dir()?);
        }
        config.validate()?;
        Ok(config)
    }

    /// Checks what serde cannot: non-empty names, unique tokens, sane limits.
    pub fn validate(&self) -> anyhow::Result<()> {
        validate_tenant("auth.default_tenant", &self.auth.default_tenant)?;
        for (index, token) in self.auth.tokens.iter().enumerate() {
            if token.token.trim().is_empty() {
                bail!("invalid configuration: auth.tokens[{index}].token is empty");
            }
            validate_tenant(&format!("auth.tokens[{index}].tenant"), &token.tenant)?;
            token.check_claims(&format!("auth.tokens[{index}]"))?;
            if self.auth.tokens[..index]
                .iter()
                .any(|other| other.token == token.token)
            {
                bail!(
                    "invalid configuration: auth.tokens[{index}].token repeats an earlier token; \
                     each token must map to exactly one tenant"
                );
            }
        }
        if let Some(url) = &self.qdrant_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            bail!(
                "invalid configuration: qdrant_url `{url}` is not an http:// or https:// URL; \
                 use Qdrant's gRPC address, such as http://127.0.0.1:6334"
            );
        }
        if self.http.max_body_bytes < 1024 {
            bail!("invalid configuration: http.max_body_bytes must be at least 1024");
        }
        if self.http.max_body_bytes < self.memory.max_content_bytes {
            bail!(
                "invalid configuration: http.max_body_bytes ({}) is smaller than \
                 memory.max_content_bytes ({}); raise http.max_body_bytes",
                self.http.max_body_bytes,
                self.memory.max_content_bytes
            );
        }
        let http = &self.http;
        for (key, value) in [
            (
                "http.header_read_timeout_secs",
                http.header_read_timeout_secs,
            ),
            ("http.body_read_timeout_secs", http.body_read_timeout_secs),
            ("http.session_idle_secs", http.session_idle_secs),
            ("http.max_connections", http.max_connections as u64),
            ("http.max_sessions", http.max_sessions as u64),
        ] {
            if value == 0 {
                bail!("invalid configuration: {key} must be at least 1");
            }
        }
        crate::http::guard::RequestGuard::from_config(self)?;
        if self.memory.max_page_size == 0 {
            bail!("invalid configuration: memory.max_page_size must be at least 1");
        }
        if let Err(error) = self.context.validate() {
            bail!("invalid configuration: {error}");
        }
        if let Err(error) = self.hindsight.validate() {
            bail!("invalid configuration: {error}");
        }
        if let Err(error) = self.notes.validate() {
            bail!("invalid configuration: {error}");
        }
        if let Err(error) = self.llm.validate() {
            bail!("invalid configuration: {error}");
        }
        if let Err(error) = self.meta.validate() {
            bail!("invalid configuration: {error}");
        }
        if let Err(error) = self.knowledge.validate() {
            bail!("invalid configuration: {error}");
        }
        self.rest.validate()?;
        for (index, repository) in self.knowledge.repositories.iter().enumerate() {
            validate_tenant(
                &format!("knowledge.repositories[{index}].tenant"),
                &repository.tenant,
            )?;
        }
        Ok(())
    }

    /// The data directory (resolved by [`Config::load`]).
    pub fn data_dir(&self) -> anyhow::Result<PathBuf> {
        match &self.data_dir {
            Some(dir) => Ok(dir.clone()),
            None => default_data_dir(),
        }
    }

    /// Refuses a non-loopback listen address without tokens: anyone who can reach the port
    /// would otherwise read and write the default tenant's memory.
    pub fn check_exposure(&self) -> anyhow::Result<()> {
        if !self.listen.ip().is_loopback() && self.auth.tokens.is_empty() {
            bail!(
                "refusing to listen on {} without authentication: configure at least one \
                 [[auth.tokens]] entry, or listen on a loopback address such as 127.0.0.1",
                self.listen
            );
        }
        Ok(())
    }
}

/// One configuration error: the key in lower case, what is wrong, and where the value came from.
fn describe(error: &figment::Error) -> String {
    let key = error.path.join(".").to_ascii_lowercase();
    let origin = match &error.metadata {
        Some(metadata) if metadata.name.contains("environment") && !key.is_empty() => {
            format!(
                " (from AETERNA_{})",
                key.replace('.', "__").to_ascii_uppercase()
            )
        }
        Some(metadata) => match &metadata.source {
            Some(source) => format!(" (in {source})"),
            None => format!(" (from {})", metadata.name),
        },
        None => String::new(),
    };
    if key.is_empty() {
        format!("{}{origin}", error.kind)
    } else {
        format!("`{key}`: {}{origin}", error.kind)
    }
}

fn validate_tenant(key: &str, tenant: &str) -> anyhow::Result<()> {
    let valid = !tenant.is_empty()
        && tenant.len() <= 128
        && tenant
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !valid {
        bail!(
            "invalid configuration: {key} = {tenant:?}; a tenant id is 1 to 128 characters of \
             letters, digits, '-', '_' or '.'"
        );
    }
    Ok(())
}

/// `$XDG_DATA_HOME/aeterna`, else `~/.local/share/aeterna`.
pub fn default_data_dir() -> anyhow::Result<PathBuf> {
    if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from)
        && xdg.is_absolute()
    {
        return Ok(xdg.join("aeterna"));
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|home| home.is_absolute())
        .context("cannot find a data directory: set --data-dir, AETERNA_DATA_DIR or HOME")?;
    Ok(home.join(".local/share/aeterna"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, text: &str) -> PathBuf {
        let path = dir.path().join("aeterna.toml");
        std::fs::write(&path, text).expect("write config");
        path
    }

    #[test]
    fn file_values_are_read_and_defaults_fill_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(
            &dir,
            r#"
            listen = "127.0.0.1:9000"
            data_dir = "/tmp/aeterna-test"
            [memory]
            max_content_bytes = 1000
            [[auth.tokens]]
            token = "t0ken-a"
            tenant = "acme"
            defaults = { user_id = "alice" }
            "#,
        );
        let config = Config::load(Some(&path), &Overrides::default()).expect("valid config");
        assert_eq!(config.listen.port(), 9000);
        assert_eq!(config.memory.max_content_bytes, 1000);
        assert_eq!(
            config.memory.max_page_size,
            MemoryConfig::default().max_page_size
        );
        assert_eq!(config.auth.tokens[0].tenant, "acme");
        assert_eq!(
            config.auth.tokens[0].defaults.user_id.as_deref(),
            Some("alice")
        );
    }

    #[test]
    fn unknown_keys_are_rejected_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(&dir, "[memory]\nmax_contnt_bytes = 5\n");
        let error = Config::load(Some(&path), &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("max_contnt_bytes"), "{error}");
    }

    #[test]
    fn wrong_types_name_the_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(&dir, "listen = 12\n");
        let error = Config::load(Some(&path), &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("listen"), "{error}");
    }

    #[test]
    fn overrides_win_over_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(&dir, "listen = \"127.0.0.1:9000\"\n");
        let overrides = Overrides {
            listen: Some("127.0.0.1:9100".parse().expect("addr")),
            ..Overrides::default()
        };
        let config = Config::load(Some(&path), &overrides).expect("valid config");
        assert_eq!(config.listen.port(), 9100);
    }

    #[test]
    fn duplicate_tokens_and_bad_tenants_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(
            &dir,
            "[[auth.tokens]]\ntoken = \"x\"\ntenant = \"a\"\n[[auth.tokens]]\ntoken = \"x\"\ntenant = \"b\"\n",
        );
        let error = Config::load(Some(&path), &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("auth.tokens[1].token"), "{error}");

        let path = write(&dir, "[[auth.tokens]]\ntoken = \"x\"\ntenant = \"a b\"\n");
        let error = Config::load(Some(&path), &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("auth.tokens[0].tenant"), "{error}");
    }

    #[test]
    fn token_claims_become_grants_and_inconsistent_claims_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let load = |claims: &str| {
            let text = format!("[[auth.tokens]]\ntoken = \"x\"\ntenant = \"a\"\n{claims}\n");
            Config::load(Some(&write(&dir, &text)), &Overrides::default())
        };
        let config = load(
            "user = \"ann\"\nteams = [\"web\"]\nroles = { approver = [\"team:web\", \"company\"] }\n\
             defaults = { team_id = \"core\", org_id = \"acme\" }",
        )
        .expect("valid claims");
        let grants = config.auth.tokens[0].grants();
        assert_eq!(grants.users, Claim::of(["ann"]));
        assert_eq!(
            grants.teams,
            Claim::of(["core", "web"]),
            "defaults are claimed"
        );
        assert_eq!(grants.orgs, Claim::of(["acme"]));
        assert_eq!(grants.approves, Claim::of(["team:web", "company:company"]));
        let config = load("user = \"*\"\nteams = [\"*\"]").expect("service token");
        assert_eq!(config.auth.tokens[0].grants().users, Claim::Any);
        assert_eq!(config.auth.tokens[0].grants().orgs, Claim::none());

        for (claims, expected) in [
            (
                "roles = { approver = [\"team:web\"] }",
                "may not act for team `web`",
            ),
            (
                "roles = { approver = [\"project:p\"] }",
                "expected `team:<id>`",
            ),
            ("roles = { aprover = [\"*\"] }", "aprover"),
            (
                "user = \"ann\"\ndefaults = { user_id = \"bob\" }",
                "`user_id` = `bob`",
            ),
            ("teams = [\" \"]", "empty user, team or org id"),
        ] {
            let error = load(claims).expect_err(claims).to_string();
            assert!(error.contains(expected), "{claims}: {error}");
            assert!(error.contains("auth.tokens"), "{claims}: {error}");
        }
    }

    #[test]
    fn embedder_section_selects_the_provider() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(
            &dir,
            "[embedder]\nprovider = \"openai\"\nbase_url = \"http://localhost:11434/v1\"\n\
             model = \"nomic-embed-text\"\ndimensions = 768\n",
        );
        let config = Config::load(Some(&path), &Overrides::default()).expect("valid config");
        assert!(
            matches!(config.embedder, EmbedderConfig::OpenAi(_)),
            "{:?}",
            config.embedder
        );
        assert_eq!(Config::default().embedder, EmbedderConfig::default());

        let path = write(&dir, "[embedder]\nprovider = \"magic\"\n");
        let error = Config::load(Some(&path), &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("embedder"), "{error}");
    }

    #[test]
    fn non_loopback_needs_a_token() {
        let config = Config {
            listen: "0.0.0.0:7878".parse().expect("addr"),
            ..Config::default()
        };
        let error = config.check_exposure().unwrap_err().to_string();
        assert!(error.contains("auth.tokens"), "{error}");
        assert!(Config::default().check_exposure().is_ok());
    }

    #[test]
    fn rest_section_has_defaults_and_checks_its_bounds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(
            &dir,
            "[rest]\nchunk_tokens = 128\nmax_queued_jobs_per_tenant = 7\n",
        );
        let config = Config::load(Some(&path), &Overrides::default()).expect("valid config");
        assert_eq!(config.rest.chunk_tokens, 128);
        assert_eq!(config.rest.max_queued_jobs_per_tenant, 7);
        assert_eq!(config.rest.chunk_overlap_tokens, 32);
        for (text, expected) in [
            ("[rest]\nchunk_tokens = 40\n", "rest.chunk_overlap_tokens"),
            ("[rest]\nmax_attempts = 0\n", "rest.max_attempts"),
            ("[rest]\nchunk_tokenz = 40\n", "chunk_tokenz"),
        ] {
            let error = Config::load(Some(&write(&dir, text)), &Overrides::default())
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn missing_file_is_an_error() {
        let error = Config::load(
            Some(Path::new("/nonexistent/aeterna.toml")),
            &Overrides::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("does not exist"), "{error}");
    }

    #[test]
    fn redis_url_is_checked_and_its_password_never_shown() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = write(&dir, "redis_url = \"redis://:hunter2@cache:6379/0\"\n");
        let config = Config::load(Some(&path), &Overrides::default()).expect("valid config");
        let url = config.redis_url.as_ref().expect("set");
        assert_eq!(url.expose(), "redis://:hunter2@cache:6379/0");
        assert!(!format!("{config:?}").contains("hunter2"));
        assert!(url.redacted().contains("cache:6379"));

        for bad in [
            "http://:hunter2@cache:6379",
            "cache:6379",
            "redis://:hunter2@",
        ] {
            let path = write(&dir, &format!("redis_url = \"{bad}\"\n"));
            let error = Config::load(Some(&path), &Overrides::default())
                .unwrap_err()
                .to_string();
            assert!(error.contains("redis_url"), "{error}");
            assert!(!error.contains("hunter2"), "{error}");
        }
    }

    #[test]
    fn qdrant_url_must_be_a_grpc_http_url_and_its_api_key_is_never_shown() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            &dir,
            "qdrant_url = \"http://qdrant:6334\"\n[memory.qdrant]\napi_key = \"hunter2\"\n",
        );
        let config = Config::load(Some(&path), &Overrides::default()).unwrap();
        assert_eq!(config.qdrant_url.as_deref(), Some("http://qdrant:6334"));
        assert!(!format!("{config:?}").contains("hunter2"));

        let path = write(&dir, "qdrant_url = \"qdrant:6334\"\n");
        let error = Config::load(Some(&path), &Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("qdrant_url") && error.contains("http://"),
            "{error}"
        );
    }
}
