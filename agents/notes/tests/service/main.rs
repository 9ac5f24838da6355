//! Integration tests of the Note-Taking agent over a real `MemoryService` on real SQLite in
//! temporary data dirs: capture, storage, redaction, distillation, tenancy and restarts.

mod capture;
mod context;
mod distill;
mod failing_store;
mod restart;
mod secrets;
mod tenancy;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Identity, MemoryConfig, MemoryService};
use aeterna_notes::{NotesConfig, NotesService, TrajectoryEvent};
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};

/// The memory service and the agent over one data dir.
pub struct Agent {
    pub memory: Arc<MemoryService>,
    pub notes: Arc<NotesService>,
}

impl Agent {
    pub async fn open(path: &Path, config: NotesConfig) -> Agent {
        Self::open_with(path, config, MemoryConfig::default()).await
    }

    pub async fn open_with(path: &Path, config: NotesConfig, memory: MemoryConfig) -> Agent {
        let memory = aeterna_testkit::profile::open_memory(
            path,
            memory,
            Arc::new(HashingEmbedder::default()),
        )
        .await
        .expect("open memory");
        let memory = Arc::new(memory);
        let notes = NotesService::start(config, memory.clone()).expect("start notes");
        Agent { memory, notes }
    }

    /// Graceful shutdown, in the server's order: drain the agent, then flush the memory.
    pub async fn close(self) {
        let report = self.notes.shutdown().await;
        assert_eq!(report.lost, 0, "nothing acknowledged is lost");
        self.memory.flush().await.expect("flush memory");
    }
}

/// A config without automatic distillation, so tests decide when to distil.
pub fn manual() -> NotesConfig {
    let mut config = NotesConfig::default();
    config.distill.threshold = 0;
    config
}

pub fn alice() -> Identity {
    Identity {
        tenant_id: "acme".into(),
        agent_id: Some("agent-1".into()),
        user_id: Some("alice".into()),
        session_id: Some("s-1".into()),
        project_id: Some("parser".into()),
        team_id: None,
        org_id: None,
        grants: Default::default(),
    }
}

pub fn event(
    tool: &str,
    description: &str,
    input: serde_json::Value,
    output: &str,
    success: bool,
) -> TrajectoryEvent {
    TrajectoryEvent {
        tool_name: tool.into(),
        description: description.into(),
        input,
        output: output.into(),
        success,
        duration_ms: 40,
        tags: vec![],
        metadata: None,
    }
}

pub fn for_whom(who: &Identity, events: Vec<TrajectoryEvent>) -> Vec<(Identity, TrajectoryEvent)> {
    events
        .into_iter()
        .map(|event| (who.clone(), event))
        .collect()
}

/// search → read → edit → test fails → fix → test passes, as an agent would report it.
pub fn realistic_trajectory() -> Vec<TrajectoryEvent> {
    use serde_json::json;
    vec![
        event(
            "grep",
            "Find where expressions are parsed",
            json!({"pattern": "fn parse_expr", "path": "src"}),
            "src/parser.rs:12: pub fn parse_expr(tokens: &[Token]) -> Expr",
            true,
        ),
        event(
            "read_file",
            "Read the expression parser",
            json!({"path": "src/parser.rs"}),
            "pub fn parse_expr(tokens: &[Token]) -> Expr {\n    match tokens[0] {",
            true,
        ),
        event(
            "edit_file",
            "Parse sums of two terms",
            json!({"path": "src/parser.rs", "old": "match tokens[0]", "new": "match (tokens[0], tokens.get(1))"}),
            "edited src/parser.rs",
            true,
        ),
        event(
            "bash",
            "Run the parser tests",
            json!({"command": "cargo test parser"}),
            "running 3 tests\ntest parser::tests::parses_numbers ... ok\ntest parser::tests::parses_sums ... ok\ntest parser::tests::parses_empty_input ... FAILED\n\nfailures:\n\n---- parser::tests::parses_empty_input stdout ----\nthread 'parser::tests::parses_empty_input' panicked at src/parser.rs:13:11:\nindex out of bounds: the len is 0 but the index is 0\n\ntest result: FAILED. 2 passed; 1 failed",
            false,
        ),
        event(
            "edit_file",
            "Return Expr::Empty for an empty token list instead of indexing tokens[0]",
            json!({"path": "src/parser.rs", "old": "match (tokens[0]", "new": "if tokens.is_empty() { return Expr::Empty; }\n    match (tokens[0]"}),
            "edited src/parser.rs",
            true,
        ),
        event(
            "bash",
            "Run the parser tests again",
            json!({"command": "cargo test parser"}),
            "running 3 tests\ntest result: ok. 3 passed; 0 failed",
            true,
        ),
    ]
}

/// A read-only connection to the data dir's database, beside the service's own pool, to look
/// at stored rows directly.
pub async fn inspect(path: &Path) -> SqlitePool {
    let options = SqliteConnectOptions::new()
        .filename(path.join("aeterna.db"))
        .read_only(true);
    SqlitePool::connect_with(options)
        .await
        .expect("open the database read-only")
}

pub async fn count_events(db: &SqlitePool, tenant: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM trajectory_events WHERE tenant_id = ?")
        .bind(tenant)
        .fetch_one(db)
        .await
        .expect("count events")
}

/// Waits for `condition` to hold, checking every 20 ms for up to 10 s; for work done by
/// background tasks. The bound is a hang guard, not a performance assertion.
pub async fn eventually<F, Fut>(what: &str, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..500 {
        if condition().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for: {what}");
}
