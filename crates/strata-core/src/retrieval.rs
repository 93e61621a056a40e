//! Hybrid retrieval: the keyword (bm25) and meaning (vector) candidate lists fused into one
//! match score, time words in the query turned into a boost (or a filter), then a relevance
//! score that adds recency, access frequency, importance and tier. Every result carries its
//! score breakdown — why it was recalled.
//!
//! Fusion defaults to a weighted sum of the two scores, each scaled against the candidates':
//! on LoCoMo it beats reciprocal rank fusion, which treats a weak vector list as an equal
//! (docs/benchmarks.md has the figures).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::error::Result;
use crate::model::{Content, EpisodeBody, Memory, MemoryId, Tier};
use crate::query::Filter;
use crate::store::Store;
use crate::temporal::{TimePhrase, time_phrase};
use crate::vectors::{Embedder, embed_one};

/// How the two candidate lists become one match score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "method")]
pub enum Fusion {
    /// `keyword_share × k + (1 − keyword_share) × similarity / best similarity`, where k is the
    /// bm25 score scaled to the candidates' range (best 1, weakest keyword match 0, no keyword
    /// match 0; under one bm25 unit of range, divided by the best instead). A memory without a
    /// vector yet (still being embedded) scores by k alone.
    Weighted {
        /// The keyword score's share, 0–1.
        keyword_share: f64,
    },
    /// Reciprocal rank fusion: a result at rank r (1-based) in a list adds 1 / (k + r).
    Rrf {
        /// The RRF constant.
        k: f64,
    },
}

/// What a time phrase in the query ("last week", "in May 2023") does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "use")]
pub enum TimeUse {
    /// Time words are searched as words.
    Ignore,
    /// Memories that occurred in the named range get this much added to their score; the
    /// phrase's words are not searched as keywords.
    Boost {
        /// Added to the score of a memory in the range.
        weight: f64,
    },
    /// Only memories that occurred in the range are recalled.
    Filter,
}

/// The relevance terms added to the match score, each `weight × value` with the value in 0–1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Relevance {
    /// Recency halves every this many days (from when it occurred or was last used).
    pub half_life_days: f64,
    /// Weight of recency: `0.5 ^ (age / half-life)`.
    pub recency: f64,
    /// Weight of access frequency: `accesses / (accesses + 5)`.
    pub frequency: f64,
    /// Weight of importance (0–1 as stored).
    pub importance: f64,
    /// Weight of tier: long 1, medium 0.5, short 0.25.
    pub tier: f64,
}

impl Default for Relevance {
    fn default() -> Self {
        Relevance { half_life_days: 30.0, recency: 0.05, frequency: 0.05, importance: 0.05, tier: 0.02 }
    }
}

/// How a hybrid query runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HybridOptions {
    /// How the two lists fuse.
    pub fusion: Fusion,
    /// Candidates taken from each list (at least the limit).
    pub candidates: usize,
    /// What time words in the query do.
    pub time: TimeUse,
    /// The relevance rerank, if any.
    pub relevance: Option<Relevance>,
    /// A memory found by meaning alone (no keyword matched) is dropped below this cosine
    /// similarity: every memory has *some* similarity to any query, and an unrelated question
    /// should recall nothing rather than the least unrelated memories.
    pub min_similarity: f64,
    /// The query is still being typed: its last word also matches the words it begins.
    pub typed: bool,
}

impl HybridOptions {
    /// Weighted fusion and time boosts, no relevance rerank (the `hybrid` benchmark setting).
    pub fn hybrid() -> Self {
        HybridOptions {
            fusion: Fusion::Weighted { keyword_share: 0.6 },
            candidates: 50,
            time: TimeUse::Boost { weight: 0.2 },
            relevance: None,
            min_similarity: 0.2,
            typed: false,
        }
    }

    /// [`HybridOptions::hybrid`] with the relevance rerank (`hybrid_rerank`).
    pub fn hybrid_rerank() -> Self {
        HybridOptions { relevance: Some(Relevance::default()), ..HybridOptions::hybrid() }
    }

