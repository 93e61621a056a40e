//! The Training screen's commands: the curation queue (flag, list, decide, history), training
//! the approved memories into an adapter as a recorded run (off the window's engine and its
//! chat model, so search and chat go on), the runs as they go, and the adapter registry
//! (evaluation reports, history, activate, roll back). Activating or rolling back swaps the
//! chat's on-device model for one with the now-active adapter.

use strata_api::curation::{CandidateEventView, CandidateQuery, CandidateView, CandidatesView, FlagReport, Verdict};
use strata_api::{ApiError, ApiResult, Settings};
use strata_core::runs::{RunStatus, TrainingRun};
use strata_core::{AdapterEvent, AdapterRecord};
use strata_train::pipeline::Plan;
use strata_train::{Gate, Report, TrainConfig};
use tauri::State;
use tauri::ipc::Channel;

use crate::jobs::{Job, JobProgress, Stop};
use crate::state::AppState;

/// Flags the memories that meet the training criteria (Settings' `training.criteria`), with
/// progress; a stopped pass changes nothing.
#[tauri::command]
#[specta::specta]
pub(crate) async fn flag_candidates(
    state: State<'_, AppState>,
    job: String,
    on_progress: Channel<JobProgress>,
) -> Result<FlagReport, ApiError> {
    let criteria = Settings::load()?.training.criteria;
    let mut job = Job::start(&state, job, on_progress)?;
    state
        .run_apart(move |e| {
            let stop = job.stop_flag();
            e.flag_candidates(&criteria, &mut |d, t| job.tick(d, t, "flagging was stopped; nothing changed"), &stop)
        })
        .await
}

/// The curation queue as the screen's filters ask.
#[tauri::command]
#[specta::specta]
pub(crate) async fn training_candidates(
    state: State<'_, AppState>,
    query: CandidateQuery,
) -> Result<CandidatesView, ApiError> {
    state.run(move |e| e.training_candidates(&query)).await
}

/// A person's decision on candidates, all or none.
#[tauri::command]
#[specta::specta]
pub(crate) async fn decide_candidates(
    state: State<'_, AppState>,
    ids: Vec<String>,
    verdict: Verdict,
    note: Option<String>,
) -> Result<Vec<CandidateView>, ApiError> {
    state.run(move |e| e.decide_candidates(&ids, verdict, note.as_deref())).await
}

/// A fact or procedure a person chose on its page to be taught: listed and approved at once.
#[tauri::command]
#[specta::specta]
pub(crate) async fn approve_by_hand(state: State<'_, AppState>, id: String) -> Result<CandidateView, ApiError> {
    state.run(move |e| e.approve_by_hand(&id)).await
}

/// What happened to a memory in curation.
#[tauri::command]
#[specta::specta]
pub(crate) async fn candidate_history(
    state: State<'_, AppState>,
    id: String,
) -> Result<Vec<CandidateEventView>, ApiError> {
    state.run(move |e| e.candidate_history(&id)).await
}

/// How to train, as the Train panel sets it (its advanced part included).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, specta::Type)]
pub(crate) struct TrainOptions {
    /// LoRA rank.
    rank: u32,
    /// Passes over the training set.
    epochs: u32,
    /// Learning rate.
    lr: f64,
    /// The projections adapted (`q`, `k`, `v`, `o`, `gate`, `up`, `down`).
    targets: Vec<String>,
    /// General questions mixed in so the model keeps what it knew.
    replay: u32,
    /// Examples per step.
    batch: u32,
    /// Keep it only if held-out recall is at least this (0 to 1).
    min_recall: f64,
    /// … and general perplexity rises at most this (0.1: 10%).
    margin: f64,
}

