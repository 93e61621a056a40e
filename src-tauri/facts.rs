//! The Facts screen's commands: extraction after a chat turn (a job with progress and Stop),
//! the proposals waiting for review (accepted as they are or edited, or rejected), and what is
//! known about each subject.

use strata_api::{ApiError, ChatChoice, DecisionView, DocumentView, ExtractParams, Extractor, Settings};
use tauri::State;
use tauri::ipc::Channel;

use crate::jobs::{Job, JobProgress};
use crate::state::AppState;

/// What reading a conversation for facts did.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub(crate) struct ExtractionView {
    /// False when the settings turn extraction after a chat off (nothing was read).
    on: bool,
    /// Turns read.
    turns: u32,
    /// Facts waiting for review.
    proposed: u32,
    /// Facts written at once.
    applied: u32,
}

/// One proposal to accept, with the fact reworded by the person when they edited it.
#[derive(Debug, Clone, serde::Deserialize, specta::Type)]
pub(crate) struct Acceptance {
    /// The proposal's id.
    id: String,
    /// The fact as edited; none: as proposed.
    fact: Option<String>,
}

impl ExtractionView {
    /// Nothing read: the settings turn extraction after chats off.
    fn off() -> ExtractionView {
        ExtractionView { on: false, turns: 0, proposed: 0, applied: 0 }
    }

    /// Adds what one reading did.
    fn add(&mut self, report: &strata_api::ExtractReport) {
        let count = |status: &str| report.decisions.iter().filter(|d| d.status == status).count() as u32;
        self.turns += report.turns as u32;
        self.proposed += count("proposed");
        self.applied += count("applied");
    }
}

/// What reads conversations for facts, as the settings say (none when they turn extraction
/// after chats off): the chat's model (the on-device one in an instance of its own) and
/// whether facts wait for review.
async fn extractor_for(state: &AppState, model: Option<ChatChoice>) -> Result<Option<Extractor>, ApiError> {
    let settings = Settings::load()?.extraction;
    if !settings.after_exchanges {
        return Ok(None);
    }
    let model: std::sync::Arc<dyn strata_core::ChatModel> = if crate::chat::on_device(&model) {
        state.extraction_model()?
    } else {
        crate::chat::open_provider(model.unwrap_or_default()).await?
    };
    Ok(Some(Extractor { review: settings.review_for(model.as_ref()), model }))
}

/// Reads the turns of `conversation` not read yet for facts, with the chat's model (the
/// on-device one in an instance of its own), applying them or keeping them for review as the
/// settings say; reports progress by part and stops on `cancel_job(job)`.
#[tauri::command]
#[specta::specta]
pub(crate) async fn extract_conversation(
    state: State<'_, AppState>,
    job: String,
    conversation: String,
    model: Option<ChatChoice>,
    on_progress: Channel<JobProgress>,
) -> Result<ExtractionView, ApiError> {
    strata_api::conversations::check_conversation_id(&conversation)?;
    let Some(extractor) = extractor_for(&state, model).await? else { return Ok(ExtractionView::off()) };
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    let report = state
        .run_apart(move |e| {
            let params =
                ExtractParams { session_id: Some(conversation), review: extractor.review, ..Default::default() };
            let stop = job.stop_flag();
            let stopped = "reading the conversation for facts was stopped; it goes on after the next message";
            e.extract(&params, extractor.model.as_ref(), &mut |d, t| job.tick(d, t, stopped), &stop)
        })
        .await?;
    let mut view = ExtractionView { on: true, ..ExtractionView::off() };
    view.add(&report);
    Ok(view)
}

/// Reads imported conversations (`sessions`) for facts in the background with the chat's
/// model, one conversation after another, applying or proposing as the settings say; progress
/// by conversation, stopped by `cancel_job(job)`. What was read stays read: reading again goes
/// on where it stopped.
#[tauri::command]
#[specta::specta]
pub(crate) async fn read_imported_facts(
    state: State<'_, AppState>,
    job: String,
    sessions: Vec<String>,
    model: Option<ChatChoice>,
    on_progress: Channel<JobProgress>,
) -> Result<ExtractionView, ApiError> {
    let Some(Extractor { model, review }) = extractor_for(&state, model).await? else {
        return Ok(ExtractionView::off());
    };
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    state
        .run_apart(move |e| {
            let stop = job.stop_flag();
            let stopped = "reading the imported conversations was stopped; it goes on where it stopped next time";
            let mut view = ExtractionView { on: true, ..ExtractionView::off() };
            let total = sessions.len() as u64;
            for (i, session) in sessions.into_iter().enumerate() {
                job.stage(&format!("Conversation {} of {total}", i + 1));
                job.tick(i as u64, total, stopped)?;
                let params = ExtractParams { session_id: Some(session), review, ..Default::default() };
                view.add(&e.extract(&params, model.as_ref(), &mut |_, _| Ok(()), &stop)?);
            }
            job.tick(total, total, stopped)?;
            Ok(view)
        })
        .await
}

/// The facts waiting for review, oldest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn proposed_facts(state: State<'_, AppState>) -> Result<Vec<DecisionView>, ApiError> {
    state.run(|e| e.proposals()).await
}

/// Accepts proposals (all or none), each as proposed or as edited.
#[tauri::command]
#[specta::specta]
pub(crate) async fn accept_facts(
    state: State<'_, AppState>,
    accepted: Vec<Acceptance>,
) -> Result<Vec<DecisionView>, ApiError> {
    let items: Vec<(String, Option<String>)> = accepted.into_iter().map(|a| (a.id, a.fact)).collect();
    state.run(move |e| e.accept(&items)).await
}

/// Rejects proposals (all or none).
#[tauri::command]
#[specta::specta]
pub(crate) async fn reject_facts(state: State<'_, AppState>, ids: Vec<String>) -> Result<Vec<DecisionView>, ApiError> {
    state.run(move |e| e.reject(&ids)).await
}

/// What is known about each subject, with each fact's earlier values.
#[tauri::command]
#[specta::specta]
pub(crate) async fn known_facts(state: State<'_, AppState>) -> Result<Vec<DocumentView>, ApiError> {
    state.run(|e| e.documents()).await
}
