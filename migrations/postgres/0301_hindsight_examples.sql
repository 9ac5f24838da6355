-- The PostgreSQL twin of migrations/sqlite/0301_hindsight_examples.sql: the same tables and invariants.
--
-- Hindsight lineages with several examples: a resolution that fixed more than one wording of
-- an error (`hindsight_resolve` with an existing resolution id, or a near-duplicate fix text)
-- lists the further signatures here; queries matching any of them find the resolution.
--
-- Invariants:
-- * every row carries `tenant_id`, and every query filters by it;
-- * an example signature lives in its resolution's layer and scope (it is copied there first);
-- * a signature is an example of a resolution at most once (primary key).

CREATE TABLE hindsight_resolution_examples (
    tenant_id     TEXT    NOT NULL,
    resolution_id TEXT    NOT NULL,
    signature_id  TEXT    NOT NULL,
    added_by      TEXT    NOT NULL,
    -- Milliseconds since the Unix epoch, UTC.
    added_at      BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, resolution_id, signature_id)
);

CREATE INDEX hindsight_resolution_examples_by_signature
    ON hindsight_resolution_examples (tenant_id, signature_id);
