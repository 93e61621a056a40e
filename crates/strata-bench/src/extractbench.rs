//! Extraction, measured (issue 20): LoCoMo's sessions read by `Engine::extract` and the facts
//! compared with the reference observations annotated for each session (coverage and
//! precision), and a set of short histories where one fact changes (`data/extraction-updates`,
//! written by `scripts/make_update_set.py`): the share brought up to date with the old value
//! kept in the history, and the share where the old value is left standing beside the new.
//!
//! A fact matches an observation when both are about the same subject (the speaker the
//! observation is filed under; the fact's subject) and their MiniLM vectors have a cosine of at
//! least [`MATCH_COSINE`] — calibrated by reading pairs around it (docs/benchmarks.md,
//! "Extraction"). `--samples FILE` writes every pair's best match for such a reading.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use strata_api::extract::subject_key;
use strata_api::{ApiError, ApiResult, Engine, EngineOptions, ExtractParams, Review};
use strata_core::interchange::no_tick;
use strata_core::{ChatModel, Embedder};

use crate::{factrecall, locomo};

/// The cosine from which a fact and an observation say the same thing.
pub const MATCH_COSINE: f32 = 0.6;

/// What was measured on LoCoMo.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LocomoExtraction {
    /// Conversations read.
    pub conversations: usize,
    /// Sessions read.
    pub sessions: usize,
    /// Turns read.
    pub turns: usize,
    /// Facts extracted (adds and updates).
    pub facts: usize,
    /// Facts the model gave that the conversation did not bear out, dropped before deciding.
    pub ungrounded: usize,
    /// Reference observations of those sessions.
    pub observations: usize,
    /// Share of observations matched by a fact of the same session.
    pub coverage: f64,
    /// Share of facts matching an observation of the same session.
    pub precision: f64,
    /// Sessions whose extraction failed (a reply that did not read twice), by error.
    pub failed_sessions: Vec<String>,
    /// Seconds of extraction per session, median.
    pub seconds_per_session_p50: f64,
    /// Seconds of extraction per turn, overall.
    pub seconds_per_turn: f64,
    /// Model tokens per turn (prompt + completion).
    pub tokens_per_turn: f64,
    /// Evidence recall within a budget for the questions about the sessions read, from the
    /// turns alone and with the extracted facts beside them.
    pub retrieval: factrecall::FactRecall,
}

/// One history of the update set.
#[derive(Debug, Clone, Deserialize)]
pub struct UpdateCase {
    /// Its id.
    pub id: String,
    /// What changes (`move`, `job`, …).
    pub kind: String,
    /// Whose fact changes.
    pub subject: String,
    /// The conversations, oldest first.
    pub conversations: Vec<UpdateConversation>,
    /// What must hold afterwards.
    pub expect: UpdateExpect,
}

/// One conversation of an update case.
#[derive(Debug, Clone, Deserialize)]
pub struct UpdateConversation {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// Its turns.
    pub turns: Vec<UpdateTurn>,
}

/// One turn.
#[derive(Debug, Clone, Deserialize)]
pub struct UpdateTurn {
    /// `user` or `assistant`.
    pub speaker: String,
    /// What was said.
    pub text: String,
}

/// What must hold after an update case.
#[derive(Debug, Clone, Deserialize)]
pub struct UpdateExpect {
    /// Strings one current fact about the subject contains (the new value).
    pub current: Vec<String>,
    /// Strings no current fact about the subject contains (the old value).
    pub gone: Vec<String>,
    /// Strings an earlier value of some fact contains.
    pub history: Vec<String>,
}

/// One update case's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateOutcome {
    /// The case.
    pub id: String,
    /// Its kind.
    pub kind: String,
    /// The new value is current, the old one is not, and the old one is in the history.
    pub resolved: bool,
    /// The old value and the new one are both current.
    pub contradiction: bool,
    /// The subject's facts at the end (or the error).
    pub facts: Vec<String>,
}

