//! [`TrajectoryStore`]: captured events in the deployment's database (migration
//! `0200_trajectory_events`). Every query filters by tenant in SQL, except the scan for sessions
//! due for distillation at start.

use aeterna_memory::storage::Database;
use aeterna_memory::{Identity, with_connection, with_pool};
use sqlx::QueryBuilder;
use uuid::Uuid;

use crate::error::{NotesError, Result};
use crate::event::{CapturedEvent, SessionKey};
use crate::queue::TrajectorySink;

/// Rows per `INSERT` statement: 19 parameters each keeps a statement far below either
/// database's parameter limit, and a fixed size lets the prepared statement be reused.
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
    db: Database,
}

/// A row of `trajectory_events` ([`COLUMNS`]).
#[derive(sqlx::FromRow)]
struct EventRow {
    tenant_id: String,
    id: String,
    project_id: String,
    session_id: String,
    agent_id: Option<String>,
    user_id: Option<String>,
    team_id: Option<String>,
    org_id: Option<String>,
    tool_name: String,
    description: String,
    input: String,
    output: String,
    success: i64,
    duration_ms: i64,
    tags: String,
    metadata: String,
    truncated: String,
    captured_at: i64,
}

/// An event row and how many events its session has pending.
#[derive(sqlx::FromRow)]
struct DueRow {
    #[sqlx(flatten)]
    event: EventRow,
    pending: i64,
}

fn failed(context: &'static str) -> impl FnOnce(sqlx::Error) -> NotesError {
    move |error| NotesError::storage(context, error)
}

