//! Answer quality from memory (`strata bench answers`): one invented person's memories
//! (`data/answers/memories.json`, a seed document) imported into a fresh store and embedded,
//! then every question of `data/answers/questions.json` asked through [`Engine::ask`] with a
//! chat model, greedy, nothing recorded, once per memory budget.
//!
//! An answer is right when it holds one of the question's accepted strings (case and white
//! space aside); a question whose answer is not in memory is right when the answer says it does
//! not know ([`DONT_KNOW`]). Each answer also says whether the memory holding the answer was in
//! the prompt (a retrieval hit), so a model's mistakes and recall's are told apart, and the
//! share is given twice more: for the answer shown with the top memory quoted as its source,
//! and for that quoted memory alone.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use strata_api::{ApiError, ApiResult, AskParams, ContextSettings, Engine, EngineOptions, ErrorCode, ImportFormat};
use strata_core::{ChatModel, Content, Embedder, Filter, ManualClock, Memory, Message, Role};

/// What kind of question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// One named fact of a concept (a birthday, a name, an address).
    SingleFact,
    /// When an episode happened.
    EventDate,
    /// A procedure's steps.
    Procedure,
    /// Something the person likes or dislikes.
    Preference,
    /// Nothing in memory answers it: the model should say it does not know.
    NotInMemory,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: [Category; 5] =
        [Category::SingleFact, Category::EventDate, Category::Procedure, Category::Preference, Category::NotInMemory];

    /// The least number of questions of this category the set must hold.
    pub fn minimum(self) -> usize {
        match self {
            Category::SingleFact => 25,
            Category::EventDate | Category::NotInMemory => 10,
            Category::Procedure | Category::Preference => 8,
        }
    }

    /// Its name as written in the data.
    pub fn name(self) -> &'static str {
        match self {
            Category::SingleFact => "single_fact",
            Category::EventDate => "event_date",
            Category::Procedure => "procedure",
            Category::Preference => "preference",
            Category::NotInMemory => "not_in_memory",
        }
    }
}

/// A wrong answer an assistant once gave, recorded as an exchange: following it is being misled.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Misleading {
    /// The exchange's `ref`.
    pub memory: String,
    /// Strings of the wrong answer; one in the answer means the model repeated it.
    pub reject: Vec<String>,
}

/// One question of the set.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// Its id (`q01`).
    pub id: String,
    /// Its kind.
    pub category: Category,
    /// What is asked.
    pub question: String,
    /// Any one of these in the answer makes it right (not for [`Category::NotInMemory`]).
    #[serde(default)]
    pub accept: Vec<String>,
    /// The memory that holds the answer: a concept's key, a procedure's name or an episode's
    /// `ref` (its metadata).
    #[serde(default)]
    pub memory: Option<String>,
    /// A wrong past answer that bears on it.
    #[serde(default)]
    pub misleading: Option<Misleading>,
    /// The answer to learn, in a training set ([`crate::answertrain`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QuestionFile {
    questions: Vec<Question>,
}

/// The folder of the shipped set.
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join("answers")
}

fn invalid(message: String) -> ApiError {
    ApiError::new(ErrorCode::InvalidInput, message)
}

/// Reads a question file.
pub fn load_questions(path: &Path) -> ApiResult<Vec<Question>> {
    let text = std::fs::read_to_string(path).map_err(|e| invalid(format!("cannot read {}: {e}", path.display())))?;
    let file: QuestionFile = serde_json::from_str(&text).map_err(|e| invalid(format!("{}: {e}", path.display())))?;
    Ok(file.questions)
}

/// What a memory is called in the question file: a concept's key, a procedure's name, an
/// episode's `ref`.
pub fn label(content: &Content) -> Option<String> {
    match content {
        Content::Semantic(c) => Some(c.key.clone()),
        Content::Procedural(p) => Some(p.name.clone()),
        Content::Episodic(e) => e.extra.get("ref").and_then(|v| v.as_str()).map(String::from),
    }
}

pub use strata_api::answer_check::{DONT_KNOW, normalise, says_dont_know};

/// Whether `text` holds one of `strings` (normalised).
pub fn holds_any(text: &str, strings: &[String]) -> bool {
    let t = normalise(text);
    strings.iter().any(|s| t.contains(&normalise(s)))
}

/// Whether `answer` answers `q` rightly.
pub fn judge(q: &Question, answer: &str) -> bool {
    match q.category {
        Category::NotInMemory => says_dont_know(answer),
        _ => holds_any(answer, &q.accept),
    }
}

