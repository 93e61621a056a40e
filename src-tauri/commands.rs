//! The commands the UI calls: a few lines each, over `strata-api`.

use strata_api::dto::{EventView, ImportView, MemoryView, PageView, RecallView};
use strata_api::forms::{EditForm, FilterForm, MemoryForm};
use strata_api::{ApiError, AskParams, ChatTurnView, ForgetReport, Target};
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
            let now = e.store_view().clock().now();
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

/// Imports a file's text (a seed-002 document, a backup, or a reference-server memory.json;
/// the format is detected) in one transaction: a bad file changes nothing.
#[tauri::command]
#[specta::specta]
pub(crate) async fn import_text(
    state: State<'_, AppState>,
    name: String,
    text: String,
) -> Result<ImportView, ApiError> {
    state
        .run(move |e| {
            let (format, imported) = e.import(&name, &mut text.as_bytes(), None)?;
            Ok(ImportView { format, imported })
        })
        .await
}

/// One message of the conversation so far.
#[derive(Debug, Clone, serde::Deserialize, specta::Type)]
pub(crate) struct ChatMessage {
    /// `user` or `assistant`.
    role: String,
    /// What was said.
    content: String,
}

/// One memory-augmented turn with the on-device model: the answer streams over `on_text`
/// piece by piece; the exchange is remembered.
#[tauri::command]
#[specta::specta]
pub(crate) async fn chat(
    state: State<'_, AppState>,
    question: String,
    history: Vec<ChatMessage>,
    on_text: Channel<String>,
) -> Result<ChatTurnView, ApiError> {
    let model = state.chat_model()?;
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
            let cancel = std::sync::atomic::AtomicBool::new(false);
            e.chat_turn(
                params,
                model.as_ref(),
                &mut |piece| {
                    let _ = on_text.send(piece.to_string());
                },
                &cancel,
            )
        })
        .await
}

/// What Settings shows: where things are, and the MCP server's state.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct SettingsView {
    /// The database file.
    database: String,
    /// The folder the on-device models are read from.
    models: String,
    /// Whether the embedding model is there.
    embedder_present: bool,
    /// Whether the chat model is there.
    chat_model_present: bool,
    /// The MCP server, when running.
    mcp: Option<McpView>,
}

/// A running MCP server, for clients' configuration.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct McpView {
    /// The address clients connect to.
    url: String,
    /// The bearer token they send.
    token: String,
}

async fn settings_view(state: &AppState) -> SettingsView {
    let models = strata_models::models_dir();
    let mcp = state.mcp.lock().await.as_ref().map(|m| McpView {
        url: format!("http://{}{}", m.running.addr, strata_mcp::http::PATH),
        token: m.token.clone(),
    });
    SettingsView {
        database: state.db_path.display().to_string(),
        embedder_present: models.join(strata_models::EMBEDDER_DIR).join("model.safetensors").exists(),
        chat_model_present: models.join(strata_models::CHAT_DIR).join(strata_models::CHAT_FILE).exists(),
        models: models.display().to_string(),
        mcp,
    }
}

/// Where things are, and whether the MCP server runs.
#[tauri::command]
#[specta::specta]
pub(crate) async fn settings(state: State<'_, AppState>) -> Result<SettingsView, ApiError> {
    Ok(settings_view(&state).await)
}

/// Switches the MCP server (streamable HTTP on 127.0.0.1, a new token each start) on or off.
#[tauri::command]
#[specta::specta]
pub(crate) async fn set_mcp(state: State<'_, AppState>, on: bool, port: u16) -> Result<SettingsView, ApiError> {
    let mut mcp = state.mcp.lock().await;
    if let Some(old) = mcp.take() {
        let _ = old.running.stop().await;
    }
    if on {
        let server = strata_mcp::StrataMcp::new(state.engine_for_mcp()?, strata_mcp::McpSettings::default());
        let token = strata_mcp::http::new_token();
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let running = strata_mcp::http::serve(server, addr, token.clone()).await.map_err(|e| {
            ApiError::new(strata_api::ErrorCode::Io, format!("cannot start the MCP server on {addr}: {e}"))
        })?;
        *mcp = Some(crate::state::McpServer { running, token });
    }
    drop(mcp);
    Ok(settings_view(&state).await)
}
