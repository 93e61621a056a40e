//! The long jobs running (import, export, re-embedding, maintenance, grouping, training, a
//! chat answer): each registered under the id the window chose with a stop flag that
//! `cancel_job` sets, and reporting progress over a channel. The app's state owns the
//! registry ([`Jobs`]); the commands that start jobs live with their screens.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use strata_api::{ApiError, ApiResult};
use tauri::ipc::Channel;

/// The jobs running, by id: their stop flags.
#[derive(Clone, Default)]
pub(crate) struct Jobs(Arc<std::sync::Mutex<std::collections::HashMap<String, Arc<AtomicBool>>>>);

impl Jobs {
    /// Asks job `id` to stop; whether one by that id was running.
    pub(crate) fn cancel(&self, id: &str) -> bool {
        let jobs = self.0.lock().unwrap_or_else(|p| p.into_inner());
        jobs.get(id).map(|stop| stop.store(true, Ordering::Relaxed)).is_some()
    }
}

/// How far a job has come: `done` of `total` (`total` 0 while not known), and what it is
/// doing in words when the job says (a step with no count of its own).
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct JobProgress {
    done: u32,
    total: u32,
    stage: Option<String>,
}

impl JobProgress {
    /// `done` of `total`, with no words.
    pub(crate) fn of(done: u64, total: u64) -> JobProgress {
        let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        JobProgress { done: clamp(done), total: clamp(total), stage: None }
    }
}

/// A stop flag registered under the id the window chose, so `cancel_job` can set it; removed
/// when the work ends. Long jobs and chat answers both stop through it.
pub(crate) struct Stop {
    id: String,
    flag: Arc<AtomicBool>,
    jobs: Jobs,
}

impl Stop {
    pub(crate) fn register(jobs: &Jobs, id: String) -> ApiResult<Stop> {
        let flag = Arc::new(AtomicBool::new(false));
        let mut running = jobs.0.lock().unwrap_or_else(|p| p.into_inner());
        if running.contains_key(&id) {
            return Err(ApiError::invalid(format!("a job named {id} is already running")));
        }
        running.insert(id.clone(), flag.clone());
        Ok(Stop { id, flag, jobs: jobs.clone() })
    }

    /// The flag `cancel_job` sets.
    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.flag
    }

    /// The flag, to hand to work that outlives this borrow.
    pub(crate) fn shared(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }
}

impl Drop for Stop {
    fn drop(&mut self) {
        self.jobs.0.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.id);
    }
}

/// A running job: its [`Stop`], and the channel its progress goes to (at most every 50 ms,
/// and always the last step).
pub(crate) struct Job {
    stop: Stop,
    channel: Channel<JobProgress>,
    last: Option<Instant>,
    stage: Option<String>,
}

impl Job {
    pub(crate) fn start(jobs: &Jobs, id: String, channel: Channel<JobProgress>) -> ApiResult<Job> {
        Ok(Job { stop: Stop::register(jobs, id)?, channel, last: None, stage: None })
    }

    /// Says what the job does now (shown until the next step), with no count yet.
    pub(crate) fn stage(&mut self, words: &str) {
        self.stage = Some(words.to_string());
        self.last = Some(Instant::now());
        let _ = self.channel.send(JobProgress { done: 0, total: 0, stage: self.stage.clone() });
    }

    /// The flag `cancel_job` sets, for work that also checks it itself (a model call).
    pub(crate) fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.shared()
    }

    /// Reports progress; an error once the person asked to stop (the job then ends).
    pub(crate) fn tick(&mut self, done: u64, total: u64, stopped: &str) -> strata_core::Result<()> {
        if self.stop.flag().load(Ordering::Relaxed) {
            return Err(strata_core::Error::Cancelled(stopped.to_string()));
        }
        let due = self.last.is_none_or(|t| t.elapsed() >= Duration::from_millis(50));
        if due || (total > 0 && done >= total) {
            self.last = Some(Instant::now());
            let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
            let _ =
                self.channel.send(JobProgress { done: clamp(done), total: clamp(total), stage: self.stage.clone() });
        }
        Ok(())
    }
}