/// How a memory reads when quoted as an answer's source: its title and text, an episode's date first.
pub fn quote(m: &Memory) -> String {
    let (title, body) = strata_core::search_text(&m.content);
    match &m.content {
        Content::Episodic(e) => format!("({}) {title}: {body}", e.occurred_at.format("%-d %B %Y")),
        _ => format!("{title}: {}", body.replace('\n', "; ")),
    }
}

/// How the prompt reaches the model: as the product builds it, or changed for an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// As [`Engine::ask`] builds it for the model.
    #[default]
    Product,
    /// The memory block moved after the question (same turn).
    MemoriesAfterQuestion,
    /// The memory block moved into the system turn, the question alone in the user's.
    MemoriesInSystem,
    /// The block's preamble ("These memories may or may not be relevant…") dropped.
    NoPreamble,
    /// After the memories, the question again with an instruction: answer from them in one
    /// sentence, or say "I don't know".
    Instructed,
}

impl std::str::FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Layout, String> {
        Ok(match s {
            "product" => Layout::Product,
            "memories_after_question" => Layout::MemoriesAfterQuestion,
            "memories_in_system" => Layout::MemoriesInSystem,
            "no_preamble" => Layout::NoPreamble,
            "instructed" => Layout::Instructed,
            _ => {
                return Err(format!(
                    "unknown layout '{s}' (expected product, memories_after_question, memories_in_system, \
                     no_preamble or instructed)"
                ));
            }
        })
    }
}

/// A chat model whose prompt is re-laid out as a [`Layout`] says before it is asked; with a
/// `kept` slot, the prompt is kept there instead and nothing is answered (the prompt the
/// product would send, for training: [`crate::answertrain`]).
pub(crate) struct Relaid<'a> {
    pub(crate) inner: &'a dyn ChatModel,
    pub(crate) layout: Layout,
    pub(crate) kept: Option<Mutex<Option<Vec<Message>>>>,
}

impl Relaid<'_> {
    fn relay(&self, messages: &[Message]) -> Vec<Message> {
        let mut m = messages.to_vec();
        // The memory block: a system message after the first (it is placed before the question).
        let Some(at) = m.iter().skip(1).position(|x| x.role == Role::System).map(|i| i + 1) else {
            return m;
        };
        let user = m.iter().rposition(|x| x.role == Role::User);
        match (self.layout, user) {
            (Layout::MemoriesAfterQuestion, Some(u)) if u > at => {
                let block = m.remove(at);
                let u = u - 1;
                m[u].content = format!("{}\n\n{}", m[u].content, block.content);
            }
            (Layout::MemoriesInSystem, _) => {
                let block = m.remove(at);
                m[0].content = format!("{}\n\n{}", m[0].content, block.content);
            }
            (Layout::NoPreamble, _) => {
                if let Some(i) = m[at].content.find(strata_core::chat::MEMORIES_OPEN) {
                    m[at].content = m[at].content[i..].to_string();
                }
            }
            (Layout::Instructed, Some(u)) if u > at => {
                m[u].content = format!(
                    "Question: {}\nAnswer in one short sentence using only the memories above. If they do not \
                     answer it, say \"I don't know\".",
                    m[u].content
                );
            }
            _ => {}
        }
        m
    }
}

impl ChatModel for Relaid<'_> {
    fn provider(&self) -> &str {
        self.inner.provider()
    }
    fn model(&self) -> &str {
        self.inner.model()
    }
    fn memories_before_message(&self) -> bool {
        self.inner.memories_before_message()
    }
    fn prompt_budget(&self) -> Option<usize> {
        self.inner.prompt_budget()
    }
    fn count_prompt(&self, messages: &[Message]) -> Option<Result<usize, strata_core::ChatError>> {
        self.inner.count_prompt(&self.relay(messages))
    }
    fn chat(
        &self,
        request: &strata_core::ChatRequest,
        on_text: &mut dyn FnMut(&str),
        cancel: &AtomicBool,
    ) -> Result<strata_core::ChatResponse, strata_core::ChatError> {
        let request = strata_core::ChatRequest { messages: self.relay(&request.messages), ..request.clone() };
        if let Some(kept) = &self.kept {
            *kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(request.messages);
            return Ok(strata_core::ChatResponse::default());
        }
        self.inner.chat(&request, on_text, cancel)
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// One run per budget (`None`: the model's default).
    pub budgets: Vec<Option<usize>>,
    /// The most tokens per answer.
    pub max_tokens: u32,
    /// The system prompt (the product's when absent).
    pub system: Option<String>,
    /// How the prompt is laid out.
    pub layout: Layout,
    /// Only the first this many questions (a quick try).
    pub limit: Option<usize>,
    /// Other people's conversation turns ("speaker: text") and how many episodes of them to
    /// add to the store before asking: the answers and their speed at a store's full size.
    pub filler: Option<(Vec<String>, usize)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            budgets: vec![None],
            max_tokens: 64,
            system: None,
            layout: Layout::Product,
            limit: None,
            filler: None,
        }
    }
}

