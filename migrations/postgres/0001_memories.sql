-- Memory records of the scale-out profile (aeterna-memory, `storage::postgres`).
--
-- Invariants:
-- * every row carries `tenant_id`, and every query filters by it;
-- * `memory_vectors` holds the durable copy of each embedding, written in the same transaction
--   as its record; each server's in-memory vector index is loaded from it at start;
-- * every write appends to `memory_changes` in its transaction while holding the change-log
--   advisory lock, so positions become visible in order: a server that has applied the log up
--   to position P has seen every write committed before P, and catches up from there.
-- Ids, tags and metadata are kept as text, as in the embedded profile, so one row decoder
-- serves both.

CREATE TABLE memory_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE memories (
    seq          BIGSERIAL PRIMARY KEY,
    id           TEXT   NOT NULL UNIQUE,
    tenant_id    TEXT   NOT NULL,
    layer        TEXT   NOT NULL
        CHECK (layer IN ('agent', 'user', 'session', 'project', 'team', 'org', 'company')),
    scope_id     TEXT   NOT NULL,
    kind         TEXT   NOT NULL,
    content      TEXT   NOT NULL,
    -- JSON array of strings; `memory_tags` indexes them for filtering.
    tags         TEXT   NOT NULL DEFAULT '[]',
    -- JSON object.
    metadata     TEXT   NOT NULL DEFAULT '{}',
    content_hash TEXT   NOT NULL,
    embedder_id  TEXT   NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    -- Words of the content (runs of letters and digits, lower-cased, unstemmed): the same
    -- tokens the embedded profile's lexical index uses.
    search       TSVECTOR GENERATED ALWAYS AS
        (to_tsvector('simple', regexp_replace(content, '[^[:alnum:]]+', ' ', 'g'))) STORED
);

CREATE UNIQUE INDEX memories_content_in_scope
    ON memories (tenant_id, layer, scope_id, content_hash);
CREATE INDEX memories_by_tenant ON memories (tenant_id, seq);
CREATE INDEX memories_by_scope ON memories (tenant_id, layer, scope_id, seq);
CREATE INDEX memories_search ON memories USING GIN (search);

CREATE TABLE memory_tags (
    memory_seq BIGINT NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    tenant_id  TEXT   NOT NULL,
    tag        TEXT   NOT NULL,
    PRIMARY KEY (memory_seq, tag)
);

CREATE INDEX memory_tags_by_tag ON memory_tags (tenant_id, tag, memory_seq);

-- Little-endian f32 components, `dimensions × 4` bytes.
CREATE TABLE memory_vectors (
    memory_seq BIGINT PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    tenant_id  TEXT   NOT NULL,
    vector     BYTEA  NOT NULL
);

-- One row per committed write of a record (insert, update, delete, re-embedding).
CREATE TABLE memory_changes (
    position  BIGSERIAL PRIMARY KEY,
    tenant_id TEXT   NOT NULL,
    memory_id TEXT   NOT NULL,
    layer     TEXT   NOT NULL,
    scope_id  TEXT   NOT NULL,
    at        BIGINT NOT NULL
);
