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

    /// The adapter the on-device model uses, if any.
    pub fn active_adapter(&self) -> ApiResult<Option<AdapterRecord>> {
        Ok(self.store_view().active_adapter()?)
    }

    /// What happened to an adapter (trained, evaluated, activated …), oldest first.
    pub fn adapter_history(&self, id: &str) -> ApiResult<Vec<AdapterEvent>> {
        Ok(self.store_view().adapter_history(id)?)
    }

    /// Makes `id` the active adapter (one that failed its gate only with `force`).
    pub fn activate_adapter(&mut self, id: &str, force: bool) -> ApiResult<AdapterRecord> {
        Ok(self.store().activate_adapter(id, force)?)
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

    /// Retires the active adapter; the one active before it is active again if it is still
    /// a candidate, otherwise none is. Returns the adapter now active.
    pub fn rollback_adapter(&mut self) -> ApiResult<Option<AdapterRecord>> {
        Ok(self.store().rollback_adapter()?)
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
