//! Several adapters, one chosen per question (`strata bench adapters`): one adapter trained
//! per topic (twenty invented facts each, [`crate::topics`]), all in use at once, and each
//! held-out phrasing answered by the adapter its embedding chooses, or by none. Reports, for
//! k = 3 and 5 adapters in use: each adapter's recall alone and with selection (no
//! interference: with selection never lower), how often questions about nothing trained
//! choose none, the scores behind the threshold (a sweep, to calibrate it), what choosing
//! adds to an answer, and each adapter's gate. `choose_only` skips training: the scores and
//! the sweep in seconds.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use strata_api::{AddRequest, ApiResult, Engine, EngineOptions, Target};
use strata_core::{Concept, Content, Embedder, FactValue, Facts};
use strata_models::{Adapter, AdapterInUse, Chooser, LocalChat};
use strata_train::{Dataset, Gate, Split, TrainConfig, pipeline};

use crate::scalebench::Latency;

/// One topic's adapter.
#[derive(Debug, Clone, Serialize)]
pub struct TopicAdapter {
    /// The topic.
    pub topic: String,
    /// Its adapter (none when only choosing was measured).
    pub adapter: Option<String>,
    /// Facts trained.
    pub facts: usize,
    /// Seconds training took.
    pub train_seconds: f64,
    /// Held-out recall with its adapter alone in use.
    pub recall_alone: f64,
    /// Held-out recall with no adapter.
    pub recall_without: f64,
    /// General perplexity with it, relative to the base model's.
    pub perplexity_change: f64,
    /// Whether it passed its gate.
    pub passed: bool,
}

/// One adapter among k in use.
#[derive(Debug, Clone, Serialize)]
pub struct Selected {
    /// The topic.
    pub topic: String,
    /// Share of its held-out phrasings that chose it.
    pub chose_it: f64,
    /// Held-out recall with selection among the k (its adapter alone: [`TopicAdapter`]).
    pub recall_selected: f64,
    /// Held-out recall with it alone in use.
    pub recall_alone: f64,
}

/// k adapters in use.
#[derive(Debug, Clone, Serialize)]
pub struct WithK {
    /// Adapters in use.
    pub k: usize,
    /// Each adapter's figures.
    pub adapters: Vec<Selected>,
    /// Share of general questions that chose no adapter.
    pub general_chose_none: f64,
    /// Share of near misses (untrained subjects, trained attributes) that chose none.
    pub near_chose_none: f64,
    /// Share of held-out phrasings with a second adapter above the threshold too.
    pub ambiguous: f64,
    /// Share of the general text's paragraphs (the perplexity gate's) that chose an adapter:
    /// with none chosen, general text is read by the model as it is (perplexity ×1.00).
    pub general_text_chose_one: f64,
}

/// At one threshold: the shares a calibration weighs.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// The threshold.
    pub at: f32,
    /// Held-out phrasings that chose their own adapter.
    pub right: f64,
    /// General questions that chose none.
    pub general_none: f64,
    /// Near misses that chose none.
    pub near_none: f64,
}

/// What the bench found.
#[derive(Debug, Clone, Serialize)]
pub struct AdaptersBenchReport {
    /// The on-device model (none when only choosing was measured).
    pub model: Option<String>,
    /// The embedder that chose.
    pub embedder: String,
    /// The threshold in use ([`strata_models::CHOOSE_AT`]).
    pub threshold: f32,
    /// One adapter per topic.
    pub topics: Vec<TopicAdapter>,
    /// With 3 and 5 in use.
    pub with_k: Vec<WithK>,
    /// The threshold swept, all topics in use.
    pub sweep: Vec<Sweep>,
    /// Choosing for a question whose embedding search made already (the app's path).
    pub choose_ms: Latency,
    /// Applying another adapter (unmerged) to the loaded model.
    pub switch_ms: Option<Latency>,
    /// Seconds the bench ran.
    pub seconds: f64,
}

/// Every topic: the example facts ("people"), then [`crate::topics::MORE`].
pub fn topics() -> Vec<(String, Vec<Content>)> {
    let mut all = vec![("people".to_string(), strata_train::demo::contents())];
    let more = crate::topics::MORE
        .iter()
        .map(|(name, concepts)| (name.to_string(), strata_train::demo::contents_of(concepts)));
    all.extend(more);
    all
}

