//! Strata's crystallization engine: important memories trained into a small LoRA adapter of the
//! on-device model (SmolLM2-135M-Instruct) with candle, kept only when it measurably helps.
//!
//! - [`data`]: training sets from memories (templates, held-out phrasings, provenance,
//!   validation) as JSON Lines.
//! - [`model`] and [`train`]: the frozen f32 model with trainable LoRA pairs; AdamW
//!   ([`optim`]) with warm-up and decay, accumulation, clipping, a seed; a job with progress,
//!   cancellation and resumable checkpoints.
//! - [`eval`]: the gate (held-out fact recall with, without and by retrieval; general
//!   perplexity within a margin).
//! - [`pipeline`]: a run from a set to a registered, evaluated adapter, recorded as it goes.
//! - [`schedule`]: the loop on a schedule — flag, wait for enough new facts, train, gate,
//!   promote (or ask) — yielding to the person, every look recorded.
//! - [`views`]: the front door every front end uses — runs, adapters, reports and training
//!   sets as shown, their wording, resuming a run, the daily check of the adapter in use.
//! - Adapters are saved in Hugging Face PEFT's layout ([`strata_models::adapter`]).
#![deny(missing_docs)]

pub mod data;
pub mod demo;
pub mod eval;
pub mod model;
pub mod optim;
pub mod pipeline;
pub mod schedule;
pub mod train;
pub mod views;

use std::sync::atomic::AtomicBool;

use strata_core::{Message, Result, Role};
use strata_models::{LocalChat, Sampling};

pub use data::{Dataset, Example, Kind, Problem, Split};
pub use eval::{Gate, Report};
pub use train::{Progress, Tokenized, TrainConfig, Trained};

/// The training set for `memories`: their examples, validated, plus `replay` general questions
/// answered by the base model itself.
pub fn dataset(chat: &LocalChat, memories: &[strata_core::Memory], config: &TrainConfig) -> Result<Dataset> {
    dataset_edited(chat, memories, &Default::default(), config)
}

/// [`dataset`] with a person's own examples for the memories in `edits` (by id).
pub fn dataset_edited(
    chat: &LocalChat,
    memories: &[strata_core::Memory],
    edits: &std::collections::BTreeMap<String, Vec<Example>>,
    config: &TrainConfig,
) -> Result<Dataset> {
    let count = |e: &Example| chat.example_ids(&e.question, &e.answer).map(|(ids, _)| ids.len());
    let mut set = Dataset::from_memories_edited(memories, edits, &count, config.max_tokens)?;
    for q in demo::REPLAY_QUESTIONS.iter().take(config.replay) {
        let messages = [Message::new(Role::User, *q)];
        let sampling = Sampling { max_tokens: 48, ..Sampling::default() };
        let g = chat.generate(&messages, sampling, &mut |_| {}, &AtomicBool::new(false))?;
        if g.finish != strata_models::Finish::Stop || g.text.trim().is_empty() {
            continue; // an answer cut short would teach the model to stop mid-sentence
        }
        set.examples.push(Example {
            question: q.to_string(),
            answer: g.text.trim().to_string(),
            kind: Kind::Replay,
            split: Split::Train,
            sources: Vec::new(),
            fact: None,
        });
    }
    if config.replay > 0 {
        for paragraph in REPLAY_TEXT.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
            set.examples.push(Example {
                question: String::new(),
                answer: paragraph.to_string(),
                kind: Kind::Replay,
                split: Split::Train,
                sources: Vec::new(),
                fact: None,
            });
        }
    }
    Ok(set)
}

/// General prose (not the evaluation's text) whose paragraphs are mixed into training as plain
/// language modelling, so the adapter keeps the model's general perplexity.
pub const REPLAY_TEXT: &str = include_str!("replay.txt");

/// The training examples of `set` in the model's chat template. Text replay examples (no
/// question) are plain text with every token scored.
pub fn tokenize(chat: &LocalChat, set: &Dataset) -> Result<Vec<Tokenized>> {
    set.train()
        .map(|e| {
            if e.kind == Kind::Replay && e.question.is_empty() {
                return chat.text_ids(&e.answer).map(|ids| Tokenized { ids, start: 1 });
            }
            chat.example_ids(&e.question, &e.answer).map(|(ids, start)| Tokenized { ids, start })
        })
        .collect()
}

/// The SHA-256 of a file (the base model's identity in the adapter registry).
pub fn file_hash(path: &std::path::Path) -> Result<String> {
    use sha2::Digest;
    let mut f =
        std::fs::File::open(path).map_err(|e| strata_core::Error::io(format!("cannot read {}", path.display()), e))?;
    let mut h = sha2::Sha256::new();
    std::io::copy(&mut f, &mut h).map_err(|e| strata_core::Error::io(format!("cannot read {}", path.display()), e))?;
    Ok(data::hex(&h.finalize()))
}

/// The process's peak resident memory in MiB (Linux; 0 elsewhere).
pub fn peak_memory_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        })
        .map_or(0.0, |kb| kb / 1024.0)
}
