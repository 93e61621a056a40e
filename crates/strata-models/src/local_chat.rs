//! The on-device chat model (SmolLM2-135M-Instruct, or a Qwen2.5 model): its chat template
//! (ChatML), greedy or sampled decoding with stop tokens, streamed text, cancellation, and
//! timings. Loaded once and shared;
//! one generation at a time (the model holds one conversation's key/value cache).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rand::{Rng, SeedableRng};
use strata_core::{Error, Message, Result, Role};
use tokenizers::Tokenizer;

use strata_tokens::chat_models::{self, ChatModelPin, ModelState};

use crate::adapter::Adapter;

mod lazy;
mod tools;
use crate::llama::Llama;
pub use lazy::{InUse, LazyLocalChat};
pub use tools::{ToolDef, ToolReply, ToolTurn};

/// The system message of a conversation that has none. (The template's own default, "You are
/// a helpful AI assistant named SmolLM, trained by Hugging Face", made the model answer "What
/// is the capital of France?" with a string of French words; this one gets "Paris".)
pub const DEFAULT_SYSTEM: &str = "You are a helpful assistant.";

/// How to pick each next token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// 0 picks the likeliest token every time (reproducible); above 0, sampled.
    pub temperature: f64,
    /// Sample only from the likeliest tokens whose probabilities add up to this.
    pub top_p: f64,
    /// Seed of the sampling.
    pub seed: u64,
    /// The most tokens to generate.
    pub max_tokens: usize,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling { temperature: 0.0, top_p: 0.95, seed: 42, max_tokens: 256 }
    }
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// The model ended its turn.
    Stop,
    /// `max_tokens` was reached.
    Length,
    /// It was cancelled.
    Cancelled,
}

/// A finished generation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Generation {
    /// The answer.
    pub text: String,
    /// Tokens of the prompt.
    pub prompt_tokens: usize,
    /// Tokens generated.
    pub completion_tokens: usize,
    /// Why it stopped.
    pub finish: Finish,
    /// Time to read the prompt.
    pub prompt_ms: f64,
    /// Time from the call to the first token of the answer.
    pub first_token_ms: f64,
    /// Time generating after the first token.
    pub generate_ms: f64,
    /// The log-probability of each token of the answer as it was picked (among the tokens
    /// the grammar allowed, when one held it).
    pub logprobs: Vec<f32>,
    /// The answer's token ids (special tokens among them, which `text` leaves out).
    pub tokens: Vec<u32>,
}

/// A crystallized adapter the on-device model applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdapterInUse {
    /// Its folder of PEFT files.
    pub dir: PathBuf,
    /// Its id (`ad_…`).
    pub id: String,
    /// The model it was trained on, as its record names it (a pinned name or its file's stem).
    pub base_model: String,
    /// The questions it was trained on: a question close enough to one of them chooses it
    /// ([`crate::Chooser`]).
    pub keys: Vec<String>,
}

/// The on-device chat model.
pub struct LocalChat {
    name: String,
    /// The GGUF it was loaded from.
    file: PathBuf,
    model: Mutex<Llama>,
    /// Encodes text as text: a special token's look-alike in a message is not a control token.
    text: Tokenizer,
    im_start: u32,
    im_end: u32,
    stops: Vec<u32>,
    /// Tokens the vocabulary marks unused (Qwen's `[PAD…]` fillers): never picked.
    unused: Vec<u32>,
    /// The spellings of the vocabulary's added tokens that are not marked special (Qwen's
    /// `<tool_call>`, its fill-in-the-middle markers): the tokenizer reads them out of any text,
    /// so [`LocalChat::encode`] cuts a text inside each before encoding it.
    read_anywhere: Vec<String>,
    /// The longest conversation the model reads, in tokens.
    context: usize,
    /// The chat model's threads (`process::chat_threads`), for a prompt's products.
    pool: rayon::ThreadPool,
    /// Constrained decoders for this vocabulary, built on the first JSON answer.
    grammars: std::sync::OnceLock<std::result::Result<crate::grammar::Grammars, String>>,
}