impl TrainOptions {
    fn config(&self) -> ApiResult<TrainConfig> {
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

    fn gate(&self) -> ApiResult<Gate> {
        if !(0.0..=1.0).contains(&self.min_recall) || !(0.0..=10.0).contains(&self.margin) {
            return Err(ApiError::invalid("the least recall is 0 to 100%, the perplexity rise 0 to 1000%"));
        }
        Ok(Gate { min_recall: self.min_recall, margin: self.margin })
    }
}

/// The Train panel's defaults: the crystallization engine's, with its gate.
#[tauri::command]
#[specta::specta]
pub(crate) async fn train_defaults() -> Result<TrainOptions, ApiError> {
    let c = TrainConfig::default();
    let g = Gate::default();
    Ok(TrainOptions {
        rank: c.rank as u32,
        epochs: c.epochs as u32,
        lr: c.lr,
        targets: c.targets.iter().map(|t| t.module().to_string()).collect(),
        replay: c.replay as u32,
        batch: c.batch as u32,
        min_recall: g.min_recall,
        margin: g.margin,
    })
}

/// A training run as the screen shows it.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct RunView {
    id: String,
    started_at: String,
    updated_at: String,
    /// running, finished, failed, cancelled.
    status: String,
    /// training, evaluating, done.
    stage: String,
    /// Said running, but no process carries it out: Strata closed or was killed during it
    /// (resume it).
    interrupted: bool,
    step: u32,
    steps: u32,
    losses: Vec<f64>,
    tokens_per_s: Option<f64>,
    eta_s: Option<f64>,
    checked: u32,
    to_check: u32,
    /// Memories trained on.
    sources: u32,
    adapter_id: Option<String>,
    message: Option<String>,
}

fn run_view(r: TrainingRun, db: &std::path::Path, now: chrono::DateTime<chrono::Utc>) -> RunView {
    let n = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    RunView {
        interrupted: strata_train::pipeline::interrupted(db, &r, now),
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

/// The latest runs, newest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn training_runs(state: State<'_, AppState>) -> Result<Vec<RunView>, ApiError> {
    let db = state.db_path.clone();
    state
        .run(move |e| {
            let now = e.now();
            Ok(e.training_runs(20)?.into_iter().map(|r| run_view(r, &db, now)).collect())
        })
        .await
}

/// The job id every training run goes by: one at a time.
const TRAIN_JOB: &str = "train";

/// Trains the approved candidates into an adapter and evaluates it, as a recorded run on an
/// engine and a model of its own (the window's chat and search go on); the screen follows it
/// through [`training_runs`]. Stopped by `cancel_job("train")` with a checkpoint: training the
/// same memories with the same settings again resumes it.
#[tauri::command]
#[specta::specta]
pub(crate) async fn train_approved(state: State<'_, AppState>, options: TrainOptions) -> Result<RunView, ApiError> {
    let (config, gate) = (options.config()?, options.gate()?);
    let stop = Stop::register(&state, TRAIN_JOB.into())?;
    let db = state.db_path.clone();
    let trainer = state.trainer();
    state
        .run_apart(move |e| {
            let chat = trainer.model()?;
            let set = strata_train::pipeline::approved_set(e, &chat, &config)?;
            let flag = stop.shared();
            let done = strata_train::pipeline::run(
                e,
                &db,
                &chat,
                Plan { set: &set, config: &config, gate: Some(gate) },
                &mut |_| {},
                &flag,
            )?;
            Ok(run_view(done.run, &db, e.now()))
        })
        .await
}

/// Resumes a stopped or interrupted run from its checkpoint (its set and settings as they
/// were).
#[tauri::command]
#[specta::specta]
pub(crate) async fn resume_training(state: State<'_, AppState>, run: String) -> Result<RunView, ApiError> {
    let stop = Stop::register(&state, TRAIN_JOB.into())?;
    let db = state.db_path.clone();
    let trainer = state.trainer();
    state
        .run_apart(move |e| {
            let chat = trainer.model()?;
            let r = e.training_run(&run)?;
            if r.status == RunStatus::Finished {
                return Err(ApiError::invalid("this run has finished; start a new one"));
            }
            let config: TrainConfig = serde_json::from_value(r.settings.clone())
                .map_err(|err| ApiError::invalid(format!("run {run}'s settings cannot be read: {err}")))?;
            let gate: Option<Gate> = r.gate.clone().and_then(|g| serde_json::from_value(g).ok());
            let set = strata_train::Dataset::read(std::path::Path::new(&r.dataset)).map_err(|err| {
                ApiError::invalid(format!("run {run}'s training set is gone ({err}); start a new run"))
            })?;
            let flag = stop.shared();
            let done = strata_train::pipeline::run(
                e,
                &db,
                &chat,
                Plan { set: &set, config: &config, gate },
                &mut |_| {},
                &flag,
            )?;
            Ok(run_view(done.run, &db, e.now()))
        })
        .await
}

/// One held-out question's answers, each judged.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct AnswerRow {
    question: String,
    expected: String,
    with_adapter: String,
    with_adapter_right: bool,
    without: String,
    without_right: bool,
    with_retrieval: String,
    with_retrieval_right: bool,
}

