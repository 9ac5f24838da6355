-- BM25 statistics for lexical ranking, kept by the writes that change them: per tenant, how
-- many records there are and how many words they hold in all (for the average length), and how
-- many records hold each word of the `search` column. A search reads its words' counts by key
-- instead of counting every match (a scan per word).
-- Every write already holds the change-log lock (`PgRecordStore::begin_write`), so the counter
-- rows are updated in one order and never deadlock.

-- Writers of older instances wait until the counters and their trigger exist, so no record is
-- written between the count below and the trigger.
LOCK TABLE memories IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE memory_tenant_counts (
    tenant_id TEXT   PRIMARY KEY,
    records   BIGINT NOT NULL,
    -- Σ length(search): distinct words per record.
    words     BIGINT NOT NULL
);

CREATE TABLE memory_word_counts (
    tenant_id TEXT   NOT NULL,
    word      TEXT   NOT NULL,
    documents BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, word)
);

INSERT INTO memory_tenant_counts (tenant_id, records, words)
    SELECT tenant_id, count(*), coalesce(sum(length(search)), 0) FROM memories GROUP BY tenant_id;

INSERT INTO memory_word_counts (tenant_id, word, documents)
    SELECT tenant_id, word, count(*)
    FROM memories, unnest(tsvector_to_array(search)) AS word
    GROUP BY tenant_id, word;

CREATE FUNCTION memory_count_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE memory_word_counts c SET documents = c.documents - 1
            WHERE c.tenant_id = OLD.tenant_id AND c.word = ANY (tsvector_to_array(OLD.search));
        -- Words no record holds any more go, so the table stays as large as the vocabulary.
        DELETE FROM memory_word_counts c
            WHERE c.tenant_id = OLD.tenant_id AND c.word = ANY (tsvector_to_array(OLD.search))
              AND c.documents <= 0;
        UPDATE memory_tenant_counts
            SET records = records - 1, words = words - length(OLD.search)
            WHERE tenant_id = OLD.tenant_id;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        -- A tsvector's lexemes are distinct: each counter row is touched once per record.
        INSERT INTO memory_word_counts AS c (tenant_id, word, documents)
            SELECT NEW.tenant_id, word, 1 FROM unnest(tsvector_to_array(NEW.search)) AS word
            ON CONFLICT (tenant_id, word) DO UPDATE SET documents = c.documents + 1;
        INSERT INTO memory_tenant_counts AS t (tenant_id, records, words)
            VALUES (NEW.tenant_id, 1, length(NEW.search))
            ON CONFLICT (tenant_id) DO UPDATE
                SET records = t.records + 1, words = t.words + length(NEW.search);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_count_words
    AFTER INSERT OR DELETE OR UPDATE OF content ON memories
    FOR EACH ROW EXECUTE FUNCTION memory_count_words();
