//! Compaction, measured (issue 21): each LoCoMo conversation written into a store of its own,
//! embedded and compacted (timed), then every question with a reference answer (categories
//! 1–4) assembled into a prompt at 250, 500, 1,000 and 2,000 tokens (cl100k_base) from the
//! turns alone (raw) and from the turns and concepts (compacted); a question counts when its
//! answer, normalized (lower case, words only), appears in the prompt's memory block.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::Serialize;
use strata_api::{ApiResult, CompactParams};
use strata_context::{ContextOptions, ContextRequest, assemble};
use strata_core::Embedder;
use strata_core::concepts::is_concept;
use strata_core::interchange::no_tick;

use crate::locomo;

/// The token budgets (cl100k_base) measured.
pub use locomo::DERIVED_BUDGETS as BUDGETS;

/// What `strata bench compaction` reports.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompactionBench {
    /// Conversations compacted.
    pub conversations: usize,
    /// Memories (turns) in them.
    pub memories: usize,
    /// Concepts formed.
    pub concepts: usize,
    /// Memories in a concept.
    pub grouped: usize,
    /// Tokens of grouped memories ÷ tokens of their summaries.
    pub ratio: f64,
    /// Seconds to compact a conversation: median and slowest.
    pub seconds_p50: f64,
    /// Slowest conversation.
    pub seconds_max: f64,
    /// Questions with a reference answer.
    pub questions: usize,
    /// Budget → share of questions whose answer is in the memory block, turns alone.
    pub raw: BTreeMap<usize, f64>,
    /// The same with concepts among the candidates.
    pub compacted: BTreeMap<usize, f64>,
    /// Budget → concepts in the compacted prompt, on average.
    pub concepts_in_prompt: BTreeMap<usize, f64>,
}

/// Runs the measurement over every conversation in `data`.
pub fn run(
    data: &Path,
    work: &Path,
    embedder: Arc<dyn Embedder>,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<CompactionBench> {
    let mut report = CompactionBench::default();
    let (mut raw, mut compacted) = ([0usize; BUDGETS.len()], [0usize; BUDGETS.len()]);
    let mut in_prompt = [0usize; BUDGETS.len()];
    let (mut member_tokens, mut summary_tokens) = (0usize, 0usize);
    let mut seconds = Vec::new();
    let tokens = strata_tokens::OpenAiTokens::new(strata_tokens::Encoding::Cl100kBase);
    for (c, sample) in locomo::samples(data)?.iter().enumerate() {
        let mut engine = locomo::open_store(work, &format!("compact-{c}"), sample, usize::MAX)?;
        let written = locomo::write_sessions(sample, &mut engine, usize::MAX)?;
        engine.use_embedder(embedder.clone(), false)?;
        engine.embed_all(&AtomicBool::new(false), &mut |_| {})?;
        let started = Instant::now();
        let r = engine.compact(&CompactParams::default(), &mut no_tick, &AtomicBool::new(false))?;
        let s = started.elapsed().as_secs_f64();
        seconds.push(s);
        report.conversations += 1;
        report.memories += written.dia_of.len();
        report.concepts += r.concepts;
        report.grouped += r.grouped;
        member_tokens += r.member_tokens;
        summary_tokens += r.summary_tokens;
        for (question, answer) in locomo::answered(sample) {
            report.questions += 1;
            let answer = strata_api::extract::normalized(&answer);
            for with_concepts in [false, true] {
                let hits = if with_concepts { &mut compacted } else { &mut raw };
                let candidates = locomo::recalled(&mut engine, &question, with_concepts)?;
                for (b, budget) in BUDGETS.into_iter().enumerate() {
                    let request = ContextRequest {
                        message: question.clone(),
                        candidates: candidates.clone(),
                        budget,
                        ..Default::default()
                    };
                    let options = ContextOptions { concepts: true, ..ContextOptions::default() };
                    let prompt = assemble(&tokens, request, &options)?;
                    if with_concepts {
                        in_prompt[b] += prompt
                            .report
                            .included
                            .iter()
                            .filter(|d| candidates.iter().any(|c| c.memory.id == d.id && is_concept(&c.memory)))
                            .count();
                    }
                    let block: String = prompt
                        .messages
                        .iter()
                        .filter(|m| m.content.contains("<memories>"))
                        .map(|m| strata_api::extract::normalized(&m.content))
                        .collect();
                    if !answer.is_empty() && block.contains(&answer) {
                        hits[b] += 1;
                    }
                }
            }
        }
        progress(&format!(
            "{}: {} turns, {} concepts holding {}, compacted in {s:.1} s",
            locomo::sample_id(sample),
            written.dia_of.len(),
            r.concepts,
            r.grouped
        ));
    }
    let n = report.questions.max(1) as f64;
    let share = |hits: &[usize; BUDGETS.len()]| {
        BUDGETS.iter().zip(hits).map(|(b, h)| (*b, (*h as f64 / n * 1000.0).round() / 1000.0)).collect()
    };
    report.raw = share(&raw);
    report.compacted = share(&compacted);
    report.concepts_in_prompt = share(&in_prompt);
    report.ratio = member_tokens as f64 / summary_tokens.max(1) as f64;
    seconds.sort_by(f64::total_cmp);
    report.seconds_p50 = seconds.get(seconds.len() / 2).copied().unwrap_or(0.0);
    report.seconds_max = seconds.last().copied().unwrap_or(0.0);
    Ok(report)
}
