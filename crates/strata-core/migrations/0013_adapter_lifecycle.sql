-- 0013: several adapters in use at once (each question picks one, or none), which adapter
-- answered what, and the training schedule's record.

-- Several adapters may be active: the on-device model chooses among them per question.
DROP INDEX adapters_one_active;

-- Each answer an adapter gave: how often it was chosen, and (through the recorded answer)
-- what people said of it. Local usage records: forgetting the answer deletes its row.
CREATE TABLE adapter_answers (
    id         INTEGER PRIMARY KEY,
    adapter_id TEXT    NOT NULL REFERENCES adapters (id),
    at         INTEGER NOT NULL,                  -- ms since the epoch
    score      REAL    NOT NULL,                  -- the question's similarity to its facts
    answer_id  TEXT                               -- the recorded answer, when it was recorded
) STRICT;
CREATE INDEX adapter_answers_by_adapter ON adapter_answers (adapter_id, at);
CREATE INDEX adapter_answers_by_answer ON adapter_answers (answer_id) WHERE answer_id IS NOT NULL;

-- What the training schedule did, each time it looked: what it saw, what it trained, why
-- it promoted or not. Counts and adapter ids only, never a memory's words.
CREATE TABLE schedule_log (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    at      INTEGER NOT NULL,                     -- ms since the epoch
    kind    TEXT    NOT NULL,                     -- looked, trained, promoted, waiting, kept, rolled_back, failed, paused
    adapter_id TEXT,
    detail  TEXT    NOT NULL DEFAULT '{}'         -- JSON
) STRICT;
