//! Token counting speed (`strata bench tokens`): OpenAI's encodings counted over real
//! conversational text — many short texts (what the context assembler counts) and one long
//! document — next to the Python `tiktoken` package on the same texts in the same run
//! (`scripts/tokens_reference.py`, its encodings built from the same `.tiktoken` rank files
//! that `tiktoken-rs` ships, since it cannot download them here). Strata counts a long
//! document on every core; the short texts one at a time on one, as the assembler does.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use strata_tokens::{Encoding, OpenAiTokens, TokenManager};

use strata_api::ApiResult;

/// The encodings measured.
pub const ENCODINGS: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

/// One encoding's figures in one implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountFigures {
    /// Tokens in all the short texts (the same in every implementation, or one is wrong).
    pub short_tokens: u64,
    /// Tokens a second counting the short texts one by one.
    pub short_tokens_per_s: f64,
    /// Tokens in the long document.
    pub long_tokens: u64,
    /// Tokens a second counting the long document.
    pub long_tokens_per_s: f64,
}

/// One implementation's figures, per encoding name.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TokenRun {
    /// What ran.
    pub implementation: String,
    /// Per encoding.
    pub encodings: BTreeMap<String, CountFigures>,
}

/// The run.
#[derive(Debug, Clone, Serialize)]
pub struct TokenReport {
    /// Short texts counted.
    pub texts: usize,
    /// Bytes in them (the long document is them joined by newlines).
    pub bytes: usize,
    /// Strata, then the reference if it ran.
    pub runs: Vec<TokenRun>,
    /// Strata's speed over the reference's, per encoding and workload (≥ 1: Strata is as fast).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ratio: BTreeMap<String, BTreeMap<String, f64>>,
    /// Encodings whose token totals differ between the two (none, or one of them is wrong).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disagreements: Vec<String>,
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// Counts `texts` one by one, pass after pass, for at least `min_s` seconds and 5 passes;
/// returns (tokens in one pass, tokens a second in the fastest pass). The fastest pass is the
/// one least disturbed by whatever else the machine was doing; the reference is timed alike.
fn time_counts(tokens: &dyn TokenManager, texts: &[&str], min_s: f64) -> ApiResult<(u64, f64)> {
    let (mut one_pass, mut best, mut passes) = (0u64, 0f64, 0);
    let started = Instant::now();
    while passes < 5 || started.elapsed().as_secs_f64() < min_s {
        let pass = Instant::now();
        let mut n = 0u64;
        for t in texts {
            n += tokens.count(t)? as u64;
        }
        best = best.max(n as f64 / pass.elapsed().as_secs_f64().max(1e-9));
        one_pass = n;
        passes += 1;
    }
    Ok((one_pass, best))
}

/// Strata's figures on `texts`.
pub fn measure(texts: &[&str]) -> ApiResult<TokenRun> {
    let long = texts.join("\n");
    let mut encodings = BTreeMap::new();
    for e in ENCODINGS {
        let tokens = OpenAiTokens::new(e);
        tokens.count("warm up")?;
        let (short_tokens, short) = time_counts(&tokens, texts, 1.0)?;
        let (long_tokens, long) = time_counts(&tokens, &[&long], 1.0)?;
        encodings.insert(
            e.name().to_string(),
            CountFigures {
                short_tokens,
                short_tokens_per_s: round1(short),
                long_tokens,
                long_tokens_per_s: round1(long),
            },
        );
    }
    Ok(TokenRun { implementation: "Strata (tiktoken-rs 0.12.1)".into(), encodings })
}

/// The reference's figures: `python` runs `script` with the rank files in `ranks`.
pub fn reference(python: &Path, script: &Path, ranks: &Path, texts: &[&str]) -> ApiResult<TokenRun> {
    crate::reference::run(python, script, &[ranks.as_os_str()], &serde_json::json!({ "texts": texts }))
}

/// The report of Strata's run and, if given, the reference's.
pub fn report(texts: &[&str], ours: TokenRun, theirs: Option<TokenRun>) -> TokenReport {
    let mut ratio = BTreeMap::new();
    let mut disagreements = Vec::new();
    if let Some(t) = &theirs {
        for (name, o) in &ours.encodings {
            if let Some(r) = t.encodings.get(name) {
                let div = |a: f64, b: f64| (a / b.max(1e-9) * 100.0).round() / 100.0;
                ratio.insert(
                    name.clone(),
                    [
                        ("short".to_string(), div(o.short_tokens_per_s, r.short_tokens_per_s)),
                        ("long".to_string(), div(o.long_tokens_per_s, r.long_tokens_per_s)),
                    ]
                    .into_iter()
                    .collect(),
                );
                if (o.short_tokens, o.long_tokens) != (r.short_tokens, r.long_tokens) {
                    disagreements.push(name.clone());
                }
            }
        }
    }
    TokenReport {
        texts: texts.len(),
        bytes: texts.iter().map(|t| t.len()).sum(),
        runs: std::iter::once(ours).chain(theirs).collect(),
        ratio,
        disagreements,
    }
}

/// Where `tiktoken-rs` keeps its rank files in the cargo registry (`$CARGO_HOME`, else
/// `~/.cargo`), if it is there.
pub fn default_ranks_dir() -> Option<std::path::PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let src = std::fs::read_dir(home.join("registry").join("src")).ok()?;
    src.flatten()
        .map(|d| d.path().join("tiktoken-rs-0.12.1").join("assets"))
        .find(|p| p.join("cl100k_base.tiktoken").exists())
}
