//! Embeddings: the [`Embedder`] trait, vectors stored per memory and model, a sqlite-vec
//! (`vec0`) index for the active model (partitioned by user), embedding what is missing in
//! batches, and nearest-neighbour search.

use crate::error::{Error, Result};

use crate::model::Memory;

use crate::model::search_text;

/// The fewest candidates the int8 scan hands to exact re-ranking (twice the limit when that is
/// more). Re-ranking 200 for a limit of 50 found nothing more on LoCoMo than 100 does.
pub(crate) const RERANK_FLOOR: usize = 100;

pub use crate::sqlite::vector_scan::{dot as dot_i8, dot_fn as dot_i8_fn, quantize as quantize_i8};

/// Turns texts into L2-normalized vectors.
pub trait Embedder: Send + Sync {
    /// A stable id of the model (vectors record it; another id means re-embedding).
    fn model_id(&self) -> &str;
    /// The vectors' dimension.
    fn dim(&self) -> usize;
    /// One normalized vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;

    /// The vector of a search query. A model may answer faster and slightly less exactly
    /// than [`Embedder::embed`] here (queries are short and wait for an answer); stored
    /// memories are always embedded with `embed`.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        self.embed(&[text])?.pop().ok_or_else(|| Error::invalid("the embedder returned nothing"))
    }
}

/// An embedder that remembers the vectors of its last few queries: a question embedded for
/// search is not embedded again when the on-device model chooses its adapter by it.
pub struct RecentQueries {
    inner: std::sync::Arc<dyn Embedder>,
    recent: std::sync::Mutex<std::collections::VecDeque<(String, Vec<f32>)>>,
}

impl RecentQueries {
    /// How many queries it remembers.
    pub const KEPT: usize = 8;

    /// `inner`, remembering its last [`RecentQueries::KEPT`] queries.
    pub fn new(inner: std::sync::Arc<dyn Embedder>) -> RecentQueries {
        RecentQueries { inner, recent: Default::default() }
    }
}

impl Embedder for RecentQueries {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.inner.embed(texts)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let recent = || self.recent.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let known = recent().iter().find(|(t, _)| t == text).map(|(_, v)| v.clone());
        if let Some(v) = known {
            return Ok(v);
        }
        let v = self.inner.embed_query(text)?;
        let mut kept = recent();
        kept.push_front((text.to_string(), v.clone()));
        kept.truncate(Self::KEPT);
        Ok(v)
    }
}

