//! Recall latency by store size (`strata bench recall`): one person's store filled with
//! conversation turns (a LoCoMo-layout file's, repeated in new sessions until the size is
//! reached), every memory embedded by the real model, then that file's questions asked through
//! [`Engine::recall`] — keywords, vectors, time words and relevance, warm.
//!
//! Repeated turns have the same text, so each distinct text is embedded once and its vector
//! reused (a cache in front of the model); the index still holds one vector per memory.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use strata_core::{Embedder, Filter, HybridOptions};

use strata_api::ApiResult;
use strata_api::{Engine, EngineOptions, ImportFormat, Ranking};

/// Latency of one way of recalling at one size.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    /// Median.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
}

/// One store size.
#[derive(Debug, Clone, Serialize)]
pub struct SizeReport {
    /// Memories in the store.
    pub memories: usize,
    /// Seconds to write them (one transaction per 1,000).
    pub write_seconds: f64,
    /// Latency per configuration (`bm25`, `vector`, `hybrid_rerank`).
    pub latency: BTreeMap<String, Latency>,
}

/// The run.
#[derive(Debug, Clone, Serialize)]
pub struct ScaleReport {
    /// Questions asked at each size.
    pub questions: usize,
    /// One entry per size.
    pub sizes: Vec<SizeReport>,
}

/// The model with a cache of the texts it has embedded.
struct Cached {
    inner: Arc<dyn Embedder>,
    seen: Mutex<HashMap<String, Vec<f32>>>,
}

impl Embedder for Cached {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> strata_core::Result<Vec<Vec<f32>>> {
        let missing: Vec<&str> = {
            let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            let mut m: Vec<&str> = texts.iter().copied().filter(|t| !seen.contains_key(*t)).collect();
            m.sort_unstable();
            m.dedup();
            m
        };
        let fresh = if missing.is_empty() { Vec::new() } else { self.inner.embed(&missing)? };
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        for (t, v) in missing.iter().zip(fresh) {
            seen.insert(t.to_string(), v);
        }
        Ok(texts.iter().map(|t| seen.get(*t).cloned().unwrap_or_default()).collect())
    }
}

/// The user whose memories [`fill`] writes.
pub const USER: &str = "bench";

/// Writes a fresh store at `path` with `size` episodes of user [`USER`] — the `turns`
/// ("speaker: text") repeated in new sessions of 20 — one transaction per 1,000, then embeds
/// them all with `embedder`. Returns the seconds the writes took.
pub fn fill(path: &Path, turns: &[String], size: usize, embedder: Arc<dyn Embedder>) -> ApiResult<f64> {
    let _ = std::fs::remove_file(path);
    let mut engine = Engine::open(path, options())?;
    let start = strata_core::time::parse_time("2022-01-01T00:00:00Z")?;
    let started = Instant::now();
    add_turns(&mut engine, turns, size, start)?;
    let write_seconds = (started.elapsed().as_secs_f64() * 100.0).round() / 100.0;
    engine.use_embedder(embedder, false)?;
    engine.embed_all(&std::sync::atomic::AtomicBool::new(false), &mut |_| {})?;
    Ok(write_seconds)
}

/// Adds `size` episodes to `engine`'s user — the `turns` ("speaker: text") repeated in new
/// sessions of 20, seven minutes apart from `start` — through the engine's import, a seed-002
/// document of 1,000 episodes per transaction.
pub fn add_turns(
    engine: &mut Engine,
    turns: &[String],
    size: usize,
    start: chrono::DateTime<chrono::Utc>,
) -> ApiResult<()> {
    for block in (0..size).collect::<Vec<_>>().chunks(1000) {
        let episodic: Vec<serde_json::Value> = block
            .iter()
            .map(|&i| {
                let (speaker, text) = turns[i % turns.len()].split_once(": ").unwrap_or(("someone", "…"));
                serde_json::json!({
                    "timestamp": (start + chrono::Duration::minutes(i as i64 * 7)).to_rfc3339(),
                    "speaker": speaker,
                    "text": text,
                    "metadata": { "session_id": format!("session-{}", i / 20) },
                })
            })
            .collect();
        let doc = serde_json::json!({ "episodic": episodic }).to_string();
        engine.import("the benchmark's turns", &mut doc.as_bytes(), Some(ImportFormat::Seed))?;
    }
    Ok(())
}

/// The benchmark person's engine options.
pub(crate) fn options() -> EngineOptions {
    EngineOptions { user_id: USER.into(), client: "bench".into(), ..Default::default() }
}

/// A model that remembers what it embedded: repeated texts cost nothing the second time.
pub fn caching(embedder: Arc<dyn Embedder>) -> Arc<dyn Embedder> {
    Arc::new(Cached { inner: embedder, seen: Mutex::new(HashMap::new()) })
}

/// p50 and p95 of `ms`.
pub fn latency(mut ms: Vec<f64>) -> Latency {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms.get(((ms.len() as f64 * p) as usize).min(ms.len().saturating_sub(1))).copied().unwrap_or(0.0);
    let r = |x: f64| (x * 100.0).round() / 100.0;
    Latency { p50_ms: r(at(0.5)), p95_ms: r(at(0.95)) }
}

/// Fills a store per size in `workdir` and times the questions at each.
pub fn run(data: &Path, workdir: &Path, embedder: Arc<dyn Embedder>, sizes: &[usize]) -> ApiResult<ScaleReport> {
    let (turns, questions) = crate::locomo::texts(data)?;
    let questions: Vec<String> = questions.into_iter().take(200).collect();
    let cached = caching(embedder.clone());
    let mut report = ScaleReport { questions: questions.len(), sizes: Vec::new() };
    for &size in sizes {
        let path = workdir.join(format!("scale-{size}.db"));
        let write_seconds = fill(&path, &turns, size, cached.clone())?;
        let mut engine = Engine::open(&path, options())?;
        engine.use_embedder(embedder.clone(), false)?;
        let latencies = time_rankings(&engine, &questions)?;
        report.sizes.push(SizeReport { memories: size, write_seconds, latency: latencies });
    }
    Ok(report)
}

/// Recall's latency over `questions` by ranking (`bm25`, `vector`, `hybrid_rerank`), top 20;
/// a first pass warms the caches, the second is timed.
pub fn time_rankings(engine: &Engine, questions: &[String]) -> ApiResult<BTreeMap<String, Latency>> {
    let mut latencies = BTreeMap::new();
    let rankings = [
        ("bm25", Ranking::Keyword),
        ("vector", Ranking::Meaning),
        ("hybrid_rerank", Ranking::Hybrid(HybridOptions::default())),
    ];
    for (name, ranking) in rankings {
        let mut ms = Vec::with_capacity(questions.len());
        for timed in [false, true] {
            for q in questions {
                let t = Instant::now();
                engine.rank(ranking, q, Filter::default(), 20)?;
                if timed {
                    ms.push(t.elapsed().as_secs_f64() * 1000.0);
                }
            }
        }
        latencies.insert(name.to_string(), latency(ms));
    }
    Ok(latencies)
}
