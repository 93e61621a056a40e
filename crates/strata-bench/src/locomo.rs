//! LoCoMo evidence retrieval (shared/bench/locomo/README.md): ingest each conversation's turns
//! as episodic memories through the [`Engine`], ask every question, and measure how many of
//! its evidence turns come back in the top k, per category, with query latency.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};
use strata_core::{Content, Embedder, Episode, EpisodeBody, Filter, HybridOptions, MemoryKind};

use strata_api::{AddRequest, Engine, EngineOptions, Ranking};
use strata_api::{ApiError, ApiResult, ErrorCode};

/// The k of recall@k.
pub const KS: [usize; 4] = [1, 5, 10, 20];

/// The token budgets (cl100k_base) of recall within a budget.
pub const BUDGETS: [usize; 3] = [500, 1000, 2000];

/// One conversation of a LoCoMo-layout file.
#[derive(Debug, Deserialize)]
pub struct Sample {
    sample_id: String,
    conversation: serde_json::Map<String, serde_json::Value>,
    qa: Vec<Qa>,
    /// The annotators' facts per session (`session_N_observation`: speaker → [text, dia_id]),
    /// read only to score extraction.
    #[serde(default)]
    observation: serde_json::Map<String, serde_json::Value>,
}

/// The conversations of a LoCoMo-layout file.
pub fn samples(data: &Path) -> ApiResult<Vec<Sample>> {
    load(data)
}

/// A conversation's id (`conv-26`).
pub fn sample_id(sample: &Sample) -> &str {
    &sample.sample_id
}

/// One of the annotators' facts: whose, what, and the turns it was drawn from.
#[derive(Debug, Clone)]
pub struct Observation {
    /// The speaker it is filed under.
    pub speaker: String,
    /// What it says.
    pub text: String,
    /// The dia_ids of the turns it comes from, normalized ("D30:05" → "D30:5").
    pub evidence: Vec<String>,
}

/// The reference observations of session `n`.
pub fn observations(sample: &Sample, n: usize) -> Vec<Observation> {
    let Some(serde_json::Value::Object(by_speaker)) = sample.observation.get(&format!("session_{n}_observation"))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (speaker, items) in by_speaker {
        for item in items.as_array().into_iter().flatten() {
            let Some(text) = item.get(0).and_then(|t| t.as_str()) else { continue };
            let raw: Vec<&str> = match item.get(1) {
                Some(serde_json::Value::String(s)) => s.split(';').collect(),
                Some(serde_json::Value::Array(a)) => a.iter().filter_map(|v| v.as_str()).collect(),
                _ => Vec::new(),
            };
            let evidence = raw.into_iter().filter_map(normalize_dia_id).collect();
            out.push(Observation { speaker: speaker.clone(), text: text.to_string(), evidence });
        }
    }
    out
}

/// A question whose evidence lies in the turns written, with that evidence.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The question.
    pub text: String,
    /// The dia_ids of its evidence turns.
    pub evidence: HashSet<String>,
}

/// The questions of a conversation whose every evidence turn is one of `known` (the dia_ids
/// written), evidence normalized as [`run`] does.
pub fn asked_within(sample: &Sample, known: &HashSet<String>) -> Vec<Asked> {
    let mut out = Vec::new();
    for qa in &sample.qa {
        let evidence: Option<HashSet<String>> = qa
            .evidence
            .iter()
            .flat_map(|e| e.split(';'))
            .map(|raw| normalize_dia_id(raw).filter(|id| known.contains(id)))
            .collect();
        if let Some(evidence) = evidence.filter(|e| !e.is_empty()) {
            out.push(Asked { text: qa.question.clone(), evidence });
        }
    }
    out
}

