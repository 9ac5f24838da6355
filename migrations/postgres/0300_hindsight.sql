-- The PostgreSQL twin of migrations/sqlite/0300_hindsight.sql: the same tables and invariants.
--
-- Hindsight Learning (aeterna-hindsight): error signatures, their resolutions, feedback on
-- resolutions and the promotions of proven resolutions to broader layers.
--
-- Invariants:
-- * every row carries `tenant_id`, and every query filters by it;
-- * all text is redacted (aeterna-redact, e-mail addresses included) before it is written;
-- * one signature per (tenant, layer, scope, fingerprint): repeats raise `occurrence_count`;
-- * a resolution is promoted from one layer to the next at most once
--   (`hindsight_promotions_once`), whether automatically or after approval.

CREATE TABLE hindsight_signatures (
    tenant_id        TEXT    NOT NULL,
    id               TEXT    NOT NULL,
    layer            TEXT    NOT NULL
        CHECK (layer IN ('agent', 'user', 'session', 'project', 'team', 'org', 'company')),
    scope_id         TEXT    NOT NULL,
    language         TEXT    NOT NULL,
    error_type       TEXT    NOT NULL,
    message_pattern  TEXT    NOT NULL,
    -- JSON arrays of strings.
    stack_patterns   TEXT    NOT NULL DEFAULT '[]',
    context_patterns TEXT    NOT NULL DEFAULT '[]',
    -- Hex SHA-256 of language, error type and message pattern.
    fingerprint      TEXT    NOT NULL,
    -- Little-endian f32 vector of `embedder_id`; NULL when embedding failed.
    embedding        BYTEA,
    embedder_id      TEXT,
    -- The (redacted, truncated) error text of the first occurrence.
    sample           TEXT    NOT NULL,
    occurrence_count BIGINT NOT NULL DEFAULT 1 CHECK (occurrence_count >= 1),
    -- Milliseconds since the Unix epoch, UTC.
    first_seen_at    BIGINT NOT NULL,
    last_seen_at     BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE UNIQUE INDEX hindsight_signatures_fingerprint
    ON hindsight_signatures (tenant_id, layer, scope_id, fingerprint);

CREATE TABLE hindsight_resolutions (
    tenant_id             TEXT    NOT NULL,
    id                    TEXT    NOT NULL,
    signature_id          TEXT    NOT NULL,
    layer                 TEXT    NOT NULL
        CHECK (layer IN ('agent', 'user', 'session', 'project', 'team', 'org', 'company')),
    scope_id              TEXT    NOT NULL,
    description           TEXT    NOT NULL,
    -- JSON: {"diff": "..."} or {"files": [{"file": "...", "summary": "..."}]}.
    changes               TEXT    NOT NULL,
    -- The first resolution of a promotion lineage (its own id when not promoted from another).
    origin_id             TEXT    NOT NULL,
    promoted_from         TEXT,
    success_count         BIGINT NOT NULL DEFAULT 0 CHECK (success_count >= 0),
    application_count     BIGINT NOT NULL DEFAULT 0
        CHECK (application_count >= success_count),
    -- Applications carried over when this copy was promoted; promotion onwards counts only
    -- the applications made at this layer.
    baseline_applications BIGINT NOT NULL DEFAULT 0,
    created_by            TEXT    NOT NULL,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    -- The hindsight note (a memory of kind `hindsight`) rendered for this resolution.
    note_id               TEXT,
    PRIMARY KEY (tenant_id, id)
);

CREATE INDEX hindsight_resolutions_by_signature
    ON hindsight_resolutions (tenant_id, signature_id);

CREATE TABLE hindsight_feedback (
    tenant_id     TEXT    NOT NULL,
    id            TEXT    NOT NULL,
    resolution_id TEXT    NOT NULL,
    success       BIGINT NOT NULL CHECK (success IN (0, 1)),
    applied_by    TEXT    NOT NULL,
    comment       TEXT,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE INDEX hindsight_feedback_by_resolution
    ON hindsight_feedback (tenant_id, resolution_id);

CREATE TABLE hindsight_promotions (
    tenant_id              TEXT    NOT NULL,
    id                     TEXT    NOT NULL,
    resolution_id          TEXT    NOT NULL,
    from_layer             TEXT    NOT NULL,
    from_scope             TEXT    NOT NULL,
    to_layer               TEXT    NOT NULL
        CHECK (to_layer IN ('project', 'team', 'org', 'company')),
    to_scope               TEXT    NOT NULL,
    status                 TEXT    NOT NULL CHECK (status IN ('pending', 'promoted', 'rejected')),
    -- Success rate and applications when the promotion was requested.
    success_rate           DOUBLE PRECISION NOT NULL,
    application_count      BIGINT NOT NULL,
    requested_by           TEXT    NOT NULL,
    requested_at           BIGINT NOT NULL,
    decided_by             TEXT,
    decided_at             BIGINT,
    -- The copy created in the broader layer.
    promoted_resolution_id TEXT,
    PRIMARY KEY (tenant_id, id)
);

CREATE UNIQUE INDEX hindsight_promotions_once
    ON hindsight_promotions (tenant_id, resolution_id, to_layer);
CREATE INDEX hindsight_promotions_by_status
    ON hindsight_promotions (tenant_id, status, requested_at);
