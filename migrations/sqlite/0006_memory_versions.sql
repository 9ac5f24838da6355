-- Facts that change over time (issue 41).
--
-- * `memories` holds the version of each memory that is valid now: `valid_from` is when it
--   took effect (backfilled from `created_at`), `version` counts from 1.
-- * `memory_versions` holds every version a supersede closed, with the content, tags,
--   metadata and vector it had, valid from `valid_from` until `valid_to`. Search answers
--   `as_of` a time from the version valid then; deleting (forgetting) a memory deletes its
--   versions in the same transaction.
-- * A fix rewrites `memories` in place and writes no version.

ALTER TABLE memories ADD COLUMN valid_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
UPDATE memories SET valid_from = created_at;

CREATE TABLE memory_versions (
    tenant_id    TEXT    NOT NULL,
    memory_id    TEXT    NOT NULL,
    version      INTEGER NOT NULL,
    layer        TEXT    NOT NULL,
    scope_id     TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    tags         TEXT    NOT NULL,
    metadata     TEXT    NOT NULL,
    content_hash TEXT    NOT NULL,
    embedder_id  TEXT    NOT NULL,
    -- Little-endian f32 components, as in `memory_vectors`.
    vector       BLOB    NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    valid_from   INTEGER NOT NULL,
    valid_to     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, memory_id, version)
) STRICT, WITHOUT ROWID;

-- `as_of` searches: the versions of a tenant's scope that were valid at a time.
CREATE INDEX memory_versions_by_scope
    ON memory_versions (tenant_id, layer, scope_id, valid_to);