/// A topic's memories, each in the store under a scope of its own.
fn stored(db: &Path, topic: usize, contents: Vec<Content>) -> ApiResult<Vec<strata_core::Memory>> {
    let options = EngineOptions { user_id: format!("topic-{topic}"), ..Default::default() };
    let mut engine = Engine::open(db, options)?;
    contents
        .into_iter()
        .map(|c| {
            let id = engine.add(AddRequest::new(c))?.id;
            engine.memory(&Target::new(id))
        })
        .collect()
}

/// A topic being measured: its set, its adapter once trained, its held-out rows' answers.
struct Trained {
    name: String,
    set: Dataset,
    adapter: Option<(String, std::path::PathBuf)>,
    report: Option<strata_train::Report>,
    train_seconds: f64,
}

/// Runs the bench in `workdir` with `k` topics (at most five), on `chat` (none: choosing only).
pub fn run(
    workdir: &Path,
    embedder: Arc<dyn Embedder>,
    chat: Option<&LocalChat>,
    k: usize,
    config: &TrainConfig,
) -> ApiResult<AdaptersBenchReport> {
    let started = Instant::now();
    let db = workdir.join("adapters-bench.db");
    let mut engine = Engine::open(&db, EngineOptions::default())?;
    let mut done = Vec::new();
    for (i, (name, contents)) in topics().into_iter().take(k.clamp(1, 5)).enumerate() {
        let memories = stored(&db, i, contents)?;
        let mut topic = Trained { name, set: Dataset::default(), adapter: None, report: None, train_seconds: 0.0 };
        topic.set = match chat {
            Some(chat) => strata_train::dataset(chat, &memories, config)?,
            None => Dataset::from_memories(&memories, &|_| Ok(0), usize::MAX)?,
        };
        if let Some(chat) = chat {
            let plan = pipeline::Plan { set: &topic.set, config, gate: Some(Gate::default()) };
            let outcome = pipeline::run(&mut engine, &db, chat, plan, &mut |_| {}, &Default::default())?;
            topic.train_seconds = outcome.trained.seconds;
            topic.adapter = Some((outcome.adapter.id.clone(), outcome.adapter.path.clone()));
            topic.report = outcome.report;
        }
        done.push(topic);
    }
    let in_use: Vec<AdapterInUse> = done
        .iter()
        .map(|t| AdapterInUse {
            dir: t.adapter.as_ref().map(|a| a.1.clone()).unwrap_or_default(),
            id: t.adapter.as_ref().map_or_else(|| t.name.clone(), |a| a.0.clone()),
            base_model: chat.map(|c| c.name().to_string()).unwrap_or_default(),
            keys: strata_train::views::trained_questions(&t.set),
        })
        .collect();
    let scores = Scores::of(&embedder, &in_use, &done)?;
    let mut with_k = Vec::new();
    for k in [3, 5].into_iter().filter(|&k| k <= done.len()) {
        with_k.push(selected(chat, &done[..k], &scores, k)?);
    }
    let sweep = (0..=25).map(|i| scores.sweep(0.40 + 0.02 * i as f32, done.len())).collect();
    let choose_ms = choose_latency(&embedder, &in_use)?;
    let switch_ms = match chat {
        Some(chat) => Some(switch_latency(chat, &in_use)?),
        None => None,
    };
    Ok(AdaptersBenchReport {
        model: chat.map(|c| c.name().to_string()),
        embedder: embedder.model_id().to_string(),
        threshold: strata_models::CHOOSE_AT,
        topics: done.iter().map(topic_view).collect(),
        with_k,
        sweep,
        choose_ms,
        switch_ms,
        seconds: started.elapsed().as_secs_f64(),
    })
}

fn topic_view(t: &Trained) -> TopicAdapter {
    let r = t.report.as_ref();
    TopicAdapter {
        topic: t.name.clone(),
        adapter: t.adapter.as_ref().map(|a| a.0.clone()),
        facts: t.set.facts().len(),
        train_seconds: t.train_seconds,
        recall_alone: r.map_or(0.0, |r| r.recall_with_adapter),
        recall_without: r.map_or(0.0, |r| r.recall_without),
        perplexity_change: r.map_or(0.0, strata_train::Report::perplexity_change),
        passed: r.is_some_and(|r| r.passed),
    }
}

/// Every question's score with every adapter (all topics in use).
struct Scores {
    /// Per topic, per held-out phrasing: its scores, by adapter.
    heldout: Vec<Vec<Vec<f32>>>,
    general: Vec<Vec<f32>>,
    near: Vec<Vec<f32>>,
    paragraphs: Vec<Vec<f32>>,
}

