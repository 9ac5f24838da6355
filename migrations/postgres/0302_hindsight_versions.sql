-- The PostgreSQL twin of migrations/sqlite/0302_hindsight_versions.sql: the same tables and invariants.
--
-- How many times each tenant's Hindsight tables were written (aeterna-hindsight).
--
-- Invariants:
-- * every transaction that changes what a tenant's in-memory index holds (signatures, fixes,
--   examples) adds one to `version` before it commits;
-- * an instance whose index was loaded at an older version than the stored one reloads it
--   before using it: on a shared database (PostgreSQL) other instances write these tables too.

CREATE TABLE hindsight_versions (
    tenant_id TEXT   NOT NULL PRIMARY KEY,
    version   BIGINT NOT NULL
);
