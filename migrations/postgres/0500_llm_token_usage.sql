-- The PostgreSQL twin of migrations/sqlite/0500_llm_token_usage.sql: the same tables and invariants.
--
-- Tokens used by LLM providers, per tenant, role and UTC hour (aeterna-llm), so the hourly and
-- daily budgets hold across restarts.
--
-- Invariants:
-- * every row carries `tenant_id`, and every query filters by it;
-- * rows only grow by addition (`ON CONFLICT … DO UPDATE SET x = x + excluded.x`), so batches
--   written in any order sum to the same totals;
-- * rows older than the retention (35 days) are deleted per tenant when its usage is written.

CREATE TABLE llm_token_usage (
    tenant_id     TEXT    NOT NULL,
    -- summarize, distill, analyze or embed.
    role          TEXT    NOT NULL,
    -- Hours since the Unix epoch, UTC.
    hour          BIGINT NOT NULL,
    input_tokens  BIGINT NOT NULL CHECK (input_tokens >= 0),
    output_tokens BIGINT NOT NULL CHECK (output_tokens >= 0),
    calls         BIGINT NOT NULL CHECK (calls >= 0),
    PRIMARY KEY (tenant_id, role, hour)
);
