//! Usage records of recalls and the metrics read from them: what recall found, and how
//! prompts used their budgets.

use std::collections::BTreeMap;

use serde::Serialize;

use super::drill::RecallHit;

use crate::model::MemoryId;

/// Why recall ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A search someone (or an AI tool) ran.
    Search,
    /// The recall behind a prompt.
    Prompt,
}

impl Purpose {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Purpose::Search => "search",
            Purpose::Prompt => "prompt",
        }
    }
}

/// What a person rated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum About {
    /// An answer a model gave (its recorded exchange).
    Answer,
    /// A recalled memory.
    Memory,
}

impl About {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            About::Answer => "answer",
            About::Memory => "memory",
        }
    }
}

/// What people said, in a range.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Feedback {
    /// Answers rated helpful.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub answers_helpful: u64,
    /// Answers rated not helpful.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub answers_unhelpful: u64,
    /// Memories rated helpful.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub memories_helpful: u64,
    /// Memories rated not helpful.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub memories_unhelpful: u64,
}

/// One recall, as [`Store::record_recall`] keeps it.
#[derive(Debug, Clone)]
pub struct RecallRecord<'a> {
    /// Whose memories were searched.
    pub user_id: &'a str,
    /// The agent that asked, if any.
    pub agent_id: Option<&'a str>,
    /// The app or MCP client that asked.
    pub client: Option<&'a str>,
    /// A search or a prompt.
    pub purpose: Purpose,
    /// What was asked.
    pub query: &'a str,
    /// How long recall took.
    pub latency_ms: f64,
    /// The results in rank order: each memory, its score and its parts, and whether the prompt
    /// included it (`used` is not recorded here: [`Store::record_answer`] sets it).
    pub hits: Vec<RecallHit>,
    /// For a prompt: how its budget was used.
    pub prompt: Option<PromptRecord>,
}

/// A recorded answer's prompt: its figures, and the memories it included with their scores.
pub type AnswerPrompt = (PromptRecord, Vec<(MemoryId, f64)>);

/// How a prompt used its budget.
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PromptRecord {
    /// The model it was built for.
    pub model: String,
    /// Its budget in tokens.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub budget: u64,
    /// Tokens used.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub used: u64,
    /// Tokens per section (`system`, `facts`, `episodes`, `history`, `message`, `framing`…).
    #[cfg_attr(feature = "specta", specta(type = std::collections::BTreeMap<String, u32>))]
    pub sections: BTreeMap<String, u64>,
    /// Candidates left out, by why (`over_budget`, `duplicate`, `covered`).
    #[cfg_attr(feature = "specta", specta(type = std::collections::BTreeMap<String, u32>))]
    pub dropped: BTreeMap<String, u64>,
}

/// How one model's prompts used their budgets.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ModelUse {
    /// Prompts built.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub prompts: u64,
    /// Their mean budget.
    pub budget: f64,
    /// Their mean tokens used.
    pub used: f64,
    /// Mean of used ÷ budget.
    pub utilization: f64,
}

/// Prompts in one bucket.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct UtilizationPoint {
    /// The bucket's first day.
    pub start: String,
    /// Prompts built.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub prompts: u64,
    /// Mean of used ÷ budget.
    pub utilization: f64,
}

/// How prompts used their budgets over a range.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct UtilizationMetrics {
    /// Prompts built.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub prompts: u64,
    /// Mean of used ÷ budget.
    pub utilization: f64,
    /// Mean tokens per section.
    pub sections: BTreeMap<String, f64>,
    /// Candidates left out, by why, in all.
    #[cfg_attr(feature = "specta", specta(type = std::collections::BTreeMap<String, u32>))]
    pub dropped: BTreeMap<String, u64>,
    /// By model.
    pub by_model: BTreeMap<String, ModelUse>,
    /// Per bucket (buckets with none left out).
    pub series: Vec<UtilizationPoint>,
}

/// Recalls in one bucket.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RecallPoint {
    /// The bucket's first day.
    pub start: String,
    /// Recalls run.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub recalls: u64,
    /// Of those, the ones that found something.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub found: u64,
    /// How close in meaning the best result was to the query (its cosine similarity), over the
    /// recalls that found something with a vector: quartiles (none: no such recall). Unlike the
    /// score, whose match is relative to the other results (the best keyword and meaning
    /// matches count 1), this says how well recall matched.
    pub similarity: Option<Quartiles>,
    /// The best result's mean score (none: no recall recorded its parts).
    pub score: Option<f64>,
    /// Of that, the mean boost (what recency, use, importance, tier and time added).
    pub boost: Option<f64>,
}

/// Where a set of numbers lies.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Quartiles {
    /// A quarter are below.
    pub low: f64,
    /// Half are below.
    pub median: f64,
    /// Three quarters are below.
    pub high: f64,
}

impl Quartiles {
    /// The quartiles of `xs` (sorted here), by the nearest rank; none for none.
    pub fn of(xs: &mut [f64]) -> Option<Quartiles> {
        if xs.is_empty() {
            return None;
        }
        xs.sort_by(f64::total_cmp);
        let at = |p: f64| xs[((xs.len() - 1) as f64 * p).round() as usize];
        Some(Quartiles { low: at(0.25), median: at(0.5), high: at(0.75) })
    }
}

/// What recall did over a range.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RecallMetrics {
    /// Recalls run.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub recalls: u64,
    /// Of those, searches.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub searches: u64,
    /// Of those, for prompts.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub prompts: u64,
    /// Recalls that found something.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub found: u64,
    /// Median time a recall took.
    pub latency_p50_ms: f64,
    /// 95th percentile.
    pub latency_p95_ms: f64,
    /// Per bucket (buckets with none left out).
    pub series: Vec<RecallPoint>,
    /// Distinct memories recalled.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub recalled: u64,
    /// Of those, distinct memories a prompt included.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub in_prompt: u64,
    /// Of those, distinct memories an answer drew on (see [`Store::record_answer`]).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub used: u64,
    /// Prompts whose answer is known.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub answered: u64,
    /// What people said of answers and memories.
    pub feedback: Feedback,
    /// Live memories no record shows recalled.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub never_recalled: u64,
    /// The most recalled memories: id and how often, most first (at most 20).
    #[cfg_attr(feature = "specta", specta(type = Vec<(String, u32)>))]
    pub top: Vec<(String, u64)>,
    /// Queries that found nothing, most asked first (at most 20).
    #[cfg_attr(feature = "specta", specta(type = Vec<(String, u32)>))]
    pub no_result: Vec<(String, u64)>,
}

/// The most entries [`RecallMetrics::top`] and [`RecallMetrics::no_result`] list.
pub(crate) const TOP_RECALLS: i64 = 20;