/// One question's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Answered {
    /// The question's id.
    pub id: String,
    /// Its kind.
    pub category: Category,
    /// What was asked.
    pub question: String,
    /// What was presented as the answer (the product's: the model's sentence, or "I don't
    /// know" when no memory of the prompt bears it out).
    pub answer: String,
    /// The model's own sentence, when it was not presented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guess: Option<String>,
    /// Judged on the answer alone.
    pub right: bool,
    /// Judged on the model's own sentence, unchecked (what the check changed).
    pub right_unchecked: bool,
    /// Judged on the answer with the top memory quoted after it as its source.
    pub right_with_source: bool,
    /// Judged on the quoted top memory alone.
    pub right_by_source: bool,
    /// The memory holding the answer was in the prompt (None: not in memory).
    pub retrieval_hit: Option<bool>,
    /// The answer repeated a wrong past answer (None: no wrong answer bears on it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub misled: Option<bool>,
    /// The wrong past answer was in the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub misleading_injected: Option<bool>,
    /// The top memory, as quoted.
    pub source: Option<String>,
    /// Its cosine similarity to the question, and its bm25 keyword score if words matched.
    pub source_match: Option<(Option<f64>, Option<f64>)>,
    /// Titles of the memories in the prompt, in prompt order.
    pub injected: Vec<String>,
    /// Tokens in the prompt.
    pub prompt_tokens: u32,
    /// From the call to the first piece of the answer (recall and reading the prompt included).
    pub first_token_ms: f64,
    /// From the call to the whole answer.
    pub total_ms: f64,
    /// The log-probability of each token of the model's sentence (the on-device model's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub logprobs: Vec<f32>,
}

/// Figures for a group of questions.
#[derive(Debug, Clone, Serialize)]
pub struct Score {
    /// The category (`overall` for all of them).
    pub category: String,
    /// Questions asked.
    pub questions: usize,
    /// Right on the answer alone.
    pub right: usize,
    /// Its share.
    pub share: f64,
    /// Share right judged on the model's sentences unchecked.
    pub share_unchecked: f64,
    /// Share right with the top memory quoted as the source.
    pub share_with_source: f64,
    /// Share right by the quoted memory alone.
    pub share_by_source: f64,
    /// Share whose answer memory was in the prompt (of those that have one).
    pub retrieval_hit_share: Option<f64>,
    /// Wrong although the answer memory was in the prompt: the model's mistakes.
    pub wrong_with_hit: usize,
}

/// Mean and 95th percentile.
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    /// Mean, ms.
    pub mean_ms: f64,
    /// 95th percentile, ms.
    pub p95_ms: f64,
}

/// One budget's run.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// The budget asked for (None: the model's default).
    pub budget: Option<usize>,
    /// Per category, then `overall`.
    pub scores: Vec<Score>,
    /// Questions a wrong past answer bears on, and how many answers repeated it.
    pub misleading: (usize, usize),
    /// Mean tokens of the prompt.
    pub mean_prompt_tokens: f64,
    /// Mean memories in the prompt.
    pub mean_injected: f64,
    /// Time to the first piece of the answer.
    pub first_token: Timing,
    /// Time to the whole answer.
    pub total: Timing,
    /// Seconds the run took.
    pub wall_seconds: f64,
    /// Every question.
    pub answers: Vec<Answered>,
}

/// The whole measurement.
#[derive(Debug, Clone, Serialize)]
pub struct AnswerReport {
    /// The chat model.
    pub model: String,
    /// Memories in the store.
    pub memories: usize,
    /// Questions asked per run.
    pub questions: usize,
    /// The most tokens per answer.
    pub max_tokens: u32,
    /// The system prompt (None: the product's).
    pub system: Option<String>,
    /// How the prompt was laid out.
    pub layout: Layout,
    /// One per budget.
    pub runs: Vec<Run>,
}