/// An adapter's evaluation.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct ReportView {
    facts: u32,
    questions: u32,
    recall_with_adapter: f64,
    recall_without: f64,
    recall_with_retrieval: f64,
    perplexity_base: f64,
    perplexity_adapter: f64,
    margin: f64,
    min_recall: f64,
    passed: bool,
    /// The gate's verdict in one sentence.
    verdict: String,
    rows: Vec<AnswerRow>,
}

fn report_view(r: Report) -> ReportView {
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    let change = r.perplexity_change();
    let text = if change >= 0.0 {
        format!("general text is {} harder for it (allowed: up to {})", pct(change), pct(r.margin))
    } else {
        format!("general text is {} easier for it", pct(-change))
    };
    let verdict = if r.passed {
        format!(
            "Passed: it answers {} of the check questions (the model alone {}), and {text}.",
            pct(r.recall_with_adapter),
            pct(r.recall_without)
        )
    } else {
        format!("Not good enough to use: {}.", r.reasons.join("; "))
    };
    let judge = strata_train::eval::correct;
    ReportView {
        facts: r.facts as u32,
        questions: r.questions as u32,
        recall_with_adapter: r.recall_with_adapter,
        recall_without: r.recall_without,
        recall_with_retrieval: r.recall_with_retrieval,
        perplexity_base: r.perplexity_base,
        perplexity_adapter: r.perplexity_adapter,
        margin: r.margin,
        min_recall: r.min_recall,
        passed: r.passed,
        verdict,
        rows: r
            .rows
            .into_iter()
            .map(|row| AnswerRow {
                with_adapter_right: judge(&row.with_adapter, &row.expected),
                without_right: judge(&row.without, &row.expected),
                with_retrieval_right: judge(&row.with_retrieval, &row.expected),
                question: row.question,
                expected: row.expected,
                with_adapter: row.with_adapter,
                without: row.without,
                with_retrieval: row.with_retrieval,
            })
            .collect(),
    }
}

/// An adapter in the registry.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct AdapterView {
    id: String,
    created_at: String,
    /// candidate, active, retired.
    status: String,
    /// Whether it passed its evaluation, once evaluated.
    passed: Option<bool>,
    base_model: String,
    /// The memories it was trained from.
    sources: Vec<String>,
    dataset_hash: String,
    /// Size on disk.
    bytes: f64,
    rank: Option<f64>,
    epochs: Option<f64>,
    lr: Option<f64>,
    targets: Vec<String>,
    report: Option<ReportView>,
    /// Its checks in use, oldest first.
    checks: Vec<CheckView>,
    /// What the latest check found wrong, in words.
    warning: Option<String>,
}

/// A check of an adapter in use.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct CheckView {
    at: String,
    /// Share of its check questions answered with what the memories say now.
    recall: f64,
    questions: u32,
    /// Facts changed since it was taught.
    changed: u32,
    /// Facts forgotten or expired since.
    gone: u32,
}

fn check_view(c: &strata_core::AdapterCheck) -> CheckView {
    CheckView {
        at: strata_core::time::format_time(c.at),
        recall: c.recall,
        questions: c.questions as u32,
        changed: c.changed as u32,
        gone: c.gone as u32,
    }
}