impl std::fmt::Debug for LocalChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalChat").field("name", &self.name).finish_non_exhaustive()
    }
}

/// A model's name: its file's, without the extension.
/// The name people know the model in `file` by: its pin's title, else its file's name.
fn title_of(file: &Path) -> String {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
    chat_models::chat_models()
        .iter()
        .find(|p| Some(&p.file) == name.as_ref())
        .map_or_else(|| name_of(file), |p| p.title.clone())
}

pub(crate) fn name_of(file: &Path) -> String {
    file.file_stem().map_or_else(|| "on-device".into(), |s| s.to_string_lossy().to_string())
}

/// The pinned on-device model called `name`, else the one `STRATA_CHAT_MODEL` names, else the
/// default (`chat-models.toml`).
pub fn chat_pin(name: Option<&str>) -> Result<&'static ChatModelPin> {
    chat_models::chosen_chat_model(name)
}

/// The pinned model a record's `base` names; one recorded before records named theirs (none,
/// or a name no longer pinned) is [`TRAINED_MODEL`], the model every adapter was trained on
/// until then.
pub fn training_pin(base: Option<&str>) -> &'static ChatModelPin {
    base.and_then(|b| chat_models::chat_model(b).ok())
        .or_else(|| chat_models::chat_model(TRAINED_MODEL).ok())
        .unwrap_or_else(|| chat_models::default_chat_model())
}

/// The file of the on-device model [`chat_pin`] picks, ready to load; or why it is not: not
/// fetched, still being fetched, or not the pinned file — each saying what to do.
pub fn chat_file(name: Option<&str>) -> Result<PathBuf> {
    let pin = chat_pin(name)?;
    let dir = strata_tokens::models_dir();
    let file = pin.path_in(&dir);
    let fetch = format!("`strata models fetch {}` (or Settings → On-device models)", pin.name);
    match pin.state_in(&dir) {
        ModelState::Ready => Ok(file),
        ModelState::Missing => Err(Error::Model(format!(
            "the on-device model {} is not on this computer ({} expected): fetch it with {fetch}, or set \
             STRATA_MODELS to the folder that holds it",
            pin.title,
            file.display()
        ))),
        ModelState::Fetching => Err(Error::Model(format!(
            "the on-device model {} is still being fetched; it can be used once the fetch has finished (a \
             stopped fetch resumes with {fetch})",
            pin.title
        ))),
        ModelState::Damaged => Err(Error::Model(format!(
            "{} is not the pinned {} ({} bytes expected): delete it and fetch it again with {fetch}",
            file.display(),
            pin.title,
            pin.bytes
        ))),
    }
}

/// A GGUF file `arg` names when it is one (a benchmark's other model), else [`chat_file`].
pub fn chat_file_or_path(arg: Option<&str>) -> Result<PathBuf> {
    match arg {
        Some(a) if a.ends_with(".gguf") || Path::new(a).is_file() => {
            let path = PathBuf::from(a);
            if path.is_file() { Ok(path) } else { Err(Error::Model(format!("no model file at {a}"))) }
        }
        _ => chat_file(arg),
    }
}

/// The on-device model strata-train trains adapters on (its forward mirrors SmolLM2's), by the
/// name `chat-models.toml` pins it under: an adapter runs on the model it was trained on.
pub const TRAINED_MODEL: &str = "smollm2-135m";

pub(crate) fn model_error(file: &Path, e: impl std::fmt::Display) -> Error {
    Error::Model(format!("the on-device chat model {}: {e}", file.display()))
}

impl LocalChat {
    /// The file of the model adapters are trained on ([`TRAINED_MODEL`]).
    pub fn trained_file() -> PathBuf {
        chat_models::chat_model(TRAINED_MODEL)
            .unwrap_or_else(|_| chat_models::default_chat_model())
            .path_in(&strata_tokens::models_dir())
    }

