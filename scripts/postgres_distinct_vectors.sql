-- A store of 1,000,000 memories whose vectors are all distinct, for measuring the HNSW index
-- against exact search (docs/benchmarks.md, "Recall at scale on PostgreSQL"). Run with psql on a
-- store `strata bench recall --postgres` filled (scripts/postgres_fill_1m.sql for 1,000,000).
--
-- The bench's store repeats each LoCoMo turn with a small jitter, so each text stands ~160
-- times within cosine distance 0.02 of itself, and "the exact ten" is ten of one text's copies
-- picked by the jitter. Here each memory's vector becomes a weighted mean of two different
-- turns' vectors (weights 0.35-0.65, normalized): what a memory of two turns roughly embeds to
-- with a mean-pooling model, on the turns' own manifold, and no two alike. The memories' texts
-- stay as they were: the figures this serves are the index's alone.
\timing on
SET maintenance_work_mem = '4GB';
SET max_parallel_maintenance_workers = 1;
DROP INDEX IF EXISTS memory_vectors_hnsw_384_fbab0d5c38f0f6d3;

-- One vector per distinct text (the copies differ in their time and vector's jitter).
CREATE TEMP TABLE base AS
  SELECT (row_number() OVER ())::int AS i, vector
  FROM (SELECT DISTINCT ON (m.content::jsonb #>> '{body,text}') v.vector
        FROM memories m JOIN memory_vectors v ON v.memory_id = m.id
        WHERE v.model = 'all-MiniLM-L6-v2'
        ORDER BY m.content::jsonb #>> '{body,text}', m.id) AS t;
CREATE UNIQUE INDEX ON base (i);
SELECT count(*) AS distinct_texts FROM base;

-- Two different turns and a weight per memory.
SELECT setseed(0.41);
CREATE TEMP TABLE pick AS
  SELECT p.memory_id, p.i, CASE WHEN p.j >= p.i THEN p.j + 1 ELSE p.j END AS j, p.w
  FROM (SELECT v.memory_id,
               1 + floor(random() * (SELECT count(*) FROM base))::int AS i,
               1 + floor(random() * ((SELECT count(*) FROM base) - 1))::int AS j,
               (0.35 + random() * 0.3)::real AS w
        FROM memory_vectors v WHERE v.model = 'all-MiniLM-L6-v2') AS p;

UPDATE memory_vectors v
SET vector = l2_normalize(a.vector * array_fill(p.w, ARRAY[384])::vector
                          + b.vector * array_fill(1 - p.w, ARRAY[384])::vector)
FROM pick p JOIN base a ON a.i = p.i JOIN base b ON b.i = p.j
WHERE v.memory_id = p.memory_id AND v.model = 'all-MiniLM-L6-v2';

VACUUM ANALYZE memory_vectors;
CREATE INDEX memory_vectors_hnsw_384_fbab0d5c38f0f6d3 ON memory_vectors USING hnsw ((vector::vector(384)) vector_cosine_ops)
  WHERE model = 'all-MiniLM-L6-v2';
ANALYZE memory_vectors;
