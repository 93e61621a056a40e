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
    /// Questions compared.
    pub questions: usize,
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
    /// Seconds to write them (one transaction per 1,000); none when an earlier run's store
    /// was measured again.
    pub write_seconds: Option<f64>,
    /// Seconds to embed and store their vectors (the index kept up as they come).
    pub embed_seconds: Option<f64>,
    /// Memories written and embedded a second.
    pub ingest_per_second: Option<f64>,
    /// Recall's latency by ranking (`bm25`, `vector`, `hybrid_rerank`), at the shipped
    /// `ef_search`.
    pub latency: BTreeMap<String, Latency>,
    /// The index against exact search at each `ef_search` asked (none below the size that
    /// builds an index).
    pub index: Vec<IndexFigures>,
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
/// is `strata_scale_<size>`, made afresh; with `reuse`, measured again when filled, refused
/// when it holds another count) and measures it, the index at each of `ef_values` (none: the
/// shipped one).
pub fn run(
    data: &Path,
    url: &str,
    embedder: Arc<dyn Embedder>,
    sizes: &[usize],
    ef_values: &[u32],
    reuse: bool,
) -> ApiResult<PgScaleReport> {
    let (turns, questions) = crate::locomo::texts(data)?;
    let questions: Vec<String> = questions.into_iter().take(200).collect();
    let jittered = crate::compactbench::jittered(scalebench::caching(embedder.clone()));
    let base = url.rsplit_once('/').map_or(url, |(b, _)| b);
    let mut report = PgScaleReport { questions: questions.len(), sizes: Vec::new() };
    for &size in sizes {
        let db = format!("{base}/strata_scale_{size}");
        let (mut write_seconds, mut embed_seconds, mut ingest_per_second) = (None, None, None);
        let kept = reuse && filled(&db, size);
        if reuse && !kept && exists(&db) {
            // A store filled another way (by SQL, to a million) is never dropped by a --reuse.
            return Err(strata_api::ApiError::invalid(format!(
                "--reuse: strata_scale_{size} exists but does not hold {size} memories each with a vector; \
                 it is left as it is (drop it yourself to fill it afresh)"
            )));
        }
        if !kept {
            strata_core::postgres::recreate_database(&db)?;
            let started = Instant::now();
            let written = scalebench::fill(Path::new(&db), &turns, size, jittered.clone())?;
            let total = started.elapsed().as_secs_f64();
            (write_seconds, embed_seconds) = (Some(written), Some(round2(total - written)));
            ingest_per_second = Some(round2(size as f64 / total));
        }
        let open = || -> ApiResult<Engine> {
            let mut engine = Engine::open(Path::new(&db), scalebench::options())?;
            engine.use_embedder(embedder.clone(), false)?;
            Ok(engine)
        };
        let latency = scalebench::time_rankings(&open()?, &questions)?;
        let mut index = Vec::new();
        let shipped = [strata_core::postgres::EF_SEARCH];
        for &ef in if ef_values.is_empty() { &shipped[..] } else { ef_values } {
            set_ef_search(&db, Some(ef))?;
            index.extend(index_figures(&open()?, &questions, ef)?);
        }
        set_ef_search(&db, None)?;
        report.sizes.push(PgSize { memories: size, write_seconds, embed_seconds, ingest_per_second, latency, index });
    }
    Ok(report)
}

/// Questions the index is compared on (an exact search of a million vectors takes a second).
const COMPARED: usize = 50;

/// The index's recall@10 against exact search over the first [`COMPARED`] `questions`, and
/// each one's latency (a first pass warms the caches).
fn index_figures(engine: &Engine, questions: &[String], ef_search: u32) -> ApiResult<Option<IndexFigures>> {
    let questions = &questions[..questions.len().min(COMPARED)];
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
        ef_search,
        questions: questions.len(),
        recall_at_10: (found as f64 / wanted as f64 * 1000.0).round() / 1000.0,
        index: latency(index_ms),
        exact: latency(exact_ms),
    }))
}

/// Whether the database `db` exists (it accepts a connection).
fn exists(db: &str) -> bool {
    strata_core::postgres::driver::Client::connect(db, strata_core::postgres::driver::NoTls).is_ok()
}

/// Whether the database `db` exists and holds `size` memories, each with a vector.
fn filled(db: &str, size: usize) -> bool {
    let Ok(mut c) = strata_core::postgres::driver::Client::connect(db, strata_core::postgres::driver::NoTls) else {
        return false;
    };
    let count = |c: &mut strata_core::postgres::driver::Client, table: &str| {
        c.query_one(&format!("SELECT count(*) FROM {table}"), &[]).map(|r| r.get::<_, i64>(0)).unwrap_or(-1)
    };
    count(&mut c, "memories") == size as i64 && count(&mut c, "memory_vectors") == size as i64
}

/// Sets the store's own `hnsw_ef_search` (none: back to the shipped value) for the
/// connections opened after.
fn set_ef_search(db: &str, ef: Option<u32>) -> ApiResult<()> {
    let fail = |e: strata_core::postgres::driver::Error| strata_api::ApiError::invalid(format!("{db}: {e}"));
    let mut c =
        strata_core::postgres::driver::Client::connect(db, strata_core::postgres::driver::NoTls).map_err(fail)?;
    match ef {
        Some(ef) => c.execute(
            "INSERT INTO settings (key, value) VALUES ('hnsw_ef_search', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[&ef.to_string()],
        ),
        None => c.execute("DELETE FROM settings WHERE key = 'hnsw_ef_search'", &[]),
    }
    .map_err(fail)?;
    Ok(())
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
