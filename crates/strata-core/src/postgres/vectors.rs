//! Vectors on PostgreSQL with pgvector: one row per memory and model in `memory_vectors`
//! (`vector` without a fixed size, so models of any dimension share the table). Which model the
//! store searches with is kept in `settings` (`indexed_model`), as SQLite's index records it.
//!
//! A search compares every vector within the filter (exact) until a model has
//! [`EXACT_BELOW`] vectors; then an HNSW index of that model's vectors (a partial index on the
//! column cast to the model's dimension, built `CONCURRENTLY`, so writers go on) answers, with
//! `hnsw.ef_search` = [`EF_SEARCH`] and, on pgvector 0.8 or newer, iterative scans, so that a
//! filter that leaves out most candidates still gets its `limit` (docs/benchmarks.md measures
//! both figures).

use pgvector::Vector;

use super::Pg;
use super::rows::{MEMORY_COLUMNS, memories, memory_from_row};
use crate::error::Result;
use crate::model::{Memory, MemoryId};
use crate::query::Filter;
use crate::sql::{Dialect, Sql, SqlValue};
use crate::vectors::VectorHit;

/// Below this many vectors of one model, a search is exact: an exact scan is fast enough
/// there and needs no index (docs/benchmarks.md). A store may set its own in `settings`
/// (`vector_index_from`: an operator's choice, and the tests').
pub const EXACT_BELOW: i64 = 20_000;

/// The candidates HNSW keeps while searching (`hnsw.ef_search`): the smallest measured value
/// whose recall@10 against exact search is at least 0.95 at 100,000 memories (0.97; 100 gave
/// 0.74, 400 gave 0.93), for 3.4 ms a search (docs/benchmarks.md). A store may set its own in
/// `settings` (`hnsw_ef_search`, 1 to 1,000).
pub const EF_SEARCH: u32 = 800;

/// The HNSW index of `model`'s vectors of `dim` dimensions.
fn index_name(model: &str, dim: usize) -> String {
    let hash = model.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("memory_vectors_hnsw_{dim}_{hash:016x}")
}

/// `text` as an SQL string literal.
fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

impl Pg {
    /// Whether `model`'s vectors of `dim` dimensions have a valid HNSW index.
    pub(crate) fn has_index(&self, model: &str, dim: usize) -> Result<bool> {
        let row = self.client().query_opt(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1",
            &[&index_name(model, dim)],
        )?;
        Ok(row.is_some_and(|r| r.get::<_, bool>(0)))
    }

    /// Builds the HNSW index of `model`'s vectors once they are [`EXACT_BELOW`] or more, without
    /// blocking writers (`CREATE INDEX CONCURRENTLY`); one left invalid by an interrupted build
    /// is built again. Nothing to do when it exists or the model has fewer vectors.
    pub(crate) fn ensure_vector_index(&self, model: &str, dim: usize) -> Result<()> {
        if dim == 0 || self.has_index(model, dim)? {
            return Ok(());
        }
        let n: i64 = self.client().query_one("SELECT count(*) FROM memory_vectors WHERE model = $1", &[&model])?.get(0);
        let from = self.client().query_opt("SELECT value FROM settings WHERE key = 'vector_index_from'", &[])?;
        let from = from.and_then(|r| r.get::<_, String>(0).trim().parse::<i64>().ok()).unwrap_or(EXACT_BELOW);
        if n < from {
            return Ok(());
        }
        let name = index_name(model, dim);
        tracing::info!(model, vectors = n, "building the HNSW index of a model's vectors");
        let mut client = self.client();
        client.batch_execute(&format!("DROP INDEX CONCURRENTLY IF EXISTS {name}"))?;
        client.batch_execute(&format!(
            "CREATE INDEX CONCURRENTLY {name} ON memory_vectors USING hnsw ((vector::vector({dim})) vector_cosine_ops) \
             WHERE model = {}",
            literal(model)
        ))?;
        Ok(())
    }

    /// Memories with no vector from `model` yet.
    pub(crate) fn pending_embeddings(&self, model: &str) -> Result<u64> {
        if self.all_embedded(model)? {
            return Ok(0);
        }
        let row = self.client().query_one(
            "SELECT count(*) FROM memories m WHERE NOT EXISTS \
             (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = $1)",
            &[&model],
        )?;
        Ok(row.try_get::<_, i64>(0)? as u64)
    }

