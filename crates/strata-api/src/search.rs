//! Finding memories: keyword search, the search box as typed (and the search a person settled
//! on, recorded as a recall), counts, and recall with its score breakdown.

use strata_core::Filter;

use crate::dto::{HitView, RecallView};
use crate::{ApiResult, Engine};

impl Engine {
    /// Keyword search in this scope (recording accesses of what it returns).
    pub fn search(&mut self, text: &str, filter: Filter, limit: usize, marks: (&str, &str)) -> ApiResult<Vec<HitView>> {
        let hits = self.store_view().search(text, &self.scoped(filter), limit, marks)?;
        self.store().note_access(hits.iter().map(|h| h.memory.id))?;
        Ok(hits.into_iter().map(Into::into).collect())
    }

    /// What a search box shows for `text` as it is typed: recall's ranking with the last word
    /// matching as a prefix and only close meaning matches ([`HybridOptions::as_typed`]).
    /// Nothing is recorded: a keystroke is not a use of a memory.
    pub fn find(&self, text: &str, filter: Filter, limit: usize) -> ApiResult<Vec<RecallView>> {
        let hits = self.rank(crate::Ranking::Hybrid(strata_core::HybridOptions::as_typed()), text, filter, limit)?;
        Ok(hits.into_iter().map(Into::into).collect())
    }

    /// A search the person settled on (the window asks once the box has stayed the same a
    /// moment): recorded as a recall, as [`Engine::recall`] records one, and what it shows
    /// counted as recalled. Returns how many it found.
    pub fn searched(&mut self, text: &str, filter: Filter, limit: usize) -> ApiResult<usize> {
        let started = std::time::Instant::now();
        let hits = self.rank(crate::Ranking::Hybrid(strata_core::HybridOptions::as_typed()), text, filter, limit)?;
        self.store().note_access(hits.iter().map(|h| h.memory.id))?;
        let recorded = hits.iter().map(|h| crate::analytics::recorded_hit(h, false)).collect();
        self.record_recall(strata_core::analytics::Purpose::Search, text, started.elapsed(), recorded, None);
        Ok(hits.len())
    }

    /// How many memories in this scope match `text`'s words as typed, up to `cap` + 1 (what a
    /// search box says it found, beside the best it shows).
    pub fn count_matches(&self, text: &str, filter: Filter, cap: u64) -> ApiResult<u64> {
        Ok(self.store_view().count_typed_matches(text, &self.scoped(filter), cap)?)
    }

    /// How many memories in this scope match `filter`.
    pub fn count(&self, filter: Filter) -> ApiResult<u64> {
        Ok(self.store_view().count(&self.scoped(filter))?)
    }

    /// Recall in this scope: keyword and vector search fused, time words in the query applied,
    /// relevance added (as [`EngineOptions::recall`] says), each result with its score
    /// breakdown. Records accesses of what it returns. Without an embedder it ranks by keywords.
    pub fn recall(&mut self, text: &str, filter: Filter, limit: usize) -> ApiResult<Vec<RecallView>> {
        let started = std::time::Instant::now();
        let hits = self.recall_scored(text, filter, limit)?;
        let recorded = hits.iter().map(|h| crate::analytics::recorded_hit(h, false)).collect();
        self.record_recall(strata_core::analytics::Purpose::Search, text, started.elapsed(), recorded, None);
        Ok(hits.into_iter().map(Into::into).collect())
    }

    /// [`Engine::recall`] with the memories as the core holds them.
    pub(crate) fn recall_scored(
        &mut self,
        text: &str,
        filter: Filter,
        limit: usize,
    ) -> ApiResult<Vec<strata_core::Recalled>> {
        let filter = self.scoped(filter);
        let hits = self.store_view().hybrid_search(
            self.embedder().map(|e| &**e),
            text,
            &filter,
            limit.clamp(1, 1000),
            self.options().recall,
        )?;
        self.store().note_access(hits.iter().map(|h| h.memory.id))?;
        Ok(hits)
    }
}
