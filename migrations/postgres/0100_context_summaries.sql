-- The PostgreSQL twin of migrations/sqlite/0100_context_summaries.sql: the same tables and invariants.
--
-- Layer summaries of the Context Architect (aeterna-context).
--
-- Invariants:
-- * every row carries `tenant_id`, and every query filters by it;
-- * the three depths of one (tenant, layer, scope) are written in one transaction, from the
--   same sources: they share `source_hash`, which is the hex SHA-256 over the ids and content
--   hashes of the memories summarised, and a refresh whose hash is unchanged writes nothing.

CREATE TABLE context_summaries (
    tenant_id    TEXT    NOT NULL,
    layer        TEXT    NOT NULL
        CHECK (layer IN ('agent', 'user', 'session', 'project', 'team', 'org', 'company')),
    scope_id     TEXT    NOT NULL,
    depth        TEXT    NOT NULL CHECK (depth IN ('sentence', 'paragraph', 'detailed')),
    content      TEXT    NOT NULL,
    -- BPE tokens of `content` (o200k_base).
    token_count  BIGINT NOT NULL CHECK (token_count >= 0),
    source_hash  TEXT    NOT NULL,
    source_count BIGINT NOT NULL CHECK (source_count >= 0),
    -- Which summarizer wrote it, such as `extractive-v1`.
    generator    TEXT    NOT NULL,
    -- Milliseconds since the Unix epoch, UTC.
    generated_at BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, layer, scope_id, depth)
);
