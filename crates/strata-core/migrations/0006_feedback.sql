-- 0006: whether an answer drew on what its prompt held, and what people said of answers and
-- memories (thumbs up or down). Local usage records like recalls: cleared with them, and
-- forgetting a memory deletes every row that names it.

-- For a prompt's hit: NULL while no answer is known; 1 when the answer drew on the memory
-- (shares two of its distinctive words, docs/formats.md "Analytics"); 0 when it did not.
ALTER TABLE recall_hits ADD COLUMN used INTEGER;
-- For a prompt: the exchange its answer was recorded as, when it was.
ALTER TABLE recalls ADD COLUMN answer_id TEXT;
CREATE INDEX recalls_by_answer ON recalls (answer_id) WHERE answer_id IS NOT NULL;

CREATE TABLE feedback (
    id        INTEGER PRIMARY KEY,
    at        INTEGER NOT NULL,                       -- ms since the epoch
    user_id   TEXT    NOT NULL,
    memory_id TEXT    NOT NULL,                       -- the memory or the recorded answer rated
    about     TEXT    NOT NULL CHECK (about IN ('answer', 'memory')),
    helpful   INTEGER NOT NULL CHECK (helpful IN (0, 1))
) STRICT;
CREATE INDEX feedback_by_time ON feedback (user_id, at);
CREATE INDEX feedback_by_memory ON feedback (memory_id);

-- Tier moves by time, for analytics' series and drill-downs without scanning every event.
CREATE INDEX events_moves ON events (recorded_at) WHERE event_type IN ('tier_changed', 'expired');