    /// [`HybridOptions::default`] for a search box: the last word typed matches as a prefix,
    /// and what only resembles the text in meaning must resemble it more closely than in
    /// recall — results that come and go with each keystroke are noise to a person.
    pub fn as_typed() -> Self {
        HybridOptions { typed: true, min_similarity: AS_TYPED_MIN_SIMILARITY, ..HybridOptions::default() }
    }

    /// Reciprocal rank fusion (k = 60) of the two lists alone (`hybrid_rrf`).
    pub fn rrf() -> Self {
        HybridOptions {
            fusion: Fusion::Rrf { k: 60.0 },
            candidates: 50,
            time: TimeUse::Ignore,
            relevance: None,
            min_similarity: 0.0,
            typed: false,
        }
    }
}

impl Default for HybridOptions {
    /// What the product uses: [`HybridOptions::hybrid_rerank`].
    fn default() -> Self {
        HybridOptions::hybrid_rerank()
    }
}

/// Why a memory was recalled. `score` is the sum of `matched`, `time` and the four relevance
/// terms; the ranks and raw scores say where the match came from.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Breakdown {
    /// Rank in the keyword list (1 = best), if it was there.
    pub keyword_rank: Option<usize>,
    /// Its bm25 score.
    pub keyword_score: Option<f64>,
    /// Rank in the vector list, if it was there.
    pub vector_rank: Option<usize>,
    /// Its cosine similarity to the query, if it has a vector.
    pub similarity: Option<f64>,
    /// The fused match score ([`ASSISTANT_WEIGHT`] of it for a memory that holds what an
    /// assistant said).
    pub matched: f64,
    /// Whether part of the memory is what an assistant said (a question's answer): its match
    /// counts [`ASSISTANT_WEIGHT`] as much, so a model's answer never outranks what a person
    /// said or a fact that matches as well.
    pub said_by_assistant: bool,
    /// The time phrase it matched ("in May 2023"), if any.
    pub time_phrase: Option<String>,
    /// Added for occurring in the query's time range.
    pub time: f64,
    /// Added for recency.
    pub recency: f64,
    /// Added for access frequency.
    pub frequency: f64,
    /// Added for importance.
    pub importance: f64,
    /// Added for tier.
    pub tier: f64,
    /// The final score results are ordered by.
    pub score: f64,
}

/// A recalled memory and why.
#[derive(Debug, Clone)]
pub struct Recalled {
    /// The memory.
    pub memory: Memory,
    /// Why it was recalled.
    pub breakdown: Breakdown,
}

/// The least similarity of a memory found by meaning alone in [`HybridOptions::as_typed`].
pub const AS_TYPED_MIN_SIMILARITY: f64 = 0.35;

/// How much a match counts when part of the memory is what an assistant said. Half: a
/// question and its (possibly invented) answer that match a query as well as a fact does rank
/// well below that fact, yet a conversation that alone holds what was asked is still found.
pub const ASSISTANT_WEIGHT: f64 = 0.5;

/// Whether part of `m` is what an assistant said: an exchange with an answer.
pub fn said_by_assistant(m: &Memory) -> bool {
    matches!(&m.content, Content::Episodic(e) if matches!(&e.body, EpisodeBody::Exchange { response, .. } if !response.trim().is_empty()))
}

/// The smallest bm25 range that is stretched to 0–1 (see [`Fusion::Weighted`]).
const KEYWORD_RANGE_FLOOR: f64 = 1.0;

fn tier_value(t: Tier) -> f64 {
    match t {
        Tier::Long => 1.0,
        Tier::Medium => 0.5,
        Tier::Short => 0.25,
    }
}

/// The breakdown of `memory` among the candidates, added if new.
fn entry(found: &mut HashMap<MemoryId, Recalled>, memory: Memory) -> &mut Breakdown {
    &mut found.entry(memory.id).or_insert_with(|| Recalled { memory, breakdown: Breakdown::default() }).breakdown
}

