-- Curation: the memories flagged as worth training into an adapter, where each stands (waiting
-- for a person, approved, rejected) and everything that happened to it. Reasons are the
-- criteria's words ("importance 0.80"), never a memory's; forgetting a memory deletes its rows.
CREATE TABLE training_candidates (
    memory_id  TEXT    PRIMARY KEY,
    user_id    TEXT    NOT NULL,
    status     TEXT    NOT NULL CHECK (status IN ('flagged', 'approved', 'rejected')),
    score      REAL    NOT NULL,                -- 0 to 1, higher is more worth training
    reasons    TEXT    NOT NULL,                -- JSON array of sentences
    changed_at INTEGER NOT NULL,                -- the memory's updated_at when flagged or decided
    flagged_at INTEGER NOT NULL,                -- ms since the epoch
    decided_at INTEGER,
    decided_by TEXT,
    note       TEXT                             -- the person's words on a decision
) STRICT, WITHOUT ROWID;
CREATE INDEX training_candidates_by_status ON training_candidates (user_id, status, score);

CREATE TABLE training_candidate_events (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT    NOT NULL,
    user_id   TEXT    NOT NULL,
    at        INTEGER NOT NULL,
    kind      TEXT    NOT NULL CHECK (kind IN ('flagged', 'approved', 'rejected', 'reopened', 'withdrawn')),
    by        TEXT    NOT NULL,                 -- who: a front end's client name, or 'flagging'
    detail    TEXT    NOT NULL DEFAULT '{}'     -- JSON: score, reasons, note
) STRICT;
CREATE INDEX training_candidate_events_by_memory ON training_candidate_events (memory_id, seq);

-- Training runs, from start to the adapter they made: settings, the training set's file (beside
-- the database, deleted by forget like every set there), progress as it goes (a heartbeat:
-- a run left 'running' with an old updated_at was interrupted and can be resumed from its
-- checkpoint), the stage, and how it ended.
CREATE TABLE training_runs (
    id           TEXT    PRIMARY KEY,           -- run_ and a lower-case ULID
    user_id      TEXT    NOT NULL,
    started_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN ('running', 'finished', 'failed', 'cancelled')),
    stage        TEXT    NOT NULL CHECK (stage IN ('training', 'evaluating', 'done')),
    settings     TEXT    NOT NULL,              -- JSON: the training settings
    gate         TEXT,                          -- JSON: the evaluation gate (none: not evaluated)
    dataset      TEXT    NOT NULL,              -- the training set's file
    dataset_hash TEXT    NOT NULL,
    sources      TEXT    NOT NULL,              -- JSON array of the memories' ids
    step         INTEGER NOT NULL DEFAULT 0,
    steps        INTEGER NOT NULL DEFAULT 0,
    losses       TEXT    NOT NULL DEFAULT '[]', -- JSON array, one per optimizer step
    tokens_per_s REAL,
    eta_s        REAL,
    checked      INTEGER NOT NULL DEFAULT 0,    -- evaluation: answers given of …
    to_check     INTEGER NOT NULL DEFAULT 0,
    adapter_id   TEXT,
    message      TEXT                           -- why it failed or stopped
) STRICT, WITHOUT ROWID;
CREATE INDEX training_runs_by_user ON training_runs (user_id, started_at);

-- A person's edits of an approved memory's training examples (the whole list, as JSON), for
-- the memory as it was when edited: a memory changed since is trained from fresh examples.
CREATE TABLE training_edits (
    memory_id  TEXT    PRIMARY KEY,
    user_id    TEXT    NOT NULL,
    changed_at INTEGER NOT NULL,                -- the memory's updated_at the edit is for
    examples   TEXT    NOT NULL,                -- JSON array of examples
    edited_at  INTEGER NOT NULL,
    edited_by  TEXT    NOT NULL
) STRICT, WITHOUT ROWID;

-- An adapter in use, checked again (on a schedule and on demand): the share of its held-out
-- questions it still answers with what the memories say now, and how many of its facts changed
-- or went since it was trained.
CREATE TABLE adapter_checks (
    id         INTEGER PRIMARY KEY,
    adapter_id TEXT    NOT NULL REFERENCES adapters (id),
    at         INTEGER NOT NULL,
    recall     REAL    NOT NULL,
    questions  INTEGER NOT NULL,
    changed    INTEGER NOT NULL,                -- facts whose value changed since training
    gone       INTEGER NOT NULL                 -- facts whose memory was forgotten or expired
) STRICT;
CREATE INDEX adapter_checks_by_adapter ON adapter_checks (adapter_id, at);
