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

-- Rollups for analytics' first view, kept by triggers as the projection changes (so replay,
-- forget and every write keep them true) instead of counting every memory on each view.
-- Memories by person, type, tier, the app that wrote them, agent and whether expired:
CREATE TABLE memory_counts (
    user_id TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    tier    TEXT    NOT NULL,
    app     TEXT    NOT NULL,
    agent   TEXT    NOT NULL,                 -- 'shared': everyone's
    expired INTEGER NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (user_id, kind, tier, app, agent, expired)
) STRICT, WITHOUT ROWID;
-- Memories created per day (UTC) by person, type and app:
CREATE TABLE memory_days (
    user_id TEXT    NOT NULL,
    day     TEXT    NOT NULL,                 -- YYYY-MM-DD
    kind    TEXT    NOT NULL,
    app     TEXT    NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (user_id, day, kind, app)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER memory_counts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memory_counts VALUES (NEW.user_id, NEW.kind, NEW.tier,
        coalesce(json_extract(NEW.source, '$.app'), ''), coalesce(NEW.agent_id, 'shared'),
        NEW.expired_at IS NOT NULL, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
    INSERT INTO memory_days VALUES (NEW.user_id, date(NEW.created_at / 1000, 'unixepoch'), NEW.kind,
        coalesce(json_extract(NEW.source, '$.app'), ''), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER memory_counts_delete AFTER DELETE ON memories BEGIN
    UPDATE memory_counts SET n = n - 1 WHERE user_id = OLD.user_id AND kind = OLD.kind AND tier = OLD.tier
        AND app = coalesce(json_extract(OLD.source, '$.app'), '') AND agent = coalesce(OLD.agent_id, 'shared')
        AND expired = (OLD.expired_at IS NOT NULL);
    UPDATE memory_days SET n = n - 1 WHERE user_id = OLD.user_id
        AND day = date(OLD.created_at / 1000, 'unixepoch') AND kind = OLD.kind
        AND app = coalesce(json_extract(OLD.source, '$.app'), '');
END;
CREATE TRIGGER memory_counts_update AFTER UPDATE OF tier, expired_at ON memories
WHEN OLD.tier IS NOT NEW.tier OR (OLD.expired_at IS NULL) <> (NEW.expired_at IS NULL) BEGIN
    UPDATE memory_counts SET n = n - 1 WHERE user_id = OLD.user_id AND kind = OLD.kind AND tier = OLD.tier
        AND app = coalesce(json_extract(OLD.source, '$.app'), '') AND agent = coalesce(OLD.agent_id, 'shared')
        AND expired = (OLD.expired_at IS NOT NULL);
    INSERT INTO memory_counts VALUES (NEW.user_id, NEW.kind, NEW.tier,
        coalesce(json_extract(NEW.source, '$.app'), ''), coalesce(NEW.agent_id, 'shared'),
        NEW.expired_at IS NOT NULL, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

INSERT INTO memory_counts
    SELECT user_id, kind, tier, coalesce(json_extract(source, '$.app'), ''), coalesce(agent_id, 'shared'),
           expired_at IS NOT NULL, count(*)
    FROM memories GROUP BY 1, 2, 3, 4, 5, 6;
INSERT INTO memory_days
    SELECT user_id, date(created_at / 1000, 'unixepoch'), kind, coalesce(json_extract(source, '$.app'), ''), count(*)
    FROM memories GROUP BY 1, 2, 3, 4;
