//! What agents did (`AgentMetrics`), from the records of their runs: runs by outcome, per
//! bucket, and by agent (steps, tool calls, handoffs, failed tools, tokens, time).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::Result;
use crate::sql::{Sql, SqlValue};
use crate::store::Store;

use super::super::Range;

/// What agents did over a range.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentMetrics {
    /// Runs started in the range.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub runs: u64,
    /// Runs by how they ended (`answered`, `step_limit`, `cancelled`, `failed`; `running`: not
    /// ended, or its process was killed).
    #[cfg_attr(feature = "specta", specta(type = BTreeMap<String, u32>))]
    pub outcomes: BTreeMap<String, u64>,
    /// By the agent given the task, the busiest first.
    pub by_agent: Vec<AgentUse>,
    /// Per bucket (buckets with none left out).
    pub series: Vec<RunsPoint>,
}

/// What one agent's runs did.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentUse {
    /// The agent given the tasks.
    pub agent: String,
    /// Its runs.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub runs: u64,
    /// Of them, answered.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub answered: u64,
    /// Steps of its runs (every agent acting in them).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub steps: u64,
    /// Tool calls.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub tool_calls: u64,
    /// Tool calls that failed (refused, or the tool's error).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub failed_tools: u64,
    /// Handoffs.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub handoffs: u64,
    /// Tokens read and written.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub tokens: u64,
    /// Mean time of an ended run, in seconds.
    pub mean_seconds: f64,
}

/// Runs started in one bucket.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunsPoint {
    /// The bucket's first day.
    pub start: String,
    /// Runs.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub runs: u64,
    /// Of them, answered.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub answered: u64,
}

impl Store {
    /// What `user`'s agents did over `range` (runs by when they started).
    pub fn agent_metrics(&self, user: &str, range: &Range) -> Result<AgentMetrics> {
        let bucket = range.bucket.of("r.started_at", self.engine.dialect());
        let mut q = self.statement(format!(
            "SELECT {bucket}, r.agent, coalesce(r.outcome, 'running'), r.prompt_tokens + r.completion_tokens, \
             coalesce(r.ended_at - r.started_at, -1) FROM agent_runs r WHERE "
        ));
        run_scope(&mut q, user, range);
        let mut m = AgentMetrics::default();
        let mut agents: BTreeMap<String, (AgentUse, u64, i64)> = BTreeMap::new();
        let mut series: BTreeMap<String, RunsPoint> = BTreeMap::new();
        for r in self.read(&q, "agent_runs")? {
            let (start, agent, outcome) = (r.text(0)?, r.text(1)?, r.text(2)?);
            let answered = u64::from(outcome == "answered");
            m.runs += 1;
            *m.outcomes.entry(outcome).or_default() += 1;
            let point = series.entry(start.clone()).or_insert_with(|| RunsPoint { start, ..RunsPoint::default() });
            (point.runs, point.answered) = (point.runs + 1, point.answered + answered);
            let (use_, ended, ms) = agents.entry(agent.clone()).or_default();
            use_.agent = agent;
            (use_.runs, use_.answered, use_.tokens) =
                (use_.runs + 1, use_.answered + answered, use_.tokens + r.count(3)?);
            let took = r.int(4)?;
            if took >= 0 {
                (*ended, *ms) = (*ended + 1, *ms + took);
            }
        }
        let mut q = self.statement(
            "SELECT r.agent, s.kind, s.failed, count(*) FROM agent_steps s JOIN agent_runs r ON r.id = s.run_id WHERE ",
        );
        run_scope(&mut q, user, range);
        q.push(" GROUP BY r.agent, s.kind, s.failed");
        for r in self.read(&q, "agent_steps")? {
            let Some((use_, _, _)) = agents.get_mut(&r.text(0)?) else { continue };
            let (kind, failed, n) = (r.text(1)?, r.int(2)? != 0, r.count(3)?);
            use_.steps += n;
            match kind.as_str() {
                "tool" => {
                    (use_.tool_calls, use_.failed_tools) =
                        (use_.tool_calls + n, use_.failed_tools + if failed { n } else { 0 })
                }
                "handoff" => use_.handoffs += n,
                _ => {}
            }
        }
        m.by_agent = agents
            .into_values()
            .map(|(mut u, ended, ms)| {
                u.mean_seconds = if ended > 0 { ms as f64 / ended as f64 / 1000.0 } else { 0.0 };
                u
            })
            .collect();
        m.by_agent.sort_by(|a, b| b.runs.cmp(&a.runs).then_with(|| a.agent.cmp(&b.agent)));
        m.series = series.into_values().collect();
        Ok(m)
    }
}

/// `user`'s runs (`r`) started in `range`.
fn run_scope(q: &mut Sql, user: &str, range: &Range) {
    let (since, until) = range.bounds();
    q.bind("r.user_id = ?", SqlValue::Text(user.into()))
        .bind(" AND r.started_at >= ?", SqlValue::Int(since))
        .bind(" AND r.started_at < ?", SqlValue::Int(until));
}