impl Scores {
    fn of(embedder: &Arc<dyn Embedder>, in_use: &[AdapterInUse], topics: &[Trained]) -> ApiResult<Scores> {
        let chooser = Chooser::new(embedder.clone(), in_use, strata_models::CHOOSE_AT)?;
        let all = |qs: &mut dyn Iterator<Item = &str>| -> ApiResult<Vec<Vec<f32>>> {
            qs.map(|q| Ok(chooser.scores(q)?)).collect()
        };
        let heldout = topics
            .iter()
            .map(|t| all(&mut t.set.examples.iter().filter(|e| e.split == Split::Heldout).map(|e| e.question.as_str())))
            .collect::<ApiResult<_>>()?;
        let general = all(&mut crate::topics::GENERAL.iter().copied())?;
        let near = all(&mut crate::topics::NEAR.iter().copied())?;
        let text = strata_train::eval::GENERAL_TEXT.split("\n\n").map(str::trim).filter(|p| !p.is_empty());
        let paragraphs = all(&mut text.into_iter())?;
        Ok(Scores { heldout, general, near, paragraphs })
    }

    /// The choice among the first `k` adapters at `at`.
    fn choice(scores: &[f32], k: usize, at: f32) -> Option<usize> {
        strata_models::choose::best(&scores[..k], at).map(|c| c.index)
    }

    fn none_share(questions: &[Vec<f32>], k: usize, at: f32) -> f64 {
        share(questions.iter().map(|s| Scores::choice(s, k, at).is_none()))
    }

    fn sweep(&self, at: f32, k: usize) -> Sweep {
        let right = self
            .heldout
            .iter()
            .enumerate()
            .flat_map(|(i, qs)| qs.iter().map(move |s| Scores::choice(s, k, at) == Some(i)));
        Sweep {
            at,
            right: share(right),
            general_none: Scores::none_share(&self.general, k, at),
            near_none: Scores::none_share(&self.near, k, at),
        }
    }
}

fn share(it: impl Iterator<Item = bool>) -> f64 {
    let (mut yes, mut all) = (0usize, 0usize);
    for b in it {
        all += 1;
        yes += usize::from(b);
    }
    if all == 0 { 0.0 } else { yes as f64 / all as f64 }
}

/// The first `k` topics' adapters in use together: each held-out phrasing answered by the
/// adapter it chooses. An answer by its own adapter, or by none, is the one its report holds
/// (greedy decoding: the same model, prompt and adapter give the same answer); one by
/// another adapter is asked.
fn selected(chat: Option<&LocalChat>, topics: &[Trained], scores: &Scores, k: usize) -> ApiResult<WithK> {
    let at = strata_models::CHOOSE_AT;
    let mut adapters = Vec::new();
    let mut ambiguous = Vec::new();
    for (i, t) in topics.iter().enumerate() {
        let choices: Vec<Option<usize>> = scores.heldout[i].iter().map(|s| Scores::choice(s, k, at)).collect();
        ambiguous.extend(scores.heldout[i].iter().map(|s| s[..k].iter().filter(|&&x| x >= at).count() > 1));
        let (recall_selected, recall_alone) = match (chat, &t.report) {
            (Some(chat), Some(report)) => (recall_with(chat, topics, i, &choices)?, report.recall_with_adapter),
            _ => (0.0, 0.0),
        };
        adapters.push(Selected {
            topic: t.name.clone(),
            chose_it: share(choices.iter().map(|c| *c == Some(i))),
            recall_selected,
            recall_alone,
        });
    }
    Ok(WithK {
        k,
        adapters,
        general_chose_none: Scores::none_share(&scores.general, k, at),
        near_chose_none: Scores::none_share(&scores.near, k, at),
        ambiguous: share(ambiguous.into_iter()),
        general_text_chose_one: 1.0 - Scores::none_share(&scores.paragraphs, k, at),
    })
}

/// Held-out recall of one topic when each row is answered by the adapter `choices` names.
fn recall_with(chat: &LocalChat, topics: &[Trained], own: usize, choices: &[Option<usize>]) -> ApiResult<f64> {
    let Some(report) = &topics[own].report else { return Ok(0.0) };
    let mut right = Vec::new();
    for (row, choice) in report.rows.iter().zip(choices) {
        let answer = match choice {
            None => row.without.clone(),
            Some(c) if *c == own => row.with_adapter.clone(),
            Some(c) => {
                let dir = &topics[*c].adapter.as_ref().expect("trained").1;
                let adapter = Adapter::load(dir, &chat.shape())?;
                strata_train::eval::answers_with(chat, &adapter, &[row.question.as_str()], &mut |_, _| {})?.remove(0)
            }
        };
        right.push(strata_train::eval::correct(&answer, &row.expected));
    }
    chat.set_adapter(None)?;
    Ok(share(right.into_iter()))
}

