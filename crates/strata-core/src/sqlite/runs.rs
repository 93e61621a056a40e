//! SQLite's side of `crate::runs`: its statements and row decoding.

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::store::Store;
use rusqlite::{OptionalExtension, params};

use crate::runs::*;

const COLUMNS: &str = "id, started_at, updated_at, status, stage, settings, gate, dataset, dataset_hash, sources, \
                       step, steps, losses, tokens_per_s, eta_s, checked, to_check, adapter_id, message";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TrainingRun> {
    let bad = |i: usize, e: String| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into());
    let json =
        |i: usize, text: String| serde_json::from_str::<serde_json::Value>(&text).map_err(|e| bad(i, e.to_string()));
    let status: String = r.get(3)?;
    let stage: String = r.get(4)?;
    Ok(TrainingRun {
        id: r.get(0)?,
        started_at: from_ms(r.get(1)?),
        updated_at: from_ms(r.get(2)?),
        status: status.parse().map_err(|e: Error| bad(3, e.to_string()))?,
        stage: stage.parse().map_err(|e: Error| bad(4, e.to_string()))?,
        settings: json(5, r.get(5)?)?,
        gate: r.get::<_, Option<String>>(6)?.map(|g| json(6, g)).transpose()?,
        dataset: r.get(7)?,
        dataset_hash: r.get(8)?,
        sources: serde_json::from_value(json(9, r.get(9)?)?).map_err(|e| bad(9, e.to_string()))?,
        step: r.get::<_, i64>(10)? as u64,
        steps: r.get::<_, i64>(11)? as u64,
        losses: serde_json::from_value(json(12, r.get(12)?)?).map_err(|e| bad(12, e.to_string()))?,
        tokens_per_s: r.get(13)?,
        eta_s: r.get(14)?,
        checked: r.get::<_, i64>(15)? as u64,
        to_check: r.get::<_, i64>(16)? as u64,
        adapter_id: r.get(17)?,
        message: r.get(18)?,
    })
}

impl Store {
    fn touch_run(&self, id: &str, set: &str, values: &[&dyn rusqlite::ToSql]) -> Result<()> {
        let mut all: Vec<&dyn rusqlite::ToSql> = vec![&id];
        let now = to_ms(self.clock().now());
        all.push(&now);
        all.extend_from_slice(values);
        let n = self
            .sqlite()?
            .prepare_cached(&format!("UPDATE training_runs SET updated_at = ?2, {set} WHERE id = ?1"))?
            .execute(all.as_slice())?;
        if n == 0 {
            return Err(Error::invalid(format!("no training run {id}")));
        }
        Ok(())
    }

    /// Records a run's start (running, training).
    pub fn start_run(&mut self, new: NewRun) -> Result<TrainingRun> {
        let id = format!("run_{}", crate::event::new_event_id(self.clock().as_ref()).to_lowercase());
        let now = to_ms(self.clock().now());
        self.sqlite()?.execute(
            "INSERT INTO training_runs (id, user_id, started_at, updated_at, status, stage, settings, gate, dataset, \
             dataset_hash, sources) VALUES (?1, ?2, ?3, ?3, 'running', 'training', ?4, ?5, ?6, ?7, ?8)",
            params![
                id,
                new.user_id,
                now,
                new.settings.to_string(),
                new.gate.map(|g| g.to_string()),
                new.dataset,
                new.dataset_hash,
                serde_json::to_string(&new.sources).unwrap_or_default()
            ],
        )?;
        self.run(&id)
    }

    /// Marks a stopped or interrupted run as running again (its checkpoint resumes it).
    pub fn resume_run(&mut self, id: &str) -> Result<TrainingRun> {
        let run = self.run(id)?;
        if run.status == RunStatus::Finished {
            return Err(Error::invalid(format!("training run {id} has finished; start a new one")));
        }
        self.touch_run(id, "status = 'running', message = NULL", &[])?;
        self.run(id)
    }

    /// Records a training step: its loss becomes the `step`th (a run resumed from a checkpoint
    /// redoes the steps after it, whose losses are replaced, not added again).
    pub fn run_step(&mut self, id: &str, s: Step) -> Result<()> {
        let (step, steps) = (s.step as i64, s.steps as i64);
        self.touch_run(
            id,
            "step = ?3, steps = ?4, losses = json_insert((SELECT json_group_array(value) FROM (SELECT value FROM \
             json_each(losses) WHERE key < ?3 - 1 ORDER BY key)), '$[#]', ?5), tokens_per_s = ?6, eta_s = ?7",
            &[&step, &steps, &s.loss, &s.tokens_per_s, &s.eta_s],
        )
    }

    /// Records the stage, and evaluation's progress (`checked` of `to_check`).
    pub fn run_stage(&mut self, id: &str, stage: RunStage, checked: u64, to_check: u64) -> Result<()> {
        let (checked, to_check) = (checked as i64, to_check as i64);
        self.touch_run(id, "stage = ?3, checked = ?4, to_check = ?5", &[&stage.as_str(), &checked, &to_check])
    }

    /// Records the adapter the run made.
    pub fn run_adapter(&mut self, id: &str, adapter: &str) -> Result<()> {
        self.touch_run(id, "adapter_id = ?3", &[&adapter])
    }

    /// Records how a run ended.
    pub fn end_run(&mut self, id: &str, status: RunStatus, message: Option<&str>) -> Result<()> {
        self.touch_run(
            id,
            "status = ?3, message = ?4, stage = CASE WHEN ?3 = 'finished' THEN 'done' ELSE stage END",
            &[&status.as_str(), &message],
        )
    }

    /// One run.
    pub fn run(&self, id: &str) -> Result<TrainingRun> {
        self.sqlite()?
            .prepare_cached(&format!("SELECT {COLUMNS} FROM training_runs WHERE id = ?1"))?
            .query_row([id], row)
            .optional()?
            .ok_or_else(|| Error::invalid(format!("no training run {id}")))
    }

    /// One run of `user`, if there is one by that id.
    pub fn find_run(&self, user: &str, id: &str) -> Result<Option<TrainingRun>> {
        Ok(self
            .sqlite()?
            .prepare_cached(&format!("SELECT {COLUMNS} FROM training_runs WHERE id = ?1 AND user_id = ?2"))?
            .query_row([id, user], row)
            .optional()?)
    }

    /// The runs of `user`, newest first, at most `limit`.
    pub fn runs(&self, user: &str, limit: usize) -> Result<Vec<TrainingRun>> {
        let mut stmt = self.sqlite()?.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM training_runs WHERE user_id = ?1 ORDER BY started_at DESC, id DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![user, limit as i64], row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}