/// The questions of a conversation that have a reference answer (categories 1–4): (question,
/// answer as text).
pub fn answered(sample: &Sample) -> Vec<(String, String)> {
    sample
        .qa
        .iter()
        .filter(|q| (1..=4).contains(&q.category))
        .filter_map(|q| {
            let answer = match q.answer.as_ref()? {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Some((q.question.clone(), answer))
        })
        .collect()
}

/// The evidence (dia_ids) of every question with a reference answer (categories 1–4) whose
/// evidence is more than one turn.
pub fn evidence_sets(sample: &Sample) -> Vec<Vec<String>> {
    sample
        .qa
        .iter()
        .filter(|q| (1..=4).contains(&q.category) && q.evidence.len() > 1)
        .map(|q| q.evidence.clone())
        .collect()
}

/// A day after the date of session `n` (or of the last session before it): when questions
/// about the first `n` sessions are asked.
pub fn asked_at(sample: &Sample, n: usize) -> Option<DateTime<Utc>> {
    let last = (1..).take_while(|k| sample.conversation.contains_key(&format!("session_{k}"))).last().unwrap_or(1);
    (1..=n.min(last))
        .rev()
        .find_map(|k| {
            sample.conversation.get(&format!("session_{k}_date_time")).and_then(|v| v.as_str()).and_then(session_time)
        })
        .map(|t| t + chrono::Duration::days(1))
}

/// A fresh store `name` in `work` for one conversation, its clock at the time questions about
/// its first `sessions` sessions are asked ([`asked_at`]), so what is written about them (facts,
/// concepts) is written then too.
pub fn open_store(work: &Path, name: &str, sample: &Sample, sessions: usize) -> ApiResult<Engine> {
    let path = work.join(format!("{name}.db"));
    let _ = std::fs::remove_file(&path);
    let now = asked_at(sample, sessions).unwrap_or_else(Utc::now);
    let clock = std::sync::Arc::new(strata_core::ManualClock::new(now));
    Engine::open_with_clock(&path, EngineOptions { client: "bench".into(), ..EngineOptions::default() }, clock)
}

/// The sessions [`write_sessions`] wrote: each one's number and turn count, and the dia_id of
/// each memory written.
#[derive(Debug, Default)]
pub struct Written {
    /// (session number, turns), in order.
    pub sessions: Vec<(usize, usize)>,
    /// memory id → dia_id.
    pub dia_of: HashMap<String, String>,
}

/// Writes the first `limit` sessions of a conversation as episodes (as [`run`] ingests them).
pub fn write_sessions(sample: &Sample, engine: &mut Engine, limit: usize) -> ApiResult<Written> {
    let mut out = Written::default();
    for (n, turns) in sample.sessions()?.into_iter().take(limit) {
        let count = turns.len();
        let dia_of = &mut out.dia_of;
        write_session(sample, n, turns, engine, &mut |id, dia| {
            dia_of.insert(id.to_string(), dia);
        })?;
        out.sessions.push((n, count));
    }
    Ok(out)
}

/// Writes one session's turns as episodes one second apart from the session's time, calling
/// `wrote(memory id, dia_id)` for each; returns the session's time.
fn write_session(
    sample: &Sample,
    n: usize,
    turns: Vec<Turn>,
    engine: &mut Engine,
    wrote: &mut dyn FnMut(strata_core::MemoryId, String),
) -> ApiResult<DateTime<Utc>> {
    let when = sample
        .conversation
        .get(&format!("session_{n}_date_time"))
        .and_then(|v| v.as_str())
        .and_then(session_time)
        .ok_or_else(|| ApiError::invalid(format!("{}: session_{n} has no readable date", sample.sample_id)))?;
    for (i, t) in turns.into_iter().enumerate() {
        let mut text = t.text;
        if let Some(c) = t.blip_caption {
            text.push_str(&format!(" [shares a photo: {c}]"));
        }
        let episode = Episode {
            occurred_at: when + chrono::Duration::seconds(i as i64),
            body: EpisodeBody::Utterance { speaker: t.speaker, text },
            concepts: vec![],
            extra: [("dia_id".to_string(), serde_json::Value::String(t.dia_id.clone()))].into_iter().collect(),
        };
        let m = engine.add(AddRequest {
            session_id: Some(format!("session_{n}")),
            ..AddRequest::new(Content::Episodic(episode))
        })?;
        wrote(m.id.parse()?, t.dia_id);
    }
    Ok(when)
}

impl Sample {
    /// Its sessions in order (`session_1`, `session_2`, … until one is missing), numbered.
    fn sessions(&self) -> ApiResult<Vec<(usize, Vec<Turn>)>> {
        let mut out = Vec::new();
        for n in 1.. {
            let Some(session) = self.conversation.get(&format!("session_{n}")) else { break };
            let turns = serde_json::from_value(session.clone())
                .map_err(|e| ApiError::invalid(format!("{}: session_{n}: {e}", self.sample_id)))?;
            out.push((n, turns));
        }
        Ok(out)
    }
}

#[derive(Debug, Deserialize)]
struct Turn {
    speaker: String,
    dia_id: String,
    text: String,
    #[serde(default)]
    blip_caption: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Qa {
    question: String,
    #[serde(default)]
    evidence: Vec<String>,
    category: u8,
    /// The reference answer (categories 1–4; a string or a number).
    #[serde(default)]
    answer: Option<serde_json::Value>,
}

/// One retrieval configuration's results.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigReport {
    /// Mean evidence recall at each k, over all questions.
    pub recall_at: BTreeMap<String, f64>,
    /// The same without category 5 (adversarial).
    pub recall_at_excl_adversarial: BTreeMap<String, f64>,
    /// Per category ("1" … "5"), recall at each k.
    pub by_category: BTreeMap<String, BTreeMap<String, f64>>,
    /// Median query latency.
    pub p50_ms: f64,
    /// 95th percentile query latency.
    pub p95_ms: f64,
}

/// The whole run, in the shape tools track over time.
#[derive(Debug, Clone, Serialize)]
pub struct LocomoReport {
    /// Results per configuration name.
    pub configs: BTreeMap<String, ConfigReport>,
    /// The configuration the product uses.
    pub default: String,
    /// Questions evaluated.
    pub questions: usize,
    /// Questions skipped because no evidence id named a turn.
    pub skipped: usize,
    /// Evidence entries repaired (e.g. "D30:05" → "D30:5", "D8:6; D9:17" split in two).
    pub evidence_repaired: usize,
    /// Evidence ids dropped because they name no turn.
    pub evidence_dropped: usize,
    /// Turns ingested.
    pub turns: usize,
    /// Ingest through the engine with its background embedding worker: from the first write
    /// until every turn is stored and embedded (None without an embedder).
    pub ingest: Option<IngestReport>,
    /// Evidence recall within a token budget ("500", "1000", "2000" tokens of cl100k_base):
    /// the default configuration's candidates through the context assembler with its default
    /// options, scored on the memories the prompt actually holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_recall: Option<BTreeMap<String, f64>>,
    /// The same per candidate order of the assembler (`score`, `value_per_token`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub budget_recall_by_order: BTreeMap<String, BTreeMap<String, f64>>,
    /// Mean tokens the prompts used, per budget (default options).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub budget_tokens_used: BTreeMap<String, f64>,
}

/// How fast memories went in, embeddings included.
#[derive(Debug, Clone, Serialize)]
pub struct IngestReport {
    /// Memories written.
    pub memories: usize,
    /// Seconds from the first write until the last was embedded.
    pub seconds: f64,
    /// Memories per second.
    pub per_second: f64,
}

/// Parses "1:56 pm on 8 May, 2023" (the session times of the LoCoMo layout) as UTC.
fn session_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim().replace(" am ", " AM ").replace(" pm ", " PM ");
    NaiveDateTime::parse_from_str(&s, "%I:%M %p on %d %B, %Y").ok().map(|t| t.and_utc())
}

