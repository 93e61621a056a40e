//! The commands the UI calls: a few lines each, over `strata-api`.

use strata_api::dto::{EventView, MemoryView, PageView, RecallView};
use strata_api::forms::{EditForm, FilterForm, MemoryForm};
use strata_api::{ApiError, AskParams, ChatChoice, ChatTurnView, ErrorCode, ForgetReport, Target};
use strata_core::Filter;
use tauri::State;
use tauri::ipc::Channel;

use crate::state::AppState;

/// A page of memories, newest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn list_memories(
    state: State<'_, AppState>,
    filter: FilterForm,
    limit: u32,
    cursor: Option<String>,
) -> Result<PageView, ApiError> {
    state.run(move |e| e.list(filter.filter()?, limit as usize, cursor.as_deref())).await
}

/// Hybrid recall, each result with why it was recalled.
#[tauri::command]
#[specta::specta]
pub(crate) async fn recall(
    state: State<'_, AppState>,
    query: String,
    filter: FilterForm,
    limit: u32,
) -> Result<Vec<RecallView>, ApiError> {
    state.run(move |e| e.recall(&query, filter.filter()?, limit as usize)).await
}

/// One memory by id or key.
#[tauri::command]
#[specta::specta]
pub(crate) async fn get_memory(state: State<'_, AppState>, id: String) -> Result<MemoryView, ApiError> {
    state.run(move |e| e.get(&Target::new(id), None)).await
}

/// A memory as it was just after the event numbered `seq` (the history's "as of" view).
#[tauri::command]
#[specta::specta]
pub(crate) async fn memory_as_of(state: State<'_, AppState>, id: String, seq: f64) -> Result<MemoryView, ApiError> {
    state.run(move |e| e.get(&Target::new(id), Some(strata_core::AsOf::Seq(seq as i64)))).await
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

/// The chat choice that names the on-device model.
pub(crate) const ON_DEVICE: &str = "on-device";

/// One message of the conversation so far.
#[derive(Debug, Clone, serde::Deserialize, specta::Type)]
pub(crate) struct ChatMessage {
    /// `user` or `assistant`.
    role: String,
    /// What was said.
    content: String,
}

/// One memory-augmented turn with the chosen model (none or `on-device`: the on-device
/// model; else a provider, its key from the environment or the keychain): the answer streams
/// over `on_text` piece by piece; the exchange is remembered. `cancel_job(job)` stops the
/// answer where it is (`finish: "cancelled"`), and a stopped answer is not remembered.
#[tauri::command]
#[specta::specta]
pub(crate) async fn chat(
    state: State<'_, AppState>,
    job: String,
    question: String,
    history: Vec<ChatMessage>,
    model: Option<ChatChoice>,
    on_text: Channel<String>,
) -> Result<ChatTurnView, ApiError> {
    let model: std::sync::Arc<dyn strata_core::ChatModel> = match model.filter(|c| c.provider != ON_DEVICE) {
        None => state.chat_model()?,
        Some(c) => {
            let config = strata_providers::ProviderConfig {
                provider: c.provider,
                model: c.model.trim().to_string(),
                base_url: c.base_url.map(|u| u.trim().to_string()).filter(|u| !u.is_empty()),
                key: None,
            };
            tauri::async_runtime::spawn_blocking(move || strata_providers::open(&config))
                .await
                .map_err(|e| ApiError::new(ErrorCode::Internal, format!("cannot open the provider: {e}")))??
                .into()
        }
    };
    let stop = crate::jobs::Stop::register(&state, job)?;
    state
        .run(move |e| {
            let history = history
                .into_iter()
                .map(|m| match m.role.as_str() {
                    "assistant" => strata_core::Message::assistant(m.content),
                    _ => strata_core::Message::user(m.content),
                })
                .collect();
            let params = AskParams {
                question,
                system: None,
                history,
                budget: None,
                filter: Filter::default(),
                max_tokens: Some(160),
                session_id: None,
                record: true,
            };
            e.chat_turn(
                params,
                model.as_ref(),
                &mut |piece| {
                    let _ = on_text.send(piece.to_string());
                },
                stop.flag(),
            )
        })
        .await
}
