-- Fills strata_scale_1000000 to 1,000,000 memories (docs/benchmarks.md, "Recall at scale on
-- PostgreSQL"): nine more copies of every memory, its created event and its vector, with new ids
-- and sessions and each vector jittered (length 0.1 against the unit vector, as the bench's
-- Jittered does). Made first as a copy of the bench's 100,000 store:
--   createdb -T strata_scale_100000 strata_scale_1000000
-- then `psql -d strata_scale_1000000 -f scripts/postgres_fill_1m.sql`, then
-- `strata bench recall --postgres URL --sizes 1000000 --reuse` measures it.
\timing on
SET maintenance_work_mem = '4GB';
SET max_parallel_maintenance_workers = 1;
DROP INDEX IF EXISTS memory_vectors_hnsw_384_fbab0d5c38f0f6d3;
CREATE TEMP TABLE base AS SELECT m.id, m.session_id FROM memories m;
CREATE OR REPLACE FUNCTION pg_temp.ulid_tail() RETURNS text LANGUAGE sql VOLATILE AS
$$ SELECT string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', 1 + floor(random() * 32)::int, 1), '') FROM generate_series(1, 16) $$;
DO $$
DECLARE k int;
BEGIN
  FOR k IN 1..9 LOOP
    CREATE TEMP TABLE map ON COMMIT DROP AS
      SELECT b.id AS old, left(b.id, 10) || pg_temp.ulid_tail() AS new, b.session_id AS old_session,
             b.session_id || '-c' || k AS new_session FROM base b;
    INSERT INTO memories (id, kind, key, user_id, agent_id, session_id, tier, importance, source, content,
                          created_at, updated_at, occurred_at, version, access_count, last_accessed_at, pinned,
                          expired_at, search)
      SELECT map.new, m.kind, m.key, m.user_id, m.agent_id, map.new_session, m.tier, m.importance, m.source,
             m.content, m.created_at, m.updated_at, m.occurred_at, m.version, m.access_count, m.last_accessed_at,
             m.pinned, m.expired_at, m.search
      FROM map JOIN memories m ON m.id = map.old;
    INSERT INTO events (event_id, stream_id, stream_version, event_type, schema_version, payload, actor, client,
                        session_id, correlation_id, causation_id, recorded_at, redacted_at)
      SELECT left(e.event_id, 10) || pg_temp.ulid_tail(), map.new, e.stream_version, e.event_type, e.schema_version,
             replace(e.payload, '"session_id":"' || map.old_session || '"', '"session_id":"' || map.new_session || '"'),
             e.actor, e.client, e.session_id, e.correlation_id, e.causation_id, e.recorded_at, e.redacted_at
      FROM map JOIN events e ON e.stream_id = map.old;
    INSERT INTO memory_vectors (memory_id, model, vector)
      SELECT map.new, v.model,
             l2_normalize((SELECT array_agg(x + (random()::real - 0.5::real) * 0.01767::real ORDER BY o)
                           FROM unnest(v.vector::real[]) WITH ORDINALITY AS t(x, o))::vector)
      FROM map JOIN memory_vectors v ON v.memory_id = map.old;
    RAISE NOTICE 'copy % of 9 done at %', k, clock_timestamp();
    DROP TABLE map;
  END LOOP;
END $$;
SELECT count(*) AS memories FROM memories;
SELECT count(*) AS vectors FROM memory_vectors;
SELECT count(*) AS events FROM events;
ANALYZE;
CREATE INDEX memory_vectors_hnsw_384_fbab0d5c38f0f6d3 ON memory_vectors USING hnsw ((vector::vector(384)) vector_cosine_ops)
  WHERE model = 'all-MiniLM-L6-v2';
ANALYZE memory_vectors;
