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