    /// Loads the default model; a missing file says how to fetch it.
    pub fn load_default() -> Result<LocalChat> {
        LocalChat::load(&chat_file(None)?)
    }

    /// Loads the model adapters are trained on ([`TRAINED_MODEL`]).
    pub fn load_trained() -> Result<LocalChat> {
        LocalChat::load_for_training(None)
    }

    /// Loads the model a record names as its base (an adapter's, a training run's: a name
    /// `strata models` lists, or its file's stem), to resume or check it ([`training_pin`]).
    pub fn load_for_training(base: Option<&str>) -> Result<LocalChat> {
        LocalChat::load(&chat_file(Some(training_pin(base).name.as_str()))?)
    }

    /// The GGUF file it was loaded from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Loads the model in `file` (a llama or qwen2 GGUF with a byte-level BPE tokenizer and the
    /// ChatML markers `<|im_start|>` / `<|im_end|>`).
    pub fn load(file: &Path) -> Result<LocalChat> {
        LocalChat::load_with(file, None)
    }

    /// Loads the model in `file` with a LoRA adapter merged into its weights.
    pub fn load_with(file: &Path, adapter: Option<&Adapter>) -> Result<LocalChat> {
        crate::process::memory_for(file, &title_of(file))?;
        let mut text = strata_tokens::gguf::tokenizer(file)?;
        let id = |t: &str| text.token_to_id(t).ok_or_else(|| model_error(file, format!("its vocabulary has no {t}")));
        let (im_start, im_end) = (id("<|im_start|>")?, id("<|im_end|>")?);
        let mut stops = vec![im_end];
        stops.extend(text.token_to_id("<|endoftext|>"));
        let unused = strata_tokens::gguf::unused_ids(file)?;
        let read_anywhere =
            text.get_added_tokens_decoder().values().filter(|t| !t.special).map(|t| t.content.clone()).collect();
        text.set_encode_special_tokens(true);
        let model = Llama::load_merged(file, adapter).map_err(|e| model_error(file, e))?;
        crate::process::release_freed();
        let name = name_of(file);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(crate::process::chat_threads())
            .build()
            .map_err(|e| model_error(file, format!("cannot start its threads: {e}")))?;
        let context = model.shape().context;
        Ok(LocalChat {
            name,
            file: file.to_path_buf(),
            model: Mutex::new(model),
            text,
            im_start,
            im_end,
            stops,
            unused,
            read_anywhere,
            context,
            pool,
            grammars: std::sync::OnceLock::new(),
        })
    }

    /// The model's name (its file's).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The model's shape.
    pub fn shape(&self) -> crate::Shape {
        self.model.lock().unwrap_or_else(std::sync::PoisonError::into_inner).shape()
    }

    /// Applies a LoRA adapter unmerged, or removes it, without reloading the weights.
    pub fn set_adapter(&self, adapter: Option<&Adapter>) -> Result<()> {
        let mut model = self.model.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        model.set_adapter(adapter).map_err(|e| Error::Model(format!("{}: {e}", self.name)))
    }

    /// A training example in the chat template: the ids of `question` asked as the user's
    /// turn (as [`LocalChat::prompt_ids`] writes it) followed by `answer` and the end of turn,
    /// and where the answer starts.
    pub fn example_ids(&self, question: &str, answer: &str) -> Result<(Vec<u32>, usize)> {
        self.answer_ids(&[Message::new(Role::User, question)], answer)
    }

    /// [`LocalChat::prompt_ids`] of `messages`, then `answer` and the end of the turn: a
    /// training example of any prompt, with the first id of the answer.
    pub fn answer_ids(&self, messages: &[Message], answer: &str) -> Result<(Vec<u32>, usize)> {
        let mut ids = self.prompt_ids(messages)?;
        let start = ids.len();
        ids.extend(self.encode(answer)?);
        ids.push(self.im_end);
        Ok((ids, start))
    }

