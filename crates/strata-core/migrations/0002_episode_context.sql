-- 0002: the full-text index gets a third column, `context`: for an episode in a session, the
-- text of the episode just before it (same user, agent and session). A reply such as "Yes, last
-- weekend!" is found by the words of the question it answers. The column is derived (rewritten
-- when the neighbour changes or is forgotten) and weighs 0.3 against the body's 1.0.
-- The index is emptied here; opening the database refills it from the memories.

DROP TABLE memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5 (title, body, context, tokenize = 'porter unicode61 remove_diacritics 2');
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO memory_fts (memory_fts, rank) VALUES ('rank', 'bm25(3.0, 1.0, 0.3)');

-- Finding an episode's neighbours in its session.
CREATE INDEX memories_session ON memories (user_id, session_id, occurred_at, id)
    WHERE kind = 'episodic' AND session_id IS NOT NULL;
