-- The PostgreSQL twin of migrations/sqlite/0600_ingest_queue.sql: the same table and invariants.
--
-- The durable queue of the CC-MemEx REST ingest (`POST /v1/ingest-context`, aeterna-server
-- `domain::compat::queue`): one row per accepted request, written before the 202 answer.
--
-- Invariants:
-- * every row carries `tenant_id`; every request-path query filters by it. The worker's claim,
--   reclaim and prune statements read across tenants by `state` only (like the Meta-Agent's
--   recovery scan);
-- * `state` is one of QUEUED, PROCESSING, COMPLETED, FAILED. A row moves QUEUED → PROCESSING
--   (claimed: `claim_token` set, `attempts` + 1) → COMPLETED or FAILED, or back to QUEUED with
--   a later `run_after` for a retry. Only the holder of `claim_token` may finish a claim;
--   a PROCESSING row whose `claimed_at` is older than `rest.reclaim_after_secs` is claimed
--   again (its process died);
-- * `text_content` and `metadata` are redacted before the row is written; the text is kept
--   until the job finishes, then emptied (the memories hold the chunks); finished rows are
--   deleted after `rest.job_retention_secs`.

CREATE TABLE ingest_jobs (
    tenant_id    TEXT    NOT NULL,
    -- UUID v7: time-ordered.
    id           TEXT    NOT NULL,
    state        TEXT    NOT NULL,
    -- The caller's resolved identity (JSON `aeterna_memory::Identity`), for adding the chunks.
    identity     TEXT    NOT NULL,
    -- The layer the chunks are stored in (session, user or project).
    layer        TEXT    NOT NULL,
    user_id      TEXT,
    session_id   TEXT,
    text_content TEXT    NOT NULL,
    source_type  TEXT,
    source_name  TEXT,
    -- The client's metadata object (JSON), stored on every chunk with the source fields.
    metadata     TEXT    NOT NULL,
    attempts     BIGINT NOT NULL DEFAULT 0,
    -- Milliseconds since the Unix epoch, UTC: not claimed before this time (retry backoff).
    run_after    BIGINT NOT NULL,
    claim_token  TEXT,
    claimed_at   BIGINT,
    chunks       BIGINT,
    -- JSON array of memory ids, in chunk order (COMPLETED).
    memory_ids   TEXT,
    error        TEXT,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

-- The worker's claim: the oldest claimable job.
CREATE INDEX ingest_jobs_claimable ON ingest_jobs (state, run_after, created_at);

-- The per-tenant queue bound: a tenant's unfinished jobs.
CREATE INDEX ingest_jobs_unfinished ON ingest_jobs (tenant_id, state)
    WHERE state IN ('QUEUED', 'PROCESSING');

-- Pruning finished jobs.
CREATE INDEX ingest_jobs_finished ON ingest_jobs (updated_at)
    WHERE state IN ('COMPLETED', 'FAILED');