    /// The ids of plain text (no template).
    pub fn text_ids(&self, text: &str) -> Result<Vec<u32>> {
        self.encode(text)
    }

    /// The log-probabilities the model gives each next token of `ids` (one per token after the
    /// first), read in one pass: for perplexity.
    pub fn token_logprobs(&self, ids: &[u32]) -> Result<Vec<f32>> {
        let mut guard = self.model.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let model: &mut Llama = &mut guard;
        let fail = |e: candle_core::Error| Error::Model(format!("{}: {e}", self.name));
        let logits = self.pool.install(|| model.forward_all(ids)).map_err(fail)?;
        let lp = candle_nn::ops::log_softmax(&logits, 1).map_err(fail)?;
        let lp: Vec<Vec<f32>> = lp.to_vec2().map_err(fail)?;
        Ok(ids[1..].iter().zip(&lp).map(|(&next, row)| row[next as usize]).collect())
    }

    /// `text` as the tokens of its text: never a control token, whatever it spells (a special
    /// token's spelling is encoded as text by the tokenizer's setting; an added token that is
    /// not marked special, such as `<tool_call>`, by encoding the text in pieces cut inside it).
    fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let mut cuts: Vec<usize> = Vec::new();
        for added in self.read_anywhere.iter().filter(|a| !a.is_empty() && text.contains(a.as_str())) {
            let first = added.chars().next().map_or(1, char::len_utf8);
            cuts.extend(text.match_indices(added.as_str()).map(|(at, _)| at + first));
        }
        cuts.sort_unstable();
        cuts.dedup();
        let mut ids = Vec::new();
        let mut from = 0;
        for at in cuts.into_iter().chain([text.len()]) {
            let piece = &text[from..at];
            let encoded = self.text.encode(piece, false).map_err(|e| Error::Model(format!("{}: {e}", self.name)))?;
            ids.extend_from_slice(encoded.get_ids());
            from = at;
        }
        Ok(ids)
    }

    /// The prompt's token ids in the model's chat template (ChatML): each message as
    /// `<|im_start|>role\ncontent<|im_end|>\n`, [`DEFAULT_SYSTEM`] when there is no system
    /// message, then `<|im_start|>assistant\n`. A later system message is folded into the
    /// user turn that follows it. Tool calls and results become text, the
    /// results as the user's turn (the model knows no tool role).
    pub fn prompt_ids(&self, messages: &[Message]) -> Result<Vec<u32>> {
        let mut ids = Vec::new();
        let turn = |ids: &mut Vec<u32>, role: &str, content: &str| -> Result<()> {
            ids.push(self.im_start);
            ids.extend(self.encode(&format!("{role}\n{content}"))?);
            ids.push(self.im_end);
            ids.extend(self.encode("\n")?);
            Ok(())
        };
        if messages.first().is_none_or(|m| m.role != Role::System) {
            turn(&mut ids, "system", DEFAULT_SYSTEM)?;
        }
        // A system message after the first (memories placed before the user's message) goes
        // into the next user turn: this small model follows its user turn far better.
        let mut carried: Option<&str> = None;
        for (i, m) in messages.iter().enumerate() {
            match m.role {
                Role::System if i > 0 => carried = Some(&m.content),
                Role::User if carried.is_some() => {
                    turn(&mut ids, "user", &format!("{}\n\n{}", carried.take().unwrap_or_default(), m.content))?
                }
                Role::Tool => turn(&mut ids, "user", &format!("Tool result:\n{}", m.content))?,
                Role::Assistant if !m.tool_calls.is_empty() => {
                    let calls: Vec<String> =
                        m.tool_calls.iter().map(|c| format!("(calls {} with {})", c.name, c.arguments)).collect();
                    turn(&mut ids, "assistant", &format!("{}{}", m.content, calls.join("\n")))?
                }
                r => turn(&mut ids, r.as_str(), &m.content)?,
            }
        }
        if let Some(c) = carried {
            turn(&mut ids, "system", c)?;
        }
        ids.push(self.im_start);
        ids.extend(self.encode("assistant\n")?);
        Ok(ids)
    }

    /// Answers `messages`, calling `on_text` with each new piece of the answer as it is made.
    /// `cancel` stops it between tokens (what was made so far is returned).
    pub fn generate(
        &self,
        messages: &[Message],
        sampling: Sampling,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> Result<Generation> {
        self.generate_under(self.prompt_ids(messages)?, sampling, None, on_text, cancel)
    }

    /// [`LocalChat::generate`] held to a JSON schema: every token picked keeps the answer
    /// inside it, so a whole answer always parses (one cut short by `max_tokens` does not).
    pub fn generate_json(
        &self,
        messages: &[Message],
        schema: &serde_json::Value,
        sampling: Sampling,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> Result<Generation> {
        let constrained = self.grammars()?.for_schema(schema)?;
        self.generate_under(self.prompt_ids(messages)?, sampling, Some(constrained), on_text, cancel)
    }

    /// The grammars of this model's vocabulary, made on first use.
    fn grammars(&self) -> Result<&crate::grammar::Grammars> {
        self.grammars
            .get_or_init(|| crate::grammar::Grammars::new(&self.text, self.im_end).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| Error::Model(e.clone()))
    }

    fn generate_under(
        &self,
        prompt: Vec<u32>,
        sampling: Sampling,
        mut constrained: Option<crate::grammar::Constrained>,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> Result<Generation> {
        let started = Instant::now();
        let context = self.context;
        if prompt.len() >= context {
            return Err(Error::invalid(format!(
                "the prompt has {} tokens; {} reads at most {context}",
                prompt.len(),
                self.name
            )));
        }
        let mut guard = self.model.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let model: &mut Llama = &mut guard;
        model.reset();
        let fail = |e: candle_core::Error| Error::Model(format!("{}: {e}", self.name));
        let mut logits = self.pool.install(|| model.forward(&prompt, 0)).map_err(fail)?;
        let prompt_ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut rng = rand::rngs::StdRng::seed_from_u64(sampling.seed);
        let (mut out, mut shown, mut first_token_ms) = (Vec::new(), 0usize, None);
        let mut text = String::new();
        let mut logprobs = Vec::new();
        let finish = loop {
            if cancel.load(Ordering::Relaxed) {
                break Finish::Cancelled;
            }
            let mut values: Vec<f32> = logits.to_vec1().map_err(fail)?;
            if let Some(c) = constrained.as_mut() {
                c.mask(&mut values)?;
            }
            for &u in &self.unused {
                if let Some(v) = values.get_mut(u as usize) {
                    *v = f32::NEG_INFINITY;
                }
            }
            let next = pick(&values, sampling, &mut rng);
            first_token_ms.get_or_insert(started.elapsed().as_secs_f64() * 1000.0);
            if self.stops.contains(&next) {
                break Finish::Stop;
            }
            if let Some(c) = constrained.as_mut() {
                c.consume(next)?;
            }
            out.push(next);
            logprobs.push(logprob(&values, next));
            text = self.text.decode(&out, true).map_err(|e| Error::Model(format!("{}: {e}", self.name)))?;
            // A character split over tokens shows once it is whole.
            if !text.ends_with('\u{FFFD}') && text.len() > shown {
                on_text(&text[shown..]);
                shown = text.len();
            }
            if out.len() >= sampling.max_tokens {
                break Finish::Length;
            }
            if constrained.as_ref().is_some_and(crate::grammar::Constrained::done) {
                break Finish::Stop;
            }
            if cancel.load(Ordering::Relaxed) {
                break Finish::Cancelled; // before the next token's work, not after
            }
            logits = self.pool.install(|| model.forward(&[next], prompt.len() + out.len() - 1)).map_err(fail)?;
        };
        let first = first_token_ms.unwrap_or(prompt_ms);
        Ok(Generation {
            text,
            prompt_tokens: prompt.len(),
            completion_tokens: out.len(),
            finish,
            prompt_ms,
            first_token_ms: first,
            generate_ms: started.elapsed().as_secs_f64() * 1000.0 - first,
            logprobs,
            tokens: out,
        })
    }
}

/// The log-probability of `token` under `logits` (a log-softmax at one index).
fn logprob(logits: &[f32], token: u32) -> f32 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f32 = logits.iter().map(|l| (l - max).exp()).sum();
    logits.get(token as usize).map_or(f32::NEG_INFINITY, |l| l - max - sum.ln())
}

/// The next token: the likeliest (temperature 0), or sampled from the nucleus.
fn pick(logits: &[f32], s: Sampling, rng: &mut impl Rng) -> u32 {
    let best = || logits.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(i, _)| i as u32);
    if s.temperature <= 0.0 {
        return best();
    }
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut p: Vec<(usize, f64)> =
        logits.iter().enumerate().map(|(i, l)| (i, (((l - max) as f64) / s.temperature).exp())).collect();
    p.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = p.iter().map(|x| x.1).sum();
    let mut kept = 0.0;
    let cut = p.iter().position(|x| {
        kept += x.1 / total;
        kept >= s.top_p
    });
    p.truncate(cut.map_or(p.len(), |c| c + 1));
    let total: f64 = p.iter().map(|x| x.1).sum();
    let mut r = rng.random::<f64>() * total;
    for (i, w) in &p {
        r -= w;
        if r <= 0.0 {
            return *i as u32;
        }
    }
    best()
}

