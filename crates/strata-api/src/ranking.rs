//! Ranking memories for a query by one method, without recording them as accessed: what
//! recall would find and how the methods compare (the benchmarks, diagnostics). `recall` is
//! the product's retrieval; this is the same machinery with the method chosen and no side
//! effects.

use strata_core::{Breakdown, Filter, HybridOptions, Recalled};

use crate::{ApiError, ApiResult, Engine, ErrorCode};

/// How [`Engine::rank`] orders memories.
#[derive(Debug, Clone, Copy)]
pub enum Ranking {
    /// Full-text search (bm25) alone.
    Keyword,
    /// Nearest neighbours by meaning alone (needs the engine's embedder).
    Meaning,
    /// Both, fused and reranked as the options say (`HybridOptions::default()` is recall's).
    Hybrid(HybridOptions),
}

impl Engine {
    /// For benchmarks: the PostgreSQL store's HNSW index's and the exact answer to `query`
    /// within this caller's scope, each timed (`None` without an embedder or an index).
    pub fn index_check(&self, query: &str, limit: usize) -> ApiResult<Option<strata_core::vectors::IndexCheck>> {
        let Some(embedder) = self.embedder() else { return Ok(None) };
        let filter = self.scoped(Filter::default());
        Ok(self.store_view().index_and_exact(embedder.as_ref(), query, &filter, limit)?)
    }

    /// Up to `limit` memories in the caller's scope, ranked for `text` by `ranking`. Nothing is
    /// recorded: ranking the same query twice gives the same order. A breakdown carries what
    /// the method computed (the keyword score, the similarity, or every part for hybrid).
    pub fn rank(&self, ranking: Ranking, text: &str, filter: Filter, limit: usize) -> ApiResult<Vec<Recalled>> {
        let filter = self.scoped(filter);
        let limit = limit.clamp(1, 1000);
        let store = self.store_view();
        Ok(match ranking {
            Ranking::Keyword => store
                .search_ranked(text, &filter, limit)?
                .into_iter()
                .map(|h| Recalled {
                    breakdown: Breakdown { keyword_score: Some(h.score), score: h.score, ..Default::default() },
                    memory: h.memory,
                })
                .collect(),
            Ranking::Meaning => {
                let embedder = self.embedder().ok_or_else(|| {
                    ApiError::new(ErrorCode::Model, "ranking by meaning needs the embedding model, which is not loaded")
                })?;
                store
                    .vector_search(embedder.as_ref(), text, &filter, limit)?
                    .into_iter()
                    .map(|h| Recalled {
                        breakdown: Breakdown {
                            similarity: Some(h.similarity),
                            score: h.similarity,
                            ..Default::default()
                        },
                        memory: h.memory,
                    })
                    .collect()
            }
            Ranking::Hybrid(options) => {
                store.hybrid_search(self.embedder().map(|e| e.as_ref()), text, &filter, limit, options)?
            }
        })
    }
}