/// What the latest check says is wrong, if anything: facts changed or gone since training, or
/// recall fallen more than 10 points below what the evaluation found.
fn warning(checks: &[strata_core::AdapterCheck], report: Option<&Report>) -> Option<String> {
    let last = checks.last()?;
    let n = |v: u64, one: &str, many: &str| strata_api::health::words(v, one, many);
    if last.changed > 0 || last.gone > 0 {
        let mut parts = Vec::new();
        if last.changed > 0 {
            parts.push(format!("{} changed", n(last.changed, "fact it learned has", "facts it learned have")));
        }
        if last.gone > 0 {
            parts.push(format!("{} forgotten", n(last.gone, "fact was", "facts were")));
        }
        return Some(format!(
            "Since it was taught, {}: it may still answer the old way. Teach the memories again and use the new adapter.",
            parts.join(" and ")
        ));
    }
    let then = report?.recall_with_adapter;
    (last.recall < then - 0.1).then(|| {
        format!(
            "It answers fewer check questions than when it was taught ({:.0}% now, {:.0}% then).",
            last.recall * 100.0,
            then * 100.0
        )
    })
}

fn adapter_view(a: AdapterRecord, checks: &[strata_core::AdapterCheck]) -> AdapterView {
    let h = &a.hyperparameters;
    let report = a.metrics.clone().and_then(|m| serde_json::from_value::<Report>(m).ok());
    AdapterView {
        warning: warning(checks, report.as_ref()),
        checks: checks.iter().map(check_view).collect(),
        report: report.map(report_view),
        rank: h["rank"].as_f64(),
        epochs: h["epochs"].as_f64(),
        lr: h["lr"].as_f64(),
        targets: h["targets"]
            .as_array()
            .map(|t| t.iter().filter_map(|x| x.as_str().map(String::from)).collect())
            .unwrap_or_default(),
        id: a.id,
        created_at: strata_core::time::format_time(a.created_at),
        status: a.status.as_str().into(),
        passed: a.passed,
        base_model: a.base_model,
        sources: a.sources,
        dataset_hash: a.dataset_hash,
        bytes: a.bytes as f64,
    }
}

/// Every adapter, newest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn adapters(state: State<'_, AppState>) -> Result<Vec<AdapterView>, ApiError> {
    state.run(|e| e.adapters()?.into_iter().map(|a| viewed(e, a)).collect()).await
}

/// An adapter with its checks.
fn viewed(e: &strata_api::Engine, a: AdapterRecord) -> ApiResult<AdapterView> {
    let checks = e.adapter_checks(&a.id)?;
    Ok(adapter_view(a, &checks))
}

/// One event in an adapter's history, in words.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct AdapterEventView {
    at: String,
    /// trained, evaluated, activated, deactivated, rolled_back, retired.
    kind: String,
    detail: String,
}

fn event_view(e: AdapterEvent) -> AdapterEventView {
    let d = &e.detail;
    let detail = match e.kind.as_str() {
        "trained" => format!(
            "{} steps in {:.0} s, final loss {:.3}",
            d["steps"].as_u64().unwrap_or(0),
            d["seconds"].as_f64().unwrap_or(0.0),
            d["final_loss"].as_f64().unwrap_or(f64::NAN)
        ),
        "evaluated" if d["passed"] == true => "passed the evaluation".into(),
        "evaluated" => "did not pass the evaluation".into(),
        "activated" if d["forced"] == true => "used although it did not pass".into(),
        "deactivated" => format!("replaced by {}", d["replaced_by"].as_str().unwrap_or("another")),
        "rolled_back" => match d["restored"].as_str() {
            Some(p) => format!("rolled back; {p} is used again"),
            None => "rolled back; the model answers on its own".into(),
        },
        "retired" if d["memory"].is_string() => "retired: a memory it learned was forgotten".into(),
        "retired" => "retired by you".into(),
        _ => String::new(),
    };
    AdapterEventView { at: strata_core::time::format_time(e.at), kind: e.kind, detail }
}

/// What happened to an adapter, oldest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn adapter_history(state: State<'_, AppState>, id: String) -> Result<Vec<AdapterEventView>, ApiError> {
    state.run(move |e| Ok(e.adapter_history(&id)?.into_iter().map(event_view).collect())).await
}

