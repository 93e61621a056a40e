//! The Datasets screen: files chosen or dropped are read (`strata-datasets`) and kept on an
//! engine of their own, with progress and Cancel, so the window stays responsive; then a
//! table is shown a page at a time and a document by page or heading, asked in SQL or in
//! words, searched with citations, and forgotten.

use std::path::PathBuf;

use strata_api::{ApiError, ChatChoice, ErrorCode};
use strata_core::datasets::{Cell, Dataset, DatasetKind, SqlAnswer, SqlLimits};
use tauri::State;
use tauri::ipc::Channel;

use crate::jobs::{Job, JobProgress};
use crate::state::AppState;

/// Rows or passages one page shows at most.
const MAX_PAGE: usize = 200;

/// A dataset as the list and its page show it.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct DatasetView {
    name: String,
    /// A table (rows and columns) or a document (pages and headings).
    table: bool,
    /// The file it came from.
    source: String,
    format: String,
    /// When it was loaded (RFC 3339).
    loaded: String,
    rows: u32,
    passages: u32,
    /// Passages searchable by meaning.
    embedded: u32,
    /// A table's columns as the file headed them.
    columns: Vec<String>,
    /// A document's pages and headings.
    sections: Vec<SectionView>,
    /// What reading noticed, in words.
    notes: Vec<String>,
}

/// A page or heading of a document.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct SectionView {
    page: Option<u32>,
    heading: Option<String>,
    depth: u32,
    line: u32,
}

fn count(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl From<Dataset> for DatasetView {
    fn from(d: Dataset) -> DatasetView {
        DatasetView {
            table: d.kind == DatasetKind::Table,
            source: d.source,
            format: d.format,
            loaded: d.updated_at.to_rfc3339(),
            rows: count(d.rows),
            passages: count(d.chunks),
            embedded: count(d.embedded),
            columns: d.columns.into_iter().map(|c| c.header).collect(),
            sections: d
                .sections
                .into_iter()
                .map(|s| SectionView { page: s.page, heading: s.heading, depth: u32::from(s.depth), line: s.line })
                .collect(),
            notes: d.notes,
            name: d.name,
        }
    }
}

/// Rows as text, and which columns hold numbers (shown right-aligned).
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct RowsView {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
    numeric: Vec<bool>,
}

fn rows_view(columns: Vec<String>, rows: &[Vec<Cell>]) -> RowsView {
    let numeric = (0..columns.len())
        .map(|i| {
            let mut cells = rows.iter().filter_map(|r| r.get(i)).filter(|c| !matches!(c, Cell::Null)).peekable();
            cells.peek().is_some() && cells.all(|c| matches!(c, Cell::Int(_) | Cell::Real(_)))
        })
        .collect();
    RowsView { columns, rows: rows.iter().map(|r| r.iter().map(Cell::display).collect()).collect(), numeric }
}

/// A passage of a document, or a search hit, with where it is.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct PassageView {
    dataset: String,
    source: String,
    /// "page 2, lines 3–5", "row 12".
    place: String,
    text: String,
}

/// What a statement returned, with the statement (and who wrote it, for a question in words).
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct SqlView {
    sql: String,
    /// The model that wrote it ("on-device SmolLM2…"), none when the person did.
    model: Option<String>,
    result: RowsView,
    cut_off: bool,
    millis: u32,
}

fn sql_view(sql: String, model: Option<String>, a: SqlAnswer) -> SqlView {
    SqlView {
        sql,
        model,
        result: rows_view(a.columns, &a.rows),
        cut_off: a.cut_off,
        millis: u32::try_from(a.millis).unwrap_or(u32::MAX),
    }
}

/// The person's datasets, by name.
#[tauri::command]
#[specta::specta]
pub(crate) async fn datasets(state: State<'_, AppState>) -> Result<Vec<DatasetView>, ApiError> {
    state.run(|e| Ok(e.datasets()?.into_iter().map(DatasetView::from).collect())).await
}

