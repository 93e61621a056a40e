//! The record of agents' runs (issue 43): each run's task, outcome and answer, and each step —
//! a model's reply, a tool call with its arguments and result, a handoff — as it happens, so a
//! window shows a run's progress and a killed process leaves the steps it took. Arguments and
//! results are kept up to [`STEP_TEXT_LIMIT`] bytes. A run is forgotten with its steps, alone or
//! with an agent that took part in it.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::names::named_enum;
use crate::sql::{Dialect, Row, Sql, SqlValue};
use crate::storage::PlainSql;
use crate::store::Store;

/// The most bytes of a step's arguments or result that are kept (the rest is cut, saying so).
pub const STEP_TEXT_LIMIT: usize = 4096;
/// The longest task a run may be given.
pub const MAX_TASK: usize = 64 * 1024;

named_enum! {
    /// How a run ended.
    pub enum RunOutcome ("run outcome") {
        /// An agent answered.
        Answered = "answered",
        /// The agents took as many steps as they may without answering.
        #[serde(rename = "step_limit")]
        StepLimit = "step_limit",
        /// The person stopped it.
        Cancelled = "cancelled",
        /// A model or the store failed.
        Failed = "failed",
    }
}

named_enum! {
    /// What a step was.
    pub enum StepKind ("step kind") {
        /// A model's reply (its text; the tool calls follow as their own steps).
        Reply = "reply",
        /// A tool called, with its arguments and result.
        Tool = "tool",
        /// The task handed to another agent.
        Handoff = "handoff",
    }
}

/// A step to record.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct NewStep {
    /// The agent acting.
    pub agent: String,
    /// What it did.
    pub kind: Option<StepKind>,
    /// The tool's name, the next agent's, or the model's.
    pub name: String,
    /// The call's arguments (JSON), or the model's reply.
    pub arguments: String,
    /// The tool's result, or the reply's text.
    pub result: String,
    /// Whether the tool failed (its result says why).
    pub failed: bool,
    /// Tokens the model read for this step.
    pub prompt_tokens: u64,
    /// Tokens it wrote.
    pub completion_tokens: u64,
    /// How long the step took.
    pub ms: u64,
}

/// A recorded step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentStep {
    /// Its place in the run, from 1.
    pub seq: u64,
    /// When it was recorded.
    pub at: DateTime<Utc>,
    /// What it was.
    pub step: NewStep,
}

/// A recorded run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentRun {
    /// Its id (`run_` and a ULID).
    pub id: String,
    /// Whose.
    pub user_id: String,
    /// The agent given the task.
    pub agent: String,
    /// The task.
    pub task: String,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// When it ended (none while it runs, or when its process was killed).
    pub ended_at: Option<DateTime<Utc>>,
    /// How it ended.
    pub outcome: Option<RunOutcome>,
    /// The answer, or what stopped the run.
    pub answer: Option<String>,
    /// The agent that answered, after handoffs.
    pub last_agent: Option<String>,
    /// Tokens read, all steps together.
    pub prompt_tokens: u64,
    /// Tokens written.
    pub completion_tokens: u64,
}

/// `text` cut to [`STEP_TEXT_LIMIT`] bytes at a character's boundary, saying how long it was.
pub fn cut(text: &str) -> String {
    if text.len() <= STEP_TEXT_LIMIT {
        return text.to_string();
    }
    let mut end = STEP_TEXT_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [cut at {STEP_TEXT_LIMIT} of {} bytes]", &text[..end], text.len())
}

const RUN_COLUMNS: &str =
    "id, user_id, agent, task, started_at, ended_at, outcome, answer, last_agent, prompt_tokens, completion_tokens";

fn run_of(values: Vec<Option<SqlValue>>) -> Result<AgentRun> {
    let row = Row::new(values, "agent_runs");
    Ok(AgentRun {
        id: row.text(0)?,
        user_id: row.text(1)?,
        agent: row.text(2)?,
        task: row.text(3)?,
        started_at: from_ms(row.int(4)?),
        ended_at: row.opt_int(5)?.map(from_ms),
        outcome: row.opt_text(6)?.map(|o| o.parse()).transpose()?,
        answer: row.opt_text(7)?,
        last_agent: row.opt_text(8)?,
        prompt_tokens: row.count(9)?,
        completion_tokens: row.count(10)?,
    })
}

fn step_of(values: Vec<Option<SqlValue>>) -> Result<AgentStep> {
    let row = Row::new(values, "agent_steps");
    Ok(AgentStep {
        seq: row.count(0)?,
        at: from_ms(row.int(1)?),
        step: NewStep {
            agent: row.text(2)?,
            kind: Some(row.parsed(3)?),
            name: row.text(4)?,
            arguments: row.text(5)?,
            result: row.text(6)?,
            failed: row.flag(7)?,
            prompt_tokens: row.count(8)?,
            completion_tokens: row.count(9)?,
            ms: row.count(10)?,
        },
    })
}

