//! Settings → Plugins: the registry (`strata-plugins`) as a person sees it — everything
//! pluggable by kind, where it comes from and whether it works, their own plugins added,
//! checked and removed, and the embedder recall uses switched with the store re-embedded in the
//! background (progress, Cancel, resumed when the app starts again).

use std::sync::Arc;

use strata_api::embedding::VectorModelView;
use strata_api::plugins::PersonPlugin;
use strata_api::{ApiError, ApiResult, ErrorCode, Settings};
use strata_plugins::{PluginView, Sources};
use tauri::State;
use tauri::ipc::Channel;

use crate::jobs::{Job, JobProgress};
use crate::state::AppState;

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> ApiResult<T> + Send + 'static) -> ApiResult<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the plugins' settings failed: {e}")))?
}

async fn sources(state: &State<'_, AppState>) -> ApiResult<Sources> {
    let storage = state.run(|e| Ok(e.storage_engine())).await?;
    blocking(move || Sources::for_person(storage)).await
}

/// Everything pluggable, by kind (endpoints and MCP servers not tried: `check_plugin`). Off
/// the async runtime: a provider's key is looked for in the OS keychain.
#[tauri::command]
#[specta::specta]
pub(crate) async fn plugins(state: State<'_, AppState>) -> Result<Vec<PluginView>, ApiError> {
    let sources = sources(&state).await?;
    blocking(move || Ok(strata_plugins::list(&sources))).await
}

/// One entry tried for real: ready, or broken with why.
#[tauri::command]
#[specta::specta]
pub(crate) async fn check_plugin(state: State<'_, AppState>, entry: PluginView) -> Result<PluginView, ApiError> {
    let sources = sources(&state).await?;
    blocking(move || Ok(strata_plugins::check(&entry, &sources))).await
}

/// Adds one of the person's plugins (an embedder or chat model at an endpoint, a tokenizer
/// file) and tries it at once.
#[tauri::command]
#[specta::specta]
pub(crate) async fn add_plugin(state: State<'_, AppState>, plugin: PersonPlugin) -> Result<PluginView, ApiError> {
    let sources = sources(&state).await?;
    blocking(move || {
        let plugin = PersonPlugin { name: plugin.name.trim().to_string(), ..plugin };
        let settings = sources.settings.with_plugin(plugin.clone())?;
        settings.save()?;
        let sources = Sources { settings, ..sources };
        let view =
            strata_plugins::list(&sources).into_iter().find(|p| p.added && p.name == plugin.name).ok_or_else(|| {
                ApiError::new(ErrorCode::Internal, format!("{} was added but is not listed", plugin.name))
            })?;
        Ok(strata_plugins::check(&view, &sources))
    })
    .await
}

/// Removes one of the person's plugins (not the embedder in use), and the vectors an embedder
/// of theirs made.
#[tauri::command]
#[specta::specta]
pub(crate) async fn remove_plugin(state: State<'_, AppState>, name: String) -> Result<(), ApiError> {
    let settings = blocking(Settings::load).await?;
    let kept = settings.without_plugin(&name)?;
    if let Some(model) = strata_plugins::open::vectors_of(&settings, &name) {
        state.run(move |e| e.drop_vectors(&model)).await?;
    }
    blocking(move || kept.save()).await
}

/// The models whose vectors the store keeps, the one recall uses marked.
#[tauri::command]
#[specta::specta]
pub(crate) async fn vector_models(state: State<'_, AppState>) -> Result<Vec<VectorModelView>, ApiError> {
    state.run(|e| e.vector_models()).await
}

/// Makes `name` the embedder recall uses: the store re-embedded with it first, apart from the
/// window (recall keeps the embedder in use meanwhile), then the window's engine moved over.
/// Stopped by Cancel with what was done kept; choosing it again resumes. Returns a sentence.
#[tauri::command]
#[specta::specta]
pub(crate) async fn use_embedder(
    state: State<'_, AppState>,
    name: String,
    job: String,
    on_progress: Channel<JobProgress>,
) -> Result<String, ApiError> {
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    job.stage(&format!("Embedding your memories with {name}"));
    let done = state
        .run_apart(move |e| {
            let stop = job.stop_flag();
            strata_plugins::switch::use_embedder(e, &name, &stop, &mut |p| {
                let _ = job.tick(p.done, p.total, "");
            })
            .map(|d| (d.said(&name), d.embedder))
        })
        .await?;
    let (sentence, embedder) = done;
    state.run(move |e| e.use_embedder(embedder, true)).await?;
    Ok(sentence)
}

/// At start: the embedder the person chose, and a switch the app was closed during resumed in
/// the background (the window's recall keeps the embedder in use until it is done).
pub(crate) fn start_embedder(engine: Arc<std::sync::Mutex<strata_api::Engine>>) {
    std::thread::spawn(move || {
        let settings = Settings::load().unwrap_or_default();
        match strata_plugins::open::embedder(&settings, None) {
            Ok(model) => {
                let mut e = engine.lock().unwrap_or_else(|p| p.into_inner());
                if let Err(err) = e.use_embedder(model, true) {
                    tracing::warn!("the embedder could not start: {err}");
                }
            }
            Err(err) => tracing::warn!("no embedding model, recall ranks by keywords: {err}"),
        }
        let Some(to) = settings.embedder.switching_to.clone() else { return };
        if let Err(err) = resume(&engine, &to) {
            tracing::warn!("switching to the embedder {to} did not finish: {err}");
        }
    });
}

fn resume(engine: &Arc<std::sync::Mutex<strata_api::Engine>>, to: &str) -> ApiResult<()> {
    let mut apart = {
        let e = engine.lock().unwrap_or_else(|p| p.into_inner());
        e.for_caller(e.options().clone())?
    };
    let done =
        strata_plugins::switch::use_embedder(&mut apart, to, &std::sync::atomic::AtomicBool::new(false), &mut |_| {})?;
    engine.lock().unwrap_or_else(|p| p.into_inner()).use_embedder(done.embedder, true)
}
