-- Which `PgRecordStore` (one per server process) made each change, so an instance following the
-- log skips its own writes: it applied and announced them when it made them. NULL for rows
-- written before this column existed (they are treated as another instance's).
ALTER TABLE memory_changes ADD COLUMN origin TEXT;
