//! Long jobs of the whole store — import, export, re-embedding, maintenance — each on an
//! engine of its own (so the window stays responsive), with progress, and stopping any job
//! (`cancel_job`). A stopped import or maintenance rolls back whole; a stopped export leaves no
//! file; stopped embedding keeps what it finished and resumes when run again.

use strata_api::dto::ImportView;
use strata_api::embedding::EmbedProgress;
use strata_api::{ApiError, ApiResult, ErrorCode, ImportFormat, ImportOptions, Settings};
use tauri::State;
use tauri::ipc::Channel;

use crate::jobs::{Job, JobProgress};
use crate::state::AppState;

/// Asks a running job to stop; whether one by that id was running.
#[tauri::command]
#[specta::specta]
pub(crate) async fn cancel_job(state: State<'_, AppState>, job: String) -> Result<bool, ApiError> {
    Ok(state.jobs.cancel(&job))
}

/// What an import did: Strata's own formats, or another tool's history.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct ImportedView {
    /// A memories document, a backup or a memory.json.
    memories: Option<ImportView>,
    /// ChatGPT's or Claude's conversations, or mem0's memories.
    history: Option<HistoryView>,
}

/// Another tool's history imported.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct HistoryView {
    /// "ChatGPT", "Claude" or "mem0".
    tool: String,
    conversations: u32,
    /// Turns (or mem0 memories) added, and those kept from an earlier import.
    added: u32,
    already: u32,
    /// The conversations that received turns (to read for facts).
    sessions: Vec<String>,
}

/// Imports a file's text in one transaction, with progress: ChatGPT's or Claude's
/// `conversations.json` or mem0's memories (told by their shape), else a seed-002 document, a
/// JSON Lines backup, or a reference-server memory.json (detected). A bad or stopped import
/// changes nothing. A memories document's memory already stored stops it (`duplicate_key`)
/// unless `on_duplicate` is `skip` or `merge`.
#[tauri::command]
#[specta::specta]
pub(crate) async fn import_file(
    state: State<'_, AppState>,
    job: String,
    name: String,
    text: String,
    on_duplicate: String,
    on_progress: Channel<JobProgress>,
) -> Result<ImportedView, ApiError> {
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    let options = ImportOptions { format: None, on_duplicate: on_duplicate.parse()? };
    state
        .run_apart(move |e| {
            if strata_api::history::is_history(&text) {
                job.stage("Reading the conversations");
                let r = e.import_history(&name, &text)?;
                let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
                let history = HistoryView {
                    tool: r.tool,
                    conversations: clamp(r.conversations),
                    added: clamp(r.added),
                    already: clamp(r.already),
                    sessions: r.sessions,
                };
                return Ok(ImportedView { memories: None, history: Some(history) });
            }
            let stopped = "the import was stopped; nothing was imported";
            let r = e.import_report_with(&name, &mut text.as_bytes(), options, &mut |d, t| job.tick(d, t, stopped))?;
            let view = ImportView { format: r.format, imported: r.imported, summary: r.summary.map(|s| s.to_string()) };
            Ok(ImportedView { memories: Some(view), history: None })
        })
        .await
}

/// Where an export went.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct ExportView {
    /// The file written.
    path: String,
    /// Memories (seed), lines (graph) or events (backup) written.
    written: u32,
}

/// Where to export: the system's Save dialog, opened in the Downloads folder on a dated name
/// for the format; `None` when the person cancels. (`STRATA_SAVE_AS` names the file instead of
/// a dialog: the end-to-end tests cannot drive a native dialog.)
#[tauri::command]
#[specta::specta]
pub(crate) async fn choose_export_path(
    app: tauri::AppHandle,
    format: ImportFormat,
) -> Result<Option<String>, ApiError> {
    if let Some(path) = std::env::var_os("STRATA_SAVE_AS") {
        return Ok(Some(std::path::PathBuf::from(path).display().to_string()));
    }
    use tauri_plugin_dialog::DialogExt;
    let (dir, name) = default_export_place(format)?;
    let (label, ext) = match format {
        ImportFormat::Backup => ("Full backup", "jsonl"),
        _ => ("JSON", "json"),
    };
    let chosen = tauri::async_runtime::spawn_blocking(move || {
        app.dialog().file().set_directory(dir).set_file_name(name).add_filter(label, &[ext]).blocking_save_file()
    })
    .await
    .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the Save dialog failed: {e}")))?;
    chosen
        .map(|p| {
            p.into_path()
                .map(|p| p.display().to_string())
                .map_err(|e| ApiError::new(ErrorCode::Io, format!("cannot save there: {e}")))
        })
        .transpose()
}

