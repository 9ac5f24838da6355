//! [`TrajectoryStore`]: captured events in the shared SQLite database
//! (`migrations/sqlite/0200_trajectory_events.sql`). Every query filters by tenant in SQL.

use aeterna_memory::Identity;
use aeterna_memory::storage::sqlite::SqliteDatabase;
use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row, Sqlite};
use uuid::Uuid;

use crate::error::{NotesError, Result};
use crate::event::{CapturedEvent, SessionKey};
use crate::queue::TrajectorySink;

/// Rows per `INSERT` statement: 19 parameters each keeps a statement far below SQLite's
/// parameter limit, and a fixed size lets the prepared statement be reused.
const ROWS_PER_STATEMENT: usize = 64;

const COLUMNS: &str = "tenant_id, id, project_id, session_id, agent_id, user_id, team_id, \
    org_id, tool_name, description, input, output, success, duration_ms, tags, metadata, \
    truncated, captured_at, note_id";

/// The `note_id` of events a distiller declined (nothing worth a note): they are distilled,
/// and no note covers them. The nil UUID is never a memory's id.
pub const DECLINED: Uuid = Uuid::nil();

/// A session with events not yet covered by a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSession {
    pub session: SessionKey,
    pub pending: u64,
    /// The identity of the session's latest event, for distilling on its behalf.
    pub identity: Identity,
}

/// Trajectory events of every tenant.
#[derive(Clone)]
pub struct TrajectoryStore {
    db: SqliteDatabase,
}

fn failed(context: &'static str) -> impl FnOnce(sqlx::Error) -> NotesError {
    move |error| NotesError::storage(context, error)
}

impl TrajectoryStore {
    pub fn new(db: SqliteDatabase) -> Self {
        TrajectoryStore { db }
    }

    /// Stores `events` in one transaction; events already stored are left as they are.
    pub async fn insert(&self, events: &[CapturedEvent]) -> Result<()> {
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting a write"))?;
        for chunk in events.chunks(ROWS_PER_STATEMENT) {
            let mut insert: QueryBuilder<Sqlite> = QueryBuilder::new(format!(
                "INSERT OR IGNORE INTO trajectory_events ({COLUMNS}) "
            ));
            insert.push_values(chunk, |mut row, event| {
                let who = &event.identity;
                row.push_bind(who.tenant_id.clone())
                    .push_bind(event.id.to_string())
                    .push_bind(who.project_id.clone().unwrap_or_default())
                    .push_bind(who.session_id.clone().unwrap_or_default())
                    .push_bind(who.agent_id.clone())
                    .push_bind(who.user_id.clone())
                    .push_bind(who.team_id.clone())
                    .push_bind(who.org_id.clone())
                    .push_bind(event.tool_name.clone())
                    .push_bind(event.description.clone())
                    .push_bind(event.input.clone())
                    .push_bind(event.output.clone())
                    .push_bind(event.success)
                    .push_bind(i64::try_from(event.duration_ms).unwrap_or(i64::MAX))
                    .push_bind(json_text(&event.tags))
                    .push_bind(json_text(&event.metadata))
                    .push_bind(json_text(&event.truncated))
                    .push_bind(event.captured_at)
                    .push_bind(None::<String>);
            });
            insert
                .build()
                .execute(&mut *tx)
                .await
                .map_err(failed("storing trajectory events"))?;
        }
        tx.commit()
            .await
            .map_err(failed("committing trajectory events"))
    }

