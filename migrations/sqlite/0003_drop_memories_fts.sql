-- Lexical search moved to an in-memory BM25 index that the record store derives from
-- `memories` at open and updates after each committed write (aeterna-memory,
-- `storage::lexical_index`): FTS5 ranked about a microsecond per matching row and was most of a
-- search's CPU, and its upkeep was a large part of every write's. The FTS table, its triggers
-- and the filter-key column that restricted it go.

DROP TRIGGER memories_fts_after_insert;
DROP TRIGGER memories_fts_after_delete;
DROP TRIGGER memories_fts_after_update;
DROP TABLE memories_fts;
ALTER TABLE memories DROP COLUMN filter_keys;