/// What was measured on the update set.
#[derive(Debug, Clone, Default, Serialize)]
pub struct UpdateReport {
    /// Cases run.
    pub cases: usize,
    /// Share resolved correctly.
    pub resolved: f64,
    /// Share with a contradiction left standing.
    pub contradictions: f64,
    /// Per case.
    pub outcomes: Vec<UpdateOutcome>,
}

/// Everything `strata bench extract` reports.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExtractBenchReport {
    /// `provider/model`.
    pub model: String,
    /// LoCoMo, when asked for.
    pub locomo: Option<LocomoExtraction>,
    /// The update set, when asked for.
    pub updates: Option<UpdateReport>,
    /// LoCoMo's questions with the annotators' observations as the facts beside the turns,
    /// when asked for.
    pub reference: Option<factrecall::FactRecall>,
}

fn open(dir: &Path, name: &str) -> ApiResult<Engine> {
    let path = dir.join(format!("{name}.db"));
    let _ = std::fs::remove_file(&path);
    Engine::open(&path, EngineOptions { client: "bench".into(), ..EngineOptions::default() })
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A fact or an observation: whose, what, which session.
struct Said {
    subject: String,
    text: String,
    session: usize,
}

/// The best match of each item of `from` among `to` (same session and subject): its cosine.
fn best_matches(from: &[Said], to: &[Said], vf: &[Vec<f32>], vt: &[Vec<f32>]) -> Vec<(f32, Option<usize>)> {
    from.iter()
        .zip(vf)
        .map(|(a, va)| {
            let mut best = (0.0f32, None);
            for (j, (b, vb)) in to.iter().zip(vt).enumerate() {
                if a.session == b.session && a.subject == b.subject {
                    let c = cosine(va, vb);
                    if c > best.0 {
                        best = (c, Some(j));
                    }
                }
            }
            best
        })
        .collect()
}

/// Embeds everything in `engine` and adds its questions about the turns written to `tally`.
fn tally_recall(
    tally: &mut factrecall::Tally,
    engine: &mut Engine,
    sample: &locomo::Sample,
    written: &locomo::Written,
    embedder: &Arc<dyn Embedder>,
    facts: usize,
) -> ApiResult<()> {
    engine.use_embedder(embedder.clone(), false)?;
    engine.embed_all(&AtomicBool::new(false), &mut |_| {})?;
    let known = written.dia_of.values().cloned().collect();
    tally.add(engine, &locomo::asked_within(sample, &known), &written.dia_of, facts)
}

/// Runs extraction over the first `sessions` sessions of each LoCoMo conversation in `data`
/// and compares the facts with the observations; then asks the questions about those sessions
/// with the facts beside the turns ([`factrecall`]). `samples`: where to write every fact's
/// and observation's best match, for reading by hand.
pub fn run_locomo(
    data: &Path,
    sessions: usize,
    work: &Path,
    model: &dyn ChatModel,
    embedder: Arc<dyn Embedder>,
    samples: Option<&Path>,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<LocomoExtraction> {
    let samples_in = locomo::samples(data)?;
    let mut report = LocomoExtraction { conversations: samples_in.len(), ..Default::default() };
    let (mut facts, mut observations) = (Vec::new(), Vec::new());
    let mut per_session = Vec::new();
    let (mut seconds, mut tokens) = (0.0, 0u64);
    let mut tally = factrecall::Tally::default();
    for (c, sample) in samples_in.iter().enumerate() {
        let mut engine = locomo::open_store(work, &format!("extract-{c}"), sample, sessions)?;
        let written = locomo::write_sessions(sample, &mut engine, sessions)?;
        let facts_before = facts.len();
        for &(n, turns) in &written.sessions {
            let session = c * 1000 + n;
            report.sessions += 1;
            report.turns += turns;
            for o in locomo::observations(sample, n) {
                observations.push(Said { subject: subject_key(&o.speaker), text: o.text, session });
            }
            let params = ExtractParams {
                session_id: Some(format!("session_{n}")),
                review: Review::Apply,
                ..ExtractParams::default()
            };
            let started = Instant::now();
            match engine.extract(&params, model, &mut no_tick, &AtomicBool::new(false)) {
                Ok(r) => {
                    tokens += u64::from(r.usage.prompt_tokens + r.usage.completion_tokens);
                    report.ungrounded += r.ungrounded;
                    for d in r.decisions.iter().filter(|d| d.action != "noop") {
                        facts.push(Said { subject: subject_key(&d.subject_name), text: d.fact.clone(), session });
                    }
                }
                Err(e) => {
                    report.failed_sessions.push(format!("{} session {n}: {}", locomo::sample_id(sample), e.message))
                }
            }
            let s = started.elapsed().as_secs_f64();
            seconds += s;
            per_session.push(s);
            progress(&format!(
                "{} session {n}: {turns} turns, {:.1} s, {} facts so far",
                locomo::sample_id(sample),
                s,
                facts.len()
            ));
        }
        tally_recall(&mut tally, &mut engine, sample, &written, &embedder, facts.len() - facts_before)?;
    }
    report.retrieval = tally.report();
    let embed = |items: &[Said]| -> ApiResult<Vec<Vec<f32>>> {
        let texts: Vec<&str> = items.iter().map(|s| s.text.as_str()).collect();
        Ok(embedder.embed(&texts)?)
    };
    let (vf, vo) = (embed(&facts)?, embed(&observations)?);
    let fact_best = best_matches(&facts, &observations, &vf, &vo);
    let obs_best = best_matches(&observations, &facts, &vo, &vf);
    let share = |m: &[(f32, Option<usize>)]| {
        if m.is_empty() { 0.0 } else { m.iter().filter(|(c, _)| *c >= MATCH_COSINE).count() as f64 / m.len() as f64 }
    };
    report.facts = facts.len();
    report.observations = observations.len();
    report.precision = share(&fact_best);
    report.coverage = share(&obs_best);
    per_session.sort_by(f64::total_cmp);
    report.seconds_per_session_p50 = per_session.get(per_session.len() / 2).copied().unwrap_or(0.0);
    report.seconds_per_turn = seconds / report.turns.max(1) as f64;
    report.tokens_per_turn = tokens as f64 / report.turns.max(1) as f64;
    if let Some(path) = samples {
        let pairs: Vec<serde_json::Value> = facts
            .iter()
            .zip(&fact_best)
            .map(|(f, (c, j))| {
                serde_json::json!({"fact": f.text, "subject": f.subject, "cosine": c,
                    "observation": j.map(|j| observations[j].text.clone())})
            })
            .collect();
        let text = serde_json::to_string_pretty(&pairs).map_err(|e| ApiError::invalid(e.to_string()))?;
        strata_core::files::write_bytes(path, text.as_bytes())?;
    }
    Ok(report)
}

/// The annotators' observations of the first `sessions` sessions of each LoCoMo conversation
/// in `data`, written as facts beside the turns (what a perfect extractor would give), and the
/// questions about those sessions asked with them ([`factrecall`]).
pub fn run_reference(
    data: &Path,
    sessions: usize,
    work: &Path,
    embedder: Arc<dyn Embedder>,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<factrecall::FactRecall> {
    let mut tally = factrecall::Tally::default();
    for (c, sample) in locomo::samples(data)?.iter().enumerate() {
        let mut engine = locomo::open_store(work, &format!("reference-{c}"), sample, sessions)?;
        let written = locomo::write_sessions(sample, &mut engine, sessions)?;
        let memory_of = written.dia_of.iter().map(|(id, dia)| (dia.clone(), id.clone())).collect();
        let mut facts = 0;
        for &(n, _) in &written.sessions {
            facts += factrecall::write_observations(sample, n, &mut engine, &memory_of)?;
        }
        tally_recall(&mut tally, &mut engine, sample, &written, &embedder, facts)?;
        progress(&format!(
            "{}: {} sessions, {facts} observations as facts",
            locomo::sample_id(sample),
            written.sessions.len()
        ));
    }
    Ok(tally.report())
}

/// The update set in `file`.
pub fn read_updates(file: &Path) -> ApiResult<Vec<UpdateCase>> {
    let text =
        std::fs::read_to_string(file).map_err(|e| ApiError::invalid(format!("cannot read {}: {e}", file.display())))?;
    serde_json::from_str(&text).map_err(|e| ApiError::invalid(format!("{}: not an update set: {e}", file.display())))
}

/// The shipped update set.
pub fn updates_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/extraction-updates/updates.json")
}

fn contains_all(text: &str, words: &[String]) -> bool {
    let t = text.to_lowercase();
    words.iter().all(|w| t.contains(&w.to_lowercase()))
}

fn contains_any(text: &str, words: &[String]) -> bool {
    let t = text.to_lowercase();
    words.iter().any(|w| t.contains(&w.to_lowercase()))
}

/// Runs one update case in a fresh store: each conversation extracted (applied) in turn.
pub fn run_update(case: &UpdateCase, work: &Path, model: &dyn ChatModel) -> ApiResult<UpdateOutcome> {
    let mut engine = open(work, "update")?;
    for (i, conversation) in case.conversations.iter().enumerate() {
        let session = format!("conversation-{}", i + 1);
        let date = strata_core::time::parse_time(&format!("{}T10:00:00Z", conversation.date))?;
        for (t, turn) in conversation.turns.iter().enumerate() {
            let episode = strata_core::Episode {
                occurred_at: date + chrono::Duration::seconds(t as i64),
                body: strata_core::EpisodeBody::Utterance { speaker: turn.speaker.clone(), text: turn.text.clone() },
                concepts: vec![],
                extra: Default::default(),
            };
            engine.add(strata_api::AddRequest {
                session_id: Some(session.clone()),
                ..strata_api::AddRequest::new(strata_core::Content::Episodic(episode))
            })?;
        }
        let params = ExtractParams { session_id: Some(session), review: Review::Apply, ..ExtractParams::default() };
        engine.extract(&params, model, &mut no_tick, &AtomicBool::new(false))?;
    }
    let doc = engine.document(&case.subject).ok();
    let current: Vec<String> = doc.iter().flat_map(|d| d.facts.iter().map(|f| f.fact.clone())).collect();
    let earlier: Vec<String> = doc
        .iter()
        .flat_map(|d| d.facts.iter().flat_map(|f| f.history.iter().rev().skip(1).map(|v| v.fact.clone())))
        .collect();
    let new_current = current.iter().any(|f| contains_all(f, &case.expect.current));
    let old_current = current.iter().any(|f| contains_any(f, &case.expect.gone));
    let kept = earlier.iter().any(|f| contains_all(f, &case.expect.history));
    Ok(UpdateOutcome {
        id: case.id.clone(),
        kind: case.kind.clone(),
        resolved: new_current && !old_current && kept,
        contradiction: new_current && old_current,
        facts: current,
    })
}

/// Runs every update case.
pub fn run_updates(
    cases: &[UpdateCase],
    work: &Path,
    model: &dyn ChatModel,
    progress: &mut dyn FnMut(&str),
) -> ApiResult<UpdateReport> {
    let mut outcomes = Vec::new();
    for case in cases {
        let outcome = run_update(case, work, model).unwrap_or_else(|e| UpdateOutcome {
            id: case.id.clone(),
            kind: case.kind.clone(),
            resolved: false,
            contradiction: false,
            facts: vec![format!("error: {}", e.message)],
        });
        progress(&format!("{}: {}", case.id, if outcome.resolved { "resolved" } else { "not resolved" }));
        outcomes.push(outcome);
    }
    let n = outcomes.len().max(1) as f64;
    Ok(UpdateReport {
        cases: outcomes.len(),
        resolved: outcomes.iter().filter(|o| o.resolved).count() as f64 / n,
        contradictions: outcomes.iter().filter(|o| o.contradiction).count() as f64 / n,
        outcomes,
    })
}
