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
use strata_api::{ApiResult, CompactParams, Engine, EngineOptions, WriteParams, WriteReport};
use strata_context::{Candidate, ContextOptions, ContextRequest, assemble};
use strata_core::chat::ChatModel;
use strata_core::concepts::is_concept;
use strata_core::interchange::no_tick;
use strata_core::{Content, Embedder, Episode, EpisodeBody};
use unicode_segmentation::UnicodeSegmentation;

use crate::{locomo, scalebench};

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
    /// Of the pairs of turns that one question needs together (its evidence, when more than one
    /// turn), the share that one concept holds both of.
    pub together: f64,
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
    /// Share of the questions whose answer appears anywhere in their conversation's turns (with
    /// the turns' dates, as a prompt shows them): what no prompt can pass.
    pub anywhere: f64,
    /// Budget → the same share for a bound on compaction that shortens the turns recall found:
    /// each turn cut, by a compaction that knew the answer, to the sentences holding it (to its
    /// shortest sentence when none does), in recall's order ([`cut_to_answer`]).
    pub bound: BTreeMap<usize, f64>,
    /// Budget → concepts in the compacted prompt, on average.
    pub concepts_in_prompt: BTreeMap<usize, f64>,
    /// The summaries a model wrote (`--writer`), over every conversation; none: extractive.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub written: Option<WriteReport>,
    /// Compaction of larger stores (`--sizes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scale: Vec<ScaleCompaction>,
}

/// Compaction of one store of `memories` turns.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScaleCompaction {
    /// Memories in the store before the incremental pass.
    pub memories: usize,
    /// Seconds of a full pass (cluster, name, summarize, write).
    pub full_seconds: f64,
    /// Concepts it formed.
    pub concepts: usize,
    /// Memories in them.
    pub grouped: usize,
    /// Memories added afterwards for an incremental pass.
    pub added: usize,
    /// Seconds of that incremental pass.
    pub incremental_seconds: f64,
    /// Of those, how many joined a concept.
    pub joined: usize,
    /// Milliseconds of the incremental pass per memory added.
    pub incremental_ms_per_memory: f64,
}

/// Memories added before the incremental pass of [`scale`].
const ADDED: usize = 1000;

/// Times compaction of a store of `size` turns: the conversation turns of `data` repeated in
/// new sessions ([`scalebench::add_turns`]), a full pass, then [`ADDED`] more turns and an
/// incremental pass. Repeated turns would have identical vectors, which no real store has, so
/// each repetition's vector is its text's moved by a small deterministic jitter ([`Jittered`]).
/// This measures time, not the quality of the groups.
pub fn scale(data: &Path, work: &Path, embedder: Arc<dyn Embedder>, size: usize) -> ApiResult<ScaleCompaction> {
    let (turns, _) = locomo::texts(data)?;
    let path = work.join(format!("compact-scale-{size}.db"));
    let jittered = jittered(scalebench::caching(embedder));
    scalebench::fill(&path, &turns, size, jittered.clone())?;
    let mut engine = Engine::open(&path, EngineOptions { user_id: scalebench::USER.into(), ..Default::default() })?;
    engine.use_embedder(jittered, false)?;
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let full = engine.compact(&CompactParams::default(), &mut no_tick, &stop)?;
    let full_seconds = started.elapsed().as_secs_f64();
    let start = strata_core::time::parse_time("2025-01-01T00:00:00Z")?;
    scalebench::add_turns(&mut engine, &turns, ADDED, start)?;
    engine.embed_all(&stop, &mut |_| {})?;
    let started = Instant::now();
    let incremental = CompactParams { full: false, ..CompactParams::default() };
    let joined = engine.compact(&incremental, &mut no_tick, &stop)?.joined;
    let incremental_seconds = started.elapsed().as_secs_f64();
    Ok(ScaleCompaction {
        memories: size,
        full_seconds: round2(full_seconds),
        concepts: full.concepts,
        grouped: full.grouped,
        added: ADDED,
        incremental_seconds: round2(incremental_seconds),
        joined,
        incremental_ms_per_memory: round2(incremental_seconds * 1000.0 / ADDED as f64),
    })
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `embedder` with every vector moved a little, differently each call ([`Jittered`]).
pub fn jittered(embedder: Arc<dyn Embedder>) -> Arc<dyn Embedder> {
    Arc::new(Jittered::new(embedder))
}

/// A model whose every vector is moved a little, differently each call (deterministically), so
/// that a text written many times does not give many identical vectors.
struct Jittered {
    inner: Arc<dyn Embedder>,
    calls: std::sync::atomic::AtomicU64,
}

impl Jittered {
    fn new(inner: Arc<dyn Embedder>) -> Jittered {
        Jittered { inner, calls: std::sync::atomic::AtomicU64::new(0) }
    }
}

/// The jitter's length against a unit vector.
const JITTER: f32 = 0.1;

impl Embedder for Jittered {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> strata_core::Result<Vec<Vec<f32>>> {
        let mut out = self.inner.embed(texts)?;
        for v in &mut out {
            let mut state =
                self.calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let noise: Vec<f32> = (0..v.len())
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
                })
                .collect();
            let scale = JITTER / noise.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::EPSILON);
            for (x, n) in v.iter_mut().zip(noise) {
                *x += n * scale;
            }
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::EPSILON);
            v.iter_mut().for_each(|x| *x /= norm);
        }
        Ok(out)
    }
}