    /// Whether every memory has a vector from `model`: as many of its vectors as memories
    /// (each vector's memory exists: forget and a content change delete them with it). Two
    /// counts: an idle embedding worker asks every 5 s, and at 1,000,000 memories they take
    /// 146 ms where looking for the memories without one takes 648 ms (docs/benchmarks.md).
    fn all_embedded(&self, model: &str) -> Result<bool> {
        let all = self.client().query_one(
            "SELECT (SELECT count(*) FROM memories) = (SELECT count(*) FROM memory_vectors WHERE model = $1)",
            &[&model],
        )?;
        Ok(all.try_get(0)?)
    }

    /// Up to `batch` memories with no vector from `model` yet, oldest first (none, at once,
    /// when [`Pg::all_embedded`]).
    pub(crate) fn unembedded(&self, model: &str, batch: usize) -> Result<Vec<Memory>> {
        if self.all_embedded(model)? {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE NOT EXISTS \
             (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = $1) \
             ORDER BY m.created_at, m.id LIMIT $2"
        );
        memories(self, &sql, &[&model, &(batch.max(1) as i64)])
    }

    /// Whether the store searches with `model`'s vectors.
    pub(crate) fn is_indexed_for(&self, model: &str) -> Result<bool> {
        let row = self.client().query_opt("SELECT value FROM settings WHERE key = 'indexed_model'", &[])?;
        Ok(row.map(|r| r.get::<_, String>(0)).as_deref() == Some(model))
    }

    /// The model search uses now.
    pub(crate) fn searched_model(&self) -> Result<Option<String>> {
        let row = self.client().query_opt("SELECT value FROM settings WHERE key = 'indexed_model'", &[])?;
        Ok(row.map(|r| r.get::<_, String>(0)))
    }

