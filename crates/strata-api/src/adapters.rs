//! The adapter registry through the front door: what `strata train` (and later the app's
//! curation screens) do with trained adapters — register, evaluate, list, activate, roll back.
//! The registry itself lives in `strata_core::adapters`.

use strata_core::runs::{NewRun, RunStage, RunStatus, Step, TrainingRun};
use strata_core::{AdapterCheck, AdapterEvent, AdapterRecord, NewAdapter};

use crate::{ApiResult, Engine};

impl Engine {
    /// A new adapter id (`ad_…`), for the folder its files go into before it is registered.
    pub fn new_adapter_id(&self) -> String {
        self.store_view().new_adapter_id()
    }

    /// Registers a trained adapter as a candidate.
    pub fn register_adapter(&mut self, new: NewAdapter) -> ApiResult<AdapterRecord> {
        Ok(self.store().register_adapter(new)?)
    }

    /// Records an adapter's evaluation (its report, and whether it passed the gate).
    pub fn record_evaluation(
        &mut self,
        id: &str,
        metrics: &serde_json::Value,
        passed: bool,
    ) -> ApiResult<AdapterRecord> {
        Ok(self.store().record_evaluation(id, metrics, passed)?)
    }

    /// One adapter.
    pub fn adapter(&self, id: &str) -> ApiResult<AdapterRecord> {
        Ok(self.store_view().adapter(id)?)
    }

    /// Every adapter, newest first.
    pub fn adapters(&self) -> ApiResult<Vec<AdapterRecord>> {
        Ok(self.store_view().adapters()?)
    }

    /// The adapters in use: the on-device model chooses among them per question.
    pub fn adapters_in_use(&self) -> ApiResult<Vec<AdapterRecord>> {
        Ok(self.store_view().adapters_in_use()?)
    }

    /// What happened to an adapter (trained, evaluated, activated …), oldest first.
    pub fn adapter_history(&self, id: &str) -> ApiResult<Vec<AdapterEvent>> {
        Ok(self.store_view().adapter_history(id)?)
    }

    /// Puts `id` in use instead of the adapters in use (one that failed its gate only with
    /// `force`).
    pub fn activate_adapter(&mut self, id: &str, force: bool) -> ApiResult<AdapterRecord> {
        Ok(self.store().activate_adapter(id, force)?)
    }

    /// Puts `id` in use beside the adapters in use (each question picks one of them, or none).
    pub fn use_adapter_alongside(&mut self, id: &str, force: bool) -> ApiResult<AdapterRecord> {
        Ok(self.store().use_alongside(id, force)?)
    }

    /// Retires an adapter that is not in use, for good.
    pub fn retire_adapter(&mut self, id: &str) -> ApiResult<AdapterRecord> {
        Ok(self.store().retire_adapter(id)?)
    }

    /// Records a check of an adapter in use.
    pub fn record_adapter_check(&mut self, id: &str, check: &AdapterCheck) -> ApiResult<()> {
        Ok(self.store().record_adapter_check(id, check)?)
    }

    /// An adapter's checks in use, oldest first.
    pub fn adapter_checks(&self, id: &str) -> ApiResult<Vec<AdapterCheck>> {
        self.adapter(id)?;
        Ok(self.store_view().adapter_checks(id)?)
    }

    /// Retires adapter `id` in use (none named: the only one in use); the adapters it replaced
    /// are in use again if they are still candidates. `why` is kept in its history. Returns
    /// the adapters put back.
    pub fn rollback_adapter(&mut self, id: Option<&str>, why: &str) -> ApiResult<Vec<AdapterRecord>> {
        Ok(self.store().rollback_adapter(id, why)?)
    }

    /// Records that adapter `id` answered (its question's similarity `score`; the recorded
    /// answer, if any).
    pub fn record_adapter_answer(&mut self, id: &str, score: f32, answer: Option<&str>) -> ApiResult<()> {
        Ok(self.store().record_adapter_answer(id, score, answer)?)
    }

    /// Adapter `id`'s use by day: answers, and those marked helpful or wrong.
    pub fn adapter_days(&self, id: &str) -> ApiResult<Vec<strata_core::AdapterDay>> {
        Ok(self.store_view().adapter_days(id)?)
    }

    /// Adds to the training schedule's record.
    pub fn log_schedule(&mut self, kind: &str, adapter: Option<&str>, detail: &serde_json::Value) -> ApiResult<i64> {
        Ok(self.store().log_schedule(kind, adapter, detail)?)
    }

    /// The training schedule's record, newest first.
    pub fn schedule_log(&self, limit: usize) -> ApiResult<Vec<strata_core::ScheduleEntry>> {
        Ok(self.store_view().schedule_log(limit)?)
    }
}

/// Training runs, as the crystallization pipeline records them (`strata_train::pipeline`).
impl Engine {
    /// Records a run's start for the caller's person.
    pub fn start_training_run(&mut self, mut new: NewRun) -> ApiResult<TrainingRun> {
        new.user_id = self.options().user_id.clone();
        Ok(self.store().start_run(new)?)
    }

    /// Marks a stopped or interrupted run as running again.
    pub fn resume_training_run(&mut self, id: &str) -> ApiResult<TrainingRun> {
        self.training_run(id)?;
        Ok(self.store().resume_run(id)?)
    }

    /// Records a training step.
    pub fn training_step(&mut self, id: &str, step: Step) -> ApiResult<()> {
        Ok(self.store().run_step(id, step)?)
    }

    /// Records a run's stage and evaluation progress.
    pub fn training_stage(&mut self, id: &str, stage: RunStage, checked: u64, to_check: u64) -> ApiResult<()> {
        Ok(self.store().run_stage(id, stage, checked, to_check)?)
    }

    /// Records the adapter a run made.
    pub fn training_adapter(&mut self, id: &str, adapter: &str) -> ApiResult<()> {
        Ok(self.store().run_adapter(id, adapter)?)
    }

    /// Records how a run ended.
    pub fn end_training_run(&mut self, id: &str, status: RunStatus, message: Option<&str>) -> ApiResult<()> {
        Ok(self.store().end_run(id, status, message)?)
    }

    /// One of the caller's runs.
    pub fn training_run(&self, id: &str) -> ApiResult<TrainingRun> {
        let not_found = || crate::ApiError::new(crate::ErrorCode::NotFound, format!("no training run {id}"));
        // Another person's run is not found either.
        self.store_view().find_run(&self.options().user_id, id)?.ok_or_else(not_found)
    }

    /// The caller's runs, newest first, at most `limit`.
    pub fn training_runs(&self, limit: usize) -> ApiResult<Vec<TrainingRun>> {
        Ok(self.store_view().runs(&self.options().user_id, limit)?)
    }
}