/// Choosing among all adapters for questions already embedded (as search leaves them).
fn choose_latency(embedder: &Arc<dyn Embedder>, in_use: &[AdapterInUse]) -> ApiResult<Latency> {
    let cached: Arc<dyn Embedder> = Arc::new(strata_core::RecentQueries::new(embedder.clone()));
    let chooser = Chooser::new(cached.clone(), in_use, strata_models::CHOOSE_AT)?;
    let mut ms = Vec::new();
    for q in crate::topics::GENERAL.iter().chain(crate::topics::NEAR) {
        cached.embed_query(q)?; // the search's embedding
        let t = Instant::now();
        chooser.choose(q)?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(crate::scalebench::latency(ms))
}

/// Applying each adapter in turn to the loaded model.
fn switch_latency(chat: &LocalChat, in_use: &[AdapterInUse]) -> ApiResult<Latency> {
    let adapters: Vec<Adapter> =
        in_use.iter().map(|a| Adapter::load(&a.dir, &chat.shape())).collect::<Result<_, _>>()?;
    let mut ms = Vec::new();
    for round in 0..10 {
        for a in &adapters {
            let t = Instant::now();
            chat.set_adapter(Some(a))?;
            if round > 0 {
                ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    chat.set_adapter(None)?;
    Ok(crate::scalebench::latency(ms))
}

/// One adapter on a curator-sized set: what training and its check cost, and how it did.
#[derive(Debug, Clone, Serialize)]
pub struct CuratorReport {
    /// The on-device model.
    pub model: String,
    /// Facts trained.
    pub facts: usize,
    /// Examples trained on.
    pub examples: usize,
    /// Seconds training took.
    pub train_seconds: f64,
    /// Seconds from the set to the evaluated adapter.
    pub run_seconds: f64,
    /// The process's peak resident memory, MiB.
    pub peak_mib: f64,
    /// Held-out recall with it.
    pub recall_with_adapter: f64,
    /// … without it.
    pub recall_without: f64,
    /// … by retrieval.
    pub recall_with_retrieval: f64,
    /// General perplexity with it, relative to the base's.
    pub perplexity_change: f64,
    /// Whether it passed the gate.
    pub passed: bool,
}

/// One adapter on `facts` facts: every topic's, then generated ones ([`crate::topics::generated`]).
pub fn curator(workdir: &Path, chat: &LocalChat, facts: usize, config: &TrainConfig) -> ApiResult<CuratorReport> {
    let db = workdir.join("curator-bench.db");
    let mut contents: Vec<Content> = topics().into_iter().flat_map(|(_, c)| c).collect();
    let extra = facts.saturating_sub(contents.len() * 4);
    for (key, facts) in crate::topics::generated(extra) {
        let facts: Facts = facts.into_iter().map(|(k, v)| (k.to_string(), FactValue::Text(v))).collect();
        contents.push(Content::Semantic(Concept { key, facts }));
    }
    let memories = stored(&db, 0, contents)?;
    let started = Instant::now();
    let set = strata_train::dataset(chat, &memories, config)?;
    let mut engine = Engine::open(&db, EngineOptions::default())?;
    let plan = pipeline::Plan { set: &set, config, gate: Some(Gate::default()) };
    let outcome = pipeline::run(&mut engine, &db, chat, plan, &mut |_| {}, &Default::default())?;
    let report = outcome.report.ok_or_else(|| strata_api::ApiError::invalid("not evaluated"))?;
    Ok(CuratorReport {
        model: chat.name().to_string(),
        facts: set.facts().len(),
        examples: set.train().count(),
        train_seconds: outcome.trained.seconds,
        run_seconds: started.elapsed().as_secs_f64(),
        peak_mib: strata_train::peak_memory_mib(),
        recall_with_adapter: report.recall_with_adapter,
        recall_without: report.recall_without,
        recall_with_retrieval: report.recall_with_retrieval,
        perplexity_change: report.perplexity_change(),
        passed: report.passed,
    })
}