/// Fills in every candidate's match score (fusion), time boost, relevance terms and total.
/// One search's candidates as fusion scales them: the range of their keyword scores and the
/// best similarity. Shared by recall and by datasets' search.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MatchScale {
    low_keyword: f64,
    best_keyword: f64,
    best_similarity: f64,
}

impl MatchScale {
    /// The scale of candidates given as (keyword score, similarity).
    pub(crate) fn of(parts: impl Iterator<Item = (Option<f64>, Option<f64>)>) -> MatchScale {
        let mut scale =
            MatchScale { low_keyword: f64::INFINITY, best_keyword: f64::NEG_INFINITY, best_similarity: 0.0 };
        for (keyword, similarity) in parts {
            if let Some(k) = keyword {
                scale.low_keyword = scale.low_keyword.min(k);
                scale.best_keyword = scale.best_keyword.max(k);
            }
            if let Some(s) = similarity {
                scale.best_similarity = scale.best_similarity.max(s);
            }
        }
        scale.best_similarity = scale.best_similarity.max(f64::MIN_POSITIVE);
        scale
    }

    /// The keyword score scaled 0–1. It spans the candidates' range: a term that every
    /// candidate shares (a name in a store shared by several people) shifts them all alike and
    /// says nothing. A range under one bm25 unit is noise (a word most memories share scores
    /// ~0 for all of them): it is not stretched to 0–1; such scores are divided by the best.
    fn keyword_part(&self, s: f64) -> f64 {
        if self.best_keyword - self.low_keyword >= KEYWORD_RANGE_FLOOR {
            (s - self.low_keyword) / (self.best_keyword - self.low_keyword)
        } else {
            s / self.best_keyword.max(f64::MIN_POSITIVE)
        }
    }

    /// The fused match score of a candidate's ranks and scores (`has_vector`: the query had a
    /// vector, so similarity counts).
    pub(crate) fn matched(&self, fusion: Fusion, b: &Breakdown, has_vector: bool) -> f64 {
        match fusion {
            Fusion::Weighted { keyword_share } => {
                let k = b.keyword_score.map_or(0.0, |s| self.keyword_part(s));
                match b.similarity {
                    Some(s) if has_vector => {
                        keyword_share * k + (1.0 - keyword_share) * (s / self.best_similarity).max(0.0)
                    }
                    _ => k,
                }
            }
            Fusion::Rrf { k } => [b.keyword_rank, b.vector_rank].iter().flatten().map(|r| 1.0 / (k + *r as f64)).sum(),
        }
    }
}

fn score_all(
    found: &mut HashMap<MemoryId, Recalled>,
    options: &HybridOptions,
    has_vector: bool,
    phrase: Option<&TimePhrase>,
    now: DateTime<Utc>,
) {
    let scale = MatchScale::of(found.values().map(|r| (r.breakdown.keyword_score, r.breakdown.similarity)));
    for r in found.values_mut() {
        let b = &mut r.breakdown;
        b.matched = scale.matched(options.fusion, b, has_vector);
        b.said_by_assistant = said_by_assistant(&r.memory);
        if b.said_by_assistant {
            b.matched *= ASSISTANT_WEIGHT;
        }
        if let (Some(p), TimeUse::Boost { weight }) = (phrase, options.time) {
            let at = r.memory.occurred_at();
            if p.since <= at && at < p.until {
                b.time = weight;
                b.time_phrase = Some(p.phrase.clone());
            }
        }
        if let Some(rel) = &options.relevance {
            add_relevance(b, &r.memory, rel, now);
        }
        b.score = b.matched + b.time + b.recency + b.frequency + b.importance + b.tier;
    }
}

/// The relevance terms of `m` at `now`, added into `b`.
fn add_relevance(b: &mut Breakdown, m: &Memory, r: &Relevance, now: DateTime<Utc>) {
    let last = m.last_accessed_at.map_or(m.occurred_at(), |a| a.max(m.occurred_at()));
    let age_days = (now - last).num_milliseconds().max(0) as f64 / 86_400_000.0;
    b.recency = r.recency * 0.5f64.powf(age_days / r.half_life_days.max(1e-9));
    let n = m.access_count as f64;
    b.frequency = r.frequency * n / (n + 5.0);
    b.importance = r.importance * m.importance.get();
    b.tier = r.tier * tier_value(m.tier);
}

