-- 0007: what made each recorded result's score, a rollup of embedding coverage, and what each
-- compaction pass changed.

-- A recorded result's score in parts (retrieval's breakdown; NULL in records made before):
-- the match (keyword and meaning fused), the cosine similarity to the query (NULL: the memory
-- had no vector), and what was added for the query's time range, recency, use, importance and
-- tier. `score` is their sum.
ALTER TABLE recall_hits ADD COLUMN matched REAL;
ALTER TABLE recall_hits ADD COLUMN similarity REAL;
ALTER TABLE recall_hits ADD COLUMN time_boost REAL;
ALTER TABLE recall_hits ADD COLUMN recency REAL;
ALTER TABLE recall_hits ADD COLUMN frequency REAL;
ALTER TABLE recall_hits ADD COLUMN importance REAL;
ALTER TABLE recall_hits ADD COLUMN tier_boost REAL;

-- Vectors by person, type, app and embedding model, kept by triggers (like memory_counts) so
-- analytics' first view need not look up every memory's vector. A vector counts while both it
-- and its memory's row exist, whichever of the two comes or goes first (replay deletes and
-- writes the rows again under kept vectors; forget deletes the row, then its vectors).
-- Vectors are written by upsert, never INSERT OR REPLACE, whose delete fires no trigger.
CREATE TABLE vector_counts (
    user_id TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    app     TEXT    NOT NULL,
    model   TEXT    NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (user_id, kind, app, model)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER vector_counts_insert AFTER INSERT ON memory_vectors BEGIN
    INSERT INTO vector_counts
        SELECT m.user_id, m.kind, coalesce(json_extract(m.source, '$.app'), ''), NEW.model, 1
        FROM memories m WHERE m.id = NEW.memory_id
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER vector_counts_delete AFTER DELETE ON memory_vectors BEGIN
    UPDATE vector_counts SET n = n - 1
    WHERE model = OLD.model AND (user_id, kind, app) IN
        (SELECT m.user_id, m.kind, coalesce(json_extract(m.source, '$.app'), '') FROM memories m WHERE m.id = OLD.memory_id);
END;
CREATE TRIGGER vector_counts_memory_insert AFTER INSERT ON memories BEGIN
    INSERT INTO vector_counts
        SELECT NEW.user_id, NEW.kind, coalesce(json_extract(NEW.source, '$.app'), ''), v.model, count(*)
        FROM memory_vectors v WHERE v.memory_id = NEW.id GROUP BY v.model
    ON CONFLICT DO UPDATE SET n = n + excluded.n;
END;
CREATE TRIGGER vector_counts_memory_delete AFTER DELETE ON memories BEGIN
    UPDATE vector_counts SET n = n - (SELECT count(*) FROM memory_vectors v
                                      WHERE v.memory_id = OLD.id AND v.model = vector_counts.model)
    WHERE user_id = OLD.user_id AND kind = OLD.kind AND app = coalesce(json_extract(OLD.source, '$.app'), '');
END;

INSERT INTO vector_counts
    SELECT m.user_id, m.kind, coalesce(json_extract(m.source, '$.app'), ''), v.model, count(*)
    FROM memory_vectors v JOIN memories m ON m.id = v.memory_id
    GROUP BY 1, 2, 3, 4;

-- What each compaction pass changed (written by the engine after the pass's own transaction; a
-- usage record like recalls: counts only, no memory's words; pruned and cleared with them).
CREATE TABLE compaction_passes (
    id      INTEGER PRIMARY KEY,
    at      INTEGER NOT NULL,                      -- ms since the epoch
    user_id TEXT    NOT NULL,
    pass    TEXT    NOT NULL                       -- JSON: {"full", "formed", "updated", …}
) STRICT;
CREATE INDEX compaction_passes_by_time ON compaction_passes (user_id, at);
