//! Analytics (issue 22): the metrics every front end reads, for the caller's person, and the
//! usage records of recalls they are made from.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use strata_core::analytics::{
    About, AgentMetrics, CompactionPass, Direction, MemoryMetrics, PromptRecord, Purpose, Range, RecallHit,
    RecallMetrics, RecallQuery, RecallRecord, ScoreParts, UtilizationMetrics,
};
use strata_core::vectors::embedding_text;
use strata_core::{MemoryId, concepts::contains_word};

use crate::dto::MemoryView;
use crate::{ApiError, ApiResult, ContextView, Engine, Target};

/// Days a recall's usage record is kept unless the engine's options say otherwise.
pub const RECALL_RECORDS_DAYS: u32 = 90;

/// Everything the analytics screen's first view shows.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DashboardView {
    /// What the store holds and how it changed.
    pub memory: MemoryMetrics,
    /// What recall did.
    pub recalls: RecallMetrics,
    /// How prompts used their budgets.
    pub utilization: UtilizationMetrics,
    /// The most recalled memories, with how often.
    pub top: Vec<CountedMemory>,
    /// The latest compaction passes in the range, latest first (at most [`PASSES_SHOWN`]).
    pub passes: Vec<CompactionPass>,
    /// What agents did.
    pub agents: AgentMetrics,
}

/// The most compaction passes the dashboard lists.
pub const PASSES_SHOWN: usize = 10;

/// A memory and a count.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CountedMemory {
    /// The memory.
    pub memory: MemoryView,
    /// How often.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub count: u64,
}

/// Which memories are behind a point on a chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum MemoryDrill {
    /// Created in the range.
    Created,
    /// Moved to a higher tier in the range.
    Promoted,
    /// Moved to a lower tier.
    Demoted,
    /// Expired.
    Expired,
    /// Never recalled (the range's dates do not apply).
    NeverRecalled,
}

/// A memory behind a point, with what happened to it there.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DrilledMemory {
    /// The memory as it is now.
    pub memory: MemoryView,
    /// What happened (a tier move's reason), if anything to say.
    pub note: Option<String>,
    /// When (RFC 3339).
    pub at: Option<String>,
}

/// A recorded recall, with its results as they are now.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RecallRowView {
    /// When (RFC 3339).
    pub at: String,
    /// `search` or `prompt`.
    pub purpose: String,
    /// The app or client that asked.
    pub client: Option<String>,
    /// What was asked.
    pub query: String,
    /// How long it took.
    pub latency_ms: f64,
    /// The results, best first (those still there).
    pub hits: Vec<RecallHitView>,
}

/// One result of a recorded recall.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RecallHitView {
    /// The memory.
    pub memory: MemoryView,
    /// Its score then.
    pub score: f64,
    /// What made it (none: not recorded).
    pub parts: Option<ScoreParts>,
    /// Whether the prompt included it.
    pub in_prompt: bool,
    /// Whether the answer drew on it (none: no answer known, or not in the prompt).
    pub used: Option<bool>,
}

impl Engine {
    /// The analytics screen's first view over `range`.
    pub fn dashboard(&self, range: &Range) -> ApiResult<DashboardView> {
        let recalls = self.recall_metrics(range)?;
        let top = recalls
            .top
            .iter()
            .filter_map(|(id, count)| {
                let m = self.store_view().get(id.parse().ok()?).ok()?;
                Some(CountedMemory { memory: m.into(), count: *count })
            })
            .collect();
        Ok(DashboardView {
            memory: self.memory_metrics(range)?,
            utilization: self.utilization_metrics(range)?,
            recalls,
            top,
            passes: self.compaction_passes(range, PASSES_SHOWN)?,
            agents: self.agent_metrics(range)?,
        })
    }

    /// The caller's memories behind a point: `what` happened to them in `range`, latest first.
    pub fn drill_memories(&self, range: &Range, what: MemoryDrill, limit: usize) -> ApiResult<Vec<DrilledMemory>> {
        let (store, user) = (self.store_view(), &self.options().user_id);
        let view = |id: MemoryId, note: Option<String>, at: Option<chrono::DateTime<chrono::Utc>>| {
            Ok(DrilledMemory { memory: store.get(id)?.into(), note, at: at.map(|t| t.to_rfc3339()) })
        };
        let direction = match what {
            MemoryDrill::Created => {
                return store.created_in(user, range, limit)?.into_iter().map(|id| view(id, None, None)).collect();
            }
            MemoryDrill::NeverRecalled => {
                return store.never_recalled(user, range, limit)?.into_iter().map(|id| view(id, None, None)).collect();
            }
            MemoryDrill::Promoted => Direction::Promoted,
            MemoryDrill::Demoted => Direction::Demoted,
            MemoryDrill::Expired => Direction::Expired,
        };
        store
            .moved_in(user, range, Some(direction), limit)?
            .into_iter()
            .map(|m| view(m.memory, Some(m.reason), Some(m.at)))
            .collect()
    }