    /// How many memories have a vector from each model, most first.
    pub(crate) fn vectors_by_model(&self) -> Result<Vec<(String, u64)>> {
        let rows = self
            .client()
            .query("SELECT model, count(*) FROM memory_vectors GROUP BY model ORDER BY count(*) DESC, model", &[])?;
        Ok(rows.iter().map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1) as u64)).collect())
    }

    /// Makes search use `model`'s stored vectors (its index, kept per model, built if missing).
    pub(crate) fn search_with(&mut self, model: &str, dim: usize) -> Result<()> {
        let tx = self.write()?;
        let mut t = tx.tx();
        t.execute(
            "INSERT INTO settings (key, value) VALUES ('indexed_model', $1) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[&model],
        )?;
        drop(t);
        tx.commit()?;
        self.ensure_vector_index(model, dim)
    }

    /// Stores each vector of `embedded` whose memory is still there with the same content, and
    /// (with `index`) makes `model` the one searched with, in one write transaction. Returns
    /// how many.
    pub(crate) fn store_vectors(
        &mut self,
        model: &str,
        _dim: usize,
        embedded: &[(&Memory, &Vec<f32>)],
        index: bool,
    ) -> Result<usize> {
        let tx = self.write()?;
        let mut t = tx.tx();
        if index {
            t.execute(
                "INSERT INTO settings (key, value) VALUES ('indexed_model', $1) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&model],
            )?;
        }
        let mut done = 0;
        for (m, v) in embedded {
            let content = serde_json::to_string(&m.content).unwrap_or_default();
            let same =
                t.query_opt("SELECT 1 FROM memories WHERE id = $1 AND content = $2", &[&m.id.to_string(), &content])?;
            if same.is_none() {
                continue; // changed or forgotten meanwhile
            }
            t.execute(
                "INSERT INTO memory_vectors (memory_id, model, vector) VALUES ($1, $2, $3) \
                 ON CONFLICT (memory_id, model) DO UPDATE SET vector = excluded.vector",
                &[&m.id.to_string(), &model, &Vector::from((*v).clone())],
            )?;
            done += 1;
        }
        drop(t);
        tx.commit()?;
        if let (true, Some((_, v))) = (index, embedded.first()) {
            self.ensure_vector_index(model, v.len())?;
        }
        Ok(done)
    }

    /// The memories within `filter` nearest to `q` by cosine similarity, best first: exact
    /// below [`EXACT_BELOW`] vectors, by the model's HNSW index from there on.
    pub(crate) fn nearest(&self, model: &str, q: &[f32], filter: &Filter, limit: usize) -> Result<Vec<VectorHit>> {
        let indexed = self.has_index(model, q.len())?;
        self.nearest_by(model, q, filter, limit, indexed)
    }

    /// [`Pg::nearest`], by the HNSW index (`indexed`, which must exist) or exactly.
    pub(crate) fn nearest_by(
        &self,
        model: &str,
        q: &[f32],
        filter: &Filter,
        limit: usize,
        indexed: bool,
    ) -> Result<Vec<VectorHit>> {
        // The index answers an ORDER BY on the expression it was built on, for its model.
        let (column, model_is) = if indexed {
            (format!("v.vector::vector({})", q.len()), format!("v.model = {}", literal(model)))
        } else {
            ("v.vector".to_string(), "v.model = ?".to_string())
        };
        let mut sql = Sql::new(
            Dialect::Postgres,
            format!(
                "SELECT {MEMORY_COLUMNS}, (1 - ({column} <=> ?::vector))::float8 FROM memories AS m \
                 JOIN memory_vectors AS v ON v.memory_id = m.id AND {model_is} WHERE 1 = 1"
            ),
        );
        sql.values.push(SqlValue::Vector(q.to_vec()));
        if !indexed {
            sql.values.push(SqlValue::Text(model.to_string()));
        }
        filter.push_sql(&mut sql);
        sql.bind(&format!(" ORDER BY {column} <=> ?::vector"), SqlValue::Vector(q.to_vec()));
        if !indexed {
            sql.push(", m.id");
        }
        sql.bind(" LIMIT ?", SqlValue::Int(limit.clamp(1, 1000) as i64));
        let rows = self.run(&sql)?;
        let mut hits: Vec<VectorHit> = rows
            .iter()
            .map(|r| Ok(VectorHit { memory: memory_from_row(r)?, similarity: r.try_get(18)? }))
            .collect::<Result<_>>()?;
        // An iterative index scan may give neighbours slightly out of order.
        hits.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then_with(|| a.memory.id.cmp(&b.memory.id)));
        Ok(hits)
    }

    /// Every memory within `filter` with a vector from `model`, with it, in id order.
    pub(crate) fn embedded(&self, model: &str, filter: &Filter) -> Result<Vec<(Memory, Vec<f32>)>> {
        let mut sql = Sql::new(
            Dialect::Postgres,
            format!(
                "SELECT {MEMORY_COLUMNS}, v.vector FROM memories AS m \
                 JOIN memory_vectors AS v ON v.memory_id = m.id AND v.model = ? WHERE 1 = 1"
            ),
        );
        sql.values.push(SqlValue::Text(model.to_string()));
        filter.push_sql(&mut sql);
        sql.push(" ORDER BY m.id");
        self.run(&sql)?.iter().map(|r| Ok((memory_from_row(r)?, r.try_get::<_, Vector>(18)?.to_vec()))).collect()
    }

    /// The cosine similarity of `q` to each of `ids`' vectors from `model` (those that have
    /// one), in one statement: one round trip for a recall's keyword-only candidates.
    pub(crate) fn similarities_to(
        &self,
        model: &str,
        ids: &[MemoryId],
        q: &[f32],
    ) -> Result<std::collections::HashMap<MemoryId, f64>> {
        if ids.is_empty() {
            return Ok(Default::default());
        }
        let wanted: Vec<String> = ids.iter().map(MemoryId::to_string).collect();
        let rows = self.client().query(
            "SELECT memory_id, (1 - (vector <=> $3))::float8 FROM memory_vectors WHERE memory_id = ANY($1) AND model = $2",
            &[&wanted, &model, &Vector::from(q.to_vec())],
        )?;
        rows.iter().map(|r| Ok((r.try_get::<_, &str>(0)?.parse()?, r.try_get(1)?))).collect()
    }
}
