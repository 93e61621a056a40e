//! Analytics at scale (`strata bench analytics`): a store of N memories (a LoCoMo file's turns
//! repeated, embedded), brought to ten events per memory (accesses, one tier move in ten) and
//! 10,000 recorded recalls over the last 90 days; then the analytics screen's first view
//! (`Engine::dashboard` over 30 days) and each drill-down timed, warm, and health timed once.
//! Last, what recording recalls costs recall: the file's questions asked by an engine that
//! records and one that does not, interleaved on the same store, p95 of each.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use strata_api::analytics::MemoryDrill;
use strata_api::health::HealthParams;
use strata_api::{ApiResult, Engine, EngineOptions};
use strata_core::analytics::{Bucket, Purpose, Range, RecallHit, RecallRecord, ScoreParts};
use strata_core::event::{Change, EventMeta, Expected};
use strata_core::{Embedder, Filter, Store, Tier};

use crate::scalebench::{Latency, USER, caching, fill, latency};

/// Events each memory has after the fill.
const EVENTS_PER_MEMORY: usize = 10;
/// Recalls recorded before timing.
const RECORDED: usize = 10_000;
/// Times each view is timed.
const RUNS: usize = 7;

/// Times each question is recalled each way for the cost of recording.
const ROUNDS: usize = 6;

/// One store size.
#[derive(Debug, Clone, Serialize)]
pub struct SizeReport {
    /// Memories.
    pub memories: usize,
    /// Events in the log.
    pub events: u64,
    /// Recorded recalls.
    pub recalls: usize,
    /// The first view (dashboard, 30 days by day), median and p95 of the runs.
    pub dashboard: Latency,
    /// Of which the memory metrics.
    pub memory_metrics: Latency,
    /// The recall metrics.
    pub recall_metrics: Latency,
    /// The prompts' use of their budgets.
    pub utilization_metrics: Latency,
    /// Memories created on one day.
    pub drill_created: Latency,
    /// Memories expired on one day.
    pub drill_moved: Latency,
    /// The 30 days' recalls that found nothing.
    pub drill_no_result: Latency,
    /// The first 200 memories never recalled.
    pub drill_never_recalled: Latency,
    /// Health (near-duplicates, contradictions, stale, space), once, in ms.
    pub health_ms: f64,
    /// Recall with its usage record kept.
    pub recall_recorded: Latency,
    /// Recall without.
    pub recall_unrecorded: Latency,
}

/// The run.
#[derive(Debug, Clone, Serialize)]
pub struct AnalyticsReport {
    /// Questions asked for the recording cost (each [`ROUNDS`] times, each way).
    pub questions: usize,
    /// One per size.
    pub sizes: Vec<SizeReport>,
}