fn unknown_run(id: &str) -> Error {
    Error::NotFound(format!("no run has the id '{}' (strata agents runs lists them)", crate::error::bounded(id)))
}

/// Deletes run `id` and its steps (inside the caller's transaction).
pub(crate) fn erase_run(plain: &dyn PlainSql, dialect: Dialect, id: &str) -> Result<()> {
    let mut q = Sql::new(dialect, "");
    q.bind("DELETE FROM agent_steps WHERE run_id = ?", SqlValue::Text(id.into()));
    plain.execute(&q)?;
    let mut q = Sql::new(dialect, "");
    q.bind("DELETE FROM agent_runs WHERE id = ?", SqlValue::Text(id.into()));
    plain.execute(&q)?;
    Ok(())
}

/// Deletes every run one of whose steps quotes `id` (a memory's: a recall listed it, a remember
/// kept it, the agent's prompt remembered it), inside the caller's transaction: a run that read
/// a memory is derived from it, and goes when it is forgotten. Returns how many went.
pub(crate) fn erase_runs_quoting(plain: &dyn PlainSql, dialect: Dialect, id: &str) -> Result<u64> {
    let pattern = format!("%{id}%");
    let mut q = Sql::new(dialect, "SELECT DISTINCT run_id FROM agent_steps WHERE ");
    q.bind("arguments LIKE ? ", SqlValue::Text(pattern.clone())).bind("OR result LIKE ?", SqlValue::Text(pattern));
    let runs: Vec<String> =
        plain.rows(&q)?.into_iter().map(|v| Row::new(v, "agent_steps").text(0)).collect::<Result<_>>()?;
    for run in &runs {
        erase_run(plain, dialect, run)?;
    }
    Ok(runs.len() as u64)
}

impl Store {
    /// Starts the record of a run of `user`'s agent `agent` on `task`: its id.
    pub fn start_agent_run(&mut self, user: &str, agent: &str, task: &str) -> Result<String> {
        if task.len() > MAX_TASK {
            return Err(Error::invalid(format!(
                "a task may be {MAX_TASK} bytes at most; this one is {} (give the agent a file's name or a dataset instead)",
                task.len()
            )));
        }
        let id = format!("run_{}", crate::event::new_event_id(self.clock.as_ref()));
        let mut q = Sql::new(self.engine.dialect(), "INSERT INTO agent_runs (id, user_id, agent, task, started_at) ");
        q.bind("VALUES (?, ", SqlValue::Text(id.clone()))
            .bind("?, ", SqlValue::Text(user.into()))
            .bind("?, ", SqlValue::Text(agent.into()))
            .bind("?, ", SqlValue::Text(task.into()))
            .bind("?)", SqlValue::Int(to_ms(self.clock.now())));
        self.transact(|tx| tx.tx.plain().execute(&q))?;
        Ok(id)
    }

    /// Records the next step of run `id`: its number.
    pub fn add_agent_step(&mut self, id: &str, step: &NewStep) -> Result<u64> {
        let kind = step.kind.ok_or_else(|| Error::invalid("a step needs its kind"))?;
        let at = to_ms(self.clock.now());
        self.transact(|tx| {
            let (plain, dialect) = (tx.tx.plain(), tx.tx.dialect());
            // The run's totals first: an unknown run is said in words, not as a broken key.
            let mut q = Sql::new(dialect, "UPDATE agent_runs SET ");
            q.bind("prompt_tokens = prompt_tokens + ?, ", SqlValue::Int(step.prompt_tokens as i64))
                .bind("completion_tokens = completion_tokens + ? ", SqlValue::Int(step.completion_tokens as i64))
                .bind("WHERE id = ?", SqlValue::Text(id.into()));
            if plain.execute(&q)? == 0 {
                return Err(unknown_run(id));
            }
            let mut q = Sql::new(dialect, "");
            q.bind("SELECT coalesce(max(seq), 0) FROM agent_steps WHERE run_id = ?", SqlValue::Text(id.into()));
            let last = plain.rows(&q)?.into_iter().next().map(|v| Row::new(v, "agent_steps").count(0)).transpose()?;
            let seq = last.unwrap_or(0) + 1;
            let mut q = Sql::new(
                dialect,
                "INSERT INTO agent_steps (run_id, seq, agent, kind, name, arguments, result, failed, prompt_tokens, \
                 completion_tokens, ms, at) VALUES (",
            );
            q.bind("?, ", SqlValue::Text(id.into()))
                .bind("?, ", SqlValue::Int(seq as i64))
                .bind("?, ", SqlValue::Text(step.agent.clone()))
                .bind("?, ", SqlValue::Text(kind.as_str().into()))
                .bind("?, ", SqlValue::Text(step.name.clone()))
                .bind("?, ", SqlValue::Text(cut(&step.arguments)))
                .bind("?, ", SqlValue::Text(cut(&step.result)))
                .bind("?, ", SqlValue::Int(step.failed.into()))
                .bind("?, ", SqlValue::Int(step.prompt_tokens as i64))
                .bind("?, ", SqlValue::Int(step.completion_tokens as i64))
                .bind("?, ", SqlValue::Int(step.ms as i64))
                .bind("?)", SqlValue::Int(at));
            plain.execute(&q)?;
            Ok(seq)
        })
    }