impl TrajectoryStore {
    pub fn new(db: Database) -> Self {
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
            with_connection!(&mut tx, |conn| {
                let mut insert =
                    QueryBuilder::new(format!("INSERT INTO trajectory_events ({COLUMNS}) "));
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
                        .push_bind(i64::from(event.success))
                        .push_bind(i64::try_from(event.duration_ms).unwrap_or(i64::MAX))
                        .push_bind(json_text(&event.tags))
                        .push_bind(json_text(&event.metadata))
                        .push_bind(json_text(&event.truncated))
                        .push_bind(event.captured_at)
                        .push_bind(None::<String>);
                });
                insert.push(" ON CONFLICT DO NOTHING");
                insert.build().execute(conn).await.map(drop)
            })
            .map_err(failed("storing trajectory events"))?;
        }
        tx.commit()
            .await
            .map_err(failed("committing trajectory events"))
    }

    /// How many events of `session` no note covers yet.
    pub async fn pending_count(&self, session: &SessionKey) -> Result<u64> {
        let count: i64 = with_pool!(&self.db, |pool| {
            sqlx::query_scalar(
                "SELECT count(*) FROM trajectory_events WHERE tenant_id = $1 \
                 AND project_id = $2 AND session_id = $3 AND note_id IS NULL",
            )
            .bind(&session.tenant_id)
            .bind(&session.project_id)
            .bind(&session.session_id)
            .fetch_one(pool)
            .await
        })
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
             WHERE tenant_id = $1 AND project_id = $2 AND session_id = $3 \
             AND note_id IS NULL ORDER BY id LIMIT $4"
        );
        let rows: Vec<EventRow> = with_pool!(&self.db, |pool| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(&session.tenant_id)
                .bind(&session.project_id)
                .bind(&session.session_id)
                .bind(i64::try_from(limit).unwrap_or(i64::MAX))
                .fetch_all(pool)
                .await
        })
        .map_err(failed("reading pending events"))?;
        rows.into_iter().map(EventRow::into_event).collect()
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
            let done = with_connection!(&mut tx, |conn| {
                let mut update = QueryBuilder::new("UPDATE trajectory_events SET note_id = ");
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
                update
                    .build()
                    .execute(conn)
                    .await
                    .map(|done| done.rows_affected())
            })
            .map_err(failed("marking covered events"))?;
            marked += done;
        }
        tx.commit()
            .await
            .map_err(failed("committing covered events"))?;
        Ok(marked)
    }

    /// The notes that cover events of `session`, oldest first, with how many events each
    /// covers.
    pub async fn session_notes(&self, session: &SessionKey) -> Result<Vec<(Uuid, u64)>> {
        let rows: Vec<(String, i64)> = with_pool!(&self.db, |pool| {
            sqlx::query_as(
                "SELECT note_id, count(*) AS events FROM trajectory_events \
                 WHERE tenant_id = $1 AND project_id = $2 AND session_id = $3 \
                 AND note_id IS NOT NULL AND note_id <> $4 GROUP BY note_id ORDER BY min(id)",
            )
            .bind(&session.tenant_id)
            .bind(&session.project_id)
            .bind(&session.session_id)
            .bind(DECLINED.to_string())
            .fetch_all(pool)
            .await
        })
        .map_err(failed("reading a session's notes"))?;
        rows.iter()
            .map(|(note_id, events)| Ok((parse_uuid(note_id)?, *events as u64)))
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
        // The nil id of declined events sorts first: start after it.
        let after = after.unwrap_or(DECLINED).to_string();
        let rows: Vec<String> = with_pool!(&self.db, |pool| {
            sqlx::query_scalar(
                "SELECT DISTINCT note_id FROM trajectory_events WHERE tenant_id = $1 \
                 AND note_id IS NOT NULL AND note_id > $2 ORDER BY note_id LIMIT $3",
            )
            .bind(tenant_id)
            .bind(&after)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(pool)
            .await
        })
        .map_err(failed("listing notes"))?;
        rows.iter().map(|id| parse_uuid(id)).collect()
    }

    /// How many events of `tenant_id` note `note_id` covers.
    pub async fn covered_count(&self, tenant_id: &str, note_id: Uuid) -> Result<u64> {
        let count: i64 = with_pool!(&self.db, |pool| {
            sqlx::query_scalar(
                "SELECT count(*) FROM trajectory_events WHERE tenant_id = $1 AND note_id = $2",
            )
            .bind(tenant_id)
            .bind(note_id.to_string())
            .fetch_one(pool)
            .await
        })
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
                 GROUP BY tenant_id, project_id, session_id HAVING count(*) >= $1 \
             ) AS due ON e.tenant_id = t AND e.id = latest"
        );
        let rows: Vec<DueRow> = with_pool!(&self.db, |pool| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
                .bind(i64::try_from(threshold.max(1)).unwrap_or(i64::MAX))
                .fetch_all(pool)
                .await
        })
        .map_err(failed("finding sessions due for distillation"))?;
        rows.into_iter()
            .map(|row| {
                let event = row.event.into_event()?;
                Ok(PendingSession {
                    session: event.session_key(),
                    pending: row.pending as u64,
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

impl EventRow {
    fn into_event(self) -> Result<CapturedEvent> {
        let json = |column: &str, text: &str| -> Result<serde_json::Value> {
            serde_json::from_str(text).map_err(|error| {
                NotesError::storage(format!("stored `{column}` is not JSON"), error)
            })
        };
        let strings = |column: &str, text: &str| -> Result<Vec<String>> {
            serde_json::from_value(json(column, text)?).map_err(|error| {
                NotesError::storage(format!("stored `{column}` is not a list"), error)
            })
        };
        Ok(CapturedEvent {
            id: parse_uuid(&self.id)?,
            tags: strings("tags", &self.tags)?,
            metadata: json("metadata", &self.metadata)?,
            truncated: strings("truncated", &self.truncated)?,
            identity: Identity {
                tenant_id: self.tenant_id,
                agent_id: self.agent_id,
                user_id: self.user_id,
                session_id: non_empty(self.session_id),
                project_id: non_empty(self.project_id),
                team_id: self.team_id,
                org_id: self.org_id,
                // A stored event is the system's to distil: its reach is not recorded.
                grants: Default::default(),
            },
            tool_name: self.tool_name,
            description: self.description,
            input: self.input,
            output: self.output,
            success: self.success != 0,
            duration_ms: u64::try_from(self.duration_ms).unwrap_or_default(),
            captured_at: self.captured_at,
        })
    }
}