/// Fills a store per size in `workdir` and times analytics at each. A store already there
/// (`analytics-SIZE.db`, kept from an earlier run) is timed as it is, not filled again.
pub fn run(data: &Path, workdir: &Path, embedder: Arc<dyn Embedder>, sizes: &[usize]) -> ApiResult<AnalyticsReport> {
    let (turns, questions) = crate::locomo::texts(data)?;
    let questions: Vec<String> = questions.into_iter().take(200).collect();
    let cached = caching(embedder.clone());
    let mut report = AnalyticsReport { questions: questions.len(), sizes: Vec::new() };
    for &size in sizes {
        let path = workdir.join(format!("analytics-{size}.db"));
        let events = if path.exists() {
            Store::open(&path)?.stats()?.events
        } else {
            fill(&path, &turns, size, cached.clone())?;
            add_events(&path, &questions)?
        };
        let options = |days| EngineOptions {
            user_id: USER.into(),
            client: "bench".into(),
            recall_records_days: days,
            ..Default::default()
        };
        let mut quiet = Engine::open(&path, options(None))?;
        quiet.use_embedder(embedder.clone(), false)?;
        let mut recording = Engine::open(&path, options(Some(3650)))?;
        recording.use_embedder(embedder.clone(), false)?;

        let now = chrono::Utc::now();
        let month = Range { since: Some(now - chrono::Duration::days(30)), bucket: Bucket::Day, ..Range::default() };
        let today = Range {
            since: Some(now - chrono::Duration::days(1)),
            until: Some(now + chrono::Duration::days(1)),
            ..Range::default()
        };
        let time = |f: &mut dyn FnMut() -> ApiResult<()>| -> ApiResult<Latency> {
            f()?; // warm
            let mut ms = Vec::with_capacity(RUNS);
            for _ in 0..RUNS {
                let t = Instant::now();
                f()?;
                ms.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            Ok(latency(ms))
        };
        let e = &quiet;
        let dashboard = time(&mut || e.dashboard(&month).map(drop))?;
        let memory_metrics = time(&mut || e.memory_metrics(&month).map(drop))?;
        let recall_metrics = time(&mut || e.recall_metrics(&month).map(drop))?;
        let utilization_metrics = time(&mut || e.utilization_metrics(&month).map(drop))?;
        let drill_created = time(&mut || e.drill_memories(&today, MemoryDrill::Created, 200).map(drop))?;
        let drill_moved = time(&mut || e.drill_memories(&today, MemoryDrill::Expired, 200).map(drop))?;
        let drill_no_result = time(&mut || e.drill_recalls(&month, true, None, 200).map(drop))?;
        let drill_never_recalled = time(&mut || e.drill_memories(&month, MemoryDrill::NeverRecalled, 200).map(drop))?;
        let t = Instant::now();
        e.health(&HealthParams::default())?;
        let health_ms = (t.elapsed().as_secs_f64() * 1000.0).round();

        // The cost of recording: the same questions with and without a record, ROUNDS times
        // over, which of the two runs first alternating (the second finds caches warmer).
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for (n, q) in (0..ROUNDS).flat_map(|_| questions.iter()).enumerate() {
            // Warm this question's path on both engines (each has its own connection and caches).
            quiet.recall(q, Filter::default(), 10)?;
            recording.recall(q, Filter::default(), 10)?;
            let timed = |e: &mut Engine, into: &mut Vec<f64>| -> ApiResult<()> {
                let t = Instant::now();
                e.recall(q, Filter::default(), 10)?;
                into.push(t.elapsed().as_secs_f64() * 1000.0);
                Ok(())
            };
            if n % 2 == 0 {
                timed(&mut recording, &mut with)?;
                timed(&mut quiet, &mut without)?;
            } else {
                timed(&mut quiet, &mut without)?;
                timed(&mut recording, &mut with)?;
            }
        }
        report.sizes.push(SizeReport {
            memories: size,
            events,
            recalls: RECORDED,
            dashboard,
            memory_metrics,
            recall_metrics,
            utilization_metrics,
            drill_created,
            drill_moved,
            drill_no_result,
            drill_never_recalled,
            health_ms,
            recall_recorded: latency(with),
            recall_unrecorded: latency(without),
        });
    }
    Ok(report)
}

/// Every memory's id, oldest first, through the store's own listing (no SQL of the bench's).
fn every_id(store: &Store) -> ApiResult<Vec<strata_core::MemoryId>> {
    let (mut ids, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let page = store.list(&Filter::default(), 5_000, cursor.as_deref())?;
        ids.extend(page.items.iter().map(|m| m.id));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    ids.reverse();
    Ok(ids)
}

/// Brings every memory to [`EVENTS_PER_MEMORY`] events — accesses, and for one in ten a move to
/// medium-term and, for one in a hundred, an expiry — and records [`RECORDED`] recalls of
/// `questions` over the last 90 days, each with ten results. Returns the events in the log.
fn add_events(path: &Path, questions: &[String]) -> ApiResult<u64> {
    let mut store = Store::open(path)?;
    let ids = every_id(&store)?;
    let meta = EventMeta::actor(strata_core::Actor::System);
    for block in ids.chunks(5_000) {
        store.transact(|tx| {
            for (i, id) in block.iter().enumerate() {
                for k in 1..EVENTS_PER_MEMORY {
                    let change = match (i % 10, i % 100, k) {
                        (0, _, 1) => Change::TierChanged {
                            from: Tier::Short,
                            to: Tier::Medium,
                            reason: "left working memory (beyond the 20 newest of its session)".into(),
                        },
                        (_, 0, 2) => Change::Expired { reason: "untouched for 92 days; value 0.04 < 0.2".into() },
                        _ => Change::Accessed { count: 1 },
                    };
                    tx.append(*id, Expected::Any, change, &meta)?;
                }
            }
            Ok(())
        })?;
    }
    let now = chrono::Utc::now();
    let span_ms = 90 * 86_400_000_i64;
    for n in 0..RECORDED {
        let query = &questions[n % questions.len().max(1)];
        let hits: Vec<_> = (0..10)
            .map(|k| {
                let score = 1.0 / (k + 1) as f64;
                let parts = ScoreParts {
                    matched: score * 0.9,
                    similarity: Some(score),
                    recency: score * 0.1,
                    ..ScoreParts::default()
                };
                RecallHit {
                    memory: ids[(n * 37 + k * 101) % ids.len()],
                    score,
                    parts: Some(parts),
                    in_prompt: k < 3,
                    used: None,
                }
            })
            .collect();
        let found = if n % 20 == 0 { vec![] } else { hits };
        let record = RecallRecord {
            user_id: USER,
            agent_id: None,
            client: Some("bench"),
            purpose: if n % 4 == 0 { Purpose::Prompt } else { Purpose::Search },
            query,
            latency_ms: 5.0,
            hits: found,
            prompt: None,
        };
        let at = now - chrono::Duration::milliseconds(span_ms * n as i64 / RECORDED as i64);
        store.record_recall_at(&record, at)?;
    }
    Ok(store.stats()?.events)
}
