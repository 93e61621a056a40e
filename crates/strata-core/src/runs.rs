//! Training runs (migration 0008): each run from start to the adapter it made — its settings,
//! the training set's file, progress as it goes, the stage and how it ended — so any front end
//! can show a run another started, and a run interrupted by a closed app or a killed process
//! can be found and resumed from its checkpoint. Forgetting a memory a run trained on deletes
//! the run's record (its set file goes with the other sets beside the database).

use chrono::{DateTime, Utc};

use serde::{Deserialize, Serialize};

use crate::names::named_enum;

named_enum! {
    /// How a run stands.
    pub enum RunStatus ("run status") {
        /// Training or evaluating (or interrupted: see [`TrainingRun::interrupted`]).
        Running = "running",
        /// Done: an adapter was registered (and evaluated, when asked).
        Finished = "finished",
        /// Stopped by an error.
        Failed = "failed",
        /// Stopped by a person; its checkpoint lets it resume.
        Cancelled = "cancelled",
    }
}

named_enum! {
    /// What a run is doing.
    pub enum RunStage ("run stage") {
        /// Training the adapter.
        Training = "training",
        /// Asking the held-out questions with and without it.
        Evaluating = "evaluating",
        /// Nothing more to do.
        Done = "done",
    }
}

/// A run whose record has not moved for this long while running was interrupted.
pub const STALE_AFTER_S: i64 = 120;

/// One training run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingRun {
    /// `run_` and a ULID.
    pub id: String,
    /// When it started.
    pub started_at: DateTime<Utc>,
    /// Its last progress.
    pub updated_at: DateTime<Utc>,
    /// How it stands.
    pub status: RunStatus,
    /// What it is doing.
    pub stage: RunStage,
    /// The training settings (JSON).
    pub settings: serde_json::Value,
    /// The evaluation gate (JSON), when it evaluates.
    pub gate: Option<serde_json::Value>,
    /// The training set's file.
    pub dataset: String,
    /// Its SHA-256.
    pub dataset_hash: String,
    /// The memories trained on.
    pub sources: Vec<String>,
    /// Optimizer steps done.
    pub step: u64,
    /// In all.
    pub steps: u64,
    /// Each step's loss.
    pub losses: Vec<f64>,
    /// Training speed.
    pub tokens_per_s: Option<f64>,
    /// Seconds left, as estimated.
    pub eta_s: Option<f64>,
    /// Evaluation: answers given …
    pub checked: u64,
    /// … of these.
    pub to_check: u64,
    /// The adapter it made.
    pub adapter_id: Option<String>,
    /// Why it failed or stopped.
    pub message: Option<String>,
}

impl TrainingRun {
    /// Whether it says running but has not moved for [`STALE_AFTER_S`] at `now`: its process
    /// ended without finishing it.
    pub fn interrupted(&self, now: DateTime<Utc>) -> bool {
        self.status == RunStatus::Running && (now - self.updated_at).num_seconds() > STALE_AFTER_S
    }
}

/// A run to start.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// Whose.
    pub user_id: String,
    /// The training settings.
    pub settings: serde_json::Value,
    /// The gate, when it evaluates.
    pub gate: Option<serde_json::Value>,
    /// The training set's file.
    pub dataset: String,
    /// Its SHA-256.
    pub dataset_hash: String,
    /// The memories.
    pub sources: Vec<String>,
}

/// A training step, as a run records it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Steps done.
    pub step: u64,
    /// In all.
    pub steps: u64,
    /// This step's loss.
    pub loss: f64,
    /// Tokens per second.
    pub tokens_per_s: f64,
    /// Seconds left.
    pub eta_s: f64,
}
