//! Analytics (issue 22): the metrics every front end reads, for the caller's person, and the
//! usage records of recalls they are made from.

use std::time::Duration;

use strata_core::MemoryId;
use strata_core::analytics::{
    MemoryMetrics, PromptRecord, Purpose, Range, RecallMetrics, RecallRecord, UtilizationMetrics,
};

use crate::{ApiResult, Engine};

/// Days a recall's usage record is kept unless the engine's options say otherwise.
pub const RECALL_RECORDS_DAYS: u32 = 90;

impl Engine {
    /// What the caller's person's store holds and how it changed over `range`
    /// ([`strata_core::analytics`]); embedding coverage is counted for the loaded model, else
    /// for the model with the most vectors.
    pub fn memory_metrics(&self, range: &Range) -> ApiResult<MemoryMetrics> {
        let model = self.embedder().map(|e| e.model_id().to_string());
        Ok(self.store_view().memory_metrics(&self.options().user_id, range, model.as_deref())?)
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
    /// and lets older records than the options keep go. A record that cannot be written is
    /// logged, never an error: recall does not fail for analytics.
    pub(crate) fn record_recall(
        &mut self,
        purpose: Purpose,
        query: &str,
        took: Duration,
        hits: Vec<(MemoryId, f64, bool)>,
        prompt: Option<PromptRecord>,
    ) {
        let Some(days) = self.options().recall_records_days else { return };
        let latency_ms = took.as_secs_f64() * 1000.0;
        let keep_since = self.now() - chrono::Duration::days(i64::from(days));
        let (user, agent, client) =
            (self.options().user_id.clone(), self.options().agent_id.clone(), self.options().client.clone());
        let record = RecallRecord {
            user_id: &user,
            agent_id: agent.as_deref(),
            client: Some(&client),
            purpose,
            query,
            latency_ms,
            hits,
            prompt,
        };
        let store = self.store();
        if let Err(e) = store.record_recall(&record).and_then(|()| store.prune_recalls(keep_since).map(drop)) {
            tracing::warn!("a recall could not be recorded for analytics: {e}");
        }
    }
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
