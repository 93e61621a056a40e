//! Search over datasets' chunks on SQLite: bm25 over `dataset_fts` and the exact cosine
//! similarity over `dataset_vectors`, fused as recall fuses memories (`MatchScale`, the
//! product's weighted fusion), then the chunks with their dataset and place. Also the
//! chunks waiting for a vector and the writing of their vectors.

use std::collections::HashMap;

use rusqlite::types::Value;
use rusqlite::{Transaction, TransactionBehavior, params};

use crate::datasets::{DatasetHit, QueryVector};
use crate::error::Result;
use crate::query::{SEARCH_WINDOW, plan_terms};
use crate::retrieval::{Breakdown, HybridOptions, MatchScale};
use crate::sqlite::datasets::chunk_from_row;
use crate::sqlite::vector_index::{from_blob, to_blob};
use crate::store::Store;
use crate::vectors::RERANK_FLOOR;

/// How many candidates each list gives fusion.
const CANDIDATES: usize = 50;

impl Store {
    /// The best `limit` chunks of `user`'s datasets (`only`: these names; empty: all) for
    /// `text`, by keyword and, with `query`, by meaning.
    pub fn search_datasets(
        &self,
        user: &str,
        only: &[String],
        text: &str,
        query: Option<QueryVector<'_>>,
        limit: usize,
    ) -> Result<Vec<DatasetHit>> {
        let db = self.datasets_db()?;
        let mut stmt = db.prepare_cached("SELECT rid, name, source FROM datasets WHERE user_id = ?1")?;
        let chosen: HashMap<i64, (String, String)> = stmt
            .query_map([user], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
            .collect::<rusqlite::Result<Vec<_>>>()?
            .into_iter()
            .filter(|(_, (name, _))| only.is_empty() || only.contains(name))
            .collect();
        if chosen.is_empty() {
            return Ok(Vec::new());
        }
        let within = format!("({})", chosen.keys().map(|r| r.to_string()).collect::<Vec<_>>().join(","));
        let words = chosen.keys().map(|r| format!("d{r}")).collect::<Vec<_>>().join(" OR ");
        let mut found: HashMap<i64, Breakdown> = HashMap::new();
        for (rank, (rid, score)) in keyword(db, text, &words)?.into_iter().enumerate() {
            let b = found.entry(rid).or_default();
            b.keyword_rank = Some(rank + 1);
            b.keyword_score = Some(score);
        }
        let options = HybridOptions::hybrid();
        if let Some(q) = query {
            // What only vaguely resembles the query is no answer to it (recall's floor).
            let close = nearest(self, user, q, &within)?.into_iter().filter(|(_, s)| *s >= options.min_similarity);
            for (rank, (rid, similarity)) in close.enumerate() {
                let b = found.entry(rid).or_default();
                b.vector_rank = Some(rank + 1);
                b.similarity = Some(similarity);
            }
        }
        let scale = MatchScale::of(found.values().map(|b| (b.keyword_score, b.similarity)));
        let mut ranked: Vec<(i64, f64)> =
            found.iter().map(|(rid, b)| (*rid, scale.matched(options.fusion, b, query.is_some()))).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate(limit);
        let mut chunk = db.prepare_cached(
            "SELECT text, page, heading, line_start, line_end, row_number, dataset_rid FROM dataset_chunks WHERE rid = ?1",
        )?;
        ranked
            .into_iter()
            .map(|(rid, score)| {
                let (c, dataset) = chunk.query_row([rid], |r| Ok((chunk_from_row(r)?, r.get::<_, i64>(6)?)))?;
                let (name, source) = chosen[&dataset].clone();
                Ok(DatasetHit { dataset: name, source, text: c.text, place: c.place, score })
            })
            .collect()
    }

    /// Up to `batch` chunks of `user`'s datasets without a vector of `model`: (chunk, text).
    pub fn dataset_chunks_to_embed(&self, model: &str, batch: usize) -> Result<Vec<(i64, String)>> {
        let db = self.datasets_db()?;
        let mut stmt = db.prepare_cached(
            "SELECT c.rid, c.text FROM dataset_chunks c WHERE NOT EXISTS \
             (SELECT 1 FROM dataset_vectors v WHERE v.chunk_rid = c.rid AND v.model = ?1) ORDER BY c.rid LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![model, batch as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many chunks wait for a vector of `model`.
    pub fn dataset_chunks_pending(&self, model: &str) -> Result<u64> {
        let db = self.datasets_db()?;
        let n: i64 = db
            .prepare_cached(
                "SELECT count(*) FROM dataset_chunks c WHERE NOT EXISTS \
                 (SELECT 1 FROM dataset_vectors v WHERE v.chunk_rid = c.rid AND v.model = ?1)",
            )?
            .query_row([model], |r| r.get(0))?;
        Ok(n as u64)
    }

    /// Keeps the vectors of chunks (a chunk forgotten meanwhile is skipped).
    pub fn put_dataset_vectors(&mut self, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<usize> {
        let db = self.datasets_db()?;
        let tx = Transaction::new_unchecked(db, TransactionBehavior::Immediate)?;
        let mut put = tx.prepare_cached(
            "INSERT OR REPLACE INTO dataset_vectors (chunk_rid, model, vector) \
             SELECT rid, ?2, ?3 FROM dataset_chunks WHERE rid = ?1",
        )?;
        let mut kept = 0;
        for (rid, v) in vectors {
            kept += put.execute(params![rid, model, to_blob(v)])?;
        }
        drop(put);
        crate::sqlite::vector_scan::bump_version(&tx)?;
        tx.commit()?;
        Ok(kept)
    }
}

/// The best chunks by bm25 among the datasets whose words (`d<rid>`) are `words`, OR-ed:
/// (chunk, score). The index intersects the query's words with theirs.
fn keyword(db: &rusqlite::Connection, text: &str, words: &str) -> Result<Vec<(i64, f64)>> {
    let mut count =
        db.prepare_cached("SELECT count(*) FROM (SELECT 1 FROM dataset_fts WHERE dataset_fts MATCH ?1 LIMIT ?2)")?;
    let terms = plan_terms(text, false, |t| Ok(count.query_row(params![t, SEARCH_WINDOW + 1], |r| r.get(0))?))?;
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let q = terms.into_iter().map(|(t, _)| t).collect::<Vec<_>>().join(" OR ");
    let q = format!("({q}) AND dataset : ({words})");
    let mut stmt =
        db.prepare_cached("SELECT rowid, -rank FROM dataset_fts WHERE dataset_fts MATCH ?1 ORDER BY rank LIMIT ?2")?;
    let rows = stmt.query_map(params![Value::Text(q), CANDIDATES as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The chunks most similar to the query among the datasets `within` (a list of rowids, which
/// with the user, after a `|`, names the copy): (chunk, cosine). An int8 copy of their vectors, kept while
/// no vector changes (`vector_version`), proposes candidates; their stored vectors decide.
fn nearest(store: &Store, user: &str, q: QueryVector<'_>, within: &str) -> Result<Vec<(i64, f64)>> {
    use crate::sqlite::vector_scan::{UserVectors, version};
    let db = store.datasets_db()?;
    let key = format!("{within}|{user}");
    let current = version(db)?;
    let fresh = matches!(&*store.dataset_vector_cache.borrow(),
        Some(c) if c.model == q.model && c.user == key && c.version == current);
    if !fresh {
        *store.dataset_vector_cache.borrow_mut() = None;
        let sql = format!(
            "SELECT v.chunk_rid, v.vector FROM dataset_vectors v JOIN dataset_chunks c ON c.rid = v.chunk_rid \
             JOIN datasets d ON d.rid = c.dataset_rid WHERE v.model = ?1 AND d.user_id = substr(?2, instr(?2, '|') + 1) \
             AND c.dataset_rid IN {within}"
        );
        *store.dataset_vector_cache.borrow_mut() = Some(UserVectors::read(db, &sql, q.model, &key, q.vector.len())?);
    }
    let proposed = match &*store.dataset_vector_cache.borrow() {
        Some(c) => c.nearest(q.vector, RERANK_FLOOR.max(2 * CANDIDATES)),
        None => Vec::new(),
    };
    if proposed.is_empty() {
        return Ok(Vec::new());
    }
    let list = proposed.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let mut stmt = db.prepare(&format!(
        "SELECT chunk_rid, vector FROM dataset_vectors WHERE model = ?1 AND chunk_rid IN ({list})"
    ))?;
    let mut rows = stmt.query([q.model])?;
    let mut best: Vec<(i64, f64)> = Vec::new();
    let mut v = Vec::with_capacity(q.vector.len());
    while let Some(r) = rows.next()? {
        let blob = r.get_ref(1)?.as_blob().map_err(|e| crate::error::Error::Storage(e.to_string()))?;
        from_blob(blob, &mut v);
        let s: f32 = v.iter().zip(q.vector).map(|(a, b)| a * b).sum();
        best.push((r.get(0)?, f64::from(s)));
    }
    best.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    best.truncate(CANDIDATES);
    Ok(best)
}