/// The three prompts measured for each question.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    /// The turns recall found.
    Raw,
    /// The turns and concepts.
    Compacted,
    /// The turns, each cut knowing the answer.
    Bound,
}

/// The turns recall found, each cut as a compaction that knew the answer would cut it: to its
/// sentences whose text (normalized) holds `answer` (normalized), or to its shortest sentence
/// when none does — the most a compaction that shortens turns could keep of what matters, at
/// the least cost, with nothing else about the prompt changed.
pub fn cut_to_answer(candidates: &[Candidate], answer: &str) -> Vec<Candidate> {
    let mut out = candidates.to_vec();
    for c in &mut out {
        if let Content::Episodic(e) = &mut c.memory.content
            && let EpisodeBody::Utterance { text, .. } = &mut e.body
        {
            let sentences: Vec<&str> = text.split_sentence_bounds().map(str::trim).filter(|s| !s.is_empty()).collect();
            let holding: Vec<&str> =
                sentences.iter().copied().filter(|s| strata_api::extract::normalized(s).contains(answer)).collect();
            let kept = if holding.is_empty() {
                sentences.iter().copied().min_by_key(|s| s.len()).into_iter().collect()
            } else {
                holding
            };
            *text = kept.join(" ");
        }
    }
    out
}

/// Of the pairs of evidence turns of each question that needs more than one, how many one
/// concept holds both of, and how many there are.
fn evidence_together(
    engine: &Engine,
    sample: &locomo::Sample,
    dia_of: &std::collections::HashMap<String, String>,
) -> ApiResult<(usize, usize)> {
    let mut concept_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let concepts = engine.concepts()?;
    for (k, c) in concepts.iter().enumerate() {
        for m in &c.members {
            if let Some(dia) = dia_of.get(m) {
                concept_of.insert(dia.as_str(), k);
            }
        }
    }
    let (mut together, mut pairs) = (0, 0);
    for evidence in locomo::evidence_sets(sample) {
        for (i, a) in evidence.iter().enumerate() {
            for b in &evidence[i + 1..] {
                pairs += 1;
                let (ca, cb) = (concept_of.get(a.as_str()), concept_of.get(b.as_str()));
                if ca.is_some() && ca == cb {
                    together += 1;
                }
            }
        }
    }
    Ok((together, pairs))
}

