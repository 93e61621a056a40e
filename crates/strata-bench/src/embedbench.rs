//! Embedding speed (`strata bench embed`): throughput at several batch sizes and single-query
//! latency over real conversational text, next to the reference implementation
//! (sentence-transformers, run by `scripts/embed_reference.py`) on the same texts in the same run.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use strata_core::Embedder;

use strata_api::ApiResult;

/// Batch sizes measured.
pub const BATCHES: [usize; 3] = [1, 16, 64];

/// One implementation's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EmbedFigures {
    /// What ran.
    pub implementation: String,
    /// Sentences a second at each batch size.
    pub per_second: BTreeMap<String, f64>,
    /// Single-query latency, median.
    pub query_p50_ms: f64,
    /// Single-query latency, 95th percentile.
    pub query_p95_ms: f64,
}

/// The run.
#[derive(Debug, Clone, Serialize)]
pub struct EmbedReport {
    /// Sentences embedded per batch size.
    pub sentences: usize,
    /// Their mean length in words.
    pub mean_words: f64,
    /// Queries timed one by one.
    pub queries: usize,
    /// Strata's embedder, then the reference if it ran.
    pub runs: Vec<EmbedFigures>,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted.get(((sorted.len() as f64 * p) as usize).min(sorted.len().saturating_sub(1))).copied().unwrap_or(0.0)
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Times `embedder` over `texts` (each batch size) and `queries` (one at a time).
pub fn measure(embedder: &dyn Embedder, name: &str, texts: &[&str], queries: &[&str]) -> ApiResult<EmbedFigures> {
    embedder.embed(&texts[..texts.len().min(16)])?; // warm-up
    let mut per_second = BTreeMap::new();
    for b in BATCHES {
        // Batch 1 is slow: a fifth of the texts is enough to time it.
        let n = if b == 1 { texts.len().div_ceil(5) } else { texts.len() };
        let started = Instant::now();
        for chunk in texts[..n].chunks(b) {
            embedder.embed(chunk)?;
        }
        per_second.insert(b.to_string(), round1(n as f64 / started.elapsed().as_secs_f64().max(1e-9)));
    }
    let mut lat: Vec<f64> = Vec::with_capacity(queries.len());
    for q in queries {
        let t = Instant::now();
        embedder.embed_query(q)?;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    lat.sort_by(f64::total_cmp);
    Ok(EmbedFigures {
        implementation: name.to_string(),
        per_second,
        query_p50_ms: round1(percentile(&lat, 0.5)),
        query_p95_ms: round1(percentile(&lat, 0.95)),
    })
}

/// Runs the reference script with `python` on the same texts; its figures, or why not.
pub fn reference(
    python: &std::path::Path,
    script: &std::path::Path,
    model_dir: &std::path::Path,
    texts: &[&str],
    queries: &[&str],
) -> ApiResult<EmbedFigures> {
    let input = serde_json::json!({ "texts": texts, "queries": queries, "batches": BATCHES });
    crate::reference::run(python, script, &[model_dir.as_os_str()], &input)
}