/// Files to load, from the system's Open dialog (`None` when the person cancels).
/// (`STRATA_OPEN_FILES` names them instead, separated like `PATH`: the end-to-end tests cannot
/// drive a native dialog.)
#[tauri::command]
#[specta::specta]
pub(crate) async fn choose_dataset_files(app: tauri::AppHandle) -> Result<Option<Vec<String>>, ApiError> {
    if let Some(paths) = std::env::var_os("STRATA_OPEN_FILES") {
        return Ok(Some(std::env::split_paths(&paths).map(|p| p.display().to_string()).collect()));
    }
    use tauri_plugin_dialog::DialogExt;
    let kinds = ["csv", "tsv", "json", "jsonl", "xlsx", "md", "markdown", "txt", "html", "htm", "pdf"];
    let chosen = tauri::async_runtime::spawn_blocking(move || {
        app.dialog().file().add_filter("Tables and documents", &kinds).blocking_pick_files()
    })
    .await
    .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the Open dialog failed: {e}")))?;
    chosen
        .map(|files| {
            files
                .into_iter()
                .map(|p| {
                    p.into_path()
                        .map(|p| p.display().to_string())
                        .map_err(|e| ApiError::new(ErrorCode::Io, format!("cannot open that file: {e}")))
                })
                .collect()
        })
        .transpose()
}

/// What loading files did, in sentences the screen shows.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct LoadedView {
    /// The datasets kept, by name.
    names: Vec<String>,
    /// A sentence per dataset ("Loaded expenses from expenses.csv: 48 rows.").
    said: Vec<String>,
    /// Passages not yet searchable by meaning (embedding was stopped, or no embedder yet).
    pending: u32,
}

/// Reads every file first (one that cannot be read loads nothing), keeps each, then embeds
/// their passages, with progress; Cancel before keeping keeps nothing, during embedding keeps
/// the datasets (searchable by keyword, the rest embedded next time).
#[tauri::command]
#[specta::specta]
pub(crate) async fn load_datasets(
    state: State<'_, AppState>,
    job: String,
    paths: Vec<String>,
    on_progress: Channel<JobProgress>,
) -> Result<LoadedView, ApiError> {
    if paths.is_empty() {
        return Err(ApiError::invalid("choose a file to load"));
    }
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    state
        .run_apart(move |e| {
            let stopped = "loading was stopped; nothing was kept";
            let mut read = Vec::new();
            for (i, path) in paths.iter().enumerate() {
                let path = PathBuf::from(path);
                let file = path.file_name().map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into());
                job.stage(&format!("Reading {file}"));
                job.tick(i as u64, paths.len() as u64, stopped)?;
                read.extend(strata_datasets::read_file(&path, None)?);
            }
            let mut said = Vec::new();
            for d in &read {
                job.stage(&format!("Keeping {}", d.name));
                job.tick(0, 0, stopped)?;
                let loaded = e.load_dataset(d)?;
                said.push(loaded_sentence(&loaded));
            }
            let pending = embed(e, &mut job)?;
            Ok(LoadedView { names: read.into_iter().map(|d| d.name).collect(), said, pending })
        })
        .await
}

/// Embeds the passages still waiting (after a Cancel, or once the embedder is ready), with
/// progress; returns how many still wait.
#[tauri::command]
#[specta::specta]
pub(crate) async fn embed_datasets(
    state: State<'_, AppState>,
    job: String,
    on_progress: Channel<JobProgress>,
) -> Result<u32, ApiError> {
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    state.run_apart(move |e| embed(e, &mut job)).await
}

fn embed(e: &mut strata_api::Engine, job: &mut Job) -> strata_api::ApiResult<u32> {
    if e.embedder().is_none() {
        return Ok(count(e.datasets()?.iter().map(|d| d.chunks - d.embedded).sum()));
    }
    job.stage("Making passages searchable by meaning");
    let stop = job.stop_flag();
    let done = e.embed_passages(&stop, &mut |d, t| {
        let _ = job.tick(d, t, "");
    })?;
    Ok(count(done.pending))
}

fn loaded_sentence(l: &strata_api::datasets::DatasetLoaded) -> String {
    let d = &l.dataset;
    let size = match d.kind {
        DatasetKind::Table => format!("{} rows, {} columns", d.rows, d.columns.len()),
        DatasetKind::Document => format!("{} passages", d.chunks),
    };
    match l.outcome {
        strata_core::datasets::Loaded::Added => format!("Loaded {} from {}: {size}.", d.name, d.source),
        strata_core::datasets::Loaded::Replaced => {
            format!("Replaced {} with the new {}: {size}.", d.name, d.source)
        }
        strata_core::datasets::Loaded::Unchanged => format!("{} was already loaded from this file.", d.name),
    }
}