/// Every turn of the store with its date and speaker, as a prompt shows them, normalized.
fn conversation_text(engine: &Engine) -> ApiResult<String> {
    let turns = engine
        .all_memories(strata_core::Filter { kinds: vec![strata_core::MemoryKind::Episodic], ..Default::default() })?;
    let mut all = String::new();
    for m in turns {
        if let Content::Episodic(Episode { occurred_at, body: EpisodeBody::Utterance { speaker, text }, .. }) =
            &m.content
        {
            let said = format!("({}) {speaker}: {text}", occurred_at.format("%-d %B %Y"));
            all.push_str(&strata_api::extract::normalized(&said));
            all.push('\n');
        }
    }
    Ok(all)
}

/// Who writes the concepts' summaries, and over how many conversations (`None`: all).
#[derive(Clone, Copy, Default)]
pub struct Writing<'a> {
    /// The model that writes the summaries; `None`: they stay extractive.
    pub writer: Option<&'a dyn ChatModel>,
    /// The first this many conversations only.
    pub conversations: Option<usize>,
}

/// Runs the measurement over every conversation in `data`.
pub fn run(
    data: &Path,
    work: &Path,
    embedder: Arc<dyn Embedder>,
    writing: Writing<'_>,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<CompactionBench> {
    let mut report = CompactionBench::default();
    let (mut raw, mut compacted, mut bound) =
        ([0usize; BUDGETS.len()], [0usize; BUDGETS.len()], [0usize; BUDGETS.len()]);
    let mut in_prompt = [0usize; BUDGETS.len()];
    let mut anywhere = 0usize;
    let (mut pairs_together, mut pairs) = (0usize, 0usize);
    let (mut member_tokens, mut summary_tokens) = (0usize, 0usize);
    let mut seconds = Vec::new();
    let tokens = strata_tokens::OpenAiTokens::new(strata_tokens::Encoding::Cl100kBase);
    let samples = locomo::samples(data)?;
    for (c, sample) in samples.iter().take(writing.conversations.unwrap_or(usize::MAX)).enumerate() {
        let mut engine = locomo::open_store(work, &format!("compact-{c}"), sample, usize::MAX)?;
        let written = locomo::write_sessions(sample, &mut engine, usize::MAX)?;
        engine.use_embedder(embedder.clone(), false)?;
        engine.embed_all(&AtomicBool::new(false), &mut |_| {})?;
        let started = Instant::now();
        let r = engine.compact(&CompactParams::default(), &mut no_tick, &AtomicBool::new(false))?;
        let s = started.elapsed().as_secs_f64();
        seconds.push(s);
        if let Some(model) = writing.writer {
            write_summaries(&mut engine, model, sample, &mut report, progress)?;
        }
        report.conversations += 1;
        report.memories += written.dia_of.len();
        report.concepts += r.concepts;
        report.grouped += r.grouped;
        member_tokens += r.member_tokens;
        let (t, p) = evidence_together(&engine, sample, &written.dia_of)?;
        pairs_together += t;
        pairs += p;
        summary_tokens += r.summary_tokens;
        let everything = conversation_text(&engine)?;
        for (question, answer) in locomo::answered(sample) {
            report.questions += 1;
            let answer = strata_api::extract::normalized(&answer);
            if !answer.is_empty() && everything.contains(&answer) {
                anywhere += 1;
            }
            let turns = locomo::recalled(&mut engine, &question, false)?;
            let with_concepts = locomo::recalled(&mut engine, &question, true)?;
            let cut = cut_to_answer(&turns, &answer);
            for (way, candidates) in [(Way::Raw, turns), (Way::Compacted, with_concepts), (Way::Bound, cut)] {
                let hits = match way {
                    Way::Raw => &mut raw,
                    Way::Compacted => &mut compacted,
                    Way::Bound => &mut bound,
                };
                for (b, budget) in BUDGETS.into_iter().enumerate() {
                    let (found, concepts) = in_prompt_at(&tokens, &question, &candidates, budget, &answer)?;
                    if way == Way::Compacted {
                        in_prompt[b] += concepts;
                    }
                    if found {
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
    report.bound = share(&bound);
    report.anywhere = (anywhere as f64 / n * 1000.0).round() / 1000.0;
    report.concepts_in_prompt = share(&in_prompt);
    report.together = (pairs_together as f64 / pairs.max(1) as f64 * 1000.0).round() / 1000.0;
    report.ratio = member_tokens as f64 / summary_tokens.max(1) as f64;
    seconds.sort_by(f64::total_cmp);
    report.seconds_p50 = seconds.get(seconds.len() / 2).copied().unwrap_or(0.0);
    report.seconds_max = seconds.last().copied().unwrap_or(0.0);
    Ok(report)
}

/// Writes `engine`'s concept summaries with `model` and adds what it did to `report`.
fn write_summaries(
    engine: &mut strata_api::Engine,
    model: &dyn strata_core::chat::ChatModel,
    sample: &locomo::Sample,
    report: &mut CompactionBench,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<()> {
    let w = engine.write_summaries(model, &WriteParams::default(), &mut no_tick, &AtomicBool::new(false))?;
    progress(&format!(
        "{}: {} summaries written in {:.0} s, {} sentences kept, {} dropped",
        locomo::sample_id(sample),
        w.written,
        w.seconds,
        w.sentences_kept,
        w.sentences_dropped
    ));
    let all = report.written.get_or_insert_with(|| WriteReport { model: w.model.clone(), ..WriteReport::default() });
    all.written += w.written;
    all.kept_extractive += w.kept_extractive;
    all.sentences_kept += w.sentences_kept;
    all.sentences_dropped += w.sentences_dropped;
    all.seconds += w.seconds;
    Ok(())
}

/// Assembles the prompt for `question` from `candidates` within `budget`: whether its memories
/// hold `answer`, and how many concepts it includes.
fn in_prompt_at(
    tokens: &strata_tokens::OpenAiTokens,
    question: &str,
    candidates: &[strata_context::Candidate],
    budget: usize,
    answer: &str,
) -> ApiResult<(bool, usize)> {
    let request =
        ContextRequest { message: question.to_string(), candidates: candidates.to_vec(), budget, ..Default::default() };
    let options = ContextOptions { concepts: true, ..ContextOptions::default() };
    let prompt = assemble(tokens, request, &options)?;
    let concepts = prompt
        .report
        .included
        .iter()
        .filter(|d| candidates.iter().any(|c| c.memory.id == d.id && is_concept(&c.memory)))
        .count();
    let block: String = prompt
        .messages
        .iter()
        .filter(|m| m.content.contains("<memories>"))
        .map(|m| strata_api::extract::normalized(&m.content))
        .collect();
    Ok((!answer.is_empty() && block.contains(answer), concepts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::{Memory, MemoryId, Scope};

    fn turn(text: &str) -> Candidate {
        let t = strata_core::time::parse_time("2023-05-08T13:56:00Z").unwrap();
        let body = EpisodeBody::Utterance { speaker: "Ana".into(), text: text.into() };
        let episode = Episode { occurred_at: t, body, concepts: vec![], extra: Default::default() };
        let memory = Memory::new(
            MemoryId::from_parts(1, 0),
            Scope::user("u"),
            Content::Episodic(episode),
            Default::default(),
            t,
        );
        Candidate { memory, score: 1.0, why: None }
    }

    fn text(c: &Candidate) -> &str {
        match &c.memory.content {
            Content::Episodic(Episode { body: EpisodeBody::Utterance { text, .. }, .. }) => text,
            _ => unreachable!("a turn"),
        }
    }

    #[test]
    fn a_turn_is_cut_to_the_sentences_holding_the_answer_or_else_its_shortest() {
        let turns = [
            turn("Wow, great news! We went to West County. The flood was bad there."),
            turn("That sounds hard. Take care of yourself, please."),
        ];
        let cut = cut_to_answer(&turns, "west county");
        assert_eq!(text(&cut[0]), "We went to West County.");
        assert_eq!(text(&cut[1]), "That sounds hard.");
        assert_eq!(cut.len(), 2);
    }
}
