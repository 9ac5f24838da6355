-- Bulk writes stay fast as a tenant's vocabulary grows.
--
-- 0005's `memory_count` deleted the counters a change brought to zero with
-- `c.word = ANY (tsvector_to_array(r.search))`, which the planner cannot answer from the
-- counters' primary key: every written record scanned all of its tenant's words (a 500-row
-- insert took 1.6 s at 58k distinct words; an import of 100k memories, 7 minutes). The words are
-- now unnested and joined on (tenant_id, word, shard), one index lookup each. Nothing else
-- changes: same signature, same statements in the same order, so the lock order of 0005 holds.

CREATE OR REPLACE FUNCTION memory_count(tenants TEXT[], searches TSVECTOR[], signs INT[])
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
        USING (
            SELECT DISTINCT r.tenant_id, word
            FROM unnest(tenants, searches) AS r (tenant_id, search),
                 unnest(tsvector_to_array(r.search)) AS word
        ) AS w
        WHERE c.tenant_id = w.tenant_id AND c.word = w.word
          AND c.shard = memory_count_shard() AND c.documents = 0;
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
