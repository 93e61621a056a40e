//! Scheduled crystallization in the app: each minute, the daily check of the adapters in use
//! (one that falls below its gate is rolled back) and, when the schedule in Settings is due, a
//! look (`strata_train::schedule`) on an engine and a model of its own, yielding while the
//! person uses the app. What they did reaches the window as notes; the Training screen's
//! Schedule tab shows the record and the adapter waiting for a yes.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use strata_api::{ApiError, ApiResult, Settings};
use strata_train::schedule::{self, Look, Looked};
use strata_train::views::{self, ScheduleView};
use tauri::{Manager, State};

use crate::state::AppState;

/// How often the schedule and the checks are looked at (`STRATA_SCHEDULE_EVERY_S` for tests).
fn every() -> Duration {
    let secs = std::env::var("STRATA_SCHEDULE_EVERY_S").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    Duration::from_secs(secs)
}

/// Starts the schedule's thread (adapters stay with this computer's file: none on a team's).
pub(crate) fn start(app: tauri::AppHandle) {
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(every());
            let state = app.state::<AppState>();
            if state.location().team {
                continue;
            }
            if let Err(err) = checks(&state) {
                tracing::warn!("the adapters in use could not be checked: {err}");
            }
            if let Err(err) = look_if_due(&state) {
                tracing::warn!("the training schedule could not look: {err}");
            }
        }
    });
}

/// The daily check of each adapter in use that is due; a rollback is noted and applied.
fn checks(state: &AppState) -> ApiResult<()> {
    let mut engine = state.engine_apart()?;
    let trainer = state.trainer();
    let checked = views::check_if_due(&mut engine, |base| trainer.model_for(Some(base)))?;
    if checked.iter().any(|c| c.rolled_back) {
        tauri::async_runtime::block_on(state.adapters_changed())?;
    }
    for c in checked.iter().filter(|c| c.rolled_back) {
        state.note(c.said());
    }
    Ok(())
}

/// A look when the schedule is due (and the person is not busy).
fn look_if_due(state: &AppState) -> ApiResult<()> {
    let settings = Settings::load()?;
    let mut engine = state.engine_apart()?;
    let local = |t: chrono::DateTime<chrono::Utc>| t.with_timezone(&chrono::Local).naive_local();
    let last = schedule::last_look(&engine)?.map(local);
    let idle = chrono::TimeDelta::from_std(state.activity.idle_for()).unwrap_or_default();
    if !settings.training.schedule.due(local(engine.now()), last, idle) || state.activity.busy() {
        return Ok(());
    }
    let chat = state.trainer().model()?;
    let activity = state.activity.clone();
    let look = Look {
        settings: &settings.training.schedule,
        criteria: &settings.training.criteria,
        db: &state.db_path,
        chat: &chat,
        config: &strata_train::TrainConfig::default(),
        gate: strata_train::Gate::default(),
        busy: &move || activity.busy(),
        cancel: &AtomicBool::new(false),
    };
    let looked = schedule::look(&mut engine, &look)?;
    if matches!(looked, Looked::Promoted { .. }) {
        tauri::async_runtime::block_on(state.adapters_changed())?;
    }
    // A wait or a pause is in the schedule's record, not worth a note.
    if !matches!(looked, Looked::Waiting { .. } | Looked::Paused) {
        state.note(format!("The training schedule: {} (Training → On a schedule)", looked.said()));
    }
    Ok(())
}

/// The training schedule: its settings in words, the adapter waiting for a yes, what it did.
#[tauri::command]
#[specta::specta]
pub(crate) async fn training_schedule(state: State<'_, AppState>) -> Result<ScheduleView, ApiError> {
    let settings = Settings::load()?.training.schedule;
    state.run(move |e| views::schedule_view(e, settings, 50)).await
}

/// A curator's answer to the adapter the schedule trained: yes puts it in use, no leaves it out.
#[tauri::command]
#[specta::specta]
pub(crate) async fn answer_schedule(
    state: State<'_, AppState>,
    id: String,
    yes: bool,
) -> Result<ScheduleView, ApiError> {
    state.run(move |e| schedule::answer(e, &id, yes)).await?;
    if yes {
        state.adapters_changed().await?;
    }
    training_schedule(state).await
}

/// What the schedule and the daily check did since the window last asked, each said once.
#[tauri::command]
#[specta::specta]
pub(crate) async fn training_notes(state: State<'_, AppState>) -> Result<Vec<String>, ApiError> {
    Ok(std::mem::take(&mut *state.notes.lock().unwrap_or_else(|p| p.into_inner())))
}