/// A page of a table's rows.
#[tauri::command]
#[specta::specta]
pub(crate) async fn dataset_rows(
    state: State<'_, AppState>,
    name: String,
    offset: u32,
    limit: u32,
) -> Result<RowsView, ApiError> {
    state
        .run(move |e| {
            let d = e.dataset(&name)?;
            let rows = e.dataset_rows(&name, u64::from(offset), (limit as usize).clamp(1, MAX_PAGE))?;
            Ok(rows_view(d.columns.into_iter().map(|c| c.header).collect(), &rows))
        })
        .await
}

/// A page of a document's passages (or a table's rows as text), in order.
#[tauri::command]
#[specta::specta]
pub(crate) async fn dataset_passages(
    state: State<'_, AppState>,
    name: String,
    offset: u32,
    limit: u32,
) -> Result<Vec<PassageView>, ApiError> {
    state
        .run(move |e| {
            let d = e.dataset(&name)?;
            let chunks = e.dataset_passages(&name, u64::from(offset), (limit as usize).clamp(1, MAX_PAGE))?;
            Ok(chunks
                .into_iter()
                .map(|c| PassageView {
                    dataset: d.name.clone(),
                    source: d.source.clone(),
                    place: c.place.describe(),
                    text: c.text,
                })
                .collect())
        })
        .await
}

/// Where a document's page or heading starts among its passages (the offset of its first).
#[tauri::command]
#[specta::specta]
pub(crate) async fn dataset_section(
    state: State<'_, AppState>,
    name: String,
    page: Option<u32>,
    line: u32,
) -> Result<u32, ApiError> {
    state.run(move |e| Ok(count(e.dataset_section_offset(&name, page, line)?))).await
}

/// One read-only `SELECT` over a table, as the person wrote it.
#[tauri::command]
#[specta::specta]
pub(crate) async fn dataset_sql(state: State<'_, AppState>, name: String, sql: String) -> Result<SqlView, ApiError> {
    state.run(move |e| Ok(sql_view(sql.clone(), None, e.query_dataset(&name, &sql, SqlLimits::default())?))).await
}

/// A question in words over a table: the chosen model (on-device by default) writes the SQL,
/// shown with its result.
#[tauri::command]
#[specta::specta]
pub(crate) async fn ask_dataset(
    state: State<'_, AppState>,
    name: String,
    question: String,
    model: Option<ChatChoice>,
) -> Result<SqlView, ApiError> {
    let model: std::sync::Arc<dyn strata_core::ChatModel> = match model.filter(|c| c.provider != crate::chat::ON_DEVICE)
    {
        None => state.chat_model().await?,
        Some(c) => crate::chat::open_provider(c).await?,
    };
    state
        .run_apart(move |e| {
            let a = e.ask_table(&name, &question, model.as_ref(), SqlLimits::default())?;
            Ok(sql_view(a.sql, Some(a.model), a.answer))
        })
        .await
}

/// The passages and rows of `names` (none: every dataset) that best match `query`, with where
/// each is.
#[tauri::command]
#[specta::specta]
pub(crate) async fn search_datasets(
    state: State<'_, AppState>,
    names: Vec<String>,
    query: String,
) -> Result<Vec<PassageView>, ApiError> {
    if query.trim().is_empty() {
        return Err(ApiError::invalid("type what to look for"));
    }
    state
        .run(move |e| {
            Ok(e.search_datasets(&names, &query, 20)?
                .into_iter()
                .map(|h| PassageView { place: h.place.describe(), dataset: h.dataset, source: h.source, text: h.text })
                .collect())
        })
        .await
}

/// Forgets a dataset everywhere; false if there was none.
#[tauri::command]
#[specta::specta]
pub(crate) async fn forget_dataset(state: State<'_, AppState>, name: String) -> Result<bool, ApiError> {
    state.run(move |e| e.forget_dataset(&name)).await
}
