-- 0005 (PostgreSQL): extraction's records, as SQLite's 0004 and 0009 hold them: which episodes
-- it has read (with the reason one was read only in part or skipped), and every decision it
-- made about a fact (applied at once, or proposed for a person to accept or reject). The facts
-- themselves are memories; the events that made them carry the decision's id as correlation.

CREATE TABLE extraction_reads (
    episode_id TEXT   PRIMARY KEY,
    run_id     TEXT   NOT NULL,
    read_at    BIGINT NOT NULL,
    skipped    TEXT
);

CREATE TABLE extraction_decisions (
    id         TEXT   PRIMARY KEY,
    run_id     TEXT   NOT NULL,
    user_id    TEXT   NOT NULL,
    agent_id   TEXT,
    session_id TEXT,
    made_at    BIGINT NOT NULL,
    model      TEXT   NOT NULL,
    action     TEXT   NOT NULL CHECK (action IN ('add', 'update', 'noop')),
    subject    TEXT   NOT NULL,
    target_id  TEXT,
    detail     TEXT   NOT NULL,
    sources    TEXT   NOT NULL,
    status     TEXT   NOT NULL CHECK (status IN ('proposed', 'applied', 'rejected')),
    decided_at BIGINT,
    decided_by TEXT
);
CREATE INDEX extraction_decisions_by_status ON extraction_decisions (user_id, status, made_at);
CREATE INDEX extraction_decisions_target ON extraction_decisions (target_id) WHERE target_id IS NOT NULL;
