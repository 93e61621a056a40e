-- 0001 (PostgreSQL): the event log (the source of truth) and the projections derived from it,
-- as SQLite's 0001 to 0002 hold them. Shipped migrations are append-only: never edit this
-- file; add 0002_*.sql instead (a test pins their checksums).
-- Times are milliseconds since the Unix epoch, as on SQLite: one decoding for both engines.

CREATE TABLE events (
    seq            BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id       TEXT    NOT NULL,
    stream_id      TEXT    NOT NULL,
    stream_version BIGINT  NOT NULL CHECK (stream_version >= 1),
    event_type     TEXT    NOT NULL,
    schema_version INTEGER NOT NULL,
    payload        TEXT    NOT NULL,
    actor          TEXT    NOT NULL,
    client         TEXT,
    session_id     TEXT,
    correlation_id TEXT,
    causation_id   TEXT,
    recorded_at    BIGINT  NOT NULL,
    redacted_at    BIGINT,
    UNIQUE (stream_id, stream_version)
);
CREATE INDEX events_type ON events (event_type, stream_id);

CREATE TABLE memories (
    id               TEXT    PRIMARY KEY,
    kind             TEXT    NOT NULL CHECK (kind IN ('semantic', 'episodic', 'procedural')),
    key              TEXT,
    user_id          TEXT    NOT NULL,
    agent_id         TEXT,
    session_id       TEXT,
    tier             TEXT    NOT NULL CHECK (tier IN ('short', 'medium', 'long')),
    importance       DOUBLE PRECISION NOT NULL,
    source           TEXT    NOT NULL,
    content          TEXT    NOT NULL,
    created_at       BIGINT  NOT NULL,
    updated_at       BIGINT  NOT NULL,
    occurred_at      BIGINT  NOT NULL,
    version          BIGINT  NOT NULL,
    access_count     BIGINT  NOT NULL,
    last_accessed_at BIGINT,
    pinned           BOOLEAN NOT NULL DEFAULT false,
    expired_at       BIGINT,
    -- The searchable text: the title weighted A, the body (with an episode's context) B.
    search           TSVECTOR NOT NULL DEFAULT ''::tsvector
);
CREATE UNIQUE INDEX memories_key ON memories (kind, user_id, coalesce(agent_id, ''), key) WHERE key IS NOT NULL;
CREATE INDEX memories_created ON memories (created_at, id);
CREATE INDEX memories_occurred ON memories (occurred_at);
CREATE INDEX memories_user ON memories (user_id, agent_id);
CREATE INDEX memories_search ON memories USING gin (search);

CREATE TABLE memory_tags (
    memory_id TEXT NOT NULL,
    tag       TEXT NOT NULL,
    PRIMARY KEY (memory_id, tag)
);
CREATE INDEX memory_tags_tag ON memory_tags (tag, memory_id);

CREATE TABLE memory_links (
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    relation  TEXT NOT NULL,
    PRIMARY KEY (source_id, target_id, relation)
);
CREATE INDEX memory_links_target ON memory_links (target_id);

-- Embeddings are derived from content by a model: not events. One row per memory and model;
-- content changes and forget delete them.
CREATE TABLE memory_vectors (
    memory_id TEXT   NOT NULL,
    model     TEXT   NOT NULL,
    vector    vector NOT NULL,
    PRIMARY KEY (memory_id, model)
);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
