//! SQLite's side of `crate::vectors`: its statements and row decoding.

use crate::error::{Error, Result};
use crate::model::{Memory, MemoryId};
use crate::query::Filter;
use crate::sqlite::Db;
use crate::sqlite::rows::{MEMORY_COLUMNS, memory_from_row};
use crate::sqlite::vector_index::{self, has_index, indexed_model, to_blob};
use crate::store::Store;
use rusqlite::{OptionalExtension, params};
use std::collections::HashMap;

use crate::vectors::*;

impl Db {
    /// Memories that have no vector from `model` yet.
    pub(crate) fn pending_embeddings(&self, model: &str) -> Result<u64> {
        Ok(self.query_row(
            "SELECT count(*) FROM memories m WHERE NOT EXISTS \
             (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = ?1)",
            [model],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    /// Up to `batch` memories with no vector from `model` yet, oldest first.
    pub(crate) fn unembedded(&self, model: &str, batch: usize) -> Result<Vec<Memory>> {
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE NOT EXISTS \
             (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = ?1) ORDER BY m.rid LIMIT ?2"
        );
        let mut stmt = self.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![model, batch.max(1) as i64], memory_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Whether the vector index holds this model's vectors.
    pub(crate) fn is_indexed_for(&self, model: &str) -> Result<bool> {
        Ok(has_index(self)? && indexed_model(self)?.as_deref() == Some(model))
    }

    /// The model search uses now.
    pub(crate) fn searched_model(&self) -> Result<Option<String>> {
        Ok(if has_index(self)? { indexed_model(self)? } else { None })
    }

    /// How many memories have a vector from each model, most first.
    pub(crate) fn vectors_by_model(&self) -> Result<Vec<(String, u64)>> {
        let mut stmt =
            self.prepare("SELECT model, count(*) FROM memory_vectors GROUP BY model ORDER BY count(*) DESC, model")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Stores each vector of `embedded` whose memory is still there with the same content, in
    /// one write transaction, and (with `index`) makes `model` the indexed one. Returns how many.
    pub(crate) fn store_vectors(
        &mut self,
        model: &str,
        dim: usize,
        embedded: &[(&Memory, &Vec<f32>)],
        index: bool,
    ) -> Result<usize> {
        let tx = self.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if index {
            vector_index::ensure(&tx, model, dim)?;
        }
        let mut done = 0;
        for (m, v) in embedded {
            // The memory may have changed or been forgotten meanwhile: only store a vector for
            // content that is still there and still the same.
            let current: Option<(i64, String)> = tx
                .prepare_cached("SELECT rid, content FROM memories WHERE id = ?1")?
                .query_row([m.id.to_string()], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            let Some((rid, content)) = current else { continue };
            if content != serde_json::to_string(&m.content).unwrap_or_default() {
                continue;
            }
            let blob = to_blob(v);
            // An upsert: INSERT OR REPLACE's delete would not reach `vector_counts`' trigger.
            tx.prepare_cached(
                "INSERT INTO memory_vectors (memory_id, model, vector) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (memory_id, model) DO UPDATE SET vector = excluded.vector",
            )?
            .execute(params![m.id.to_string(), model, blob])?;
            if index {
                tx.prepare_cached("DELETE FROM memory_vec WHERE rowid = ?1")?.execute([rid])?;
                tx.prepare_cached("INSERT INTO memory_vec (rowid, user_id, embedding) VALUES (?1, ?2, ?3)")?
                    .execute(params![rid, m.scope.user_id, blob])?;
            }
            done += 1;
        }
        if done > 0 {
            crate::sqlite::vector_scan::bump_version(&tx)?;
        }
        tx.commit()?;
        Ok(done)
    }

    /// Every memory within `filter` that has a vector from `model`, with that vector, in id
    /// order (for grouping memories by meaning).
    pub(crate) fn embedded(&self, model: &str, filter: &Filter) -> Result<Vec<(Memory, Vec<f32>)>> {
        let mut sql = format!(
            "SELECT {MEMORY_COLUMNS}, v.vector FROM memories AS m \
             JOIN memory_vectors AS v ON v.memory_id = m.id AND v.model = ? WHERE 1 = 1"
        );
        let mut params: Vec<rusqlite::types::Value> = vec![model.to_string().into()];
        crate::sqlite::query::push_filter(filter, &mut sql, &mut params);
        sql.push_str(" ORDER BY m.id");
        let rows = self
            .prepare(&sql)?
            .query_map(rusqlite::params_from_iter(params), |r| {
                let blob = r.get_ref(17)?.as_blob()?;
                let mut v = Vec::new();
                crate::sqlite::vector_index::from_blob(blob, &mut v);
                Ok((memory_from_row(r)?, v))
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(rows)
    }

    /// The cosine similarity of `q` to each of `ids`' stored vectors from `model` (those that
    /// have one).
    pub(crate) fn similarities_to(
        &self,
        model: &str,
        ids: &[MemoryId],
        q: &[f32],
    ) -> Result<std::collections::HashMap<MemoryId, f64>> {
        let mut stmt = self.prepare_cached("SELECT vector FROM memory_vectors WHERE memory_id = ?1 AND model = ?2")?;
        let mut out = std::collections::HashMap::new();
        for id in ids {
            let blob: Option<Vec<u8>> = stmt.query_row(params![id.to_string(), model], |r| r.get(0)).optional()?;
            if let Some(similarity) = blob.and_then(|b| cosine_with(&b, q)) {
                out.insert(*id, similarity);
            }
        }
        Ok(out)
    }
}

impl Store {
    /// The indexed memories nearest to the vector `q`, within `filter` (which names a user).
    pub(crate) fn sqlite_nearest(
        &self,
        model: &str,
        q: &[f32],
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<VectorHit>> {
        let Some(user) = filter.user_id.as_deref() else {
            return Err(Error::invalid("vector search needs a user scope"));
        };
        let limit = limit.clamp(1, 1000);
        let searches = self.vector_searches.get().saturating_add(1);
        self.vector_searches.set(searches);
        if searches >= 2 {
            return self.scan_nearest(model, q, user, filter, limit);
        }
        // sqlite-vec's cost grows with k: ask for a few more than needed, and only when the
        // filter (tier, type, agent…) leaves too few, ask again for many more.
        let mut k = (limit * 2).max(32);
        loop {
            let hits = self.nearest_k(q, user, filter, limit, k)?;
            if hits.len() >= limit || k >= 4096 {
                return Ok(hits);
            }
            // Rare: the filter removed many. Were there more neighbours to look at?
            let owned: i64 = self
                .sqlite()?
                .prepare_cached("SELECT count(*) FROM memories WHERE user_id = ?1")?
                .query_row([user], |r| r.get(0))?;
            if k as i64 >= owned {
                return Ok(hits);
            }
            k *= 8;
        }
    }

    /// [`Store::sqlite_nearest`] over the in-memory copy of the user's vectors (made or refreshed
    /// here): candidates by the int8 scan, within the filter, ranked by exact similarity.
    fn scan_nearest(
        &self,
        model: &str,
        q: &[f32],
        user: &str,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<VectorHit>> {
        let current = crate::sqlite::vector_scan::version(self.sqlite()?)?;
        let fresh = matches!(&*self.vector_cache.borrow(),
            Some(c) if c.version == current && c.model == model && c.user == user);
        if !fresh {
            *self.vector_cache.borrow_mut() = None; // the old copy goes before the new one is read
            let loaded = crate::sqlite::vector_scan::UserVectors::load(self.sqlite()?, model, user, q.len())?;
            *self.vector_cache.borrow_mut() = Some(loaded);
        }
        let cache = self.vector_cache.borrow();
        let Some(cache) = cache.as_ref() else { return Ok(Vec::new()) };
        let mut k = (limit * 2).max(RERANK_FLOOR);
        loop {
            let rids = cache.nearest(q, k);
            // Exact similarity of the candidates inside the filter, from their stored vectors;
            // only the best `limit` memories are then read in full.
            let mut sql = "SELECT m.rid, v.vector FROM memories AS m \
                 JOIN memory_vectors AS v ON v.memory_id = m.id AND v.model = ? \
                 WHERE m.rid IN (SELECT value FROM json_each(?))"
                .to_string();
            let mut params: Vec<rusqlite::types::Value> =
                vec![model.to_string().into(), serde_json::to_string(&rids).unwrap_or_default().into()];
            crate::sqlite::query::push_filter(filter, &mut sql, &mut params);
            let mut scored: Vec<(f64, i64)> = self
                .sqlite()?
                .prepare_cached(&sql)?
                .query_map(rusqlite::params_from_iter(params), |r| {
                    let similarity = cosine_with(r.get_ref(1)?.as_blob()?, q);
                    Ok((similarity.unwrap_or(f64::NEG_INFINITY), r.get(0)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            if scored.len() >= limit || rids.len() < k || k >= cache.len() {
                scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                scored.truncate(limit);
                return self.vector_hits(&scored);
            }
            k *= 8;
        }
    }

    /// The memories of `scored` (similarity, rid), read in one statement, in that order.
    fn vector_hits(&self, scored: &[(f64, i64)]) -> Result<Vec<VectorHit>> {
        let rids: Vec<i64> = scored.iter().map(|(_, rid)| *rid).collect();
        let mut memories: HashMap<i64, Memory> = self
            .sqlite()?
            .prepare_cached(&format!(
                "SELECT {MEMORY_COLUMNS}, m.rid FROM memories AS m WHERE m.rid IN (SELECT value FROM json_each(?1))"
            ))?
            .query_map([serde_json::to_string(&rids).unwrap_or_default()], |r| Ok((r.get(17)?, memory_from_row(r)?)))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(scored
            .iter()
            .filter_map(|(similarity, rid)| {
                memories.remove(rid).map(|memory| VectorHit { memory, similarity: *similarity })
            })
            .collect())
    }

    /// One pass of [`Store::sqlite_nearest`] with `k` index neighbours.
    fn nearest_k(&self, q: &[f32], user: &str, filter: &Filter, limit: usize, k: usize) -> Result<Vec<VectorHit>> {
        // Filter and cut on (rid, distance) first; only the survivors are read in full.
        let mut inner = "SELECT m.rid AS rid, knn.distance AS distance FROM \
             (SELECT rowid, distance FROM memory_vec WHERE embedding MATCH ?1 AND k = ?2 AND user_id = ?3) AS knn \
             JOIN memories AS m ON m.rid = knn.rowid WHERE 1 = 1"
            .to_string();
        let mut params: Vec<rusqlite::types::Value> =
            vec![to_blob(q).into(), (k as i64).into(), rusqlite::types::Value::Text(user.to_string())];
        crate::sqlite::query::push_filter(filter, &mut inner, &mut params);
        inner.push_str(" ORDER BY knn.distance LIMIT ?");
        params.push((limit as i64).into());
        let sql = format!(
            "SELECT {MEMORY_COLUMNS}, 1.0 - w.distance * w.distance / 2.0 FROM ({inner}) AS w \
             JOIN memories AS m ON m.rid = w.rid ORDER BY w.distance"
        );
        let mut stmt = self.sqlite()?.prepare_cached(&sql)?;
        let hits = stmt
            .query_map(rusqlite::params_from_iter(params), |r| {
                Ok(VectorHit { memory: memory_from_row(r)?, similarity: r.get(17)? })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(hits)
    }
}

/// The dot product (cosine, both being unit vectors) of a stored vector blob with `q`, if
/// the sizes agree. Summed over eight independent lanes so that the loop vectorizes.
fn cosine_with(blob: &[u8], q: &[f32]) -> Option<f64> {
    const LANES: usize = 8;
    if blob.len() != q.len() * 4 {
        return None;
    }
    let value = |c: &[u8]| f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    let mut acc = [0f32; LANES];
    let whole = q.len() / LANES * LANES;
    for (b, y) in blob[..whole * 4].chunks_exact(4 * LANES).zip(q[..whole].chunks_exact(LANES)) {
        for (lane, (c, y)) in acc.iter_mut().zip(b.chunks_exact(4).zip(y)) {
            *lane += value(c) * y;
        }
    }
    let tail: f32 = blob[whole * 4..].chunks_exact(4).zip(&q[whole..]).map(|(c, y)| value(c) * y).sum();
    Some(f64::from(acc.iter().sum::<f32>() + tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_a_stored_blob_matches_the_plain_sum_whatever_the_size() {
        for dim in [1usize, 7, 8, 13, 384] {
            let v: Vec<f32> = (0..dim).map(|i| ((i * 37 % 11) as f32 - 5.0) / 7.0).collect();
            let q: Vec<f32> = (0..dim).map(|i| ((i * 13 % 5) as f32 - 2.0) / 3.0).collect();
            let want: f64 = v.iter().zip(&q).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum();
            let got = cosine_with(&to_blob(&v), &q).expect("sizes agree");
            assert!((got - want).abs() < 1e-4 * want.abs().max(1.0), "dim {dim}: {got} vs {want}");
        }
        assert_eq!(cosine_with(&to_blob(&[1.0, 2.0]), &[1.0]), None, "a blob of another size has no similarity");
    }
}
