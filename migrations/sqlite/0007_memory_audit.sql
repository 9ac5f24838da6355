-- Who forgot what (issue 41): one row per forget, retention pass or purge. It names the
-- selection and the ids it removed, never their content.
CREATE TABLE memory_audit (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id TEXT    NOT NULL,
    at        INTEGER NOT NULL,
    -- `user:<id>`, `agent:<id>`, … of the caller, or `retention` / `operator`.
    actor     TEXT    NOT NULL,
    -- `forget`, `expire` or `purge`.
    action    TEXT    NOT NULL,
    count     INTEGER NOT NULL,
    -- JSON: the selection and the ids removed.
    detail    TEXT    NOT NULL
) STRICT;

CREATE INDEX memory_audit_by_tenant ON memory_audit (tenant_id, seq);
