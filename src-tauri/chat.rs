//! The chat screen's commands: a memory-augmented turn in a conversation, the conversations
//! kept (read back from the store), and marking an answer wrong.

use strata_api::conversations::check_conversation_id;
use strata_api::{
    ApiError, ApiResult, AskParams, ChatChoice, ChatTurnView, ConversationTurnView, ConversationView, ErrorCode, Target,
};
use strata_core::Filter;
use tauri::State;
use tauri::ipc::Channel;

use crate::state::AppState;

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

/// Who answers and from what: the model (none: the on-device one) and the person's files
/// (datasets) the answer may draw on.
#[derive(Debug, Clone, serde::Deserialize, specta::Type)]
pub(crate) struct TurnChoice {
    model: Option<ChatChoice>,
    datasets: Vec<String>,
}

/// What an answer under way tells the window.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub(crate) enum ChatEvent {
    /// The memories found for the question, before the model's first word.
    Found(Vec<strata_api::InjectedView>),
    /// A piece of the answer.
    Text(String),
}

/// One memory-augmented turn with the chosen model (none or `on-device`: the on-device
/// model; else a provider, its key from the environment or the keychain): the answer streams
/// over `on_event` piece by piece, after the memories found ([`ChatEvent`]); the exchange is remembered in `conversation`. `cancel_job(job)` stops the
/// answer where it is (`finish: "cancelled"`), and a stopped answer is not remembered.
#[tauri::command]
#[specta::specta]
pub(crate) async fn chat(
    state: State<'_, AppState>,
    job: String,
    conversation: String,
    question: String,
    history: Vec<ChatMessage>,
    choice: TurnChoice,
    on_event: Channel<ChatEvent>,
) -> Result<ChatTurnView, ApiError> {
    let TurnChoice { model, datasets } = choice;
    state.activity.used();
    let model = match model.filter(|c| c.provider != ON_DEVICE) {
        None => state.chat_model().await?,
        Some(c) => open_provider(c).await?,
    };
    check_conversation_id(&conversation)?;
    let stop = crate::jobs::Stop::register(&state.jobs, job)?;
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
                session_id: Some(conversation),
                record: true,
                datasets,
            };
            e.chat_turn(
                params,
                model.as_ref(),
                &mut |found| {
                    let _ = on_event.send(ChatEvent::Found(found));
                },
                &mut |piece| {
                    let _ = on_event.send(ChatEvent::Text(piece.to_string()));
                },
                stop.flag(),
            )
        })
        .await
}

/// A provider's model, its key from the environment or the keychain.
pub(crate) async fn open_provider(c: ChatChoice) -> Result<std::sync::Arc<dyn strata_core::ChatModel>, ApiError> {
    let base_url = c.base_url.map(|u| u.trim().to_string()).filter(|u| !u.is_empty());
    let model = Some(c.model.trim().to_string()).filter(|m| !m.is_empty());
    // A provider Strata serves, or one of the person's chat models: the registry opens both.
    let open = move || -> ApiResult<Box<dyn strata_core::ChatModel>> {
        Ok(strata_plugins::open::chat_model(&strata_api::Settings::load()?, &c.provider, model, base_url, None)?)
    };
    Ok(tauri::async_runtime::spawn_blocking(open)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("cannot open the provider: {e}")))??
        .into())
}

/// Whether a chat choice names the on-device model.
pub(crate) fn on_device(choice: &Option<ChatChoice>) -> bool {
    choice.as_ref().is_none_or(|c| c.provider == ON_DEVICE)
}

/// The conversations kept, the one used last first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn conversations(state: State<'_, AppState>) -> Result<Vec<ConversationView>, ApiError> {
    state.run(|e| e.conversations(200)).await
}

/// A kept conversation's turns, oldest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn conversation(
    state: State<'_, AppState>,
    id: String,
) -> Result<Vec<ConversationTurnView>, ApiError> {
    state.run(move |e| e.conversation(&id)).await
}

/// Marks an answer wrong: it is no longer recalled or given to a model, but still shown.
#[tauri::command]
#[specta::specta]
pub(crate) async fn mark_answer_wrong(
    state: State<'_, AppState>,
    id: String,
) -> Result<ConversationTurnView, ApiError> {
    state.run(move |e| e.mark_answer_wrong(&Target::new(id))).await
}