/// "D30:05" → "D30:5"; "D:11:26" → "D11:26"; anything else that is not `D<n>:<n>` → None.
fn normalize_dia_id(raw: &str) -> Option<String> {
    let digits: Vec<u32> = raw
        .trim()
        .strip_prefix('D')?
        .split(':')
        .filter(|p| !p.is_empty())
        .map(|p| p.trim().parse().ok())
        .collect::<Option<_>>()?;
    match digits.as_slice() {
        [session, turn] => Some(format!("D{session}:{turn}")),
        _ => None,
    }
}

struct Question {
    sample: String,
    text: String,
    category: u8,
    evidence: HashSet<String>,
}

/// The turn texts (as they are embedded: "speaker: text") and the questions of a LoCoMo-layout
/// file, for benchmarks that need realistic conversational sentences.
pub fn texts(data: &Path) -> ApiResult<(Vec<String>, Vec<String>)> {
    let samples = load(data)?;
    let mut turns = Vec::new();
    let mut questions = Vec::new();
    for sample in &samples {
        for (_, session_turns) in sample.sessions()? {
            turns.extend(session_turns.into_iter().map(|t| format!("{}: {}", t.speaker, t.text)));
        }
        questions.extend(sample.qa.iter().map(|q| q.question.clone()));
    }
    Ok((turns, questions))
}

