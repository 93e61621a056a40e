-- 0004 (PostgreSQL): the index SQLite has had since its 0002, for the turn before an episode
-- in its session (what an episode's searchable context is made of, looked up on every write of
-- a turn). Without it each turn's write scanned the user's memories: quadratic at scale.

CREATE INDEX memories_session ON memories (user_id, session_id, occurred_at, id)
    WHERE kind = 'episodic' AND session_id IS NOT NULL;
