//! The analytics screen's commands: the dashboard over a range, what is behind a point, the
//! store's health and the optimizations that mend it (previewed, then applied as a job), and
//! what a person says of an answer or a memory.

use strata_api::analytics::{DashboardView, DrilledMemory, MemoryDrill, RecallRowView};
use strata_api::dto::MemoryView;
use strata_api::forms::RangeForm;
use strata_api::health::{HealthParams, HealthView, Optimization, OptimizeView};
use strata_api::{ApiError, Target};
use strata_core::analytics::About;
use tauri::State;
use tauri::ipc::Channel;

use crate::jobs::{Job, JobProgress};
use crate::state::AppState;

/// Rows a drill-down lists at most.
const DRILLED: usize = 200;

/// Everything the dashboard's first view shows, over `range`.
#[tauri::command]
#[specta::specta]
pub(crate) async fn dashboard(state: State<'_, AppState>, range: RangeForm) -> Result<DashboardView, ApiError> {
    state.run(move |e| e.dashboard(&range.range(e.now())?)).await
}

/// The memories behind a point: `what` happened to them in `range`.
#[tauri::command]
#[specta::specta]
pub(crate) async fn drill_memories(
    state: State<'_, AppState>,
    range: RangeForm,
    what: MemoryDrill,
) -> Result<Vec<DrilledMemory>, ApiError> {
    state.run(move |e| e.drill_memories(&range.range(e.now())?, what, DRILLED)).await
}

/// The recalls behind a point: all in `range`, those that found nothing, or one query's.
#[tauri::command]
#[specta::specta]
pub(crate) async fn drill_recalls(
    state: State<'_, AppState>,
    range: RangeForm,
    empty: bool,
    query: Option<String>,
) -> Result<Vec<RecallRowView>, ApiError> {
    state.run(move |e| e.drill_recalls(&range.range(e.now())?, empty, query.as_deref(), DRILLED)).await
}

/// The store's health.
#[tauri::command]
#[specta::specta]
pub(crate) async fn health(state: State<'_, AppState>) -> Result<HealthView, ApiError> {
    // On an engine of its own: at 100,000 memories it takes seconds, and the window's other
    // commands go on meanwhile.
    state.run_apart(|e| e.health(&HealthParams::default())).await
}

/// Previews (`apply` false) or applies an optimization, as a job with progress; a stopped
/// one writes nothing.
#[tauri::command]
#[specta::specta]
pub(crate) async fn optimize(
    state: State<'_, AppState>,
    job: String,
    action: Optimization,
    apply: bool,
    on_progress: Channel<JobProgress>,
) -> Result<OptimizeView, ApiError> {
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    state
        .run_apart(move |e| {
            let stop = job.stop_flag();
            let stopped = "stopped; nothing changed";
            e.optimize(action, &HealthParams::default(), apply, &mut |d, t| job.tick(d, t, stopped), &stop)
        })
        .await
}

/// Brings back a memory that was expired (a merged duplicate, a stale one).
#[tauri::command]
#[specta::specta]
pub(crate) async fn revive(state: State<'_, AppState>, id: String) -> Result<MemoryView, ApiError> {
    state.run(move |e| e.revive(&Target::new(id))).await
}

/// Records what the person said of an answer or a memory: helpful or not.
#[tauri::command]
#[specta::specta]
pub(crate) async fn rate(state: State<'_, AppState>, id: String, about: About, helpful: bool) -> Result<(), ApiError> {
    state.run(move |e| e.rate(&Target::new(id), about, helpful)).await
}

/// Deletes the usage records of recalls and what was said of answers and memories; returns how
/// many recalls.
#[tauri::command]
#[specta::specta]
pub(crate) async fn clear_usage_records(state: State<'_, AppState>) -> Result<u32, ApiError> {
    state.run(|e| Ok(e.clear_recall_records()? as u32)).await
}