/// Exports as a seed-002 document (`seed`), a JSON Lines backup of the whole log (`backup`) or
/// a reference-server memory.json (`graph`) into `path`, the file chosen in the Save dialog
/// (which asked before replacing one), with progress; a stopped export leaves no file.
#[tauri::command]
#[specta::specta]
pub(crate) async fn export_file(
    state: State<'_, AppState>,
    job: String,
    format: ImportFormat,
    path: String,
    on_progress: Channel<JobProgress>,
) -> Result<ExportView, ApiError> {
    let path = std::path::PathBuf::from(path.trim());
    if path.as_os_str().is_empty() {
        return Err(ApiError::invalid("choose a file to export to"));
    }
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    state
        .run_apart(move |e| {
            let stopped = "the export was stopped; no file was written";
            let written = e.export_to_file(format, &path, &mut |d, t| job.tick(d, t, stopped))?;
            Ok(ExportView { path: path.display().to_string(), written: u32::try_from(written).unwrap_or(u32::MAX) })
        })
        .await
}

/// The folder (Downloads, else home) and a dated file name a Save dialog proposes.
fn default_export_place(format: ImportFormat) -> ApiResult<(std::path::PathBuf, String)> {
    let dirs = directories::UserDirs::new()
        .ok_or_else(|| ApiError::new(ErrorCode::Io, "cannot find your home folder; name the file to export to"))?;
    let dir = dirs.download_dir().unwrap_or(dirs.home_dir()).to_path_buf();
    let stamp = chrono::Local::now().format("%Y-%m-%d-%H%M%S");
    let name = match format {
        ImportFormat::Seed => format!("strata-memories-{stamp}.json"),
        ImportFormat::Backup => format!("strata-backup-{stamp}.jsonl"),
        ImportFormat::Graph => format!("strata-memory-{stamp}.json"),
    };
    Ok((dir, name))
}

/// Embeds every memory that has no vector from the loaded model (after a model change or a
/// large import), with progress; a stopped run keeps what it finished.
#[tauri::command]
#[specta::specta]
pub(crate) async fn reembed(
    state: State<'_, AppState>,
    job: String,
    on_progress: Channel<JobProgress>,
) -> Result<JobProgress, ApiError> {
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    state
        .run_apart(move |e| {
            let stop = job.stop_flag();
            let p = e.embed_all(&stop, &mut |p: EmbedProgress| {
                let _ = job.tick(p.done, p.total, "");
            })?;
            Ok(JobProgress::of(p.done, p.total))
        })
        .await
}

/// One tier change, as Maintenance lists it.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct MoveView {
    /// The memory.
    id: String,
    /// `short → medium`, `expire` …
    change: String,
    /// The rule and the numbers that decided it.
    reason: String,
}

/// Applies the tier rule with the thresholds in Settings (or, with `apply` false, previews
/// it — with `unsaved`, the rule as the form holds it), with progress; a stopped run moves
/// nothing. An applied run then flags training candidates (a move changes who qualifies).
#[tauri::command]
#[specta::specta]
pub(crate) async fn maintain(
    state: State<'_, AppState>,
    job: String,
    apply: bool,
    unsaved: Option<Settings>,
    on_progress: Channel<JobProgress>,
) -> Result<Vec<MoveView>, ApiError> {
    let policy = match unsaved.filter(|_| !apply) {
        Some(s) => {
            s.check()?;
            s.tiers
        }
        None => Settings::load()?.tiers,
    };
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    state
        .run_apart(move |e| {
            let stopped = "maintenance was stopped; no memory moved";
            let moves = e.maintain_with(&policy, apply, &mut |d, t| job.tick(d, t, stopped))?;
            if apply {
                e.flag_after_maintenance()?;
            }
            Ok(moves
                .into_iter()
                .map(|m| match m {
                    strata_core::Move::Tier { id, from, to, reason } => {
                        MoveView { id: id.to_string(), change: format!("{from} → {to}"), reason }
                    }
                    strata_core::Move::Expire { id, reason } => {
                        MoveView { id: id.to_string(), change: "expire".into(), reason }
                    }
                })
                .collect())
        })
        .await
}
