//! Search over datasets' chunks on SQLite: bm25 over `dataset_fts` and the exact cosine
//! similarity over `dataset_vectors` (fused by `datasets/keeping.rs`). Also the chunks waiting
//! for a vector and the writing of their vectors.

use rusqlite::types::Value;
use rusqlite::{Transaction, TransactionBehavior, params};

use crate::datasets::QueryVector;
use crate::datasets::keeping::CANDIDATES;
use crate::error::Result;
use crate::query::{SEARCH_WINDOW, plan_terms};
use crate::sqlite::Db;
use crate::sqlite::vector_index::{from_blob, to_blob};
use crate::store::Store;
use crate::vectors::RERANK_FLOOR;

/// Up to `batch` chunks without a vector of `model`: (chunk, text).
pub(crate) fn to_embed(db: &Db, model: &str, batch: usize) -> Result<Vec<(i64, String)>> {
    let mut stmt = db.prepare_cached(
        "SELECT c.rid, c.text FROM dataset_chunks c WHERE NOT EXISTS \
         (SELECT 1 FROM dataset_vectors v WHERE v.chunk_rid = c.rid AND v.model = ?1) ORDER BY c.rid LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![model, batch as i64], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// How many chunks wait for a vector of `model`.
pub(crate) fn pending(db: &Db, model: &str) -> Result<u64> {
    let n: i64 = db
        .prepare_cached(
            "SELECT count(*) FROM dataset_chunks c WHERE NOT EXISTS \
             (SELECT 1 FROM dataset_vectors v WHERE v.chunk_rid = c.rid AND v.model = ?1)",
        )?
        .query_row([model], |r| r.get(0))?;
    Ok(n as u64)
}

/// Keeps the vectors of chunks (a chunk forgotten meanwhile is skipped), in one transaction.
pub(crate) fn put_vectors(db: &Db, model: &str, vectors: &[(i64, Vec<f32>)]) -> Result<usize> {
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

/// The best chunks by bm25 among the datasets `within`: (chunk, score). Each dataset's chunks
/// hold its word (`d<rid>`), so the index intersects the query's words with theirs.
pub(crate) fn keyword(db: &Db, text: &str, within: &[i64]) -> Result<Vec<(i64, f64)>> {
    let words = within.iter().map(|r| format!("d{r}")).collect::<Vec<_>>().join(" OR ");
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

/// The chunks most similar to the query among the datasets `within`: (chunk, cosine). An int8
/// copy of their vectors (named by the datasets and the user), kept while no vector changes
/// (`vector_version`), proposes candidates; their stored vectors decide.
pub(crate) fn nearest(store: &Store, user: &str, q: QueryVector<'_>, within: &[i64]) -> Result<Vec<(i64, f64)>> {
    use crate::sqlite::vector_scan::{UserVectors, version};
    let db = store.sqlite()?;
    let within = format!("({})", within.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
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
