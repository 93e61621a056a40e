//! Embedding speed (`strata bench embed`): throughput at several batch sizes and single-query
//! latency over real conversational text, next to the reference implementation
//! (sentence-transformers, or ONNX Runtime on an `.onnx` export of the model, run by
//! `scripts/embed_reference.py`) on the same texts in the same run, with how closely each
//! reference's vectors agree with ours.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
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
    /// A reference's vectors against ours for the same texts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Agreement>,
}

/// How closely two implementations' vectors agree over the same texts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Agreement {
    /// Texts compared.
    pub texts: usize,
    /// The lowest cosine similarity of a text's two vectors.
    pub min_cosine: f64,
    /// The mean of those cosine similarities.
    pub mean_cosine: f64,
    /// The largest difference of one value (both vectors have unit length).
    pub max_abs_diff: f64,
}

/// What the reference script prints: its figures and every text's vector.
#[derive(Deserialize)]
struct ReferenceRun {
    #[serde(flatten)]
    figures: EmbedFigures,
    vectors: Vec<Vec<f32>>,
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
        agreement: None,
    })
}

/// Every text's vector from `embedder`, in calls of 64: what a reference's are compared with.
pub fn vectors(embedder: &dyn Embedder, texts: &[&str]) -> ApiResult<Vec<Vec<f32>>> {
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(64) {
        out.extend(embedder.embed(chunk)?);
    }
    Ok(out)
}

/// The agreement of `theirs` with `ours`, text by text; `None` if the counts or lengths differ.
pub fn agreement(ours: &[Vec<f32>], theirs: &[Vec<f32>]) -> Option<Agreement> {
    if ours.is_empty() || ours.len() != theirs.len() || ours.iter().zip(theirs).any(|(a, b)| a.len() != b.len()) {
        return None;
    }
    let (mut min_cosine, mut sum, mut max_abs_diff) = (f64::INFINITY, 0.0, 0.0f64);
    for (a, b) in ours.iter().zip(theirs) {
        let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| f64::from(*p) * f64::from(*q)).sum::<f64>();
        let cosine = dot(a, b) / (dot(a, a).sqrt() * dot(b, b).sqrt()).max(1e-12);
        min_cosine = min_cosine.min(cosine);
        sum += cosine;
        for (p, q) in a.iter().zip(b) {
            max_abs_diff = max_abs_diff.max(f64::from((p - q).abs()));
        }
    }
    Some(Agreement { texts: ours.len(), min_cosine, mean_cosine: sum / ours.len() as f64, max_abs_diff })
}

/// Runs the reference script with `python` on the same texts — sentence-transformers, or ONNX
/// Runtime on `onnx` — and compares its vectors with `ours` (from [`vectors`]); its figures, or
/// why not.
pub fn reference(
    python: &Path,
    script: &Path,
    model_dir: &Path,
    onnx: Option<&Path>,
    texts: &[&str],
    queries: &[&str],
    ours: &[Vec<f32>],
) -> ApiResult<EmbedFigures> {
    let input = serde_json::json!({ "texts": texts, "queries": queries, "batches": BATCHES });
    let mut args: Vec<&OsStr> = Vec::new();
    if let Some(file) = onnx {
        args.extend([OsStr::new("--onnx"), file.as_os_str()]);
    }
    args.push(model_dir.as_os_str());
    let run: ReferenceRun = crate::reference::run(python, script, &args, &input)?;
    Ok(EmbedFigures { agreement: agreement(ours, &run.vectors), ..run.figures })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_is_cosine_and_largest_difference_text_by_text() {
        let ours = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
        let a = agreement(&ours, &[vec![1.0, 0.0], vec![0.6, 0.8]]).unwrap();
        assert_eq!(a.texts, 2);
        assert!((a.min_cosine - 0.8).abs() < 1e-6 && (a.mean_cosine - 0.9).abs() < 1e-6, "{a:?}");
        assert!((a.max_abs_diff - 0.6).abs() < 1e-6, "{a:?}");
        // Different counts or lengths compare nothing.
        assert!(agreement(&ours, &ours[..1]).is_none());
        assert!(agreement(&ours, &[vec![1.0], vec![0.0]]).is_none());
    }
}
