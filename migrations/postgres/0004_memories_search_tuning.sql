-- What a search reads, measured on 100k records (a lexical query of ~5 000 matches):
--
-- Searches and listings filter by scopes: (layer, scope_id) pairs within a tenant, each
-- layer with its own ids. Without statistics on the columns together the planner multiplies
-- their selectivities, takes a scope for a fraction of its size, and intersects a bitmap of
-- every record in the searched scopes with the text matches (22 of a 48 ms query). Gathered
-- by the next ANALYZE (autovacuum).
CREATE STATISTICS IF NOT EXISTS memories_scope_statistics (dependencies, mcv)
    ON tenant_id, layer, scope_id FROM memories;

-- With GIN's fast update, new records' words wait in a pending list that every search scans
-- whole until a vacuum merges it (up to 4 MB: 7 of 25 ms), and the write that overflows it
-- merges it while its caller waits. Writes update the index directly instead.
ALTER INDEX memories_search SET (fastupdate = off);
SELECT gin_clean_pending_list('memories_search'::regclass);
