-- How many times each tenant's Hindsight tables were written (aeterna-hindsight).
--
-- Invariants:
-- * every transaction that changes what a tenant's in-memory index holds (signatures, fixes,
--   examples) adds one to `version` before it commits;
-- * an instance whose index was loaded at an older version than the stored one reloads it
--   before using it: on a shared database (PostgreSQL) other instances write these tables too.

CREATE TABLE hindsight_versions (
    tenant_id TEXT   NOT NULL PRIMARY KEY,
    version   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
