//! Recall at scale on PostgreSQL (`strata bench recall --postgres URL`): for each size, a fresh
//! database filled with a LoCoMo-layout file's turns (repeated in new sessions, each
//! repetition's vector moved a little so that no two are the same), every memory embedded
//! through the product's path (the HNSW index is built once a model has
//! [`strata_core::postgres::EXACT_BELOW`] vectors and kept up as vectors are added), then
//! the file's questions asked warm: recall's latency by ranking, and the index's recall@10
//! against an exact search with the latency of each.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use strata_api::{ApiResult, Engine};
use strata_core::Embedder;

use crate::scalebench::{self, Latency, latency};

/// The HNSW index against exact search at one size.
#[derive(Debug, Clone, Serialize)]
pub struct IndexFigures {
    /// `hnsw.ef_search`.
    pub ef_search: u32,
    /// The share of the exact ten nearest the index found, over the questions.
    pub recall_at_10: f64,
    /// The index's search.
    pub index: Latency,
    /// The exact search.
    pub exact: Latency,
}

/// One size.
#[derive(Debug, Clone, Serialize)]
pub struct PgSize {
    /// Memories in the store.
    pub memories: usize,
    /// Seconds to write them (one transaction per 1,000).
    pub write_seconds: f64,
    /// Seconds to embed and store their vectors (the index kept up as they come).
    pub embed_seconds: f64,
    /// Memories written and embedded a second.
    pub ingest_per_second: f64,
    /// Recall's latency by ranking (`bm25`, `vector`, `hybrid_rerank`).
    pub latency: BTreeMap<String, Latency>,
    /// The index against exact search (none below the size that builds one).
    pub index: Option<IndexFigures>,
}

/// The run.
#[derive(Debug, Clone, Serialize)]
pub struct PgScaleReport {
    /// Questions asked at each size.
    pub questions: usize,
    /// One entry per size.
    pub sizes: Vec<PgSize>,
}

/// Fills a database per size on the server at `url` (a user that may create databases; each
/// is `strata_scale_<size>`, made afresh) and measures it.
pub fn run(data: &Path, url: &str, embedder: Arc<dyn Embedder>, sizes: &[usize]) -> ApiResult<PgScaleReport> {
    let (turns, questions) = crate::locomo::texts(data)?;
    let questions: Vec<String> = questions.into_iter().take(200).collect();
    let jittered = crate::compactbench::jittered(scalebench::caching(embedder.clone()));
    let base = url.rsplit_once('/').map_or(url, |(b, _)| b);
    let mut report = PgScaleReport { questions: questions.len(), sizes: Vec::new() };
    for &size in sizes {
        let db = format!("{base}/strata_scale_{size}");
        strata_core::postgres::recreate_database(&db)?;
        let started = Instant::now();
        let write_seconds = scalebench::fill(Path::new(&db), &turns, size, jittered.clone())?;
        let total = started.elapsed().as_secs_f64();
        let mut engine = Engine::open(Path::new(&db), scalebench::options())?;
        engine.use_embedder(embedder.clone(), false)?;
        let latency = scalebench::time_rankings(&engine, &questions)?;
        let index = index_figures(&engine, &questions)?;
        report.sizes.push(PgSize {
            memories: size,
            write_seconds,
            embed_seconds: round2(total - write_seconds),
            ingest_per_second: round2(size as f64 / total),
            latency,
            index,
        });
    }
    Ok(report)
}

/// The index's recall@10 against exact search over `questions`, and each one's latency (a
/// first pass warms the caches).
fn index_figures(engine: &Engine, questions: &[String]) -> ApiResult<Option<IndexFigures>> {
    let (mut found, mut index_ms, mut exact_ms) = (0usize, Vec::new(), Vec::new());
    for timed in [false, true] {
        for q in questions {
            let Some(check) = engine.index_check(q, 10)? else { return Ok(None) };
            if timed {
                found += check.index.iter().filter(|id| check.exact.contains(id)).count();
                index_ms.push(check.index_ms);
                exact_ms.push(check.exact_ms);
            }
        }
    }
    let wanted = (questions.len() * 10).max(1);
    Ok(Some(IndexFigures {
        ef_search: strata_core::postgres::EF_SEARCH,
        recall_at_10: (found as f64 / wanted as f64 * 1000.0).round() / 1000.0,
        index: latency(index_ms),
        exact: latency(exact_ms),
    }))
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
