-- 0008 (PostgreSQL): datasets, as SQLite's 0011 keeps them: a person's files (tables and
-- documents) beside their memories, never as memories. A table's rows live in a table of their
-- own, `dataset_rows_<rid>`, made when it is loaded and dropped when it is forgotten. Every
-- dataset is cut into chunks that search finds by keyword (`search`, weighted as SQLite's
-- bm25(1.0, 0.5): the text B, its heading C) and by meaning (`dataset_vectors`).
CREATE TABLE datasets (
    rid         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id          TEXT   NOT NULL UNIQUE,
    user_id     TEXT   NOT NULL,
    name        TEXT   NOT NULL,
    kind        TEXT   NOT NULL CHECK (kind IN ('table', 'document')),
    source      TEXT   NOT NULL,
    format      TEXT   NOT NULL,
    digest      TEXT   NOT NULL,
    loaded_at   BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    columns     TEXT   NOT NULL,
    sections    TEXT   NOT NULL,
    row_count   BIGINT NOT NULL,
    chunk_count BIGINT NOT NULL,
    notes       TEXT   NOT NULL,
    UNIQUE (user_id, name)
);

CREATE TABLE dataset_chunks (
    rid         BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dataset_rid BIGINT  NOT NULL REFERENCES datasets (rid) ON DELETE CASCADE,
    ordinal     BIGINT  NOT NULL,
    text        TEXT    NOT NULL,
    page        INTEGER,
    heading     TEXT,
    line_start  INTEGER NOT NULL,
    line_end    INTEGER NOT NULL,
    row_number  BIGINT,
    search      TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', text), 'B') || setweight(to_tsvector('english', coalesce(heading, '')), 'C')
    ) STORED,
    UNIQUE (dataset_rid, ordinal)
);
CREATE INDEX dataset_chunks_search ON dataset_chunks USING gin (search);

CREATE TABLE dataset_vectors (
    chunk_rid BIGINT NOT NULL REFERENCES dataset_chunks (rid) ON DELETE CASCADE,
    model     TEXT   NOT NULL,
    vector    vector NOT NULL,
    PRIMARY KEY (chunk_rid, model)
);
CREATE INDEX dataset_vectors_by_model ON dataset_vectors (model, chunk_rid);
