//! Embedding off the write path: a background worker that embeds new and changed memories in
//! batches on its own connection (a memory is keyword-searchable at once and vector-searchable
//! once embedded), and the re-embedding job with progress and cancellation (after a model
//! change, or to catch up a large import in the foreground).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::Serialize;
use strata_core::{Embedder, Store};

use crate::error::{ApiError, ApiResult, ErrorCode};

/// Memories embedded per transaction.
pub const BATCH: usize = 64;

/// Progress of an embedding job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EmbedProgress {
    /// Embedded so far by this job.
    pub done: u64,
    /// What the job set out to embed (memories without a vector from this model at the start).
    pub total: u64,
}

/// Embeds every memory that has no vector from `embedder`'s model yet, a batch per
/// transaction, calling `progress` after each batch. Stops early (with an `interrupted` error)
/// when `cancel` is set; what was embedded stays, and running it again resumes.
pub fn embed_all(
    store: &mut Store,
    embedder: &dyn Embedder,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(EmbedProgress),
) -> ApiResult<EmbedProgress> {
    fill(store, embedder, true, cancel, progress)
}

/// [`embed_all`], the vectors kept without moving search to this model (`index` false: a
/// switch of embedders fills the new one's first).
pub(crate) fn fill(
    store: &mut Store,
    embedder: &dyn Embedder,
    index: bool,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(EmbedProgress),
) -> ApiResult<EmbedProgress> {
    let total = store.pending_embeddings(embedder)?;
    let mut p = EmbedProgress { done: 0, total };
    progress(p);
    loop {
        if cancel.load(Ordering::Relaxed) {
            return Err(ApiError::new(
                ErrorCode::Cancelled,
                format!("embedding stopped after {} of {}; run it again to resume", p.done, p.total),
            ));
        }
        let n = if index { store.embed_pending(embedder, BATCH)? } else { store.embed_ahead(embedder, BATCH)? };
        if n == 0 {
            return Ok(p);
        }
        p.done += n as u64;
        // Memories written meanwhile are part of the job too.
        p.total = p.total.max(p.done);
        progress(p);
    }
}

/// Vectors kept of one model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct VectorModelView {
    /// The model's id (`all-MiniLM-L6-v2`, `ollama:nomic-embed-text@…`).
    pub model: String,
    /// Memories with a vector from it.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub vectors: u64,
    /// Search uses it now.
    pub searched: bool,
}

impl crate::Engine {
    /// Re-embeds the store (memories, then the datasets' passages) with `to` while search stays
    /// on the embedder in use, then moves search (and the background worker) over to it at once. Memories already embedded by `to`
    /// (a stopped switch, or switching back to an embedder used before) cost nothing. Stopped
    /// by `cancel` with what was done kept; running it again resumes.
    pub fn switch_embedder(
        &mut self,
        to: std::sync::Arc<dyn Embedder>,
        cancel: &AtomicBool,
        progress: &mut dyn FnMut(EmbedProgress),
    ) -> ApiResult<EmbedProgress> {
        let done = fill(self.store(), to.as_ref(), false, cancel, progress)?;
        // The datasets' passages too, so that search over them moves over with the memories'.
        let passages = self.embed_passages_with(to.as_ref(), cancel, &mut |d, t| {
            progress(EmbedProgress { done: done.done + d, total: done.total + t })
        })?;
        if passages.pending > 0 {
            return Err(ApiError::new(
                ErrorCode::Cancelled,
                format!("stopped with {} passages left to embed; run it again to resume", passages.pending),
            ));
        }
        self.store().search_with(to.as_ref())?;
        let background = self.has_worker();
        self.use_embedder(to, background)?;
        Ok(done)
    }

    /// Erases the vectors `model` made, memories' and passages' (an embedder the person no
    /// longer keeps): how many memories had one. The model search uses is refused.
    pub fn drop_vectors(&mut self, model: &str) -> ApiResult<u64> {
        Ok(self.store().drop_vectors(model)?)
    }

