//! Long jobs — import, export, re-embedding, maintenance — each on an engine of its own (so
//! the window stays responsive), reporting progress over a channel and stopped by
//! `cancel_job`. A stopped import or maintenance rolls back whole; a stopped export leaves no
//! file; stopped embedding keeps what it finished and resumes when run again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use strata_api::dto::ImportView;
use strata_api::embedding::EmbedProgress;
use strata_api::{ApiError, ApiResult, ErrorCode, ImportFormat, ImportOptions, Settings};
use tauri::State;
use tauri::ipc::Channel;

use crate::state::AppState;

/// How far a job has come: `done` of `total` (`total` 0 while not known), and what it is
/// doing in words when the job says (a step with no count of its own).
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct JobProgress {
    done: u32,
    total: u32,
    stage: Option<String>,
}

/// A stop flag registered under the id the window chose, so `cancel_job` can set it; removed
/// when the work ends. Long jobs and chat answers both stop through it.
pub(crate) struct Stop {
    id: String,
    flag: Arc<AtomicBool>,
    jobs: Arc<std::sync::Mutex<std::collections::HashMap<String, Arc<AtomicBool>>>>,
}

impl Stop {
    pub(crate) fn register(state: &AppState, id: String) -> ApiResult<Stop> {
        let flag = Arc::new(AtomicBool::new(false));
        let mut jobs = state.jobs.lock().unwrap_or_else(|p| p.into_inner());
        if jobs.contains_key(&id) {
            return Err(ApiError::invalid(format!("a job named {id} is already running")));
        }
        jobs.insert(id.clone(), flag.clone());
        Ok(Stop { id, flag, jobs: state.jobs.clone() })
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
        self.jobs.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.id);
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
    pub(crate) fn start(state: &AppState, id: String, channel: Channel<JobProgress>) -> ApiResult<Job> {
        Ok(Job { stop: Stop::register(state, id)?, channel, last: None, stage: None })
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

/// Asks a running job to stop; whether one by that id was running.
#[tauri::command]
#[specta::specta]
pub(crate) async fn cancel_job(state: State<'_, AppState>, job: String) -> Result<bool, ApiError> {
    let jobs = state.jobs.lock().unwrap_or_else(|p| p.into_inner());
    Ok(jobs.get(&job).map(|stop| stop.store(true, Ordering::Relaxed)).is_some())
}

/// Imports a file's text (a seed-002 document, a JSON Lines backup, or a reference-server
/// memory.json; the format is detected) in one transaction, with progress: a bad or stopped
/// import changes nothing. A memories document's memory already stored stops it
/// (`duplicate_key`) unless `on_duplicate` is `skip` or `merge`.
#[tauri::command]
#[specta::specta]
pub(crate) async fn import_file(
    state: State<'_, AppState>,
    job: String,
    name: String,
    text: String,
    on_duplicate: String,
    on_progress: Channel<JobProgress>,
) -> Result<ImportView, ApiError> {
    let mut job = Job::start(&state, job, on_progress)?;
    let options = ImportOptions { format: None, on_duplicate: on_duplicate.parse()? };
    state
        .run_apart(move |e| {
            let stopped = "the import was stopped; nothing was imported";
            let r = e.import_report_with(&name, &mut text.as_bytes(), options, &mut |d, t| job.tick(d, t, stopped))?;
            Ok(ImportView { format: r.format, imported: r.imported, summary: r.summary.map(|s| s.to_string()) })
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
    let mut job = Job::start(&state, job, on_progress)?;
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
    let mut job = Job::start(&state, job, on_progress)?;
    state
        .run_apart(move |e| {
            let stop = job.stop.shared();
            let p = e.embed_all(&stop, &mut |p: EmbedProgress| {
                let _ = job.tick(p.done, p.total, "");
            })?;
            let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
            Ok(JobProgress { done: clamp(p.done), total: clamp(p.total), stage: None })
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
    let mut job = Job::start(&state, job, on_progress)?;
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
