-- The PostgreSQL twin of migrations/sqlite/0200_trajectory_events.sql: the same tables and invariants.
--
-- Trajectory events captured by the Note-Taking agent (aeterna-notes).
--
-- Invariants:
-- * every row carries `tenant_id`, and every query filters by it;
-- * every text column is redacted (aeterna-redact) before the row is written: no secrets here;
-- * `note_id` is NULL until a note covers the event, and is set once: a covered event is never
--   distilled again, so re-distilling a session does not duplicate notes;
-- * inserts are idempotent (`INSERT OR IGNORE` on the primary key), so a retried batch whose
--   first attempt did commit stores nothing twice.

CREATE TABLE trajectory_events (
    tenant_id   TEXT    NOT NULL,
    -- UUID v7: time-ordered, so ordering by id is capture order.
    id          TEXT    NOT NULL,
    -- The distillation unit is (tenant, project, session); '' when the caller gave none.
    project_id  TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    agent_id    TEXT,
    user_id     TEXT,
    team_id     TEXT,
    org_id      TEXT,
    tool_name   TEXT    NOT NULL,
    description TEXT    NOT NULL,
    input       TEXT    NOT NULL,
    output      TEXT    NOT NULL,
    success     BIGINT NOT NULL CHECK (success IN (0, 1)),
    duration_ms BIGINT NOT NULL CHECK (duration_ms >= 0),
    -- JSON array of strings.
    tags        TEXT    NOT NULL,
    -- JSON object.
    metadata    TEXT    NOT NULL,
    -- JSON array of the field names cut to their capture cap.
    truncated   TEXT    NOT NULL,
    -- Milliseconds since the Unix epoch, UTC.
    captured_at BIGINT NOT NULL,
    -- The memory record (kind `note`) that covers this event.
    note_id     TEXT,
    PRIMARY KEY (tenant_id, id)
);

-- A session's events not yet covered by a note (note_id IS NULL), in capture order, and the
-- notes that cover a session.
CREATE INDEX trajectory_events_by_session
    ON trajectory_events (tenant_id, project_id, session_id, note_id, id);

-- The events a note covers.
CREATE INDEX trajectory_events_by_note
    ON trajectory_events (tenant_id, note_id) WHERE note_id IS NOT NULL;