    /// The caller's recalls in `range` — only those that found nothing (`empty`), only one
    /// query's — latest first.
    pub fn drill_recalls(
        &self,
        range: &Range,
        empty: bool,
        query: Option<&str>,
        limit: usize,
    ) -> ApiResult<Vec<RecallRowView>> {
        let store = self.store_view();
        let which = RecallQuery { empty, text: query };
        Ok(store
            .recalls_in(&self.options().user_id, range, &which, limit)?
            .into_iter()
            .map(|r| RecallRowView {
                at: r.at.to_rfc3339(),
                purpose: r.purpose,
                client: r.client,
                query: r.query,
                latency_ms: r.latency_ms,
                hits: r
                    .hits
                    .into_iter()
                    .filter_map(|h| {
                        let memory = store.get(h.memory).ok()?.into();
                        Some(RecallHitView {
                            memory,
                            score: h.score,
                            parts: h.parts,
                            in_prompt: h.in_prompt,
                            used: h.used,
                        })
                    })
                    .collect(),
            })
            .collect())
    }

    /// What the caller's person's store holds and how it changed over `range`
    /// ([`strata_core::analytics`]); embedding coverage is counted for the loaded model, else
    /// for the model with the most vectors.
    pub fn memory_metrics(&self, range: &Range) -> ApiResult<MemoryMetrics> {
        let model = self.embedder().map(|e| e.model_id().to_string());
        Ok(self.store_view().memory_metrics(&self.options().user_id, range, model.as_deref())?)
    }

    /// The caller's person's compaction passes in `range`, latest first.
    pub fn compaction_passes(&self, range: &Range, limit: usize) -> ApiResult<Vec<CompactionPass>> {
        Ok(self.store_view().compaction_passes(&self.options().user_id, range, limit)?)
    }

    /// What the caller's person's agents did over `range`.
    pub fn agent_metrics(&self, range: &Range) -> ApiResult<AgentMetrics> {
        Ok(self.store_view().agent_metrics(&self.options().user_id, range)?)
    }

    /// What the caller's person's recalls did over `range`.
    pub fn recall_metrics(&self, range: &Range) -> ApiResult<RecallMetrics> {
        Ok(self.store_view().recall_metrics(&self.options().user_id, range)?)
    }

    /// How the caller's person's prompts used their budgets over `range`.
    pub fn utilization_metrics(&self, range: &Range) -> ApiResult<UtilizationMetrics> {
        Ok(self.store_view().utilization_metrics(&self.options().user_id, range)?)
    }

    /// Deletes the usage records of the caller's person's recalls; returns how many.
    pub fn clear_recall_records(&mut self) -> ApiResult<u64> {
        let user = self.options().user_id.clone();
        Ok(self.store().clear_recalls(&user)?)
    }

    /// Keeps a usage record of a recall that took `took` (when the options keep them),
    /// and lets older records than the options keep go; returns the record's id. A record that
    /// cannot be written is logged, never an error: recall does not fail for analytics. A
    /// search's record waits while another writer holds the lock (a large file being kept):
    /// the search box never waits for a write; it is written with the next record.
    pub(crate) fn record_recall(
        &mut self,
        purpose: Purpose,
        query: &str,
        took: Duration,
        hits: Vec<RecallHit>,
        prompt: Option<PromptRecord>,
    ) -> Option<i64> {
        let name = match purpose {
            Purpose::Search => "search",
            Purpose::Prompt => "prompt",
        };
        crate::monitor::recall(name, took);
        let days = self.options().recall_records_days?;
        let latency_ms = took.as_secs_f64() * 1000.0;
        let keep_since = self.now() - chrono::Duration::days(i64::from(days));
        let this = PendingRecall { purpose, query: query.to_string(), latency_ms, hits, prompt };
        if purpose == Purpose::Search && self.store_view().writer_busy().unwrap_or(false) {
            self.pending_recalls.push(this);
            return None;
        }
        let mut ids = Vec::new();
        for r in std::mem::take(&mut self.pending_recalls).into_iter().chain([this]) {
            ids.push(self.write_recall(r, keep_since));
        }
        ids.pop().flatten()
    }

    /// Writes the searches' records put off while another writer held the lock.
    pub(crate) fn write_pending_recalls(&mut self) {
        let Some(days) = self.options().recall_records_days else { return };
        let keep_since = self.now() - chrono::Duration::days(i64::from(days));
        for r in std::mem::take(&mut self.pending_recalls) {
            self.write_recall(r, keep_since);
        }
    }