    /// The models whose vectors the store keeps, the one search uses marked.
    pub fn vector_models(&self) -> ApiResult<Vec<VectorModelView>> {
        let searched = self.store_view().searched_model()?;
        Ok(self
            .store_view()
            .vectors_by_model()?
            .into_iter()
            .map(|(model, vectors)| VectorModelView {
                searched: searched.as_deref() == Some(model.as_str()),
                model,
                vectors,
            })
            .collect())
    }
}

#[derive(Debug, Default)]
struct State {
    /// Wake-ups asked for (each write that may need embedding is one).
    requested: u64,
    /// The wake-ups that a finished pass has covered (a pass covers those asked before it began).
    completed: u64,
    /// Embedded by the worker since it started.
    embedded: u64,
    /// The last pass's error, if it failed (the worker retries on the next wake-up).
    error: Option<String>,
}

/// A thread that embeds pending memories of one database whenever it is woken.
pub struct EmbedWorker {
    wake: Sender<bool>,
    state: Arc<(Mutex<State>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for EmbedWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedWorker").finish_non_exhaustive()
    }
}

/// How often an idle worker looks for memories written by other processes.
const POLL: Duration = Duration::from_secs(5);

impl EmbedWorker {
    /// Starts a worker on `store` (a connection of its own to the database); it makes a first
    /// pass at once.
    pub fn start(mut store: Store, embedder: Arc<dyn Embedder>) -> ApiResult<EmbedWorker> {
        let (wake, rx) = channel::<bool>();
        let state = Arc::new((Mutex::new(State { requested: 1, ..State::default() }), Condvar::new()));
        let shared = state.clone();
        let handle = std::thread::Builder::new()
            .name("strata-embed".into())
            .spawn(move || run(&mut store, embedder.as_ref(), &rx, &shared))
            .map_err(|e| ApiError::new(ErrorCode::Io, format!("cannot start the embedding worker: {e}")))?;
        Ok(EmbedWorker { wake, state, handle: Some(handle) })
    }

    /// Tells the worker that there is new work.
    pub fn wake(&self) {
        lock(&self.state.0).requested += 1;
        let _ = self.wake.send(true);
    }

    /// Waits until everything written before the call is embedded (or `timeout` passes).
    /// Returns whether it got there, or the error of the worker's last pass.
    pub fn wait_idle(&self, timeout: Duration) -> ApiResult<bool> {
        let (lock_, cv) = &*self.state;
        let guard = lock(lock_);
        let target = guard.requested;
        let (guard, _) = cv
            .wait_timeout_while(guard, timeout, |s| s.completed < target && s.error.is_none())
            .unwrap_or_else(|p| p.into_inner());
        match &guard.error {
            Some(e) => Err(ApiError::new(ErrorCode::Model, e.clone())),
            None => Ok(guard.completed >= target),
        }
    }

    /// Memories embedded since the worker started.
    pub fn embedded(&self) -> u64 {
        lock(&self.state.0).embedded
    }
}

impl Drop for EmbedWorker {
    fn drop(&mut self) {
        let _ = self.wake.send(false);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn lock(m: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn run(store: &mut Store, embedder: &dyn Embedder, rx: &Receiver<bool>, state: &(Mutex<State>, Condvar)) {
    loop {
        // A pass: embed until nothing is pending (or an error).
        let target = lock(&state.0).requested;
        let outcome = loop {
            match store.embed_pending(embedder, BATCH) {
                Ok(0) => break Ok(()),
                Ok(n) => lock(&state.0).embedded += n as u64,
                Err(e) => break Err(e.to_string()),
            }
            // Stop promptly when the engine closes mid-pass.
            if let Ok(false) = rx.try_recv() {
                return;
            }
        };
        {
            let mut s = lock(&state.0);
            match outcome {
                Ok(()) => {
                    s.completed = s.completed.max(target);
                    s.error = None;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "background embedding failed; retrying on the next write");
                    s.error = Some(e);
                }
            }
            state.1.notify_all();
        }
        match rx.recv_timeout(POLL) {
            Ok(true) | Err(RecvTimeoutError::Timeout) => {}
            Ok(false) | Err(RecvTimeoutError::Disconnected) => return,
        }
        // Coalesce a burst of wake-ups into one pass.
        while let Ok(msg) = rx.try_recv() {
            if !msg {
                return;
            }
        }
    }
}
