//! Training while the app is used (`strata bench training`): a store of N memories (a LoCoMo
//! file's turns, embedded) with the 20 example facts approved as candidates; the search box's
//! latency (`Engine::find`, the app's search) measured alone, then again while the facts are
//! trained and evaluated by the same pipeline as the app's Train button, on an engine of its
//! own in another thread, as the app runs it. Both timings come after one untimed pass, so
//! both find the questions' embeddings cached. Reports the run's time, its gate, and search
//! p50/p95 both ways.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use strata_api::curation::{CandidateCriteria, CandidateQuery, Verdict};
use strata_api::{AddRequest, ApiError, ApiResult, Engine};
use strata_core::{Embedder, Filter};
use strata_models::LocalChat;
use strata_train::{Gate, TrainConfig, pipeline};

use crate::scalebench::{Latency, caching, fill, latency, options};

/// The pause between two searches: a person typing, not a load test.
const PAUSE: Duration = Duration::from_millis(150);

/// What the bench found.
#[derive(Debug, Clone, Serialize)]
pub struct TrainBenchReport {
    /// The on-device model trained (its file's stem).
    pub model: String,
    /// Memories in the store.
    pub memories: usize,
    /// Facts trained.
    pub facts: usize,
    /// Seconds from pressing Train to the evaluated adapter.
    pub run_seconds: f64,
    /// Of which building the set (the base model answers the replay questions).
    pub set_seconds: f64,
    /// Of which training.
    pub train_seconds: f64,
    /// Of which what follows the last step: saving and registering the adapter and the
    /// evaluation (the held-out questions asked three ways, perplexity twice).
    pub evaluation_seconds: f64,
    /// Whether the adapter passed the gate.
    pub passed: bool,
    /// Held-out recall with the adapter.
    pub recall_with_adapter: f64,
    /// Held-out recall without it.
    pub recall_without: f64,
    /// Held-out recall without it, the fact in the prompt.
    pub recall_with_retrieval: f64,
    /// Search alone.
    pub search_alone: Latency,
    /// Searches timed alone.
    pub searches_alone: usize,
    /// Search while the run went on.
    pub search_while_training: Latency,
    /// Searches timed meanwhile.
    pub searches_while_training: usize,
}