fn load(data: &Path) -> ApiResult<Vec<Sample>> {
    let text = std::fs::read_to_string(data)
        .map_err(|e| ApiError::new(ErrorCode::Io, format!("cannot read {}: {e}", data.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| ApiError::new(ErrorCode::BadImport, format!("{}: not in the LoCoMo layout: {e}", data.display())))
}

/// Something that answers a question with memory ids, best first.
pub type Retriever<'a> = dyn FnMut(&mut Engine, &str, usize) -> ApiResult<Vec<String>> + 'a;

/// Where the benchmark's stores go: database files in a folder, or databases on a PostgreSQL
/// server (one per conversation, dropped and created again at each run).
#[derive(Debug, Clone)]
pub enum Store {
    /// A folder of SQLite files.
    Files(std::path::PathBuf),
    /// A PostgreSQL server's URL (`postgres://USER:PASSWORD@HOST:PORT/ANY`); each store is a
    /// database named `strata_locomo_<conversation>` on it.
    Postgres(String),
}

impl Store {
    /// The store named `name`: a file's path, or a database's URL (as a path: the engine
    /// opens a `postgres://` path as a URL).
    fn db(&self, name: &str) -> std::path::PathBuf {
        match self {
            Store::Files(dir) => dir.join(format!("{name}.db")),
            Store::Postgres(url) => {
                let base = url.rsplit_once('/').map_or(url.as_str(), |(b, _)| b);
                std::path::PathBuf::from(format!("{base}/strata_locomo_{}", name.to_lowercase()))
            }
        }
    }

    /// Makes the store `db` empty.
    fn fresh(&self, db: &Path) -> ApiResult<()> {
        match self {
            Store::Files(_) => {
                let _ = std::fs::remove_file(db);
                Ok(())
            }
            Store::Postgres(_) => Ok(strata_core::postgres::recreate_database(&db.to_string_lossy())?),
        }
    }
}

/// Something that finds a question's candidate memories for the context assembler.
pub type Candidates<'a> = dyn FnMut(&mut Engine, &str) -> ApiResult<Vec<strata_context::Candidate>> + 'a;

/// Loads a LoCoMo-layout file, ingests every conversation into a fresh database of its own in
/// `workdir` (one person's store, as the desktop app keeps it), and evaluates each named
/// retriever.
pub fn run(
    data: &Path,
    workdir: &Store,
    embedder: Option<std::sync::Arc<dyn Embedder>>,
    configs: &mut [(&str, Box<Retriever<'_>>)],
    default: &str,
    candidates: Option<&mut Candidates<'_>>,
) -> ApiResult<LocomoReport> {
    let corpus = Corpus::ingest(&load(data)?, workdir, embedder)?;
    let mut report = corpus.report(default);
    let open_at = |sample: &str| corpus.open_at(sample);
    for (name, retrieve) in configs.iter_mut() {
        report.configs.insert(name.to_string(), score(&corpus.questions, &corpus.dia_of, &open_at, retrieve)?);
    }
    if let Some(find) = candidates {
        budget_recall(&mut report, &corpus.questions, &corpus.dia_of, &open_at, find)?;
    }
    Ok(report)
}

/// The conversations as ingested: one database per conversation, the questions with their
/// evidence, and what was repaired or left out on the way.
struct Corpus {
    workdir: Store,
    embedder: Option<std::sync::Arc<dyn Embedder>>,
    questions: Vec<Question>,
    /// memory id → dia_id, to score retrieved memories
    dia_of: HashMap<String, String>,
    /// Questions are asked a day after each conversation's last session ("last year" and
    /// recency are read from then).
    asked_at: HashMap<String, DateTime<Utc>>,
    skipped: usize,
    repaired: usize,
    dropped: usize,
    turns: usize,
    seconds: f64,
}

impl Corpus {
    /// Ingests every conversation into a fresh database of its own, each embedded before the
    /// next starts, and gathers the questions whose evidence names a turn.
    fn ingest(
        samples: &[Sample],
        workdir: &Store,
        embedder: Option<std::sync::Arc<dyn Embedder>>,
    ) -> ApiResult<Corpus> {
        let mut corpus = Corpus {
            workdir: workdir.clone(),
            embedder,
            questions: Vec::new(),
            dia_of: HashMap::new(),
            asked_at: HashMap::new(),
            skipped: 0,
            repaired: 0,
            dropped: 0,
            turns: 0,
            seconds: 0.0,
        };
        let started = Instant::now();
        for sample in samples {
            let db = corpus.db(&sample.sample_id);
            corpus.workdir.fresh(&db)?;
            let mut engine = Engine::open(&db, options(&sample.sample_id))?;
            if let Some(e) = &corpus.embedder {
                engine.use_embedder(e.clone(), true)?;
            }
            let known = corpus.add_turns(sample, &mut engine)?;
            engine.wait_embedded(std::time::Duration::from_secs(3600))?;
            corpus.add_questions(sample, &known);
        }
        corpus.seconds = started.elapsed().as_secs_f64();
        Ok(corpus)
    }

    fn db(&self, sample: &str) -> std::path::PathBuf {
        self.workdir.db(&sample.replace(|c: char| !c.is_alphanumeric(), "_"))
    }

    /// Writes a conversation's turns as episodes, session by session, one second apart;
    /// returns their dia_ids.
    fn add_turns(&mut self, sample: &Sample, engine: &mut Engine) -> ApiResult<HashSet<String>> {
        let mut known = HashSet::new();
        for (n, session_turns) in sample.sessions()? {
            let count = session_turns.len();
            let dia_of = &mut self.dia_of;
            let when = write_session(sample, n, session_turns, engine, &mut |id, dia| {
                dia_of.insert(id.to_string(), dia.clone());
                known.insert(dia);
            })?;
            let after = when + chrono::Duration::days(1);
            self.asked_at.entry(sample.sample_id.clone()).and_modify(|t| *t = (*t).max(after)).or_insert(after);
            self.turns += count;
        }
        Ok(known)
    }

    /// The conversation's questions with their evidence normalized ("D30:05" → "D30:5", "D8:6;
    /// D9:17" split); evidence naming no turn is dropped, a question left with none skipped.
    fn add_questions(&mut self, sample: &Sample, known: &HashSet<String>) {
        for qa in &sample.qa {
            let mut evidence = HashSet::new();
            for original in &qa.evidence {
                let mut changed = original.contains(';');
                for raw in original.split(';') {
                    match normalize_dia_id(raw) {
                        Some(id) if known.contains(&id) => {
                            changed |= id != raw.trim();
                            evidence.insert(id);
                        }
                        _ => self.dropped += 1,
                    }
                }
                if changed {
                    self.repaired += 1;
                }
            }
            if evidence.is_empty() {
                self.skipped += 1;
                continue;
            }
            self.questions.push(Question {
                sample: sample.sample_id.clone(),
                text: qa.question.clone(),
                category: qa.category,
                evidence,
            });
        }
    }

    /// A conversation's engine, opened at the time its questions are asked.
    fn open_at(&self, sample: &str) -> ApiResult<Engine> {
        let now = self.asked_at.get(sample).copied().unwrap_or_else(Utc::now);
        let clock = std::sync::Arc::new(strata_core::ManualClock::new(now));
        let mut engine = Engine::open_with_clock(&self.db(sample), options(sample), clock)?;
        if let Some(e) = &self.embedder {
            engine.use_embedder(e.clone(), false)?;
        }
        Ok(engine)
    }

    /// The report before any configuration is scored.
    fn report(&self, default: &str) -> LocomoReport {
        let ingest = self.embedder.as_ref().map(|_| IngestReport {
            memories: self.turns,
            seconds: round3(self.seconds),
            per_second: round3(self.turns as f64 / self.seconds.max(1e-9)),
        });
        LocomoReport {
            configs: BTreeMap::new(),
            default: default.to_string(),
            questions: self.questions.len(),
            skipped: self.skipped,
            evidence_repaired: self.repaired,
            evidence_dropped: self.dropped,
            turns: self.turns,
            ingest,
            budget_recall: None,
            budget_recall_by_order: BTreeMap::new(),
            budget_tokens_used: BTreeMap::new(),
        }
    }
}

/// One conversation's engine options: its own person.
fn options(sample: &str) -> EngineOptions {
    EngineOptions { user_id: sample.to_string(), client: "locomo".into(), ..Default::default() }
}

/// Asks every question with `retrieve` and scores the evidence found in its top k, per
/// category, with the latency of each call.
fn score(
    questions: &[Question],
    dia_of: &HashMap<String, String>,
    open_at: &dyn Fn(&str) -> ApiResult<Engine>,
    retrieve: &mut Retriever<'_>,
) -> ApiResult<ConfigReport> {
    let kmax = *KS.iter().max().unwrap_or(&20);
    let mut engines: HashMap<String, Engine> = HashMap::new();
    let mut latencies = Vec::with_capacity(questions.len());
    // (category, k) → sum of recall
    let mut sums: BTreeMap<(u8, usize), f64> = BTreeMap::new();
    let mut counts: BTreeMap<u8, usize> = BTreeMap::new();
    for q in questions {
        if !engines.contains_key(&q.sample) {
            engines.insert(q.sample.clone(), open_at(&q.sample)?);
        }
        let engine = engines.get_mut(&q.sample).expect("inserted above");
        let t = Instant::now();
        let ids = retrieve(engine, &q.text, kmax)?;
        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        *counts.entry(q.category).or_default() += 1;
        for k in KS {
            let found = ids.iter().take(k).filter(|id| dia_of.get(*id).is_some_and(|d| q.evidence.contains(d))).count();
            *sums.entry((q.category, k)).or_default() += found as f64 / q.evidence.len() as f64;
        }
    }
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
    };
    let mean = |cats: &dyn Fn(u8) -> bool, k: usize| {
        let n: usize = counts.iter().filter(|(c, _)| cats(**c)).map(|(_, n)| n).sum();
        let s: f64 = sums.iter().filter(|((c, kk), _)| cats(*c) && *kk == k).map(|(_, v)| v).sum();
        if n == 0 { 0.0 } else { round3(s / n as f64) }
    };
    let at = |cats: &dyn Fn(u8) -> bool| KS.iter().map(|k| (k.to_string(), mean(cats, *k))).collect();
    Ok(ConfigReport {
        recall_at: at(&|_| true),
        recall_at_excl_adversarial: at(&|c| c != 5),
        by_category: counts.keys().map(|c| (c.to_string(), at(&|x| x == *c))).collect(),
        p50_ms: round3(pct(0.5)),
        p95_ms: round3(pct(0.95)),
    })
}

fn budget_recall(
    report: &mut LocomoReport,
    questions: &[Question],
    dia_of: &HashMap<String, String>,
    open_at: &dyn Fn(&str) -> ApiResult<Engine>,
    find: &mut Candidates<'_>,
) -> ApiResult<()> {
    use strata_context::{ContextOptions, ContextRequest, Order, assemble};
    let tokens = strata_tokens::OpenAiTokens::new(strata_tokens::Encoding::Cl100kBase);
    let default = ContextOptions::default();
    let orders = [(Order::Score, "score"), (Order::ValuePerToken, "value_per_token")];
    // (order, budget) → sum of recall; budget → tokens used with the default order
    let mut sums: BTreeMap<(&str, usize), f64> = BTreeMap::new();
    let mut used: BTreeMap<usize, usize> = BTreeMap::new();
    let mut engines: HashMap<String, Engine> = HashMap::new();
    for q in questions {
        if !engines.contains_key(&q.sample) {
            engines.insert(q.sample.clone(), open_at(&q.sample)?);
        }
        let engine = engines.get_mut(&q.sample).expect("inserted above");
        let candidates = find(engine, &q.text)?;
        for (order, order_name) in orders {
            let options = ContextOptions { order, ..default.clone() };
            for budget in BUDGETS {
                let req = ContextRequest {
                    message: q.text.clone(),
                    candidates: candidates.clone(),
                    budget,
                    ..Default::default()
                };
                let a = assemble(&tokens, req, &options)?;
                let found = a
                    .report
                    .included
                    .iter()
                    .filter(|d| dia_of.get(&d.id.to_string()).is_some_and(|dia| q.evidence.contains(dia)))
                    .count();
                *sums.entry((order_name, budget)).or_default() += found as f64 / q.evidence.len() as f64;
                if order == default.order {
                    *used.entry(budget).or_default() += a.report.used;
                }
            }
        }
    }
    let n = questions.len().max(1) as f64;
    for ((order, budget), sum) in sums {
        report.budget_recall_by_order.entry(order.to_string()).or_default().insert(budget.to_string(), round3(sum / n));
    }
    let default_name = orders.iter().find(|(o, _)| *o == default.order).map_or("score", |(_, n)| *n);
    report.budget_recall = report.budget_recall_by_order.get(default_name).cloned();
    report.budget_tokens_used = used.into_iter().map(|(b, u)| (b.to_string(), round3(u as f64 / n))).collect();
    Ok(())
}

/// The budgets at which a prompt from the turns alone is compared with one that also draws on
/// what was derived from them (facts, concepts).
pub const DERIVED_BUDGETS: [usize; 4] = [250, 500, 1000, 2000];

/// The product's candidates for `question` (hybrid recall with the rerank, as many as the
/// engine's context takes): the turns alone, or with `derived`, the turns and the semantic
/// memories derived from them (facts, concepts).
pub fn recalled(engine: &mut Engine, question: &str, derived: bool) -> ApiResult<Vec<strata_context::Candidate>> {
    let kinds = if derived { vec![MemoryKind::Episodic, MemoryKind::Semantic] } else { vec![MemoryKind::Episodic] };
    let hits = engine.rank(
        Ranking::Hybrid(HybridOptions::hybrid_rerank()),
        question,
        Filter { kinds, ..Default::default() },
        strata_api::context::CANDIDATES,
    )?;
    Ok(hits.into_iter().map(strata_context::Candidate::from).collect())
}

/// Candidates for the assembler from hybrid recall with `options`, as the engine's
/// [`Engine::build_context`] gets them.
pub fn candidates(
    options: HybridOptions,
) -> impl FnMut(&mut Engine, &str) -> ApiResult<Vec<strata_context::Candidate>> {
    move |engine, question| {
        let hits = engine.rank(Ranking::Hybrid(options), question, episodes(), strata_api::context::CANDIDATES)?;
        Ok(hits.into_iter().map(strata_context::Candidate::from).collect())
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The conversation's turns: every question is asked of the episodic memories.
fn episodes() -> Filter {
    Filter { kinds: vec![MemoryKind::Episodic], ..Default::default() }
}

/// A configuration that ranks the conversation's turns by `ranking`.
pub fn ranked(ranking: Ranking) -> impl FnMut(&mut Engine, &str, usize) -> ApiResult<Vec<String>> {
    move |engine, question, k| {
        Ok(engine.rank(ranking, question, episodes(), k)?.into_iter().map(|h| h.memory.id.to_string()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_ids_are_repaired_when_the_meaning_is_clear() {
        let cases = [
            ("D1:3", Some("D1:3")),
            ("D30:05", Some("D30:5")),
            ("D:11:26", Some("D11:26")),
            (" D9:17", Some("D9:17")),
            ("D", None),
            ("X1:2", None),
            ("D1:2:3", None),
        ];
        for (raw, want) in cases {
            assert_eq!(normalize_dia_id(raw).as_deref(), want, "{raw}");
        }
    }

    #[test]
    fn session_times_parse() {
        let t = session_time("1:56 pm on 8 May, 2023").unwrap();
        assert_eq!(strata_core::time::format_time(t), "2023-05-08T13:56:00Z");
        assert_eq!(
            strata_core::time::format_time(session_time("10:04 am on 19 January, 2023").unwrap()),
            "2023-01-19T10:04:00Z"
        );
    }
}
