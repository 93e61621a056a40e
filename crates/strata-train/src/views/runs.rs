//! Runs: the settings a front end sets, a run as it is shown, resuming one, and the daily
//! check of the adapter in use.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use strata_api::{ApiError, ApiResult, Engine};
use strata_core::runs::{RunStatus, TrainingRun};
use strata_models::LocalChat;

use crate::pipeline::{self, Event, Plan};
use crate::{Gate, TrainConfig};

/// How to train, as the Train panel sets it (its advanced part included).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TrainOptions {
    /// LoRA rank.
    pub rank: u32,
    /// Passes over the training set.
    pub epochs: u32,
    /// Learning rate.
    pub lr: f64,
    /// The projections adapted (`q`, `k`, `v`, `o`, `gate`, `up`, `down`).
    pub targets: Vec<String>,
    /// General questions mixed in so the model keeps what it knew.
    pub replay: u32,
    /// Examples per step.
    pub batch: u32,
    /// Keep it only if held-out recall is at least this (0 to 1).
    pub min_recall: f64,
    /// … and general perplexity rises at most this (0.1: 10%).
    pub margin: f64,
    /// Teach only the approved memories of this concept (an adapter for one topic, to use
    /// beside others); none: every approved memory.
    #[serde(default)]
    pub topic: Option<String>,
}

impl Default for TrainOptions {
    /// The crystallization engine's defaults, with its gate.
    fn default() -> TrainOptions {
        let c = TrainConfig::default();
        let g = Gate::default();
        TrainOptions {
            rank: c.rank as u32,
            epochs: c.epochs as u32,
            lr: c.lr,
            targets: c.targets.iter().map(|t| t.module().to_string()).collect(),
            replay: c.replay as u32,
            batch: c.batch as u32,
            min_recall: g.min_recall,
            margin: g.margin,
            topic: None,
        }
    }
}

impl TrainOptions {
    /// The training settings, checked.
    pub fn config(&self) -> ApiResult<TrainConfig> {
        let targets =
            self.targets.iter().map(|t| strata_models::Target::parse(t)).collect::<strata_core::Result<Vec<_>>>()?;
        let c = TrainConfig {
            rank: self.rank as usize,
            targets,
            lr: self.lr,
            epochs: self.epochs as usize,
            replay: self.replay as usize,
            batch: self.batch as usize,
            ..TrainConfig::default()
        };
        c.check()?;
        Ok(c)
    }

    /// The gate, checked.
    pub fn gate(&self) -> ApiResult<Gate> {
        if !(0.0..=1.0).contains(&self.min_recall) || !(0.0..=10.0).contains(&self.margin) {
            return Err(ApiError::invalid("the least recall is 0 to 100%, the perplexity rise 0 to 1000%"));
        }
        Ok(Gate { min_recall: self.min_recall, margin: self.margin })
    }
}

/// A training run as a front end shows it.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunView {
    /// Its id.
    pub id: String,
    /// When it started.
    pub started_at: String,
    /// When it last reported.
    pub updated_at: String,
    /// running, finished, failed, cancelled.
    pub status: String,
    /// training, evaluating, done.
    pub stage: String,
    /// Said running, but no process carries it out: Strata closed or was killed during it
    /// (resume it).
    pub interrupted: bool,
    /// Steps done.
    pub step: u32,
    /// Steps in all.
    pub steps: u32,
    /// Each step's loss.
    pub losses: Vec<f64>,
    /// Word pieces read per second.
    pub tokens_per_s: Option<f64>,
    /// Seconds left.
    pub eta_s: Option<f64>,
    /// Check questions asked.
    pub checked: u32,
    /// Check questions in all.
    pub to_check: u32,
    /// Memories trained on.
    pub sources: u32,
    /// The adapter it made.
    pub adapter_id: Option<String>,
    /// How it ended, in words.
    pub message: Option<String>,
}

/// A run as shown, `interrupted` judged at `now` by the run's lock beside database `db`.
pub fn run_view(r: TrainingRun, db: &Path, now: chrono::DateTime<chrono::Utc>) -> RunView {
    let n = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    RunView {
        interrupted: pipeline::interrupted(db, &r, now),
        id: r.id,
        started_at: strata_core::time::format_time(r.started_at),
        updated_at: strata_core::time::format_time(r.updated_at),
        status: r.status.as_str().into(),
        stage: r.stage.as_str().into(),
        step: n(r.step),
        steps: n(r.steps),
        losses: r.losses,
        tokens_per_s: r.tokens_per_s,
        eta_s: r.eta_s,
        checked: n(r.checked),
        to_check: n(r.to_check),
        sources: n(r.sources.len() as u64),
        adapter_id: r.adapter_id,
        message: r.message,
    }
}

