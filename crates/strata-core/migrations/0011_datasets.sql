-- Datasets: a person's files (tables and documents) kept beside their memories, never as
-- memories (they do not enter recall, tiers, the event log or training). A table's rows live
-- in a table of their own, `dataset_rows_<rid>`, made when it is loaded and dropped when it is
-- forgotten. Every dataset is cut into chunks that search finds by keyword and by meaning.
CREATE TABLE datasets (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('table', 'document')),
    source TEXT NOT NULL,
    format TEXT NOT NULL,
    digest TEXT NOT NULL,
    loaded_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    columns TEXT NOT NULL,
    sections TEXT NOT NULL,
    row_count INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL,
    notes TEXT NOT NULL,
    UNIQUE (user_id, name)
);

CREATE TABLE dataset_chunks (
    rid INTEGER PRIMARY KEY,
    dataset_rid INTEGER NOT NULL REFERENCES datasets (rid) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    page INTEGER,
    heading TEXT,
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    row_number INTEGER,
    UNIQUE (dataset_rid, ordinal)
);

-- The chunks' words; secure-delete erases a forgotten dataset's words from the index itself.
-- `dataset` holds one word, `d<rid>`, so a search within chosen datasets intersects their
-- words in the index (a large table's rows are never scanned to search a document); it does
-- not count in the ranking.
CREATE VIRTUAL TABLE dataset_fts USING fts5 (text, heading, dataset, tokenize = 'porter unicode61 remove_diacritics 2');
INSERT INTO dataset_fts (dataset_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO dataset_fts (dataset_fts, rank) VALUES ('rank', 'bm25(1.0, 0.5, 0.0)');

CREATE TABLE dataset_vectors (
    chunk_rid INTEGER NOT NULL REFERENCES dataset_chunks (rid) ON DELETE CASCADE,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (chunk_rid, model)
) WITHOUT ROWID;
CREATE INDEX dataset_vectors_by_model ON dataset_vectors (model, chunk_rid);
