-- 0001: the event log (the source of truth) and the projections derived from it.
-- Shipped migrations are append-only: never edit this file; add 0002_*.sql instead.

CREATE TABLE events (
    seq            INTEGER PRIMARY KEY,
    event_id       TEXT    NOT NULL,
    stream_id      TEXT    NOT NULL,
    stream_version INTEGER NOT NULL CHECK (stream_version >= 1),
    event_type     TEXT    NOT NULL,
    schema_version INTEGER NOT NULL,
    payload        TEXT    NOT NULL,
    actor          TEXT    NOT NULL,
    client         TEXT,
    session_id     TEXT,
    correlation_id TEXT,
    causation_id   TEXT,
    recorded_at    INTEGER NOT NULL,
    redacted_at    INTEGER,
    UNIQUE (stream_id, stream_version)
) STRICT;

CREATE TABLE memories (
    rid              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    kind             TEXT    NOT NULL CHECK (kind IN ('semantic', 'episodic', 'procedural')),
    key              TEXT,
    user_id          TEXT    NOT NULL,
    agent_id         TEXT,
    session_id       TEXT,
    tier             TEXT    NOT NULL CHECK (tier IN ('short', 'medium', 'long')),
    importance       REAL    NOT NULL,
    source           TEXT    NOT NULL,
    content          TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    occurred_at      INTEGER NOT NULL,
    version          INTEGER NOT NULL,
    access_count     INTEGER NOT NULL,
    last_accessed_at INTEGER,
    pinned           INTEGER NOT NULL DEFAULT 0,
    expired_at       INTEGER
) STRICT;

CREATE UNIQUE INDEX memories_key ON memories (kind, user_id, coalesce(agent_id, ''), key) WHERE key IS NOT NULL;
CREATE INDEX memories_created ON memories (created_at, id);
CREATE INDEX memories_occurred ON memories (occurred_at);

CREATE TABLE memory_tags (
    memory_id TEXT NOT NULL,
    tag       TEXT NOT NULL,
    PRIMARY KEY (memory_id, tag)
) STRICT, WITHOUT ROWID;
CREATE INDEX memory_tags_tag ON memory_tags (tag, memory_id);

CREATE TABLE memory_links (
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    relation  TEXT NOT NULL,
    PRIMARY KEY (source_id, target_id, relation)
) STRICT, WITHOUT ROWID;
CREATE INDEX memory_links_target ON memory_links (target_id);

-- rowid = memories.rid. secure-delete removes a forgotten memory's terms from the index itself.
-- Tags are not indexed here (memory_tags is their index), so tagging never rewrites the index.
CREATE VIRTUAL TABLE memory_fts USING fts5 (title, body, tokenize = 'porter unicode61 remove_diacritics 2');
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO memory_fts (memory_fts, rank) VALUES ('rank', 'bm25(3.0, 1.0)');

-- Embeddings are derived from content by a model: not events. One row per memory and model;
-- the sqlite-vec index (memory_vec, created for the active model's dimension) is rebuilt from
-- these after a replay. Content changes and forget delete them.
CREATE TABLE memory_vectors (
    memory_id TEXT    NOT NULL,
    model     TEXT    NOT NULL,
    vector    BLOB    NOT NULL,
    PRIMARY KEY (memory_id, model)
) STRICT, WITHOUT ROWID;

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
