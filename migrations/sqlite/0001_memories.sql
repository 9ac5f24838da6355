-- Memory records of the embedded profile (aeterna-memory).
--
-- Invariants:
-- * every row carries `tenant_id`, and every query filters by it;
-- * `memory_vectors` holds the durable copy of each embedding, written in the same transaction
--   as its record; the in-memory vector index is rebuilt from it at start;
-- * `memories_fts` is an external-content FTS5 index kept in sync by triggers.

-- Service-wide settings, such as the id of the embedder whose vectors are stored.
CREATE TABLE memory_meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE memories (
    -- Internal, never reused: orders listings (newest first) and keys the FTS and vector rows.
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT    NOT NULL UNIQUE,
    tenant_id    TEXT    NOT NULL,
    layer        TEXT    NOT NULL
        CHECK (layer IN ('agent', 'user', 'session', 'project', 'team', 'org', 'company')),
    scope_id     TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    -- JSON array of strings; `memory_tags` indexes them for filtering.
    tags         TEXT    NOT NULL DEFAULT '[]',
    -- JSON object.
    metadata     TEXT    NOT NULL DEFAULT '{}',
    -- Hex SHA-256 of `content`.
    content_hash TEXT    NOT NULL,
    embedder_id  TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
) STRICT;

-- Exact duplicates in one scope are stored once.
CREATE UNIQUE INDEX memories_content_in_scope
    ON memories (tenant_id, layer, scope_id, content_hash);
-- Listings: a tenant's records, newest first, optionally within scopes.
CREATE INDEX memories_by_tenant ON memories (tenant_id, seq);
CREATE INDEX memories_by_scope ON memories (tenant_id, layer, scope_id, seq);

CREATE TABLE memory_tags (
    memory_seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
    tenant_id  TEXT    NOT NULL,
    tag        TEXT    NOT NULL,
    PRIMARY KEY (memory_seq, tag)
) STRICT, WITHOUT ROWID;

CREATE INDEX memory_tags_by_tag ON memory_tags (tenant_id, tag, memory_seq);

-- Little-endian f32 components, `dimensions × 4` bytes.
CREATE TABLE memory_vectors (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    tenant_id  TEXT    NOT NULL,
    vector     BLOB    NOT NULL
) STRICT;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content,
    content = 'memories',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Document frequencies per term, used to normalise BM25 into 0..1.
CREATE VIRTUAL TABLE memories_fts_terms USING fts5vocab (memories_fts, 'row');

CREATE TRIGGER memories_fts_after_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;

CREATE TRIGGER memories_fts_after_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;

CREATE TRIGGER memories_fts_after_update AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.seq, old.content);
    INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
END;
