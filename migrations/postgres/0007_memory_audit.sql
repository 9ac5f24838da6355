-- Who forgot what (issue 41); see migrations/sqlite/0007_memory_audit.sql.
CREATE TABLE memory_audit (
    seq       BIGSERIAL PRIMARY KEY,
    tenant_id TEXT   NOT NULL,
    at        BIGINT NOT NULL,
    actor     TEXT   NOT NULL,
    action    TEXT   NOT NULL,
    count     BIGINT NOT NULL,
    detail    TEXT   NOT NULL
);

CREATE INDEX memory_audit_by_tenant ON memory_audit (tenant_id, seq);