/// The store's clock: after the last memory, so "last year" and the like mean the same each run.
const NOW: &str = "2025-11-20T12:00:00Z";

/// Opens the store at `path` as the set's person (Hanna), on the set's clock, with the product's
/// context settings (without the user's catalogue or budget cap).
pub fn open_filled(path: &Path) -> ApiResult<Engine> {
    let options = EngineOptions {
        user_id: "hanna".into(),
        client: "bench".into(),
        context: ContextSettings { models_dir: Some(strata_tokens::models_dir()), ..Default::default() },
        ..Default::default()
    };
    let clock = Arc::new(ManualClock::new(strata_core::time::parse_time(NOW)?));
    Engine::open_with_clock(path, options, clock)
}

/// Imports the seed at `seed` into a fresh store at `path`, adds the filler's episodes (if
/// any), and embeds it all with `embedder`.
pub fn fill(
    path: &Path,
    seed: &Path,
    filler: Option<&(Vec<String>, usize)>,
    embedder: Arc<dyn Embedder>,
) -> ApiResult<Engine> {
    let _ = std::fs::remove_file(path);
    let mut engine = open_filled(path)?;
    let text = std::fs::read(seed).map_err(|e| invalid(format!("cannot read {}: {e}", seed.display())))?;
    engine.import(&seed.display().to_string(), &mut text.as_slice(), Some(ImportFormat::Seed))?;
    let embedder = match filler {
        Some((turns, size)) => {
            let start = strata_core::time::parse_time("2022-01-01T00:00:00Z")?;
            crate::scalebench::add_turns(&mut engine, turns, *size, start)?;
            // Turns repeat: each distinct text is embedded once.
            crate::scalebench::caching(embedder)
        }
        None => embedder,
    };
    engine.use_embedder(embedder, false)?;
    engine.embed_all(&AtomicBool::new(false), &mut |_| {})?;
    Ok(engine)
}

