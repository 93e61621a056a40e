-- Extraction: which episodes have been read for facts, and every decision it made about a fact
-- (applied at once, or proposed for a person to accept or reject). The facts themselves are
-- memories; the events that created or changed them carry the decision's id as their
-- correlation id.
CREATE TABLE extraction_reads (
    episode_id TEXT PRIMARY KEY,
    run_id     TEXT    NOT NULL,
    read_at    INTEGER NOT NULL             -- ms since the epoch
) STRICT, WITHOUT ROWID;

CREATE TABLE extraction_decisions (
    id         TEXT PRIMARY KEY,            -- a ULID
    run_id     TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    agent_id   TEXT,
    session_id TEXT,
    made_at    INTEGER NOT NULL,
    model      TEXT    NOT NULL,            -- provider/model that decided
    action     TEXT    NOT NULL CHECK (action IN ('add', 'update', 'noop')),
    subject    TEXT    NOT NULL,            -- the subject's key
    target_id  TEXT,                        -- the fact memory changed (known for update and noop; for add once applied)
    detail     TEXT    NOT NULL,            -- JSON: the fact, its topic, date, the subject's description, the reason
    sources    TEXT    NOT NULL,            -- JSON array of the episodes' ids it rests on
    status     TEXT    NOT NULL CHECK (status IN ('proposed', 'applied', 'rejected')),
    decided_at INTEGER,
    decided_by TEXT
) STRICT;

CREATE INDEX extraction_decisions_by_status ON extraction_decisions (user_id, status, made_at);
