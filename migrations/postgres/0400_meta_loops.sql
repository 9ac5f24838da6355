-- The PostgreSQL twin of migrations/sqlite/0400_meta_loops.sql: the same tables and invariants.
--
-- Meta-Agent loops (aeterna-meta): build → test → improve loops, one row each.
--
-- Invariants:
-- * every row carries `tenant_id`, and every query filters by it (the restart recovery reads
--   loops left `queued`/`running` across tenants, by state only);
-- * `record` is the loop as JSON (`aeterna_meta::LoopRecord`), phase outputs redacted
--   (aeterna-redact) and capped head + tail before they are written;
-- * `state` and `updated_at` mirror the record, for listing and recovery.

CREATE TABLE meta_loops (
    tenant_id  TEXT    NOT NULL,
    -- UUID v7: time-ordered, so ordering by id is creation order.
    id         TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    driver     TEXT    NOT NULL,
    -- The caller's identity (JSON), for learning on its behalf.
    identity   TEXT    NOT NULL,
    record     TEXT    NOT NULL,
    -- Milliseconds since the Unix epoch, UTC.
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

-- A tenant's loops by state, newest first.
CREATE INDEX meta_loops_by_state ON meta_loops (tenant_id, state, id);

-- Loops left active by an earlier run (recovery at start).
CREATE INDEX meta_loops_active ON meta_loops (state) WHERE state IN ('queued', 'running');