    /// How many events of `session` no note covers yet.
    pub async fn pending_count(&self, session: &SessionKey) -> Result<u64> {
        let count: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM trajectory_events \
             WHERE tenant_id = ? AND project_id = ? AND session_id = ? AND note_id IS NULL",
        )
        .bind(&session.tenant_id)
        .bind(&session.project_id)
        .bind(&session.session_id)
        .fetch_one(&self.db.pool)
        .await
        .map_err(failed("counting pending events"))?;
        Ok(count as u64)
    }

    /// The oldest `limit` events of `session` that no note covers yet, in capture order.
    pub async fn pending_events(
        &self,
        session: &SessionKey,
        limit: usize,
    ) -> Result<Vec<CapturedEvent>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM trajectory_events \
             WHERE tenant_id = ? AND project_id = ? AND session_id = ? AND note_id IS NULL \
             ORDER BY id LIMIT ?"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&session.tenant_id)
            .bind(&session.project_id)
            .bind(&session.session_id)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("reading pending events"))?;
        rows.iter().map(event_from_row).collect()
    }

    /// Records that `note_id` (or [`DECLINED`]) covers `events` of `tenant_id`; events already
    /// covered keep their note. Returns how many were marked.
    pub async fn mark_covered(
        &self,
        tenant_id: &str,
        events: &[Uuid],
        note_id: Uuid,
    ) -> Result<u64> {
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting a write"))?;
        let mut marked = 0;
        for chunk in events.chunks(500) {
            let mut update: QueryBuilder<Sqlite> =
                QueryBuilder::new("UPDATE trajectory_events SET note_id = ");
            update.push_bind(note_id.to_string());
            update
                .push(" WHERE tenant_id = ")
                .push_bind(tenant_id.to_owned());
            update.push(" AND note_id IS NULL AND id IN (");
            let mut ids = update.separated(", ");
            for id in chunk {
                ids.push_bind(id.to_string());
            }
            update.push(")");
            let done = update
                .build()
                .execute(&mut *tx)
                .await
                .map_err(failed("marking covered events"))?;
            marked += done.rows_affected();
        }
        tx.commit()
            .await
            .map_err(failed("committing covered events"))?;
        Ok(marked)
    }

    /// The notes that cover events of `session`, oldest first, with how many events each
    /// covers.
    pub async fn session_notes(&self, session: &SessionKey) -> Result<Vec<(Uuid, u64)>> {
        let rows = sqlx::query(
            "SELECT note_id, count(*) AS events, min(id) AS first FROM trajectory_events \
             WHERE tenant_id = ? AND project_id = ? AND session_id = ? AND note_id IS NOT NULL \
             AND note_id <> ? GROUP BY note_id ORDER BY first",
        )
        .bind(&session.tenant_id)
        .bind(&session.project_id)
        .bind(&session.session_id)
        .bind(DECLINED.to_string())
        .fetch_all(&self.db.pool)
        .await
        .map_err(failed("reading a session's notes"))?;
        rows.iter()
            .map(|row| {
                Ok((
                    parse_uuid(row.get::<&str, _>("note_id"))?,
                    row.get::<i64, _>("events") as u64,
                ))
            })
            .collect()
    }

    /// Ids of the notes covering events of `tenant_id`, in id order (creation order: ids are
    /// UUID v7), after `after`, at most `limit`.
    pub async fn note_ids(
        &self,
        tenant_id: &str,
        after: Option<Uuid>,
        limit: usize,
    ) -> Result<Vec<Uuid>> {
        let rows: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT note_id FROM trajectory_events \
             WHERE tenant_id = ? AND note_id IS NOT NULL AND note_id > ? ORDER BY note_id LIMIT ?",
        )
        .bind(tenant_id)
        // The nil id of declined events sorts first: start after it.
        .bind(after.unwrap_or(DECLINED).to_string())
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.db.pool)
        .await
        .map_err(failed("listing notes"))?;
        rows.iter().map(|id| parse_uuid(id)).collect()
    }

    /// How many events of `tenant_id` note `note_id` covers.
    pub async fn covered_count(&self, tenant_id: &str, note_id: Uuid) -> Result<u64> {
        let count: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM trajectory_events WHERE tenant_id = ? AND note_id = ?",
        )
        .bind(tenant_id)
        .bind(note_id.to_string())
        .fetch_one(&self.db.pool)
        .await
        .map_err(failed("counting a note's events"))?;
        Ok(count as u64)
    }

    /// Sessions (of every tenant) with at least `threshold` uncovered events: the backlog an
    /// interrupted run left for automatic distillation.
    pub async fn sessions_due(&self, threshold: usize) -> Result<Vec<PendingSession>> {
        let sql = format!(
            "SELECT {COLUMNS}, pending FROM trajectory_events AS e JOIN ( \
                 SELECT tenant_id AS t, project_id AS p, session_id AS s, count(*) AS pending, \
                        max(id) AS latest \
                 FROM trajectory_events WHERE note_id IS NULL \
                 GROUP BY tenant_id, project_id, session_id HAVING count(*) >= ? \
             ) ON e.tenant_id = t AND e.id = latest"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(i64::try_from(threshold.max(1)).unwrap_or(i64::MAX))
            .fetch_all(&self.db.pool)
            .await
            .map_err(failed("finding sessions due for distillation"))?;
        rows.iter()
            .map(|row| {
                let event = event_from_row(row)?;
                Ok(PendingSession {
                    session: event.session_key(),
                    pending: row.get::<i64, _>("pending") as u64,
                    identity: event.identity,
                })
            })
            .collect()
    }
}

#[async_trait::async_trait]
impl TrajectorySink for TrajectoryStore {
    async fn write_batch(&self, batch: &[CapturedEvent]) -> anyhow::Result<()> {
        Ok(self.insert(batch).await?)
    }
}

fn json_text<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

fn parse_uuid(text: &str) -> Result<Uuid> {
    Uuid::parse_str(text)
        .map_err(|error| NotesError::storage(format!("a stored id `{text}` is not a UUID"), error))
}

fn non_empty(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

fn event_from_row(row: &SqliteRow) -> Result<CapturedEvent> {
    let json = |column: &str| -> Result<serde_json::Value> {
        let text: &str = row.get(column);
        serde_json::from_str(text)
            .map_err(|error| NotesError::storage(format!("stored `{column}` is not JSON"), error))
    };
    let strings = |column: &str| -> Result<Vec<String>> {
        serde_json::from_value(json(column)?)
            .map_err(|error| NotesError::storage(format!("stored `{column}` is not a list"), error))
    };
    Ok(CapturedEvent {
        id: parse_uuid(row.get("id"))?,
        identity: Identity {
            tenant_id: row.get("tenant_id"),
            agent_id: row.get("agent_id"),
            user_id: row.get("user_id"),
            session_id: non_empty(row.get("session_id")),
            project_id: non_empty(row.get("project_id")),
            team_id: row.get("team_id"),
            org_id: row.get("org_id"),
        },
        tool_name: row.get("tool_name"),
        description: row.get("description"),
        input: row.get("input"),
        output: row.get("output"),
        success: row.get("success"),
        duration_ms: u64::try_from(row.get::<i64, _>("duration_ms")).unwrap_or_default(),
        tags: strings("tags")?,
        metadata: json("metadata")?,
        truncated: strings("truncated")?,
        captured_at: row.get("captured_at"),
    })
}