/// The latest `limit` runs, newest first.
pub fn runs(e: &Engine, db: &Path, limit: usize) -> ApiResult<Vec<RunView>> {
    let now = e.now();
    Ok(e.training_runs(limit)?.into_iter().map(|r| run_view(r, db, now)).collect())
}

/// Resumes stopped or interrupted run `run` from its checkpoint, with its set and settings as
/// they were; reports through `on`, stopped by `cancel`.
pub fn resume(
    e: &mut Engine,
    db: &Path,
    chat: &LocalChat,
    run: &str,
    on: &mut dyn FnMut(Event<'_>),
    cancel: &AtomicBool,
) -> ApiResult<RunView> {
    let r = e.training_run(run)?;
    if r.status == RunStatus::Finished {
        return Err(ApiError::invalid(format!("run {run} has finished; start a new one")));
    }
    let config: TrainConfig = serde_json::from_value(r.settings.clone())
        .map_err(|err| ApiError::invalid(format!("run {run}'s settings cannot be read: {err}")))?;
    let gate: Option<Gate> = r.gate.clone().and_then(|g| serde_json::from_value(g).ok());
    let set = crate::Dataset::read(Path::new(&r.dataset))
        .map_err(|err| ApiError::invalid(format!("run {run}'s training set is gone ({err}); start a new run")))?;
    let done = pipeline::run(e, db, chat, Plan { set: &set, config: &config, gate }, on, cancel)?;
    Ok(run_view(done.run, db, e.now()))
}

/// The model run `run` trains (its recorded base; none for runs recorded before runs named
/// theirs), to load before [`resume`].
pub fn run_base(e: &Engine, run: &str) -> ApiResult<Option<String>> {
    let r = e.training_run(run)?;
    Ok(r.settings.get("base").and_then(|b| b.as_str()).map(str::to_string))
}

/// How often the adapter in use is checked again.
pub const CHECK_EVERY: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// A daily check of an adapter in use, and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// The adapter.
    pub id: String,
    /// Its held-out questions answered as the memories say now.
    pub recall: f64,
    /// The recall its gate asked for when it was evaluated.
    pub gate: f64,
    /// Whether it fell below its gate and was rolled back.
    pub rolled_back: bool,
}

impl Checked {
    /// What a person reads of it (the window's note, the schedule's history).
    pub fn said(&self) -> String {
        let pct = |x: f64| format!("{:.0}%", x * 100.0);
        if self.rolled_back {
            format!(
                "Adapter {} was taken out of use: its daily check answered {} of its questions as your memories say \
                 now, below the {} it needs.",
                self.id,
                pct(self.recall),
                pct(self.gate)
            )
        } else {
            format!("Adapter {} answered {} of its questions in its daily check.", self.id, pct(self.recall))
        }
    }
}

/// Checks each adapter in use whose last check (or its activation) is older than
/// [`CHECK_EVERY`], with the model `chat` gives for the adapter's base (loaded only then);
/// what a long-running program calls on its schedule. An adapter whose check falls below its
/// gate's recall is rolled back (the adapters it replaced return), recorded in its history and
/// the schedule's. Returns the checks made.
pub fn check_if_due(
    e: &mut Engine,
    chat: impl Fn(&str) -> ApiResult<std::sync::Arc<LocalChat>>,
) -> ApiResult<Vec<Checked>> {
    let mut checked = Vec::new();
    for a in e.adapters_in_use()? {
        let since = e
            .adapter_checks(&a.id)?
            .last()
            .map(|c| c.at)
            .or_else(|| e.adapter_history(&a.id).ok()?.iter().rev().find(|h| h.kind == "activated").map(|h| h.at))
            .unwrap_or(a.created_at);
        if e.now() - since < CHECK_EVERY {
            continue;
        }
        let check = pipeline::check_in_use(e, &*chat(&a.base_model)?, &a.id, &mut |_, _| {})?;
        let gate =
            a.metrics.as_ref().and_then(|m| m["min_recall"].as_f64()).unwrap_or(crate::Gate::default().min_recall);
        let mut done = Checked { id: a.id.clone(), recall: check.recall, gate, rolled_back: false };
        if check.questions > 0 && check.recall < gate {
            let why = done_why(&done);
            e.rollback_adapter(Some(&a.id), &why)?;
            done.rolled_back = true;
            let detail = serde_json::json!({ "recall": check.recall, "gate": gate, "why": why });
            e.log_schedule("rolled_back", Some(&a.id), &detail)?;
        }
        checked.push(done);
    }
    Ok(checked)
}

fn done_why(c: &Checked) -> String {
    format!("its daily check recalled {:.0}%, below its gate's {:.0}%", c.recall * 100.0, c.gate * 100.0)
}