impl Store {
    fn keyword_candidates(
        &self,
        text: &str,
        filter: &Filter,
        n: usize,
        typed: bool,
    ) -> Result<Vec<crate::query::SearchHit>> {
        if typed { self.search_typed(text, filter, n) } else { self.search_ranked(text, filter, n) }
    }

    /// Keyword and vector search fused, time words applied, relevance added, best first.
    /// Without an embedder, or before any vector exists, the match is the keyword score alone.
    pub fn hybrid_search(
        &self,
        embedder: Option<&dyn Embedder>,
        text: &str,
        filter: &Filter,
        limit: usize,
        options: HybridOptions,
    ) -> Result<Vec<Recalled>> {
        let now = self.clock().now();
        let phrase: Option<TimePhrase> = if options.time == TimeUse::Ignore { None } else { time_phrase(text, now) };
        let mut filter = filter.clone();
        let mut keywords = text;
        if let Some(p) = &phrase {
            if p.rest.chars().any(char::is_alphanumeric) {
                keywords = &p.rest;
            }
            if options.time == TimeUse::Filter {
                filter.since = Some(filter.since.map_or(p.since, |s| s.max(p.since)));
                filter.until = Some(filter.until.map_or(p.until, |u| u.min(p.until)));
            }
        }
        let n = options.candidates.max(limit);
        // The query is embedded on another thread while the keyword search runs.
        let (keyword, query_vector) = match embedder {
            Some(e) if self.is_indexed_for(e.model_id())? => std::thread::scope(|s| {
                let embedding = s.spawn(|| embed_one(e, text));
                let keyword = self.keyword_candidates(keywords, &filter, n, options.typed);
                let q = embedding.join().unwrap_or_else(|_| Err(crate::Error::invalid("the embedder panicked")));
                Ok::<_, crate::Error>((keyword?, Some((e.model_id(), q?))))
            })?,
            _ => (self.keyword_candidates(keywords, &filter, n, options.typed)?, None),
        };
        let vector = match &query_vector {
            Some((model, q)) => self.nearest(model, q, &filter, n)?,
            None => Vec::new(),
        };

        let mut found: HashMap<MemoryId, Recalled> = HashMap::new();
        for (i, h) in keyword.into_iter().enumerate() {
            let b = entry(&mut found, h.memory);
            (b.keyword_rank, b.keyword_score) = (Some(i + 1), Some(h.score));
        }
        for (i, h) in vector.into_iter().enumerate() {
            let b = entry(&mut found, h.memory);
            (b.vector_rank, b.similarity) = (Some(i + 1), Some(h.similarity));
        }
        // Keyword-only candidates: their similarity from the stored vector, if any.
        if let Some((model, q)) = &query_vector {
            let ids: Vec<MemoryId> =
                found.values().filter(|r| r.breakdown.similarity.is_none()).map(|r| r.memory.id).collect();
            let similar = self.similarities_to(model, &ids, q)?;
            for r in found.values_mut().filter(|r| r.breakdown.similarity.is_none()) {
                r.breakdown.similarity = similar.get(&r.memory.id).copied();
            }
        }

        score_all(&mut found, &options, query_vector.is_some(), phrase.as_ref(), now);
        let mut out: Vec<Recalled> = found
            .into_values()
            .filter(|r| {
                r.breakdown.keyword_rank.is_some() || r.breakdown.similarity.unwrap_or(0.0) >= options.min_similarity
            })
            .collect();
        out.sort_by(|a, b| b.breakdown.score.total_cmp(&a.breakdown.score).then(b.memory.id.cmp(&a.memory.id)));
        out.truncate(limit);
        Ok(out)
    }
}