/// Runs the set in `data` (memories.json, questions.json) with `chat`, once per budget.
pub fn run(
    data: &Path,
    workdir: &Path,
    embedder: Arc<dyn Embedder>,
    chat: &dyn ChatModel,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<AnswerReport> {
    let mut questions = load_questions(&data.join("questions.json"))?;
    if let Some(n) = opts.limit {
        questions.truncate(n);
    }
    let mut engine = fill(&workdir.join("answers.db"), &data.join("memories.json"), opts.filler.as_ref(), embedder)?;
    let memories = engine.all_memories(Filter::default())?;
    let by_id: HashMap<String, &Memory> = memories.iter().map(|m| (m.id.to_string(), m)).collect();
    let model = Relaid { inner: chat, layout: opts.layout, kept: None };
    let mut runs = Vec::new();
    for &budget in &opts.budgets {
        let started = Instant::now();
        let mut answers = Vec::new();
        for (i, q) in questions.iter().enumerate() {
            let a = ask(&mut engine, &model, q, budget, opts, &by_id)?;
            progress(&format!(
                "budget {}: {}/{} {} {}",
                budget.map_or("default".into(), |b| b.to_string()),
                i + 1,
                questions.len(),
                if a.right { "right" } else { "wrong" },
                a.answer.replace('\n', " ")
            ));
            answers.push(a);
        }
        runs.push(summarize(budget, answers, started.elapsed().as_secs_f64()));
    }
    Ok(AnswerReport {
        model: chat.model().to_string(),
        memories: memories.len(),
        questions: questions.len(),
        max_tokens: opts.max_tokens,
        system: opts.system.clone(),
        layout: opts.layout,
        runs,
    })
}

fn ask(
    engine: &mut Engine,
    model: &dyn ChatModel,
    q: &Question,
    budget: Option<usize>,
    opts: &Options,
    by_id: &HashMap<String, &Memory>,
) -> ApiResult<Answered> {
    let params = AskParams {
        question: q.question.clone(),
        system: opts.system.clone(),
        budget,
        max_tokens: Some(opts.max_tokens),
        record: false,
        ..Default::default()
    };
    let started = Instant::now();
    let mut first: Option<f64> = None;
    let view = engine.ask(
        params,
        model,
        &mut |_| {
            first.get_or_insert_with(|| started.elapsed().as_secs_f64() * 1000.0);
        },
        &AtomicBool::new(false),
    )?;
    let total_ms = started.elapsed().as_secs_f64() * 1000.0;
    let report = &view.context.report;
    let included: Vec<(&Memory, f64)> =
        report.included.iter().filter_map(|d| by_id.get(&d.id.to_string()).map(|m| (*m, d.score))).collect();
    let labels: BTreeSet<String> = included.iter().filter_map(|(m, _)| label(&m.content)).collect();
    // The source the product shows beside the answer.
    let top = view.source.as_ref().and_then(|id| by_id.get(id)).map(|m| quote(m));
    let right = judge(q, &view.answer);
    let right_unchecked = judge(q, view.guess.as_deref().unwrap_or(&view.answer));
    let by_source = q.category != Category::NotInMemory && top.as_deref().is_some_and(|s| judge(q, s));
    let misled = q.misleading.as_ref().map(|w| holds_any(&view.answer, &w.reject));
    Ok(Answered {
        id: q.id.clone(),
        category: q.category,
        question: q.question.clone(),
        right,
        right_unchecked,
        // A question not in memory is judged on the answer only: quoting a memory beside "I
        // don't know" does not make it wrong, nor a made-up answer right.
        right_with_source: right || by_source,
        right_by_source: by_source,
        retrieval_hit: q.memory.as_ref().map(|k| labels.contains(k)),
        misled,
        misleading_injected: q.misleading.as_ref().map(|w| labels.contains(&w.memory)),
        source: top,
        source_match: view
            .source
            .as_ref()
            .and_then(|id| report.included.iter().find(|d| &d.id.to_string() == id))
            .and_then(|d| d.why.as_ref())
            .map(|w| (w.similarity, w.keyword_score)),
        injected: included.iter().map(|(m, _)| strata_api::dto::content_title(&m.content)).collect(),
        prompt_tokens: view.usage.prompt_tokens,
        first_token_ms: round1(first.unwrap_or(total_ms)),
        total_ms: round1(total_ms),
        logprobs: view.logprobs,
        answer: view.answer,
        guess: view.guess,
    })
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn timing(mut ms: Vec<f64>) -> Timing {
    ms.sort_by(f64::total_cmp);
    let mean = ms.iter().sum::<f64>() / ms.len().max(1) as f64;
    let p95 = ms.get(((ms.len() as f64 * 0.95) as usize).min(ms.len().saturating_sub(1))).copied().unwrap_or(0.0);
    Timing { mean_ms: round1(mean), p95_ms: round1(p95) }
}

fn score(category: &str, answers: &[&Answered]) -> Score {
    let n = answers.len();
    let share = |k: usize| round3(k as f64 / n.max(1) as f64);
    let count = |f: &dyn Fn(&Answered) -> bool| answers.iter().filter(|a| f(a)).count();
    let right = count(&|a| a.right);
    let with_memory = count(&|a| a.retrieval_hit.is_some());
    Score {
        category: category.to_string(),
        questions: n,
        right,
        share: share(right),
        share_unchecked: share(count(&|a| a.right_unchecked)),
        share_with_source: share(count(&|a| a.right_with_source)),
        share_by_source: share(count(&|a| a.right_by_source)),
        retrieval_hit_share: (with_memory > 0)
            .then(|| round3(count(&|a| a.retrieval_hit == Some(true)) as f64 / with_memory as f64)),
        wrong_with_hit: count(&|a| !a.right && a.retrieval_hit == Some(true)),
    }
}

/// A run's figures from its answers.
pub fn summarize(budget: Option<usize>, answers: Vec<Answered>, wall_seconds: f64) -> Run {
    let mut scores: Vec<Score> = Category::ALL
        .iter()
        .map(|&c| score(c.name(), &answers.iter().filter(|a| a.category == c).collect::<Vec<_>>()))
        .filter(|s| s.questions > 0)
        .collect();
    scores.push(score("overall", &answers.iter().collect::<Vec<_>>()));
    let n = answers.len().max(1) as f64;
    let misled = answers.iter().filter_map(|a| a.misled).collect::<Vec<_>>();
    Run {
        budget,
        scores,
        misleading: (misled.len(), misled.iter().filter(|m| **m).count()),
        mean_prompt_tokens: round1(answers.iter().map(|a| f64::from(a.prompt_tokens)).sum::<f64>() / n),
        mean_injected: round1(answers.iter().map(|a| a.injected.len() as f64).sum::<f64>() / n),
        first_token: timing(answers.iter().map(|a| a.first_token_ms).collect()),
        total: timing(answers.iter().map(|a| a.total_ms).collect()),
        wall_seconds: round1(wall_seconds),
        answers,
    }
}
