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
