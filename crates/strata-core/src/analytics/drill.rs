//! What is behind a point on a chart: the memories created or moved in a range, the recalls
//! run in one, the memories never recalled.

use chrono::{DateTime, Utc};

use serde::Serialize;

use super::Direction;

use crate::model::MemoryId;

use crate::retrieval::Breakdown;

/// A tier move.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    /// The memory that moved.
    pub memory: MemoryId,
    /// Which way.
    pub direction: Direction,
    /// The rule or the person's reason, as recorded.
    pub reason: String,
    /// When.
    pub at: DateTime<Utc>,
}

/// One recall's usage record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallRow {
    /// When.
    pub at: DateTime<Utc>,
    /// `search` or `prompt`.
    pub purpose: String,
    /// The app or client that asked.
    pub client: Option<String>,
    /// What was asked.
    pub query: String,
    /// How many results.
    pub found: u64,
    /// How long it took.
    pub latency_ms: f64,
    /// The results, best first.
    pub hits: Vec<RecallHit>,
}

/// One result of a recall, as recorded and read back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallHit {
    /// The memory.
    pub memory: MemoryId,
    /// Its score.
    pub score: f64,
    /// What made the score (none: recorded before parts were, or by a caller without them).
    pub parts: Option<ScoreParts>,
    /// Whether the prompt included it.
    pub in_prompt: bool,
    /// Whether the answer drew on it (none: no answer known, or not in the prompt). Not
    /// recorded with the recall: [`Store::record_answer`] sets it.
    pub used: Option<bool>,
}

/// What made a recorded result's score: retrieval's [`Breakdown`] without the ranks. The
/// score is `matched` plus the five boosts.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ScoreParts {
    /// The match: keyword and meaning fused.
    pub matched: f64,
    /// Cosine similarity to the query (none: the memory had no vector).
    pub similarity: Option<f64>,
    /// Added for occurring in the query's time range.
    pub time: f64,
    /// Added for recency.
    pub recency: f64,
    /// Added for how often it was used.
    pub frequency: f64,
    /// Added for importance.
    pub importance: f64,
    /// Added for its tier.
    pub tier: f64,
}

impl ScoreParts {
    /// All that was added to the match.
    pub fn boost(&self) -> f64 {
        self.time + self.recency + self.frequency + self.importance + self.tier
    }
}

impl From<&Breakdown> for ScoreParts {
    fn from(b: &Breakdown) -> ScoreParts {
        ScoreParts {
            matched: b.matched,
            similarity: b.similarity,
            time: b.time,
            recency: b.recency,
            frequency: b.frequency,
            importance: b.importance,
            tier: b.tier,
        }
    }
}

/// Which recalls [`Store::recalls_in`] lists.
#[derive(Debug, Clone, Default)]
pub struct RecallQuery<'a> {
    /// Only the ones that found nothing.
    pub empty: bool,
    /// Only this query.
    pub text: Option<&'a str>,
}