/// Makes an adapter the one the chat's on-device model uses (one that did not pass only with
/// `force`).
#[tauri::command]
#[specta::specta]
pub(crate) async fn activate_adapter(
    state: State<'_, AppState>,
    id: String,
    force: bool,
) -> Result<AdapterView, ApiError> {
    let a = state.run(move |e| e.activate_adapter(&id, force)).await?;
    state.use_adapter(Some(crate::state::adapter_in_use(a.clone())));
    state.run(move |e| viewed(e, a)).await
}

/// Retires the active adapter; the one active before it is used again, if any.
#[tauri::command]
#[specta::specta]
pub(crate) async fn rollback_adapter(state: State<'_, AppState>) -> Result<Option<AdapterView>, ApiError> {
    let now = state.run(|e| e.rollback_adapter()).await?;
    state.use_adapter(now.clone().map(crate::state::adapter_in_use));
    match now {
        Some(a) => Ok(Some(state.run(move |e| viewed(e, a)).await?)),
        None => Ok(None),
    }
}

/// Retires an adapter that is not in use, for good.
#[tauri::command]
#[specta::specta]
pub(crate) async fn retire_adapter(state: State<'_, AppState>, id: String) -> Result<AdapterView, ApiError> {
    state
        .run(move |e| {
            let a = e.retire_adapter(&id)?;
            viewed(e, a)
        })
        .await
}

/// The adapter the chat's model uses now, if any.
#[tauri::command]
#[specta::specta]
pub(crate) async fn active_adapter(state: State<'_, AppState>) -> Result<Option<AdapterView>, ApiError> {
    state.run(|e| e.active_adapter()?.map(|a| viewed(e, a)).transpose()).await
}

/// One training example as the Training set tab shows and edits it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, specta::Type)]
pub(crate) struct ExampleForm {
    question: String,
    answer: String,
    /// Asked only to check what was learned, never trained on.
    held_out: bool,
    /// For a fact: what a right answer contains (checked against the model's answers).
    expected: Option<String>,
    /// The fact it is about (kept as it was: edits change the words, not the fact).
    subject: Option<String>,
    attribute: Option<String>,
    /// `fact` or `procedure`.
    kind: String,
}

fn form_of(e: &strata_train::Example) -> ExampleForm {
    ExampleForm {
        question: e.question.clone(),
        answer: e.answer.clone(),
        held_out: e.split == strata_train::Split::Heldout,
        expected: e.fact.as_ref().map(|f| f.value.clone()),
        subject: e.fact.as_ref().map(|f| f.subject.clone()),
        attribute: e.fact.as_ref().map(|f| f.attribute.clone()),
        kind: if e.kind == strata_train::Kind::Procedure { "procedure" } else { "fact" }.into(),
    }
}

fn example_of(f: ExampleForm, source: &str) -> strata_train::Example {
    let fact = match (f.subject, f.attribute, f.expected) {
        (Some(subject), Some(attribute), Some(value)) => {
            Some(strata_train::data::FactRef { subject, attribute, value })
        }
        _ => None,
    };
    strata_train::Example {
        question: f.question.trim().to_string(),
        answer: f.answer.trim().to_string(),
        kind: if f.kind == "procedure" { strata_train::Kind::Procedure } else { strata_train::Kind::Fact },
        split: if f.held_out { strata_train::Split::Heldout } else { strata_train::Split::Train },
        sources: vec![source.to_string()],
        fact,
    }
}

/// An approved memory's examples, whether a person edited them, and what is wrong with them.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct SetMemoryView {
    memory: strata_api::dto::MemoryView,
    edited: bool,
    examples: Vec<ExampleForm>,
    /// What is wrong, each with how to mend it.
    problems: Vec<String>,
}

/// The training set of the approved memories, as it would be trained.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct TrainingSetView {
    memories: Vec<SetMemoryView>,
    /// Examples trained on.
    train: u32,
    /// Examples kept to check what was learned.
    held_out: u32,
    /// Problems that stop training until mended.
    blocking: Vec<String>,
    /// Problems of no one memory.
    other: Vec<String>,
}

