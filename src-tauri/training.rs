//! The Training screen's commands: the curation queue (flag, list, decide, history), training
//! the approved memories into an adapter as a recorded run (off the window's engine and its
//! chat model, so search and chat go on), the runs as they go, and the adapter registry
//! (evaluation reports, history, activate, roll back). Activating or rolling back swaps the
//! chat's on-device model for one with the now-active adapter. What they show and say is
//! `strata_train::views`', the front door the CLI uses too.

use strata_api::curation::{CandidateEventView, CandidateQuery, CandidateView, CandidatesView, FlagReport, Verdict};
use strata_api::{ApiError, Settings};
use strata_train::pipeline::Plan;
use strata_train::views::{self, AdapterEventView, AdapterView, ExampleForm, RunView, TrainOptions, TrainingSetView};
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
    let mut job = Job::start(&state.jobs, job, on_progress)?;
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

/// The Train panel's defaults: the crystallization engine's, with its gate.
#[tauri::command]
#[specta::specta]
pub(crate) async fn train_defaults() -> Result<TrainOptions, ApiError> {
    Ok(TrainOptions::default())
}

/// The on-device model new adapters are trained for: the one that answers (chosen in
/// Settings, else `STRATA_CHAT_MODEL`, else the default), as people name it.
#[tauri::command]
#[specta::specta]
pub(crate) async fn training_model() -> Result<String, ApiError> {
    let chosen = strata_api::Settings::load()?.on_device.chat;
    Ok(strata_models::chat_pin(chosen.as_deref())?.title.clone())
}

/// The latest runs, newest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn training_runs(state: State<'_, AppState>) -> Result<Vec<RunView>, ApiError> {
    let db = state.db_path.clone();
    state.run(move |e| views::runs(e, &db, 20)).await
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
    let topic = options.topic.clone();
    let stop = Stop::register(&state.jobs, TRAIN_JOB.into())?;
    let db = state.db_path.clone();
    let trainer = state.trainer();
    state
        .run_apart(move |e| {
            let chat = trainer.model()?;
            let set = strata_train::pipeline::approved_set_in(e, &chat, &config, topic.as_deref())?;
            let plan = Plan { set: &set, config: &config, gate: Some(gate) };
            let done = strata_train::pipeline::run(e, &db, &chat, plan, &mut |_| {}, &stop.shared())?;
            Ok(views::run_view(done.run, &db, e.now()))
        })
        .await
}

/// Resumes a stopped or interrupted run from its checkpoint (its set and settings as they
/// were).
#[tauri::command]
#[specta::specta]
pub(crate) async fn resume_training(state: State<'_, AppState>, run: String) -> Result<RunView, ApiError> {
    let stop = Stop::register(&state.jobs, TRAIN_JOB.into())?;
    let db = state.db_path.clone();
    let trainer = state.trainer();
    state
        .run_apart(move |e| {
            // On the model the run trains.
            let chat = trainer.model_for(views::run_base(e, &run)?.as_deref())?;
            views::resume(e, &db, &chat, &run, &mut |_| {}, &stop.shared())
        })
        .await
}

/// Every adapter, newest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn adapters(state: State<'_, AppState>) -> Result<Vec<AdapterView>, ApiError> {
    state.run(|e| e.adapters()?.into_iter().map(|a| views::viewed(e, a)).collect()).await
}

/// What happened to an adapter, oldest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn adapter_history(state: State<'_, AppState>, id: String) -> Result<Vec<AdapterEventView>, ApiError> {
    state.run(move |e| Ok(e.adapter_history(&id)?.into_iter().map(views::event_view).collect())).await
}

/// Makes an adapter the one the chat's on-device model uses instead of those in use, or with
/// `alongside` one more in use (each question then chooses among them); one that did not pass
/// only with `force`.
#[tauri::command]
#[specta::specta]
pub(crate) async fn activate_adapter(
    state: State<'_, AppState>,
    id: String,
    force: bool,
    alongside: bool,
) -> Result<AdapterView, ApiError> {
    let a = state
        .run(move |e| if alongside { e.use_adapter_alongside(&id, force) } else { e.activate_adapter(&id, force) })
        .await?;
    state.adapters_changed().await?;
    state.run(move |e| views::viewed(e, a)).await
}

/// Retires adapter `id` in use (none: the only one); the adapters it replaced are used again.
/// Returns the adapters in use now.
#[tauri::command]
#[specta::specta]
pub(crate) async fn rollback_adapter(
    state: State<'_, AppState>,
    id: Option<String>,
) -> Result<Vec<AdapterView>, ApiError> {
    state.run(move |e| e.rollback_adapter(id.as_deref(), "rolled back by a person").map(drop)).await?;
    state.adapters_changed().await?;
    adapters_in_use(state).await
}

/// Retires an adapter that is not in use, for good.
#[tauri::command]
#[specta::specta]
pub(crate) async fn retire_adapter(state: State<'_, AppState>, id: String) -> Result<AdapterView, ApiError> {
    state
        .run(move |e| {
            let a = e.retire_adapter(&id)?;
            views::viewed(e, a)
        })
        .await
}

/// How adapter `id` fares among the adapters in use: of its check questions, how many choose
/// it; of the others', how many choose it by mistake (none while no embedder is loaded).
#[tauri::command]
#[specta::specta]
pub(crate) async fn adapter_selection(
    state: State<'_, AppState>,
    id: String,
) -> Result<Option<views::SelectionView>, ApiError> {
    state.run(move |e| views::selection(e, &id)).await
}

/// The adapters the chat's model uses now (each question chooses one, or none), in the order
/// they were put in use.
#[tauri::command]
#[specta::specta]
pub(crate) async fn adapters_in_use(state: State<'_, AppState>) -> Result<Vec<AdapterView>, ApiError> {
    state.run(|e| e.adapters_in_use()?.into_iter().map(|a| views::viewed(e, a)).collect()).await
}

/// The approved memories' training set (its general questions aside), with the people's
/// edits, for the Training set tab.
#[tauri::command]
#[specta::specta]
pub(crate) async fn training_set(state: State<'_, AppState>) -> Result<TrainingSetView, ApiError> {
    let trainer = state.trainer();
    state.run_apart(move |e| views::training_set(e, &*trainer.model()?)).await
}

/// Keeps a person's examples for a memory (`None`: back to the generated ones).
#[tauri::command]
#[specta::specta]
pub(crate) async fn save_examples(
    state: State<'_, AppState>,
    id: String,
    examples: Option<Vec<ExampleForm>>,
) -> Result<(), ApiError> {
    state.run(move |e| views::save_examples(e, &id, examples)).await
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
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    let trainer = state.trainer();
    state
        .run_apart(move |e| {
            let chat = trainer.model_for(Some(&e.adapter(&id)?.base_model))?;
            strata_train::pipeline::check_in_use(e, &chat, &id, &mut |d, t| {
                let _ = job.tick(d as u64, t as u64, "");
            })?;
            views::viewed(e, e.adapter(&id)?)
        })
        .await
}