/// Runs the bench in `workdir` with `size` memories from the LoCoMo file `data`.
pub fn run(
    data: &Path,
    workdir: &Path,
    embedder: Arc<dyn Embedder>,
    size: usize,
    model: Option<&str>,
) -> ApiResult<TrainBenchReport> {
    let (turns, questions) = crate::locomo::texts(data)?;
    let questions: Vec<String> = questions.into_iter().take(100).collect();
    let db = workdir.join("train-bench.db");
    fill(&db, &turns, size, embedder.clone())?;
    let cached = caching(embedder);
    let mut engine = Engine::open(&db, options())?;
    engine.use_embedder(cached.clone(), false)?;
    let facts = approve_demo_facts(&mut engine)?;

    // One pass untimed, so both timings find the questions' embeddings cached (as a search
    // box's repeated words would) and the store's pages warm.
    for q in &questions {
        timed(&mut engine, q)?;
    }
    let mut alone = Vec::new();
    for q in questions.iter().cycle().take(questions.len() * 3) {
        alone.push(timed(&mut engine, q)?);
        std::thread::sleep(PAUSE);
    }

    // The model the app trains: the one that answers (`model`, else `STRATA_CHAT_MODEL`, else
    // the default).
    let chat = LocalChat::load(&strata_models::chat_file(model)?)?;
    let trained_model = chat.name().to_string();
    let mut trainer = Engine::open(&db, options())?;
    let done = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    type Timed = (pipeline::Outcome, f64, f64);
    let outcome: Arc<Mutex<Option<ApiResult<Timed>>>> = Arc::new(Mutex::new(None));
    let worker = {
        let (done, outcome) = (done.clone(), outcome.clone());
        std::thread::spawn(move || {
            let config = TrainConfig::default();
            let mut trained_at = None;
            let result = pipeline::approved_set(&trainer, &chat, &config).and_then(|set| {
                let set_seconds = started.elapsed().as_secs_f64();
                let plan = pipeline::Plan { set: &set, config: &config, gate: Some(Gate::default()) };
                let mut follow = |e: pipeline::Event| {
                    if matches!(e, pipeline::Event::Step(_)) {
                        trained_at = Some(Instant::now());
                    }
                };
                let outcome = pipeline::run(&mut trainer, &db, &chat, plan, &mut follow, &AtomicBool::new(false))?;
                let evaluation = trained_at.map_or(0.0, |t: Instant| t.elapsed().as_secs_f64());
                Ok((outcome, set_seconds, evaluation))
            });
            *outcome.lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
            done.store(true, Ordering::Release);
        })
    };
    let mut during = Vec::new();
    for q in questions.iter().cycle() {
        if done.load(Ordering::Acquire) {
            break;
        }
        during.push(timed(&mut engine, q)?);
        std::thread::sleep(PAUSE);
    }
    let run_seconds = started.elapsed().as_secs_f64();
    worker.join().map_err(|_| ApiError::invalid("the training thread panicked"))?;
    let outcome = outcome.lock().unwrap_or_else(|p| p.into_inner()).take();
    let (outcome, set_seconds, evaluation_seconds) =
        outcome.ok_or_else(|| ApiError::invalid("the training thread ended without a result"))??;
    let report = outcome.report.ok_or_else(|| ApiError::invalid("the run was not evaluated"))?;
    Ok(TrainBenchReport {
        model: trained_model,
        memories: size,
        facts,
        run_seconds: round(run_seconds),
        set_seconds: round(set_seconds),
        train_seconds: round(outcome.trained.seconds),
        evaluation_seconds: round(evaluation_seconds),
        passed: report.passed,
        recall_with_adapter: report.recall_with_adapter,
        recall_without: report.recall_without,
        recall_with_retrieval: report.recall_with_retrieval,
        searches_alone: alone.len(),
        search_alone: latency(alone),
        searches_while_training: during.len(),
        search_while_training: latency(during),
    })
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// One search as the app's search box runs it, in ms.
fn timed(engine: &mut Engine, q: &str) -> ApiResult<f64> {
    let t = Instant::now();
    engine.find(q, Filter::default(), 50)?;
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

/// Stores the 20 example facts (as five long-term, important memories recalled often enough,
/// written three weeks before now), flags and approves them; returns how many facts.
fn approve_demo_facts(engine: &mut Engine) -> ApiResult<usize> {
    let clock = Arc::new(strata_core::ManualClock::new(chrono::Utc::now() - chrono::Duration::days(21)));
    let path = engine.path().ok_or_else(|| ApiError::invalid("the bench needs a store file"))?.to_path_buf();
    let mut past = Engine::open_with_clock(&path, options(), clock)?;
    let mut ids = Vec::new();
    for (content, (key, _)) in strata_train::demo::contents().into_iter().zip(strata_train::demo::FACTS) {
        let mut req = AddRequest::new(content);
        req.importance = Some(0.9);
        req.tier = Some(strata_core::Tier::Long);
        ids.push(past.add(req)?.id);
        for _ in 0..3 {
            past.recall(&key.replace('_', " "), Filter::default(), 3)?;
        }
    }
    past.flush()?;
    drop(past);
    engine.flag_candidates(&CandidateCriteria::default(), &mut |_, _| Ok(()), &AtomicBool::new(false))?;
    engine.decide_candidates(&ids, Verdict::Approve, Some("the bench"))?;
    let query = CandidateQuery { status: Some("approved".into()), ..Default::default() };
    let approved = engine.training_candidates(&query)?.approved as usize;
    if approved != ids.len() {
        return Err(ApiError::invalid(format!("{approved} of the {} example memories qualified", ids.len())));
    }
    Ok(strata_train::demo::FACTS.iter().map(|(_, facts)| facts.len()).sum())
}