/// The approved memories' training set (its general questions aside), with the people's
/// edits, for the Training set tab.
#[tauri::command]
#[specta::specta]
pub(crate) async fn training_set(state: State<'_, AppState>) -> Result<TrainingSetView, ApiError> {
    let trainer = state.trainer();
    state
        .run_apart(move |e| {
            let chat = trainer.model()?;
            let memories = strata_train::pipeline::approved(e)?;
            let edits = strata_train::pipeline::edits_of(e, &memories)?;
            let config = TrainConfig { replay: 0, ..TrainConfig::default() };
            let set = strata_train::dataset_edited(&chat, &memories, &edits, &config)?;
            let mut view = TrainingSetView {
                memories: Vec::new(),
                train: set.train().count() as u32,
                held_out: set.heldout().count() as u32,
                blocking: Vec::new(),
                other: Vec::new(),
            };
            let problems: Vec<(String, Vec<String>, bool)> =
                set.problems.iter().map(|p| (p.advice(), p.memories(), p.blocks())).collect();
            for (words, ids, blocks) in &problems {
                if *blocks {
                    view.blocking.push(words.clone());
                }
                if ids.is_empty() {
                    view.other.push(words.clone());
                }
            }
            for m in memories {
                let id = m.id.to_string();
                let examples = set.examples.iter().filter(|x| x.sources.contains(&id)).map(form_of).collect();
                let problems =
                    problems.iter().filter(|(_, ids, _)| ids.contains(&id)).map(|(w, _, _)| w.clone()).collect();
                view.memories.push(SetMemoryView {
                    edited: edits.contains_key(&id),
                    memory: m.into(),
                    examples,
                    problems,
                });
            }
            Ok(view)
        })
        .await
}

/// Keeps a person's examples for a memory (`None`: back to the generated ones).
#[tauri::command]
#[specta::specta]
pub(crate) async fn save_examples(
    state: State<'_, AppState>,
    id: String,
    examples: Option<Vec<ExampleForm>>,
) -> Result<(), ApiError> {
    state
        .run(move |e| {
            let value = examples
                .map(|list| {
                    let list: Vec<strata_train::Example> = list.into_iter().map(|f| example_of(f, &id)).collect();
                    serde_json::to_value(list).map_err(|err| ApiError::invalid(err.to_string()))
                })
                .transpose()?;
            e.save_example_edit(&id, value.as_ref())
        })
        .await
}

/// Checks an adapter against the memories as they are now (its check questions asked again),
/// with progress; the check is kept with it.
#[tauri::command]
#[specta::specta]
pub(crate) async fn check_adapter(
    state: State<'_, AppState>,
    job: String,
    id: String,
    on_progress: Channel<JobProgress>,
) -> Result<AdapterView, ApiError> {
    let mut job = Job::start(&state, job, on_progress)?;
    let trainer = state.trainer();
    state
        .run_apart(move |e| {
            let chat = trainer.model()?;
            strata_train::pipeline::check_in_use(e, &chat, &id, &mut |d, t| {
                let _ = job.tick(d as u64, t as u64, "");
            })?;
            viewed(e, e.adapter(&id)?)
        })
        .await
}

/// How often the adapter in use is checked again.
pub(crate) const CHECK_EVERY: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// Checks the adapter in use when its last check (or its activation) is older than
/// [`CHECK_EVERY`]; called by the app's background schedule. Whether it checked.
pub(crate) fn check_if_due(e: &mut strata_api::Engine, trainer: &crate::state::Trainer) -> ApiResult<bool> {
    let Some(a) = e.active_adapter()? else { return Ok(false) };
    let since = e
        .adapter_checks(&a.id)?
        .last()
        .map(|c| c.at)
        .or_else(|| e.adapter_history(&a.id).ok()?.iter().rev().find(|h| h.kind == "activated").map(|h| h.at))
        .unwrap_or(a.created_at);
    if e.now() - since < CHECK_EVERY {
        return Ok(false);
    }
    let chat = trainer.model()?;
    strata_train::pipeline::check_in_use(e, &chat, &a.id, &mut |_, _| {})?;
    Ok(true)
}
