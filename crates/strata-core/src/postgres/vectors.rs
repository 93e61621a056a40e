//! Vectors on PostgreSQL with pgvector: one row per memory and model in `memory_vectors`
//! (`vector` without a fixed size, so models of any dimension share the table), searched
//! exactly by cosine distance (`<=>`) within the filter. Which model the store searches with is
//! kept in `settings` (`indexed_model`), as SQLite's index records it.

use pgvector::Vector;

use super::Pg;
use super::rows::{MEMORY_COLUMNS, memories, memory_from_row};
use crate::error::Result;
use crate::model::{Memory, MemoryId};
use crate::query::Filter;
use crate::sql::{Dialect, Sql, SqlValue};
use crate::vectors::VectorHit;

impl Pg {
    /// Memories with no vector from `model` yet.
    pub(crate) fn pending_embeddings(&self, model: &str) -> Result<u64> {
        let row = self.client().query_one(
            "SELECT count(*) FROM memories m WHERE NOT EXISTS \
             (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = $1)",
            &[&model],
        )?;
        Ok(row.try_get::<_, i64>(0)? as u64)
    }

    /// Up to `batch` memories with no vector from `model` yet, oldest first.
    pub(crate) fn unembedded(&self, model: &str, batch: usize) -> Result<Vec<Memory>> {
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE NOT EXISTS \
             (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = $1) \
             ORDER BY m.created_at, m.id LIMIT $2"
        );
        memories(&mut *self.client(), &sql, &[&model, &(batch.max(1) as i64)])
    }

    /// Whether the store searches with `model`'s vectors.
    pub(crate) fn is_indexed_for(&self, model: &str) -> Result<bool> {
        let row = self.client().query_opt("SELECT value FROM settings WHERE key = 'indexed_model'", &[])?;
        Ok(row.map(|r| r.get::<_, String>(0)).as_deref() == Some(model))
    }

    /// Stores each vector of `embedded` whose memory is still there with the same content, and
    /// makes `model` the one searched with, in one write transaction. Returns how many.
    pub(crate) fn store_vectors(
        &mut self,
        model: &str,
        _dim: usize,
        embedded: &[(&Memory, &Vec<f32>)],
    ) -> Result<usize> {
        let tx = self.write()?;
        let mut t = tx.tx();
        t.execute(
            "INSERT INTO settings (key, value) VALUES ('indexed_model', $1) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[&model],
        )?;
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
        Ok(done)
    }

    /// The memories within `filter` nearest to `q` by cosine similarity, best first (an exact
    /// search: every vector of the user's within the filter is compared).
    pub(crate) fn nearest(&self, model: &str, q: &[f32], filter: &Filter, limit: usize) -> Result<Vec<VectorHit>> {
        let mut sql = Sql::new(
            Dialect::Postgres,
            format!(
                "SELECT {MEMORY_COLUMNS}, (1 - (v.vector <=> ?::vector))::float8 FROM memories AS m \
                 JOIN memory_vectors AS v ON v.memory_id = m.id AND v.model = ? WHERE 1 = 1"
            ),
        );
        sql.values.push(SqlValue::Vector(q.to_vec()));
        sql.values.push(SqlValue::Text(model.to_string()));
        filter.push_sql(&mut sql);
        sql.bind(" ORDER BY v.vector <=> ?::vector, m.id", SqlValue::Vector(q.to_vec()));
        sql.bind(" LIMIT ?", SqlValue::Int(limit.clamp(1, 1000) as i64));
        let rows = self.run(&sql)?;
        rows.iter().map(|r| Ok(VectorHit { memory: memory_from_row(r)?, similarity: r.try_get(18)? })).collect()
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

    /// The cosine similarity of `q` to a memory's vector from `model`, if it has one.
    pub(crate) fn similarity_to(&self, model: &str, id: MemoryId, q: &[f32]) -> Result<Option<f64>> {
        let row = self.client().query_opt(
            "SELECT (1 - (vector <=> $3))::float8 FROM memory_vectors WHERE memory_id = $1 AND model = $2",
            &[&id.to_string(), &model, &Vector::from(q.to_vec())],
        )?;
        Ok(match row {
            Some(r) => Some(r.try_get(0)?),
            None => None,
        })
    }
}
