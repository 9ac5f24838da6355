-- Writes of several instances run side by side.
--
-- Until now every write took the change-log lock first and held it to commit, so writes of all
-- instances ran one at a time (and 0003's counters relied on it to never deadlock). A write now
-- takes that lock last, just before appending to `memory_changes` (positions still commit in
-- order), and what it touches before must tolerate concurrent writers:
-- * the counters of 0003 are sharded: a transaction updates the shard of its connection
--   (`memory_count_shard()`), so two concurrent writers rarely share a counter row (it would
--   be held to commit: every record of a tenant touches its tenant row and the common words);
--   readers sum the shards;
-- * one statement updates every counter a write changes, locking rows in key order
--   ((tenant, word), then tenant): writers that do meet on a shard wait for each other and
--   never deadlock. A multi-row insert counts its rows once, in a statement-level trigger.
-- A shard's count may go below zero (a record counted in one shard, deleted through another);
-- the sum over shards is the count. Rows a change brings to zero go, so a table stays at most
-- the vocabulary times the shards.

-- Writers of older instances wait until the new triggers exist.
LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE;

ALTER TABLE memory_word_counts ADD COLUMN shard SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE memory_word_counts DROP CONSTRAINT memory_word_counts_pkey,
    ADD PRIMARY KEY (tenant_id, word, shard);
ALTER TABLE memory_tenant_counts ADD COLUMN shard SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE memory_tenant_counts DROP CONSTRAINT memory_tenant_counts_pkey,
    ADD PRIMARY KEY (tenant_id, shard);

DROP TRIGGER memories_count_words ON memories;
DROP FUNCTION memory_count_words();

-- The counter shard of this connection: one of 16.
CREATE FUNCTION memory_count_shard() RETURNS SMALLINT LANGUAGE sql STABLE
    AS $$ SELECT (pg_backend_pid() % 16)::SMALLINT $$;

-- Adds `signs[i]` (+1 counted, -1 uncounted) of the record of tenant `tenants[i]` whose words
-- are `searches[i]` to this connection's shard. PL/pgSQL, whose statement plans are kept for
-- the session.
CREATE FUNCTION memory_count(tenants TEXT[], searches TSVECTOR[], signs INT[])
    RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_word_counts AS c (tenant_id, word, shard, documents)
        SELECT r.tenant_id, word, memory_count_shard(), sum(r.sign)
        FROM unnest(tenants, searches, signs) AS r (tenant_id, search, sign),
             unnest(tsvector_to_array(r.search)) AS word
        GROUP BY r.tenant_id, word
        HAVING sum(r.sign) <> 0
        ORDER BY r.tenant_id, word
        ON CONFLICT (tenant_id, word, shard) DO UPDATE SET documents = c.documents + excluded.documents;
    DELETE FROM memory_word_counts c
        USING unnest(tenants, searches, signs) AS r (tenant_id, search, sign)
        WHERE c.tenant_id = r.tenant_id AND c.shard = memory_count_shard()
          AND c.word = ANY (tsvector_to_array(r.search)) AND c.documents = 0;
    INSERT INTO memory_tenant_counts AS t (tenant_id, shard, records, words)
        SELECT r.tenant_id, memory_count_shard(), sum(r.sign), sum(r.sign * length(r.search))
        FROM unnest(tenants, searches, signs) AS r (tenant_id, search, sign)
        GROUP BY r.tenant_id
        HAVING sum(r.sign) <> 0 OR sum(r.sign * length(r.search)) <> 0
        ORDER BY r.tenant_id
        ON CONFLICT (tenant_id, shard) DO UPDATE
            SET records = t.records + excluded.records, words = t.words + excluded.words;
END
$$;

CREATE FUNCTION memory_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM memory_count(array_agg(tenant_id), array_agg(search), array_agg(1)) FROM inserted;
    RETURN NULL;
END
$$;

CREATE FUNCTION memory_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM memory_count(array_agg(tenant_id), array_agg(search), array_agg(-1)) FROM deleted;
    RETURN NULL;
END
$$;

-- Only rows whose words changed count: most updates change tags, metadata or the embedder.
CREATE FUNCTION memory_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM memory_count(array_agg(r.tenant_id), array_agg(r.search), array_agg(r.sign))
    FROM (
        SELECT n.tenant_id, n.search, 1 AS sign FROM updated n JOIN outdated o USING (seq)
            WHERE n.search IS DISTINCT FROM o.search
        UNION ALL
        SELECT o.tenant_id, o.search, -1 FROM updated n JOIN outdated o USING (seq)
            WHERE n.search IS DISTINCT FROM o.search
    ) r;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_count_inserted AFTER INSERT ON memories
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION memory_count_inserted();
CREATE TRIGGER memories_count_deleted AFTER DELETE ON memories
    REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION memory_count_deleted();
CREATE TRIGGER memories_count_updated AFTER UPDATE ON memories
    REFERENCING OLD TABLE AS outdated NEW TABLE AS updated
    FOR EACH STATEMENT EXECUTE FUNCTION memory_count_updated();
