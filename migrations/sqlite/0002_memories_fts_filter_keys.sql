-- Filter keys in the FTS index, so a lexical search is restricted to the caller's scopes (and
-- requested kinds and tags) inside FTS5 itself: BM25 is computed only for rows the caller may
-- see, and no matched row has to be joined to `memories` just to be thrown away.
--
-- `memories.filter_keys` holds space-separated tokens, each an injective hex encoding:
--   t<hex(tenant_id)>                      the record's tenant
--   s<hex(tenant_id ␟ layer ␟ scope_id)>   its scope (␟ = U+001F)
--   k<hex(kind)>                           its kind
--   g<hex(tag)>                            one per tag
-- The service computes the same tokens (`storage::sqlite::keys`); the backfill below computes
-- them in SQL.

ALTER TABLE memories ADD COLUMN filter_keys TEXT NOT NULL DEFAULT '';

UPDATE memories SET filter_keys =
    't' || hex(tenant_id)
    || ' s' || hex(tenant_id || char(31) || layer || char(31) || scope_id)
    || ' k' || hex(kind)
    || coalesce((SELECT group_concat(' g' || hex(value), '') FROM json_each(memories.tags)), '');

DROP TRIGGER memories_fts_after_insert;
DROP TRIGGER memories_fts_after_delete;
DROP TRIGGER memories_fts_after_update;
DROP TABLE memories_fts_terms;
DROP TABLE memories_fts;

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content,
    filter_keys,
    content = 'memories',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');

CREATE TRIGGER memories_fts_after_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content, filter_keys)
        VALUES (new.seq, new.content, new.filter_keys);
END;

CREATE TRIGGER memories_fts_after_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, filter_keys)
        VALUES ('delete', old.seq, old.content, old.filter_keys);
END;

CREATE TRIGGER memories_fts_after_update AFTER UPDATE OF content, filter_keys ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, filter_keys)
        VALUES ('delete', old.seq, old.content, old.filter_keys);
    INSERT INTO memories_fts (rowid, content, filter_keys)
        VALUES (new.seq, new.content, new.filter_keys);
END;
