-- Usage records for analytics: every recall (a search, or the recall behind a prompt) with what
-- it found and, for a prompt, what went in and how the budget was used. Local only; pruned after the retention setting and
-- cleared on request; forgetting a memory deletes every record of a recall that found it (its
-- query may quote it).
CREATE TABLE recalls (
    id         INTEGER PRIMARY KEY,
    at         INTEGER NOT NULL,            -- ms since the epoch
    user_id    TEXT    NOT NULL,
    agent_id   TEXT,
    client     TEXT,                        -- the app or MCP client that asked
    purpose    TEXT    NOT NULL CHECK (purpose IN ('search', 'prompt')),
    query      TEXT    NOT NULL,
    found      INTEGER NOT NULL,            -- results
    latency_ms REAL    NOT NULL,
    prompt     TEXT                         -- for a prompt, JSON: {"model", "budget", "used",
                                            -- "sections": {name: tokens}, "dropped": {why: count}}
) STRICT;
CREATE INDEX recalls_by_time ON recalls (user_id, at);
CREATE INDEX recalls_by_age ON recalls (at);

CREATE TABLE recall_hits (
    recall_id INTEGER NOT NULL REFERENCES recalls (id) ON DELETE CASCADE,
    rank      INTEGER NOT NULL,             -- 1: the best
    memory_id TEXT    NOT NULL,
    score     REAL    NOT NULL,
    in_prompt INTEGER NOT NULL DEFAULT 0,   -- 1: the prompt it was recalled for included it
    PRIMARY KEY (recall_id, rank)
) STRICT, WITHOUT ROWID;
CREATE INDEX recall_hits_by_memory ON recall_hits (memory_id);
