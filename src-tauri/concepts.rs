//! The concepts screen's commands: the concepts compaction formed, one with its members, a
//! compaction pass as a job, summaries written by the on-device model as a job, and the compare
//! view (a question's prompt raw and compacted).

use strata_api::{
    ApiError, CompactParams, CompactReport, ComparedView, ConceptView, ContextParams, ExpandedConcept, WriteParams,
    WriteReport,
};
use strata_core::Filter;
use tauri::State;
use tauri::ipc::Channel;

use crate::jobs::{Job, JobProgress};
use crate::state::AppState;

/// Members a concept shows at most.
const MEMBERS_SHOWN: usize = 200;

/// Every concept, the largest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn concepts(state: State<'_, AppState>) -> Result<Vec<ConceptView>, ApiError> {
    state.run(|e| e.concepts()).await
}

/// One concept (by id or key) with its members, earliest first.
#[tauri::command]
#[specta::specta]
pub(crate) async fn concept(state: State<'_, AppState>, id: String) -> Result<ExpandedConcept, ApiError> {
    state.run(move |e| e.expand_concept(&id, MEMBERS_SHOWN)).await
}

/// Groups related memories into concepts — everything again (`full`), or only new memories
/// into the concepts there are — with progress; a stopped pass writes nothing.
#[tauri::command]
#[specta::specta]
pub(crate) async fn compact(
    state: State<'_, AppState>,
    job: String,
    full: bool,
    on_progress: Channel<JobProgress>,
) -> Result<CompactReport, ApiError> {
    let job = Job::start(&state.jobs, job, on_progress)?;
    state
        .run_apart(move |e| {
            let params = CompactParams { full, ..CompactParams::default() };
            let stop = job.stop_flag();
            let stopped = "grouping was stopped; nothing changed";
            let job = std::cell::RefCell::new(job);
            e.compact_seeing(
                &params,
                &mut |words| job.borrow_mut().stage(words),
                &mut |d, t| job.borrow_mut().tick(d, t, stopped),
                &stop,
            )
        })
        .await
}

/// Has the on-device model chosen for background work (Settings → On-device models, "Use for
/// facts") write the concepts' summaries, with progress; stopping keeps the ones written.
#[tauri::command]
#[specta::specta]
pub(crate) async fn write_summaries(
    state: State<'_, AppState>,
    job: String,
    on_progress: Channel<JobProgress>,
) -> Result<WriteReport, ApiError> {
    let model = state.extraction_model()?;
    let mut job = Job::start(&state.jobs, job, on_progress)?;
    state
        .run_apart(move |e| {
            let stop = job.stop_flag();
            let stopped = "writing summaries was stopped; the ones written stay";
            e.write_summaries(model.as_ref(), &WriteParams::default(), &mut |d, t| job.tick(d, t, stopped), &stop)
        })
        .await
}

/// The prompt `question` gets for `model` within `budget`, from the memories as they are and
/// with concepts standing for their members.
#[tauri::command]
#[specta::specta]
pub(crate) async fn compare_contexts(
    state: State<'_, AppState>,
    question: String,
    model: String,
    budget: u32,
) -> Result<ComparedView, ApiError> {
    state
        .run(move |e| {
            e.compare_contexts(ContextParams {
                model,
                message: question,
                system: None,
                history: vec![],
                history_summary: None,
                budget: Some(budget as usize),
                filter: Filter::default(),
                placement: None,
                concepts: None,
                without_past_answers: false,
                datasets: vec![],
            })
        })
        .await
}
