-- Facts that change over time (issue 41); see migrations/sqlite/0006_memory_versions.sql.

ALTER TABLE memories ADD COLUMN valid_from BIGINT NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
UPDATE memories SET valid_from = created_at;

CREATE TABLE memory_versions (
    tenant_id    TEXT    NOT NULL,
    memory_id    TEXT    NOT NULL,
    version      BIGINT  NOT NULL,
    layer        TEXT    NOT NULL,
    scope_id     TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    content      TEXT    NOT NULL,
    tags         TEXT    NOT NULL,
    metadata     TEXT    NOT NULL,
    content_hash TEXT    NOT NULL,
    embedder_id  TEXT    NOT NULL,
    vector       BYTEA   NOT NULL,
    created_at   BIGINT  NOT NULL,
    updated_at   BIGINT  NOT NULL,
    valid_from   BIGINT  NOT NULL,
    valid_to     BIGINT  NOT NULL,
    PRIMARY KEY (tenant_id, memory_id, version)
);

CREATE INDEX memory_versions_by_scope
    ON memory_versions (tenant_id, layer, scope_id, valid_to);