    fn write_recall(&mut self, r: PendingRecall, keep_since: chrono::DateTime<chrono::Utc>) -> Option<i64> {
        let (user, agent, client) =
            (self.options().user_id.clone(), self.options().agent_id.clone(), self.options().client.clone());
        let record = RecallRecord {
            user_id: &user,
            agent_id: agent.as_deref(),
            client: Some(&client),
            purpose: r.purpose,
            query: &r.query,
            latency_ms: r.latency_ms,
            hits: r.hits,
            prompt: r.prompt,
        };
        match self.store().record_recall(&record, Some(keep_since)) {
            Ok(id) => Some(id),
            Err(e) => {
                tracing::warn!("a recall could not be recorded for analytics: {e}");
                None
            }
        }
    }

    /// Records, for the prompt `context` built for `question`, which of the memories it included `answer` drew on
    /// ([`drew_on`]) and the exchange the answer was recorded as. Like recording the recall,
    /// never an error.
    pub(crate) fn record_answer(
        &mut self,
        context: &ContextView,
        question: &str,
        answer: &str,
        recorded: Option<MemoryId>,
    ) {
        let Some(recall) = context.record else { return };
        let used: Vec<MemoryId> = context
            .report
            .included
            .iter()
            .filter(|d| self.store_view().get(d.id).is_ok_and(|m| drew_on(answer, question, &embedding_text(&m))))
            .map(|d| d.id)
            .collect();
        if let Err(e) = self.store().record_answer(recall, &used, recorded) {
            tracing::warn!("what an answer drew on could not be recorded for analytics: {e}");
        }
    }

    /// Records what the caller's person said of a memory or a recorded answer: helpful or not.
    pub fn rate(&mut self, target: &Target, about: About, helpful: bool) -> ApiResult<()> {
        let m = self.memory(target)?;
        if about == About::Answer && !strata_core::said_by_assistant(&m) {
            return Err(ApiError::invalid("only an answer an assistant gave can be rated as an answer"));
        }
        let user = self.options().user_id.clone();
        Ok(self.store().record_feedback(&user, m.id, about, helpful)?)
    }
}

/// A recall's usage record not written yet.
pub(crate) struct PendingRecall {
    purpose: Purpose,
    query: String,
    latency_ms: f64,
    hits: Vec<RecallHit>,
    prompt: Option<PromptRecord>,
}

/// How the prompt `report` describes used its budget, for `model`.
pub(crate) fn prompt_record(model: &str, report: &strata_context::Report) -> PromptRecord {
    let name = |v: serde_json::Result<serde_json::Value>| v.ok().and_then(|v| v.as_str().map(str::to_string));
    let mut dropped = std::collections::BTreeMap::new();
    for d in &report.dropped {
        let why = serde_json::to_value(&d.reason).ok().and_then(|v| v["reason"].as_str().map(str::to_string));
        *dropped.entry(why.unwrap_or_default()).or_default() += 1;
    }
    PromptRecord {
        model: model.to_string(),
        budget: report.budget as u64,
        used: report.used as u64,
        sections: report
            .sections
            .iter()
            .filter_map(|(s, r)| name(serde_json::to_value(s)).map(|n| (n, r.tokens as u64)))
            .collect(),
        dropped,
    }
}

/// Words too common to show an answer drew on a memory.
const COMMON: [&str; 24] = [
    "about", "after", "also", "been", "before", "does", "from", "have", "into", "just", "like", "more", "only", "over",
    "some", "than", "that", "their", "them", "then", "there", "they", "this", "with",
];

/// Whether `answer` (to `question`) drew on a memory whose text is `memory`: it repeats at
/// least two of the memory's distinctive words — four letters or more, not common, not in the
/// question — or the only one there is. A lexical signal: an answer that paraphrases a memory
/// completely is missed, and one that echoes a memory it did not need is counted.
pub fn drew_on(answer: &str, question: &str, memory: &str) -> bool {
    let (answer, question) = (answer.to_lowercase(), question.to_lowercase());
    let mut words: Vec<String> = memory
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4)
        .map(str::to_lowercase)
        .filter(|w| !COMMON.contains(&w.as_str()) && !contains_word(&question, w))
        .collect();
    words.sort_unstable();
    words.dedup();
    let needed = words.len().min(2);
    needed > 0 && words.iter().filter(|w| contains_word(&answer, w)).count() >= needed
}

/// A recall's result as its usage record keeps it.
pub(crate) fn recorded_hit(r: &strata_core::Recalled, in_prompt: bool) -> RecallHit {
    RecallHit {
        memory: r.memory.id,
        score: r.breakdown.score,
        parts: Some(ScoreParts::from(&r.breakdown)),
        in_prompt,
        used: None,
    }
}

#[cfg(test)]
mod tests {
    use super::drew_on;

    #[test]
    fn an_answer_draws_on_a_memory_it_repeats() {
        let memory = "Caroline: I went to the LGBTQ support group on Tuesday; it was powerful.";
        assert!(drew_on("She went to an LGBTQ support group.", "What did Caroline do?", memory));
        assert!(!drew_on("I don't know.", "What did Caroline do?", memory));
        // The question's own words do not count.
        assert!(!drew_on("Caroline went.", "Where did Caroline go?", memory));
    }
}