    /// Ends run `id`: how, the answer or what stopped it, and the agent that gave it.
    pub fn end_agent_run(&mut self, id: &str, outcome: RunOutcome, answer: &str, last_agent: &str) -> Result<()> {
        let mut q = Sql::new(self.engine.dialect(), "UPDATE agent_runs SET ");
        q.bind("ended_at = ?, ", SqlValue::Int(to_ms(self.clock.now())))
            .bind("outcome = ?, ", SqlValue::Text(outcome.as_str().into()))
            .bind("answer = ?, ", SqlValue::Text(answer.into()))
            .bind("last_agent = ? ", SqlValue::Text(last_agent.into()))
            .bind("WHERE id = ?", SqlValue::Text(id.into()));
        match self.transact(|tx| tx.tx.plain().execute(&q))? {
            0 => Err(unknown_run(id)),
            _ => Ok(()),
        }
    }

    /// `user`'s runs, the newest first (`agent`: only those given to it), at most `limit`.
    pub fn agent_runs(&self, user: &str, agent: Option<&str>, limit: usize) -> Result<Vec<AgentRun>> {
        let mut q = Sql::new(self.engine.dialect(), format!("SELECT {RUN_COLUMNS} FROM agent_runs WHERE "));
        q.bind("user_id = ? ", SqlValue::Text(user.into()));
        if let Some(agent) = agent {
            q.bind("AND lower(agent) = lower(?) ", SqlValue::Text(agent.trim().into()));
        }
        q.bind("ORDER BY started_at DESC, id DESC LIMIT ?", SqlValue::Int(limit.min(10_000) as i64));
        self.engine.plain().rows(&q)?.into_iter().map(run_of).collect()
    }

    /// `user`'s run `id` with its steps in order.
    pub fn agent_run(&self, user: &str, id: &str) -> Result<(AgentRun, Vec<AgentStep>)> {
        let mut q = Sql::new(self.engine.dialect(), format!("SELECT {RUN_COLUMNS} FROM agent_runs WHERE "));
        q.bind("id = ? ", SqlValue::Text(id.trim().into())).bind("AND user_id = ?", SqlValue::Text(user.into()));
        let run = self.engine.plain().rows(&q)?.into_iter().next().map(run_of).transpose()?;
        let run = run.ok_or_else(|| unknown_run(id))?;
        let mut q = Sql::new(
            self.engine.dialect(),
            "SELECT seq, at, agent, kind, name, arguments, result, failed, prompt_tokens, completion_tokens, ms \
             FROM agent_steps WHERE ",
        );
        q.bind("run_id = ? ORDER BY seq", SqlValue::Text(run.id.clone()));
        let steps = self.engine.plain().rows(&q)?.into_iter().map(step_of).collect::<Result<_>>()?;
        Ok((run, steps))
    }

    /// Erases `user`'s run `id` and its steps, from the files too.
    pub fn forget_agent_run(&mut self, user: &str, id: &str) -> Result<()> {
        let (run, _) = self.agent_run(user, id)?;
        self.transact(|tx| erase_run(tx.tx.plain(), tx.tx.dialect(), &run.id))?;
        self.scrub()?;
        Ok(())
    }

    /// The ids of `user`'s runs that agent `name` took part in (given the task, or acting in a
    /// step after a handoff).
    pub(crate) fn runs_with_agent(&self, user: &str, name: &str) -> Result<Vec<String>> {
        let mut q = Sql::new(self.engine.dialect(), "SELECT id FROM agent_runs WHERE ");
        q.bind("user_id = ? AND (", SqlValue::Text(user.into()))
            .bind("agent = ? OR id IN (SELECT run_id FROM agent_steps WHERE ", SqlValue::Text(name.into()))
            .bind("agent = ?)) ORDER BY id", SqlValue::Text(name.into()));
        self.engine.plain().rows(&q)?.into_iter().map(|v| Row::new(v, "agent_runs").text(0)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_at_a_character_and_say_so() {
        assert_eq!(cut("short"), "short");
        let long = "é".repeat(3000); // 6,000 bytes
        let kept = cut(&long);
        assert!(kept.ends_with("… [cut at 4096 of 6000 bytes]"), "{}", &kept[kept.len() - 40..]);
        assert!(kept.len() < STEP_TEXT_LIMIT + 40);
    }
}
