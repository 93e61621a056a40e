//! An answering adapter (`strata bench answer-adapter`, issue 18): Strata's LoRA engine trained
//! to answer from the memories in its prompt, and to say "I don't know" where they do not say.
//!
//! The examples are the product's own prompts: each household of the training set
//! (`scripts/make_answer_training.py`; no one in it is named in the evaluation's set) is
//! imported into a fresh store, and each question is asked through
//! [`strata_api::Engine::ask`] with a model that keeps the prompt it is handed instead of
//! answering (`answerbench`'s `Relaid` with a `kept` slot). The prompt, then the question's
//! answer to learn, is one training example. `strata bench answers --adapter` measures the result
//! on the evaluation's set.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;
use strata_api::{ApiError, ApiResult, AskParams, ErrorCode};
use strata_core::Embedder;
use strata_models::LocalChat;
use strata_train::{Tokenized, TrainConfig};

use crate::answerbench::{Layout, Relaid, fill, load_questions};

/// The longest example trained on, in tokens: a prompt at the on-device model's budget with
/// its answer fits well within it.
pub const MAX_TOKENS: usize = 1024;

/// The folder of the shipped training set (`scripts/make_answer_training.py` wrote it).
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join("answer-training")
}

/// What a training run did.
#[derive(Debug, Clone, Serialize)]
pub struct TrainReport {
    /// Households the examples came from.
    pub households: usize,
    /// Training examples (one per question).
    pub examples: usize,
    /// Of them, questions whose memories do not hold the answer.
    pub dont_know: usize,
    /// Mean tokens per example (prompt and answer).
    pub mean_tokens: f64,
    /// The memory budget the prompts were assembled with (`None`: the model's own).
    pub budget: Option<usize>,
    /// The hyperparameters.
    pub config: TrainConfig,
    /// Loss per optimizer step.
    pub losses: Vec<f32>,
    /// Seconds spent training.
    pub seconds: f64,
    /// Perplexity of general prose the adapter never saw (`strata_train::eval::GENERAL_TEXT`)
    /// without the adapter and with it: what the adapter costs the model elsewhere.
    pub perplexity: (f64, f64),
    /// Where the adapter was written.
    pub adapter: PathBuf,
}

/// The households of a training set: the sub-folders of `data` holding memories.json and
/// questions.json, by name.
fn households(data: &Path) -> ApiResult<Vec<PathBuf>> {
    let unreadable = |e: std::io::Error| ApiError::new(ErrorCode::Io, format!("cannot read {}: {e}", data.display()));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(data)
        .map_err(unreadable)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("memories.json").is_file() && p.join("questions.json").is_file())
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidInput,
            format!("{} has no household folders (each with memories.json and questions.json)", data.display()),
        ));
    }
    Ok(dirs)
}

/// The training examples of the set in `data`: each question's prompt as the product
/// assembles it with `budget`, then its answer.
pub fn examples(
    data: &Path,
    workdir: &Path,
    embedder: Arc<dyn Embedder>,
    chat: &LocalChat,
    budget: Option<usize>,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<(Vec<Tokenized>, usize, usize)> {
    let keeper = Relaid { inner: chat, layout: Layout::Product, kept: Some(Mutex::new(None)) };
    let dirs = households(data)?;
    let (mut out, mut dont_know) = (Vec::new(), 0);
    for (h, dir) in dirs.iter().enumerate() {
        let mut engine =
            fill(&workdir.join(format!("household-{h}.db")), &dir.join("memories.json"), None, embedder.clone())?;
        for q in load_questions(&dir.join("questions.json"))? {
            let Some(answer) = q.answer.as_deref() else {
                return Err(ApiError::new(
                    ErrorCode::InvalidInput,
                    format!("{}: question {} has no answer to learn", dir.display(), q.id),
                ));
            };
            let params = AskParams { question: q.question.clone(), budget, record: false, ..Default::default() };
            engine.ask(params, &keeper, &mut |_| {}, &AtomicBool::new(false))?;
            let kept =
                keeper.kept.as_ref().and_then(|k| k.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take());
            let messages = kept.ok_or_else(|| ApiError::new(ErrorCode::Model, "the prompt was not kept"))?;
            let (ids, start) = chat.answer_ids(&messages, answer)?;
            out.push(Tokenized { ids, start });
            dont_know += usize::from(q.category == crate::answerbench::Category::NotInMemory);
        }
        progress(&format!("household {}/{}: {} examples so far", h + 1, dirs.len(), out.len()));
    }
    Ok((out, dirs.len(), dont_know))
}

/// Builds the examples of `data`, trains an adapter on them with `config` and writes it to
/// `out` (PEFT files).
#[allow(clippy::too_many_arguments)] // the set, where to work, the two models, the run's settings
pub fn run(
    data: &Path,
    workdir: &Path,
    embedder: Arc<dyn Embedder>,
    chat: &LocalChat,
    budget: Option<usize>,
    config: &TrainConfig,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<TrainReport> {
    let (examples, households, dont_know) = examples(data, workdir, embedder, chat, budget, progress)?;
    let trained = train_adapter(&examples, workdir, chat, config, out, progress)?;
    Ok(TrainReport {
        households,
        examples: examples.len(),
        dont_know,
        mean_tokens: trained.mean_tokens,
        budget,
        config: config.clone(),
        losses: trained.losses,
        seconds: trained.seconds,
        perplexity: trained.perplexity,
        adapter: out.to_path_buf(),
    })
}

/// What [`train_adapter`] did.
#[derive(Debug, Clone)]
pub struct Trained {
    /// Mean tokens per example.
    pub mean_tokens: f64,
    /// Loss per optimizer step.
    pub losses: Vec<f32>,
    /// Seconds spent training.
    pub seconds: f64,
    /// General perplexity without the adapter and with it.
    pub perplexity: (f64, f64),
}

/// Trains an adapter of the on-device model on `examples` with `config`, writes it to `out`
/// (PEFT files) and measures what it costs the model on prose it never saw.
pub fn train_adapter(
    examples: &[Tokenized],
    workdir: &Path,
    chat: &LocalChat,
    config: &TrainConfig,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<Trained> {
    let mean_tokens = examples.iter().map(|e| e.ids.len()).sum::<usize>() as f64 / examples.len().max(1) as f64;
    let model = LocalChat::trained_file();
    let run = strata_train::train::Run {
        model: &model,
        base_name: chat.name(),
        examples,
        pad: 0,
        config,
        checkpoints: workdir.join("checkpoints"),
    };
    let started = Instant::now();
    let trained = run.train(&mut |p| progress(&p.to_string()), &AtomicBool::new(false))?;
    let seconds = started.elapsed().as_secs_f64();
    trained.adapter.save(out)?;
    let general = |c: &LocalChat| strata_train::eval::perplexity(c, strata_train::eval::GENERAL_TEXT, 256);
    let base = general(chat)?;
    chat.set_adapter(Some(&trained.adapter))?;
    let adapted = general(chat);
    chat.set_adapter(None)?;
    Ok(Trained { mean_tokens, losses: trained.losses, seconds, perplexity: (base, adapted?) })
}
