//! Hybrid retrieval: the keyword (bm25) and meaning (vector) result lists fused by reciprocal
//! rank fusion, each result with its score breakdown — why it was recalled.

use std::collections::HashMap;

use serde::Serialize;

use crate::error::Result;
use crate::model::{Memory, MemoryId};
use crate::query::Filter;
use crate::store::Store;
use crate::vectors::Embedder;

/// How a hybrid query fuses its two lists.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HybridOptions {
    /// The RRF constant: a result at rank r (1-based) contributes 1 / (k + r).
    pub rrf_k: f64,
    /// Candidates taken from each list before fusing (at least the limit).
    pub candidates: usize,
}

impl Default for HybridOptions {
    fn default() -> Self {
        HybridOptions { rrf_k: 60.0, candidates: 50 }
    }
}

/// Why a memory was recalled: where each retriever ranked it and the fused score.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Breakdown {
    /// Rank in the keyword list (1 = best), if it was there.
    pub keyword_rank: Option<usize>,
    /// Its bm25 score.
    pub keyword_score: Option<f64>,
    /// Rank in the vector list, if it was there.
    pub vector_rank: Option<usize>,
    /// Its cosine similarity to the query.
    pub similarity: Option<f64>,
    /// The fused score: the sum of 1 / (k + rank) over the lists it is in.
    pub fused: f64,
}

/// A recalled memory and why.
#[derive(Debug, Clone)]
pub struct Recalled {
    /// The memory.
    pub memory: Memory,
    /// Why it was recalled.
    pub breakdown: Breakdown,
}

impl Store {
    /// Keyword and vector search fused (RRF), best first. Without an embedder, or before any
    /// vector exists, this is the keyword search with breakdowns.
    pub fn hybrid_search(
        &self,
        embedder: Option<&dyn Embedder>,
        text: &str,
        filter: &Filter,
        limit: usize,
        options: HybridOptions,
    ) -> Result<Vec<Recalled>> {
        let n = options.candidates.max(limit);
        let keyword = self.search_ranked(text, filter, n)?;
        let vector = match embedder {
            Some(e) => self.vector_search(e, text, filter, n)?,
            None => Vec::new(),
        };
        // Each list as (memory, score) with a setter for its part of the breakdown.
        type Mark = fn(&mut Breakdown, usize, f64);
        let lists: [(Vec<(Memory, f64)>, Mark); 2] = [
            (keyword.into_iter().map(|h| (h.memory, h.score)).collect(), |b, rank, score| {
                b.keyword_rank = Some(rank);
                b.keyword_score = Some(score);
            }),
            (vector.into_iter().map(|h| (h.memory, h.similarity)).collect(), |b, rank, sim| {
                b.vector_rank = Some(rank);
                b.similarity = Some(sim);
            }),
        ];
        let mut fused: HashMap<MemoryId, Recalled> = HashMap::new();
        for (list, mark) in lists {
            for (i, (memory, score)) in list.into_iter().enumerate() {
                let r = fused.entry(memory.id).or_insert_with(|| Recalled { memory, breakdown: Breakdown::default() });
                mark(&mut r.breakdown, i + 1, score);
                r.breakdown.fused += 1.0 / (options.rrf_k + (i + 1) as f64);
            }
        }
        let mut out: Vec<Recalled> = fused.into_values().collect();
        out.sort_by(|a, b| b.breakdown.fused.total_cmp(&a.breakdown.fused).then(b.memory.id.cmp(&a.memory.id)));
        out.truncate(limit);
        Ok(out)
    }
}
