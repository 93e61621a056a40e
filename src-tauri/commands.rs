//! The commands the UI calls: a few lines each, over `strata-api`.

use strata_api::bulk::ForgetManyReport;
use strata_api::changes::ComparisonView;
use strata_api::dto::{EventView, MemoryView, PageView, RecallView};
use strata_api::forms::{EditForm, FilterForm, MemoryForm};
use strata_api::{ApiError, ForgetReport, Target};
use tauri::State;

use crate::state::AppState;

/// The list's filter: concepts are left out (they have a panel of their own; after a grouping
/// they would fill the top of the list).
fn listed(filter: FilterForm, now: chrono::DateTime<chrono::Utc>) -> Result<strata_core::Filter, ApiError> {
    Ok(strata_core::Filter { without_concepts: true, ..filter.filter(now)? })
}

/// A page of memories, latest first in `order` (`added`, `occurred`, `recalled`), without
/// concepts.
#[tauri::command]
#[specta::specta]
pub(crate) async fn list_memories(
    state: State<'_, AppState>,
    filter: FilterForm,
    order: String,
    limit: u32,
    cursor: Option<String>,
) -> Result<PageView, ApiError> {
    state.run(move |e| e.list_by(listed(filter, e.now())?, order.parse()?, limit as usize, cursor.as_deref())).await
}

/// The search box: what matches the text as typed, each result with why it matched (nothing
/// is recorded as a use).
#[tauri::command]
#[specta::specta]
pub(crate) async fn find(
    state: State<'_, AppState>,
    query: String,
    filter: FilterForm,
    limit: u32,
) -> Result<FoundView, ApiError> {
    state.activity.used();
    state
        .run(move |e| {
            let filter = filter.filter(e.now())?;
            let hits = e.find(&query, filter.clone(), limit as usize)?;
            let matching = e.count_matches(&query, filter, MATCHES_COUNTED)?;
            Ok(FoundView { hits, matching: u32::try_from(matching).unwrap_or(u32::MAX) })
        })
        .await
}

/// The most matches a search counts ("more than 1,000" beyond): a bound that keeps a keystroke
/// quick on 100,000 memories (docs/benchmarks.md, "search as you type").
const MATCHES_COUNTED: u64 = 1_000;

/// What the search box shows: the best matches, and how many memories match its words in all.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct FoundView {
    /// The best, best first.
    hits: Vec<RecallView>,
    /// How many memories match the words typed (the hits may add some matched by meaning), up
    /// to 1,001: more than 1,000.
    matching: u32,
}

/// A search the person settled on: recorded as a recall, its results counted as recalled.
#[tauri::command]
#[specta::specta]
pub(crate) async fn searched(
    state: State<'_, AppState>,
    query: String,
    filter: FilterForm,
    limit: u32,
) -> Result<u32, ApiError> {
    state.run(move |e| e.searched(&query, filter.filter(e.now())?, limit as usize).map(|n| n as u32)).await
}

/// How many memories match the filters.
#[tauri::command]
#[specta::specta]
pub(crate) async fn count_memories(state: State<'_, AppState>, filter: FilterForm) -> Result<f64, ApiError> {
    state.run(move |e| Ok(e.count(listed(filter, e.now())?)? as f64)).await
}

/// One memory by id or key.
#[tauri::command]
#[specta::specta]
pub(crate) async fn get_memory(state: State<'_, AppState>, id: String) -> Result<MemoryView, ApiError> {
    state.run(move |e| e.get(&Target::new(id), None)).await
}

/// A memory as it was after event `seq`, with what has changed since.
#[tauri::command]
#[specta::specta]
pub(crate) async fn compare(state: State<'_, AppState>, id: String, seq: f64) -> Result<ComparisonView, ApiError> {
    state.run(move |e| e.compare(&Target::new(id), seq as i64)).await
}

/// Makes a memory's content, importance and tags what they were after event `seq`.
#[tauri::command]
#[specta::specta]
pub(crate) async fn restore(state: State<'_, AppState>, id: String, seq: f64) -> Result<MemoryView, ApiError> {
    state.run(move |e| e.restore(&Target::new(id), seq as i64)).await
}

/// A memory's events, oldest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn history(state: State<'_, AppState>, id: String) -> Result<Vec<EventView>, ApiError> {
    state.run(move |e| e.history(&Target::new(id))).await
}

/// Forgets a memory for good.
#[tauri::command]
#[specta::specta]
pub(crate) async fn forget(state: State<'_, AppState>, id: String) -> Result<ForgetReport, ApiError> {
    state.run(move |e| e.forget(&Target::new(id))).await
}

/// Creates a memory from a form.
#[tauri::command]
#[specta::specta]
pub(crate) async fn add_memory(state: State<'_, AppState>, form: MemoryForm) -> Result<MemoryView, ApiError> {
    state
        .run(move |e| {
            let now = e.now();
            e.add(form.request(now)?)
        })
        .await
}

/// Changes a memory as its edit form says.
#[tauri::command]
#[specta::specta]
pub(crate) async fn edit_memory(
    state: State<'_, AppState>,
    id: String,
    form: EditForm,
) -> Result<MemoryView, ApiError> {
    state.run(move |e| e.edit(&Target::new(id), form)).await
}

/// Pins or unpins a memory (maintenance never moves a pinned one down).
#[tauri::command]
#[specta::specta]
pub(crate) async fn pin(state: State<'_, AppState>, id: String, pinned: bool) -> Result<MemoryView, ApiError> {
    state.run(move |e| e.pin(&Target::new(id), pinned)).await
}

/// Moves a memory to a tier (`short`, `medium`, `long`), recorded as the person's choice.
#[tauri::command]
#[specta::specta]
pub(crate) async fn move_tier(state: State<'_, AppState>, id: String, tier: String) -> Result<MemoryView, ApiError> {
    state
        .run(move |e| {
            let tier = tier.parse()?;
            e.set_tier(&Target::new(id), tier, "moved in the app")
        })
        .await
}

/// Adds the example memories (once), for a first look at an empty store; how many were added.
#[tauri::command]
#[specta::specta]
pub(crate) async fn load_examples(state: State<'_, AppState>) -> Result<f64, ApiError> {
    state.run(|e| Ok(e.demo()?.total() as f64)).await
}

/// Forgets the selected memories for good, all at once.
#[tauri::command]
#[specta::specta]
pub(crate) async fn forget_many(state: State<'_, AppState>, ids: Vec<String>) -> Result<ForgetManyReport, ApiError> {
    state.run(move |e| e.forget_many(&targets(ids))).await
}

/// Tags the selected memories; how many were tagged.
#[tauri::command]
#[specta::specta]
pub(crate) async fn tag_many(state: State<'_, AppState>, ids: Vec<String>, tag: String) -> Result<u32, ApiError> {
    state.run(move |e| Ok(e.tag_many(&targets(ids), &tag)? as u32)).await
}

/// Moves the selected memories to a tier; how many were moved.
#[tauri::command]
#[specta::specta]
pub(crate) async fn move_many(state: State<'_, AppState>, ids: Vec<String>, tier: String) -> Result<u32, ApiError> {
    state.run(move |e| Ok(e.set_tier_many(&targets(ids), tier.parse()?, "moved in the app")? as u32)).await
}

fn targets(ids: Vec<String>) -> Vec<Target> {
    ids.into_iter().map(Target::new).collect()
}