/// A deterministic stand-in for a sentence model, for tests and for programs that want vector
/// search plumbing without a model: words (longer than two letters, lower-cased) hashed into
/// signed buckets, L2-normalized. Texts that share words point the same way; nothing more.
#[derive(Debug, Clone, Copy)]
pub struct HashEmbedder {
    /// The model id its vectors record.
    pub id: &'static str,
    /// The dimension.
    pub dim: usize,
}

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; self.dim];
                for w in t.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2) {
                    let h = w
                        .to_lowercase()
                        .bytes()
                        .fold(1_469_598_103_934_665_603u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
                    v[(h % self.dim as u64) as usize] += if h & (1 << 40) == 0 { 1.0 } else { -1.0 };
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                v.iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}

/// The text a memory is embedded from.
pub fn embedding_text(m: &Memory) -> String {
    let (title, body) = search_text(&m.content);
    format!("{title}: {body}")
}

/// A vector search hit.
#[derive(Debug, Clone)]
pub struct VectorHit {
    /// The memory.
    pub memory: Memory,
    /// Cosine similarity to the query (1 = same direction).
    pub similarity: f64,
}

/// A query's vector.
pub(crate) fn embed_one(embedder: &dyn Embedder, text: &str) -> Result<Vec<f32>> {
    let v = embedder.embed_query(text)?;
    if v.len() != embedder.dim() {
        return Err(Error::invalid(format!(
            "the embedder {} returned a vector of the wrong size",
            embedder.model_id()
        )));
    }
    Ok(v)
}

/// Calls the same method on whichever engine the store runs on.
macro_rules! on_engine {
    ($store:expr, $e:ident => $call:expr) => {
        match &$store.engine {
            crate::storage::Engine::Sqlite($e) => $call,
            #[cfg(feature = "postgres")]
            crate::storage::Engine::Postgres($e) => $call,
        }
    };
}

/// Embedding what is missing, and searching by meaning, on every engine.
impl crate::store::Store {
    /// Memories that have no vector from `embedder`'s model yet.
    pub fn pending_embeddings(&self, embedder: &dyn Embedder) -> Result<u64> {
        on_engine!(self, e => e.pending_embeddings(embedder.model_id()))
    }

    /// Embeds up to `batch` memories that have no vector from this model yet, in one
    /// transaction, and makes this model the indexed one. Returns how many it embedded; call
    /// until it returns 0 (each call is a resumable step of the job).
    pub fn embed_pending(&mut self, embedder: &dyn Embedder, batch: usize) -> Result<usize> {
        self.embed_batch(embedder, batch, true)
    }

    /// Embeds up to `batch` memories that have no vector from this model yet and keeps the
    /// vectors, leaving search on the model it uses now: a switch of embedders fills the new
    /// model's vectors first, then [`Store::search_with`] moves search over at once. Returns how
    /// many it embedded (0: none waits).
    pub fn embed_ahead(&mut self, embedder: &dyn Embedder, batch: usize) -> Result<usize> {
        self.embed_batch(embedder, batch, false)
    }

    /// Makes search use `embedder`'s stored vectors (memories it has not embedded yet are found
    /// by keywords until it does). Another model's vectors stay, so switching back costs no
    /// embedding.
    pub fn search_with(&mut self, embedder: &dyn Embedder) -> Result<()> {
        let (model, dim) = (embedder.model_id(), embedder.dim());
        match &mut self.engine {
            crate::storage::Engine::Sqlite(db) => db.store_vectors(model, dim, &[], true).map(|_| ()),
            #[cfg(feature = "postgres")]
            crate::storage::Engine::Postgres(pg) => pg.search_with(model, dim),
        }
    }

    /// The model search uses now (none before the first embedding).
    pub fn searched_model(&self) -> Result<Option<String>> {
        on_engine!(self, e => e.searched_model())
    }

    /// How many memories have a vector from each model, most first.
    pub fn vectors_by_model(&self) -> Result<Vec<(String, u64)>> {
        on_engine!(self, e => e.vectors_by_model())
    }

    /// Erases every vector `model` made (memories' and passages'), when the person no longer
    /// keeps that embedder: how many memories had one. The model search uses is refused.
    pub fn drop_vectors(&mut self, model: &str) -> Result<u64> {
        use crate::sql::{Sql, SqlValue};
        if self.searched_model()?.as_deref() == Some(model) {
            return Err(Error::invalid(format!("search uses {model}'s vectors: choose another embedder first")));
        }
        let dialect = self.engine.dialect();
        self.transact(|tx| {
            let plain = tx.tx.plain();
            let mut q = Sql::new(dialect, "");
            q.bind("DELETE FROM dataset_vectors WHERE model = ?", SqlValue::Text(model.into()));
            plain.execute(&q)?;
            let mut q = Sql::new(dialect, "");
            q.bind("DELETE FROM memory_vectors WHERE model = ?", SqlValue::Text(model.into()));
            plain.execute(&q)
        })
    }

    fn embed_batch(&mut self, embedder: &dyn Embedder, batch: usize, index: bool) -> Result<usize> {
        let model = embedder.model_id();
        let todo = on_engine!(self, e => e.unembedded(model, batch))?;
        // Nothing to embed and nothing to index: no write (an idle background worker calls this
        // every few seconds and must not take the write lock for nothing).
        if todo.is_empty() && (!index || self.is_indexed_for(model)?) {
            return Ok(0);
        }
        // Embedding is the slow part: done before taking the write lock.
        let texts: Vec<String> = todo.iter().map(embedding_text).collect();
        let vectors = if todo.is_empty() {
            Vec::new()
        } else {
            embedder.embed(&texts.iter().map(String::as_str).collect::<Vec<_>>())?
        };
        if vectors.len() != todo.len() || vectors.iter().any(|v| v.len() != embedder.dim()) {
            return Err(Error::invalid(format!("the embedder {model} returned vectors of the wrong number or size")));
        }
        let pairs: Vec<(&Memory, &Vec<f32>)> = todo.iter().zip(&vectors).collect();
        match &mut self.engine {
            crate::storage::Engine::Sqlite(db) => db.store_vectors(model, embedder.dim(), &pairs, index),
            #[cfg(feature = "postgres")]
            crate::storage::Engine::Postgres(pg) => pg.store_vectors(model, embedder.dim(), &pairs, index),
        }
    }

    /// The memories nearest to `query` in meaning (needs `filter.user_id`: the index is
    /// partitioned by user). Other filters apply to an oversampled candidate set.
    pub fn vector_search(
        &self,
        embedder: &dyn Embedder,
        query: &str,
        filter: &crate::query::Filter,
        limit: usize,
    ) -> Result<Vec<VectorHit>> {
        if filter.user_id.is_none() {
            return Err(Error::invalid("vector search needs a user scope"));
        }
        if !self.is_indexed_for(embedder.model_id())? {
            return Ok(Vec::new());
        }
        let q = embed_one(embedder, query)?;
        self.nearest(embedder.model_id(), &q, filter, limit)
    }

    /// For measuring an index: the `limit` memories nearest to `query` by the PostgreSQL
    /// store's HNSW index and exactly, each with the milliseconds it took; `None` where there
    /// is no index to compare (a SQLite store, or fewer vectors than
    /// [`crate::postgres::EXACT_BELOW`]).
    #[cfg(feature = "postgres")]
    pub fn index_and_exact(
        &self,
        embedder: &dyn Embedder,
        query: &str,
        filter: &crate::query::Filter,
        limit: usize,
    ) -> Result<Option<IndexCheck>> {
        let crate::storage::Engine::Postgres(pg) = &self.engine else { return Ok(None) };
        let q = embed_one(embedder, query)?;
        let model = embedder.model_id();
        if !pg.has_index(model, q.len())? {
            return Ok(None);
        }
        let timed = |indexed: bool| -> Result<(Vec<crate::model::MemoryId>, f64)> {
            let started = std::time::Instant::now();
            let hits = pg.nearest_by(model, &q, filter, limit, indexed)?;
            Ok((hits.into_iter().map(|h| h.memory.id).collect(), started.elapsed().as_secs_f64() * 1000.0))
        };
        let (index, index_ms) = timed(true)?;
        let (exact, exact_ms) = timed(false)?;
        Ok(Some(IndexCheck { index, index_ms, exact, exact_ms }))
    }

    /// Whether the store searches with this model's vectors.
    pub(crate) fn is_indexed_for(&self, model: &str) -> Result<bool> {
        on_engine!(self, e => e.is_indexed_for(model))
    }

    /// The memories nearest to the vector `q`, within `filter` (which names a user).
    pub(crate) fn nearest(
        &self,
        model: &str,
        q: &[f32],
        filter: &crate::query::Filter,
        limit: usize,
    ) -> Result<Vec<VectorHit>> {
        match &self.engine {
            crate::storage::Engine::Sqlite(_) => self.sqlite_nearest(model, q, filter, limit),
            #[cfg(feature = "postgres")]
            crate::storage::Engine::Postgres(pg) => {
                if filter.user_id.is_none() {
                    return Err(Error::invalid("vector search needs a user scope"));
                }
                pg.nearest(model, q, filter, limit)
            }
        }
    }

    /// Every memory within `filter` that has a vector from `model`, with that vector, in id
    /// order (for grouping memories by meaning).
    pub fn embedded(&self, model: &str, filter: &crate::query::Filter) -> Result<Vec<(Memory, Vec<f32>)>> {
        on_engine!(self, e => e.embedded(model, filter))
    }

    /// The cosine similarity of `q` to each of `ids`' stored vectors from `model` (those that
    /// have one), in one request where the engine is a server.
    pub(crate) fn similarities_to(
        &self,
        model: &str,
        ids: &[crate::model::MemoryId],
        q: &[f32],
    ) -> Result<std::collections::HashMap<crate::model::MemoryId, f64>> {
        on_engine!(self, e => e.similarities_to(model, ids, q))
    }
}

/// The index's answer and the exact one to one query ([`Store::index_and_exact`]).
#[cfg(feature = "postgres")]
#[derive(Debug, Clone)]
pub struct IndexCheck {
    /// The nearest memories by the HNSW index, best first.
    pub index: Vec<crate::model::MemoryId>,
    /// Milliseconds the index search took.
    pub index_ms: f64,
    /// The nearest memories by comparing every vector, best first.
    pub exact: Vec<crate::model::MemoryId>,
    /// Milliseconds the exact search took.
    pub exact_ms: f64,
}
