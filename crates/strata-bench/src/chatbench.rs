//! The on-device chat model's speed (`strata bench chat`): load time, prompt and generation
//! tokens a second, time to first token and resident memory, on fixed prompts, greedy.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;
use strata_core::{Message, Result};
use strata_models::{Adapter, Llama, LocalChat, Sampling};

/// One prompt's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ChatRun {
    /// Tokens in the prompt.
    pub prompt_tokens: usize,
    /// Tokens generated.
    pub generated_tokens: usize,
    /// Prompt tokens a second.
    pub prompt_tokens_per_s: f64,
    /// Generated tokens a second (after the first).
    pub generated_tokens_per_s: f64,
    /// From the call to the first generated token.
    pub first_token_ms: f64,
}

/// The whole measurement.
#[derive(Debug, Clone, Serialize)]
pub struct ChatBench {
    /// The model.
    pub model: String,
    /// Time to load it.
    pub load_ms: f64,
    /// A short prompt, a long one and one the size of an answer from memory.
    pub runs: Vec<ChatRun>,
    /// Resident memory after the runs, MiB.
    pub resident_mib: f64,
    /// Peak resident memory, MiB.
    pub peak_mib: f64,
}

/// A field of /proc/self/status in MiB (Linux), else 0.
fn status_mib(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| (kb / 1024.0 * 10.0).round() / 10.0)
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// How an adapter is applied for the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterUse {
    /// Merged into the weights at load.
    Merged,
    /// Applied beside them (switchable without a reload).
    Unmerged,
}

/// Which model, read how, with which adapter.
#[derive(Debug, Clone, Default)]
pub struct ChatSetup {
    /// A GGUF file (default: the default on-device model).
    pub model: Option<std::path::PathBuf>,
    /// A folder of PEFT files, applied as the second field says.
    pub adapter: Option<(std::path::PathBuf, AdapterUse)>,
}

/// Loads the model and runs a short, a long and an answer-sized prompt, `generate` tokens each.
pub fn run(generate: usize, setup: &ChatSetup) -> Result<ChatBench> {
    let started = Instant::now();
    let file = match &setup.model {
        Some(f) => f.clone(),
        None => strata_models::chat_file(None)?,
    };
    let chat = match &setup.adapter {
        None => LocalChat::load(&file)?,
        Some((dir, how)) => {
            let shape = Llama::read_shape(&file).map_err(|e| strata_core::Error::Model(e.to_string()))?;
            let a = Adapter::load(dir, &shape)?;
            match how {
                AdapterUse::Merged => LocalChat::load_with(&file, Some(&a))?,
                AdapterUse::Unmerged => {
                    let chat = LocalChat::load(&file)?;
                    chat.set_adapter(Some(&a))?;
                    chat
                }
            }
        }
    };
    let load_ms = round1(started.elapsed().as_secs_f64() * 1000.0);
    let go = AtomicBool::new(false);
    let system = Message::system("You are a helpful assistant.");
    let history = "Tea reached Europe in the seventeenth century through Dutch and Portuguese traders; \
                   in Britain it became a national habit, first among the wealthy and then everyone. ";
    let (long, answer_sized) = (history.repeat(10), history.repeat(15));
    // Short, long (~325 tokens), and the size of an answer from memory (~480 of the 512-token
    // budget, as `strata bench answers` fills it).
    let prompts = [
        vec![system.clone(), Message::user("Write a short story about a cat who sails around the world.")],
        vec![system.clone(), Message::user(format!("{long}\nWrite a story that continues this history."))],
        vec![system, Message::user(format!("{answer_sized}\nWrite a story that continues this history."))],
    ];
    // Warm-up (first-touch of the weights).
    chat.generate(&prompts[0], Sampling { max_tokens: 2, ..Sampling::default() }, &mut |_| {}, &go)?;
    let mut runs = Vec::new();
    for p in &prompts {
        let s = Sampling { max_tokens: generate, ..Sampling::default() };
        let g = chat.generate(p, s, &mut |_| {}, &go)?;
        runs.push(ChatRun {
            prompt_tokens: g.prompt_tokens,
            generated_tokens: g.completion_tokens,
            prompt_tokens_per_s: round1(g.prompt_tokens as f64 / (g.prompt_ms / 1000.0).max(1e-9)),
            generated_tokens_per_s: round1(
                g.completion_tokens.saturating_sub(1) as f64 / (g.generate_ms / 1000.0).max(1e-9),
            ),
            first_token_ms: round1(g.first_token_ms),
        });
    }
    Ok(ChatBench {
        model: chat.name().to_string(),
        load_ms,
        runs,
        resident_mib: status_mib("VmRSS:"),
        peak_mib: status_mib("VmHWM:"),
    })
}
