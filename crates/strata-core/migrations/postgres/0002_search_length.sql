-- 0002 (PostgreSQL): how many words each memory's searchable text holds, kept beside it, so
-- that ranking by bm25 reads a memory's length without unnesting its whole tsvector.

ALTER TABLE memories ADD COLUMN search_length INTEGER NOT NULL DEFAULT 0;
UPDATE memories SET search_length = coalesce((SELECT sum(cardinality(u.positions)) FROM unnest(search) AS u), 0);