/// The on-device model's prompt budget for memory-augmented turns: what measurably helps it
/// answer (docs/benchmarks.md, "Answers from memory") and keeps its first word quick at any
/// store size, far below its 8,192-token window.
pub const PROMPT_BUDGET: usize = 512;

impl strata_core::ChatModel for LocalChat {
    fn provider(&self) -> &str {
        "on-device"
    }

    fn model(&self) -> &str {
        &self.name
    }

    /// Its template folds a system message before the question into the user's turn, which
    /// this small model follows far better than a system turn.
    fn memories_before_message(&self) -> bool {
        true
    }

    fn prompt_budget(&self) -> Option<usize> {
        Some(PROMPT_BUDGET)
    }

    /// A request's schema holds its answer to JSON the schema accepts; without one, tools
    /// offered are called in the model's own format ([`LocalChat::generate_with_tools`]; a
    /// model without it answers in text).
    fn chat(
        &self,
        request: &strata_core::ChatRequest,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> std::result::Result<strata_core::ChatResponse, strata_core::ChatError> {
        let sampling = Sampling {
            temperature: request.temperature.unwrap_or(0.0),
            max_tokens: request.max_tokens.map_or(512, |m| m as usize),
            ..Sampling::default()
        };
        if request.schema.is_none() && !request.tools.is_empty() && self.calls_tools() {
            return tools::chat_with_tools(self, request, sampling, cancel);
        }
        let g = match &request.schema {
            Some(schema) => self.generate_json(&request.messages, schema, sampling, on_text, cancel),
            None => self.generate(&request.messages, sampling, on_text, cancel),
        };
        let g = g.map_err(|e| {
            let kind = match e {
                Error::Invalid(_) => strata_core::ChatErrorKind::ContextTooLong,
                _ => strata_core::ChatErrorKind::Server,
            };
            strata_core::ChatError::new(kind, e.to_string())
        })?;
        Ok(strata_core::ChatResponse {
            content: g.text,
            tool_calls: vec![],
            usage: strata_core::Usage {
                prompt_tokens: g.prompt_tokens as u32,
                completion_tokens: g.completion_tokens as u32,
            },
            finish: match g.finish {
                Finish::Stop => "stop",
                Finish::Length => "length",
                Finish::Cancelled => "cancelled",
            }
            .to_string(),
            logprobs: g.logprobs,
            adapter: None,
        })
    }
}
