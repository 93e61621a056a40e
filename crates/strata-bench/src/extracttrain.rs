//! An extraction adapter (`strata bench extract-adapter`, issue 20's second option): Strata's
//! LoRA engine trained to answer extraction's two prompts the way they ask, on invented
//! conversations and merge questions (`scripts/make_extraction_training.py`; no name or value
//! in them occurs in the evaluation sets). Each example is the product's own prompt, built by
//! the functions extraction builds it with (`strata_api::extract::reply`), then the reply to
//! learn. `strata bench extract --adapter DIR` measures the result.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use strata_api::extract::reply;
use strata_api::{ApiError, ApiResult, ErrorCode};
use strata_core::Message;
use strata_models::LocalChat;
use strata_train::{Tokenized, TrainConfig};

use crate::answertrain::train_adapter;

/// The longest example trained on, in tokens.
pub const MAX_TOKENS: usize = 1024;

/// The shipped training set (`scripts/make_extraction_training.py` wrote it).
pub fn data_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join("extraction-training").join("examples.json")
}

/// A turn of a training conversation.
#[derive(Debug, Clone, Deserialize)]
pub struct TurnExample {
    /// Who spoke.
    pub speaker: String,
    /// What they said.
    pub text: String,
}

/// A conversation and the extraction reply to learn.
#[derive(Debug, Clone, Deserialize)]
pub struct ConversationExample {
    /// Its name in the set.
    pub id: String,
    /// The conversation's date as the prompt gives it ("Thursday 2025-01-23").
    pub date: String,
    /// Subjects already known: name and description.
    pub known: Vec<(String, String)>,
    /// The turns.
    pub turns: Vec<TurnExample>,
    /// The reply (JSON in the extraction schema).
    pub answer: String,
}

/// A merge question and the decisions to learn.
#[derive(Debug, Clone, Deserialize)]
pub struct MergeExample {
    /// Its name in the set.
    pub id: String,
    /// The subject.
    pub subject: String,
    /// The known facts.
    pub known: Vec<String>,
    /// The new facts.
    pub new: Vec<String>,
    /// The reply (JSON in the merge schema).
    pub answer: String,
}

/// The training set.
#[derive(Debug, Clone, Deserialize)]
pub struct TrainingSet {
    /// Conversations.
    pub extract: Vec<ConversationExample>,
    /// Merge questions.
    pub merge: Vec<MergeExample>,
}

/// Reads a training set, checking that every reply reads as the product reads it.
pub fn read_set(file: &Path) -> ApiResult<TrainingSet> {
    let bytes = std::fs::read(file)
        .map_err(|e| ApiError::new(ErrorCode::Io, format!("cannot read {}: {e}", file.display())))?;
    let set: TrainingSet = serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::new(ErrorCode::InvalidInput, format!("{} is not an extraction training set: {e}", file.display()))
    })?;
    let bad = |id: &str, e: reply::Malformed| {
        ApiError::new(
            ErrorCode::InvalidInput,
            format!("{}: {id}: the reply to learn does not read: {e}", file.display()),
        )
    };
    for c in &set.extract {
        reply::read_extraction(&text_reply(&c.answer), c.turns.len()).map_err(|e| bad(&c.id, e))?;
    }
    for m in &set.merge {
        reply::read_verdicts(&text_reply(&m.answer), m.new.len(), m.known.len()).map_err(|e| bad(&m.id, e))?;
    }
    Ok(set)
}

fn text_reply(content: &str) -> strata_core::ChatResponse {
    strata_core::ChatResponse { content: content.to_string(), ..Default::default() }
}

/// The prompt extraction sends for a conversation.
pub fn conversation_prompt(c: &ConversationExample) -> Vec<Message> {
    let turns: Vec<reply::Turn> =
        c.turns.iter().map(|t| reply::Turn { speaker: t.speaker.clone(), text: t.text.clone() }).collect();
    vec![Message::system(reply::extract_system(&c.date, &c.known)), Message::user(reply::conversation_text(&turns))]
}

/// The prompt extraction sends for a merge question.
pub fn merge_prompt(m: &MergeExample) -> Vec<Message> {
    vec![Message::system(reply::MERGE_SYSTEM), Message::user(reply::merge_text(&m.subject, &m.known, &m.new))]
}

/// What a training run did.
#[derive(Debug, Clone, Serialize)]
pub struct ExtractTrainReport {
    /// Conversation examples.
    pub conversations: usize,
    /// Merge examples.
    pub merges: usize,
    /// Mean tokens per example (prompt and reply).
    pub mean_tokens: f64,
    /// The hyperparameters.
    pub config: TrainConfig,
    /// Loss per optimizer step.
    pub losses: Vec<f32>,
    /// Seconds spent training.
    pub seconds: f64,
    /// General perplexity without the adapter and with it.
    pub perplexity: (f64, f64),
    /// Where the adapter was written.
    pub adapter: PathBuf,
}

/// Trains an extraction adapter on the set in `file` with `config`, written to `out`.
pub fn run(
    file: &Path,
    workdir: &Path,
    chat: &LocalChat,
    config: &TrainConfig,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<ExtractTrainReport> {
    let set = read_set(file)?;
    let mut examples = Vec::new();
    let prompts = set
        .extract
        .iter()
        .map(|c| (conversation_prompt(c), c.answer.as_str()))
        .chain(set.merge.iter().map(|m| (merge_prompt(m), m.answer.as_str())));
    for (messages, answer) in prompts {
        let (ids, start) = chat.answer_ids(&messages, answer)?;
        examples.push(Tokenized { ids, start });
    }
    progress(&format!("{} examples", examples.len()));
    let trained = train_adapter(&examples, workdir, chat, config, out, progress)?;
    Ok(ExtractTrainReport {
        conversations: set.extract.len(),
        merges: set.merge.len(),
        mean_tokens: trained.mean_tokens,
        config: config.clone(),
        losses: trained.losses,
        seconds: trained.seconds,
        perplexity: trained.perplexity,
        adapter: out.to_path_buf(),
    })
}
