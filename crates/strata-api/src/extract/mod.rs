//! Extraction (seed 004, with updates): conversations become facts about subjects, merged into
//! what is known with add / update / no-op decisions, each recorded with its reason and sources.
//!
//! A run reads the episodes of a session that no run has read ([`Store::unread_episodes`]), in
//! chunks of turns; for each chunk one model call extracts facts grouped by subject, then, per
//! subject with known facts, one call decides each new fact against them (a fact already known
//! word for word is a no-op without asking). The chunk's decisions and the mark that its turns
//! were read are one transaction: applied at once ([`Review::Apply`]) or kept as proposals for a
//! person ([`Review::Propose`], `review.rs`). A reply that does not read is asked once more;
//! then that chunk is left for the next run, and this one goes on. A chunk the model cannot read
//! at all (too long for it) is skipped: its turns marked read, with the reason recorded. So no
//! one conversation is a wall for the rest. A failure that is not the chunk's (the network, a
//! key, a cancel) stops the run; chunks already done stay done, and running it again goes on
//! from the first unread turn. Running it twice over the same turns changes nothing.
//!
//! Every input is bounded: a turn longer than a chunk is read in pieces, up to
//! [`MAX_TURN_CHARS`] (the rest skipped, and said so), and everything a prompt quotes is fenced
//! (`reply.rs`). Forgetting wins over a run in flight: a chunk whose turns were forgotten while
//! the model read them writes nothing.
//!
//! [`Store::unread_episodes`]: strata_core::Store::unread_episodes

mod edit;
mod facts;
mod ground;
pub mod reply;
mod review;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use strata_core::interchange::Tick;
use strata_core::{
    Actor, ChatModel, ChatRequest, ChatResponse, Content, Decision, DecisionAction, DecisionDetail, DecisionStatus,
    EpisodeBody, EventMeta, Filter, Memory, MemoryId, MemoryKind, Message, Usage,
};

pub use edit::LineEdit;
pub use facts::{USER, fact_content, normalized, slug, statement, subject_key};
use reply::{Malformed, Pool, Turn, Verdict};
pub use review::{DecisionView, DocumentView, Documents, FactView};

use crate::engine::Engine;
use crate::error::{ApiError, ApiResult, ErrorCode};

/// The most characters of conversation one extraction call reads.
pub const CHUNK_CHARS: usize = 6_000;
/// The most characters of one piece of a turn longer than a chunk.
pub const PIECE_CHARS: usize = CHUNK_CHARS - 200;
/// The most pieces of one turn extraction reads; the rest is skipped, and the reason recorded.
pub const MAX_TURN_PIECES: usize = 8;
/// The most characters of one turn extraction reads (in [`MAX_TURN_PIECES`] pieces).
pub const MAX_TURN_CHARS: usize = MAX_TURN_PIECES * PIECE_CHARS;
/// The most tokens an extraction or merge reply may take.
const REPLY_TOKENS: u32 = 1_024;

/// Whether extracted changes are applied at once or kept for a person to review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Review {
    /// Applied as soon as they are decided.
    Apply,
    /// Proposed: kept out of recall until a person accepts them.
    #[default]
    Propose,
}

impl Review {
    /// What a model's extraction has earned when the settings do not say: the on-device model
    /// proposes (its measured precision is below the 0.7 a store needs, docs/benchmarks.md,
    /// "Extraction"), a provider's model applies.
    pub fn for_model(model: &dyn ChatModel) -> Review {
        if model.provider() == "on-device" { Review::Propose } else { Review::Apply }
    }
}

/// The model that extracts facts in the background, and whether its changes apply at once.
#[derive(Clone)]
pub struct Extractor {
    /// The model (for the on-device one, an instance of its own, so extraction never waits
    /// for an answer or an answer for extraction).
    pub model: std::sync::Arc<dyn ChatModel>,
    /// Apply or propose.
    pub review: Review,
}

impl std::fmt::Debug for Extractor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Extractor({}/{}, {:?})", self.model.provider(), self.model.model(), self.review)
    }
}

/// What to extract from.
#[derive(Debug, Clone, Default)]
pub struct ExtractParams {
    /// Only this session (every session with unread turns when absent).
    pub session_id: Option<String>,
    /// Only these episodes (ids), when not empty.
    pub episodes: Vec<String>,
    /// Decide, but write nothing (the turns stay unread).
    pub dry_run: bool,
    /// Apply or propose.
    pub review: Review,
}

/// What a run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExtractReport {
    /// Sessions read.
    pub sessions: usize,
    /// Turns read.
    pub turns: usize,
    /// Model calls made (retries included).
    pub calls: usize,
    /// Tokens the calls used, as the provider counted.
    pub usage: Usage,
    /// The decisions, in the order made.
    pub decisions: Vec<DecisionView>,
    /// Facts the model gave that the conversation does not bear out (a subject it never names,
    /// or no word of substance in common with it), dropped.
    pub ungrounded: usize,
    /// Turns read only in part or skipped, each with why, in words.
    pub skipped: Vec<String>,
    /// Chunks whose turns were forgotten while they were read: nothing of them was written.
    pub forgotten_meanwhile: usize,
    /// Whether nothing was written.
    pub dry_run: bool,
}

/// One chunk of a session: its episodes and turns (a long turn's pieces may span chunks).
struct Chunk {
    session_id: Option<String>,
    episodes: Vec<MemoryId>,
    /// The episodes whose last piece is in this chunk: marked read with it.
    finished: Vec<MemoryId>,
    /// The episode each turn belongs to.
    turn_episode: Vec<MemoryId>,
    turns: Vec<Turn>,
    date: String,
    /// Episodes read only in part, with why.
    cut: Vec<(MemoryId, String)>,
}

fn turns_of(m: &Memory) -> Vec<Turn> {
    match &m.content {
        Content::Episodic(e) => match &e.body {
            EpisodeBody::Exchange { query, response } => {
                let mut t = Vec::new();
                if !query.trim().is_empty() {
                    t.push(Turn { speaker: "user".into(), text: query.clone() });
                }
                if !response.trim().is_empty() {
                    t.push(Turn { speaker: "assistant".into(), text: response.clone() });
                }
                t
            }
            EpisodeBody::Utterance { speaker, text } => vec![Turn { speaker: speaker.clone(), text: text.clone() }],
        },
        _ => Vec::new(),
    }
}

/// `turn` in pieces of at most [`PIECE_CHARS`] characters, cut at a space where there is one,
/// up to [`MAX_TURN_CHARS`]; and, when cut short, why.
fn pieces(turn: Turn) -> (Vec<Turn>, Option<String>) {
    let total = turn.text.chars().count();
    if total <= PIECE_CHARS {
        return (vec![turn], None);
    }
    let mut out = Vec::new();
    let mut rest = turn.text.as_str();
    let mut read = 0;
    while !rest.is_empty() && out.len() < MAX_TURN_PIECES {
        let end = rest.char_indices().nth(PIECE_CHARS).map_or(rest.len(), |(i, _)| i);
        let end = if end < rest.len() {
            rest[..end].rfind(char::is_whitespace).filter(|&i| i > 0).unwrap_or(end)
        } else {
            end
        };
        let piece = &rest[..end];
        read += piece.chars().count();
        out.push(Turn { speaker: turn.speaker.clone(), text: piece.to_string() });
        rest = rest[end..].trim_start();
    }
    let why = (!rest.is_empty()).then(|| {
        format!(
            "a turn of {total} characters was read only in part (its first {read}; at most {MAX_TURN_CHARS} are read)"
        )
    });
    (out, why)
}

/// Cuts a session's unread episodes (in time order) into chunks of at most [`CHUNK_CHARS`]
/// (a day's turns per chunk; a turn longer than a chunk in pieces of its own).
fn chunks(session_id: Option<String>, episodes: &[Memory]) -> Vec<Chunk> {
    let mut out: Vec<Chunk> = Vec::new();
    let mut chars = 0;
    for m in episodes {
        let date = m.occurred_at().format("%A %Y-%m-%d").to_string();
        let mut cut = None;
        let mut turns = Vec::new();
        for t in turns_of(m) {
            let (p, why) = pieces(t);
            turns.extend(p);
            cut = cut.or(why);
        }
        for t in turns {
            let size = t.text.chars().count() + t.speaker.len() + 8;
            let fresh = match out.last() {
                None => true,
                Some(c) => chars + size > CHUNK_CHARS && !c.turns.is_empty() || c.date != date,
            };
            if fresh {
                out.push(Chunk {
                    session_id: session_id.clone(),
                    episodes: vec![],
                    finished: vec![],
                    turn_episode: vec![],
                    turns: vec![],
                    date: date.clone(),
                    cut: vec![],
                });
                chars = 0;
            }
            let c = out.last_mut().expect("a chunk was just pushed");
            if c.episodes.last() != Some(&m.id) {
                c.episodes.push(m.id);
            }
            c.turn_episode.push(m.id);
            c.turns.push(t);
            chars += size;
        }
        if let Some(c) = out.last_mut().filter(|c| c.episodes.last() == Some(&m.id)) {
            c.finished.push(m.id);
            c.cut.extend(cut.map(|why| (m.id, why)));
        }
    }
    out
}

/// What a chunk's failure means for the run.
enum Trouble {
    /// The chunk cannot be read by this model, now or later (too long for it): its turns are
    /// marked read with the reason, and the run goes on.
    Lasting,
    /// This time's reply did not read, or the provider failed: the chunk is left unread for
    /// the next run, and this one goes on.
    Passing,
    /// The run's own (the network, a key, a cancel): it stops.
    Run,
}

fn trouble(e: &ApiError) -> Trouble {
    match e.code {
        ErrorCode::ContextTooLong | ErrorCode::Model => Trouble::Lasting,
        ErrorCode::BadReply | ErrorCode::Provider => Trouble::Passing,
        _ => Trouble::Run,
    }
}

fn model_name(model: &dyn ChatModel) -> String {
    format!("{}/{}", model.provider(), model.model())
}

/// Asks `model` and reads the reply with `read`, asking once more when it does not read.
fn ask<T>(
    model: &dyn ChatModel,
    request: &ChatRequest,
    cancel: &AtomicBool,
    report: &mut ExtractReport,
    read: impl Fn(&ChatResponse) -> Result<T, Malformed>,
) -> ApiResult<T> {
    let mut last = None;
    for attempt in 0..2 {
        // A second try samples a little, so a model that answers the same way every time at
        // temperature 0 can answer differently.
        let retry;
        let request = if attempt == 0 {
            request
        } else {
            retry = ChatRequest { temperature: Some(0.7), ..request.clone() };
            &retry
        };
        if cancel.load(Ordering::Relaxed) {
            return Err(ApiError::new(ErrorCode::Cancelled, "extraction was stopped; running it again goes on"));
        }
        let reply = model.chat(request, &mut |_| {}, cancel)?;
        report.calls += 1;
        report.usage.prompt_tokens += reply.usage.prompt_tokens;
        report.usage.completion_tokens += reply.usage.completion_tokens;
        if reply.finish == "cancelled" {
            return Err(ApiError::new(ErrorCode::Cancelled, "extraction was stopped; running it again goes on"));
        }
        match read(&reply) {
            Ok(v) => return Ok(v),
            Err(e) => {
                tracing::debug!(reply = %reply.content, calls = reply.tool_calls.len(), "extraction: {e}");
                last = Some(e);
            }
        }
    }
    let e = last.expect("two tries were made");
    Err(ApiError::new(ErrorCode::BadReply, format!("{e} (asked twice; nothing from this conversation was kept)")))
}

impl Engine {
    /// Extracts facts from the unread turns of one session or of all (see the module's
    /// description), reporting `tick(chunks done, chunks)` and stopping between calls when
    /// `cancel` is set or `tick` fails.
    pub fn extract(
        &mut self,
        params: &ExtractParams,
        model: &dyn ChatModel,
        tick: Tick<'_>,
        cancel: &AtomicBool,
    ) -> ApiResult<ExtractReport> {
        let filter = Filter {
            kinds: vec![MemoryKind::Episodic],
            session_id: params.session_id.clone(),
            include_expired: true,
            ..Filter::default()
        };
        let mut episodes = self.all_memories(filter)?;
        let ids: Vec<MemoryId> = episodes.iter().map(|m| m.id).collect();
        let unread: HashSet<MemoryId> = self.store_view().unread_episodes(&ids)?.into_iter().collect();
        episodes.retain(|m| unread.contains(&m.id));
        if !params.episodes.is_empty() {
            let only: Vec<MemoryId> = params.episodes.iter().map(|id| id.parse()).collect::<Result<_, _>>()?;
            episodes.retain(|m| only.contains(&m.id));
        }
        episodes.sort_by_key(|m| (m.occurred_at(), m.id));
        let mut sessions: BTreeMap<Option<String>, Vec<Memory>> = BTreeMap::new();
        for m in episodes {
            sessions.entry(m.scope.session_id.clone()).or_default().push(m);
        }
        let mut report = ExtractReport { sessions: sessions.len(), dry_run: params.dry_run, ..Default::default() };
        let all: Vec<Chunk> = sessions.into_iter().flat_map(|(s, eps)| chunks(s, &eps)).collect();
        let total = all.len() as u64;
        // Why an episode's piece could not be read, kept until its last piece is written; and
        // the episodes left for the next run (a piece of them was not read this time).
        let mut troubles: Vec<(MemoryId, String)> = Vec::new();
        let mut later: HashSet<MemoryId> = HashSet::new();
        let (mut passing, mut last) = (0, None);
        for (i, chunk) in all.iter().enumerate() {
            tick(i as u64, total)?;
            report.turns += chunk.turns.len();
            let decisions = match self.decide_chunk(chunk, model, params, cancel, &mut report) {
                Ok(d) => d,
                Err(e) => match trouble(&e) {
                    Trouble::Run => return Err(e),
                    Trouble::Passing => {
                        tracing::warn!("extraction left {} turns for the next run: {e}", chunk.turns.len());
                        report.skipped.push(format!("not read this time ({}); the next run tries again", e.message));
                        later.extend(&chunk.episodes);
                        passing += 1;
                        last = Some(e);
                        continue;
                    }
                    Trouble::Lasting => {
                        tracing::warn!("extraction skipped {} turns: {e}", chunk.turns.len());
                        let why = format!("not read: {}", e.message);
                        troubles.extend(chunk.episodes.iter().map(|id| (*id, why.clone())));
                        Vec::new()
                    }
                },
            };
            let finished: Vec<MemoryId> = chunk.finished.iter().filter(|id| !later.contains(id)).copied().collect();
            let mut skipped: Vec<(MemoryId, String)> =
                chunk.cut.iter().filter(|(id, _)| finished.contains(id)).cloned().collect();
            skipped.extend(troubles.iter().filter(|(id, _)| finished.contains(id)).cloned());
            report.skipped.extend(skipped.iter().map(|(_, why)| why.clone()));
            if !params.dry_run && !self.write_chunk(chunk, &finished, &decisions, params.review, &skipped)? {
                report.forgotten_meanwhile += 1;
                continue;
            }
            report.decisions.extend(decisions.iter().map(DecisionView::from));
        }
        // Nothing could be read this time: that is the run's failure, said as such.
        if let Some(e) = last.filter(|_| passing == all.len()) {
            return Err(e);
        }
        tick(total, total)?;
        Ok(report)
    }

    /// Extracts from `params`' turns with `extractor` on an engine of its own (same file and
    /// caller), on a thread of its own, so the caller goes on at once. A failure is logged;
    /// running extraction again goes on from the first unread turn.
    pub fn extract_in_background(
        &self,
        extractor: Extractor,
        params: ExtractParams,
    ) -> ApiResult<std::thread::JoinHandle<ApiResult<ExtractReport>>> {
        let mut own = self.for_caller(self.options().clone())?;
        let params = ExtractParams { review: extractor.review, ..params };
        let queued = crate::monitor::extraction();
        Ok(std::thread::spawn(move || {
            let _queued = queued;
            let cancel = AtomicBool::new(false);
            let result =
                own.extract(&params, extractor.model.as_ref(), &mut strata_core::interchange::no_tick, &cancel);
            if let Err(e) = &result {
                tracing::warn!("extraction in the background failed: {e}");
            }
            result
        }))
    }

    /// The decisions about one chunk.
    fn decide_chunk(
        &mut self,
        chunk: &Chunk,
        model: &dyn ChatModel,
        params: &ExtractParams,
        cancel: &AtomicBool,
        report: &mut ExtractReport,
    ) -> ApiResult<Vec<Decision>> {
        let listed = self.subjects()?;
        let request = ChatRequest {
            messages: vec![
                Message::system(reply::extract_system(&chunk.date, &listed)),
                Message::user(reply::conversation_text(&chunk.turns)),
            ],
            tools: vec![reply::extract_tool()],
            max_tokens: Some(REPLY_TOKENS),
            temperature: Some(0.0),
            schema: Some(reply::extract_schema()),
            tool_required: false,
            question: None,
        };
        let n = chunk.turns.len();
        let pools = ask(model, &request, cancel, report, |r| reply::read_extraction(r, n))?;
        // What the conversation bears out, one pool per subject, in the order first named.
        let said = ground::said(&chunk.turns);
        let offered: usize = pools.iter().map(|p| p.facts.len()).sum();
        let pools: Vec<Pool> = pools.into_iter().filter_map(|p| ground::grounded(p, &said, &chunk.turns)).collect();
        report.ungrounded += offered - pools.iter().map(|p| p.facts.len()).sum::<usize>();
        let mut merged: Vec<(String, Pool)> = Vec::new();
        for p in pools {
            let key = subject_key(&p.name);
            if key.is_empty() {
                continue;
            }
            match merged.iter_mut().find(|(k, _)| *k == key) {
                Some((_, into)) => into.facts.extend(p.facts),
                None => merged.push((key, p)),
            }
        }
        let mut out = Vec::new();
        let run_id = strata_core::event::new_event_id(self.store_view().clock().as_ref());
        for (key, pool) in merged {
            let known = self.known_facts(&key)?;
            out.extend(self.decide_subject(chunk, &run_id, &key, &pool, &known, model, params, cancel, report)?);
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn decide_subject(
        &mut self,
        chunk: &Chunk,
        run_id: &str,
        key: &str,
        pool: &Pool,
        known: &[(MemoryId, String)],
        model: &dyn ChatModel,
        params: &ExtractParams,
        cancel: &AtomicBool,
        report: &mut ExtractReport,
    ) -> ApiResult<Vec<Decision>> {
        let (mut verdicts, fresh) = settled_without_model(pool, known, self.pending_facts(key)?);
        if !fresh.is_empty() {
            let known_text: Vec<String> = known.iter().map(|(_, t)| t.clone()).collect();
            let new_text: Vec<String> = fresh.iter().map(|&i| pool.facts[i].fact.clone()).collect();
            let request = ChatRequest {
                messages: vec![
                    Message::system(reply::MERGE_SYSTEM),
                    Message::user(reply::merge_text(&pool.name, &known_text, &new_text)),
                ],
                tools: vec![reply::merge_tool(fresh.len(), known.len())],
                max_tokens: Some(REPLY_TOKENS),
                temperature: Some(0.0),
                schema: Some(reply::merge_schema(fresh.len(), known.len())),
                tool_required: false,
                question: None,
            };
            let decided = ask(model, &request, cancel, report, |r| reply::read_verdicts(r, fresh.len(), known.len()))?;
            for v in decided {
                let i = fresh[v.new];
                verdicts[i] = Some(Verdict { new: i, ..v });
            }
        }
        let now = self.now();
        let scope = self.scope(chunk.session_id.clone());
        let status = match params.review {
            Review::Apply => DecisionStatus::Applied,
            Review::Propose => DecisionStatus::Proposed,
        };
        let stated = chunk.date.rsplit(' ').next().map(str::to_string);
        let mut out = Vec::new();
        for v in verdicts.into_iter().flatten() {
            let f = &pool.facts[v.new];
            let sources: Vec<MemoryId> = if f.turns.is_empty() {
                chunk.episodes.clone()
            } else {
                let mut s: Vec<MemoryId> = f.turns.iter().map(|t| chunk.turn_episode[t - 1]).collect();
                s.dedup();
                s
            };
            let target = v.known.map(|k| known[k].0);
            if v.action == DecisionAction::Noop {
                // Nothing new to say unless this source is new to it.
                let linked = match target {
                    Some(t) => self.sources_of(t)?,
                    None => Vec::new(),
                };
                if sources.iter().all(|s| linked.contains(s)) {
                    continue;
                }
            }
            out.push(Decision {
                id: strata_core::event::new_event_id(self.store_view().clock().as_ref()),
                run_id: run_id.to_string(),
                scope: scope.clone(),
                made_at: now,
                model: model_name(model),
                action: v.action,
                subject: key.to_string(),
                target,
                detail: DecisionDetail {
                    fact: f.fact.clone(),
                    topic: f.topic.clone(),
                    stated: stated.clone(),
                    subject_name: pool.name.clone(),
                    description: Some(pool.description.clone()).filter(|d| !d.is_empty()),
                    reason: v.reason,
                    previous: v.known.map(|k| known[k].1.clone()),
                },
                sources,
                status,
                decided_at: (status == DecisionStatus::Applied).then_some(now),
                decided_by: (status == DecisionStatus::Applied).then(|| "automatic".to_string()),
            });
        }
        Ok(out)
    }

    /// Writes a chunk's decisions and marks its `finished` turns read (with why some were read
    /// only in part or skipped), in one transaction. Writes nothing and returns false when a
    /// turn it read was forgotten meanwhile: forgetting wins over the run.
    fn write_chunk(
        &mut self,
        chunk: &Chunk,
        finished: &[MemoryId],
        decisions: &[Decision],
        review: Review,
        skipped: &[(MemoryId, String)],
    ) -> ApiResult<bool> {
        let meta = EventMeta { actor: Actor::App, ..self.meta() };
        let scope = self.scope(None);
        let run_id = decisions.first().map(|d| d.run_id.clone()).unwrap_or_else(|| "empty".into());
        // What the decisions rest on: the turns read, and the known facts they quote.
        let read: Vec<MemoryId> =
            chunk.episodes.iter().copied().chain(decisions.iter().filter_map(|d| d.target)).collect();
        let written = self.store().transact(|tx| {
            match tx.still_live(&read) {
                Err(strata_core::Error::Forgotten { .. } | strata_core::Error::NotFound(_)) => return Ok(false),
                other => other?,
            }
            // Another run (a second process after the next exchange) read these turns first.
            if tx.unread_episodes(&chunk.episodes)?.len() < chunk.episodes.len() {
                return Ok(true);
            }
            for d in decisions {
                let mut d = d.clone();
                if review == Review::Apply {
                    let id = facts::carry_out(tx, &d, &scope, &meta).map_err(to_core)?;
                    d.target = Some(id);
                }
                tx.record_decision(&d)?;
            }
            tx.mark_read_with(finished, &run_id, skipped)?;
            Ok(true)
        })?;
        self.wrote();
        Ok(written)
    }

    /// The facts currently known about subject `key`: id and statement.
    fn known_facts(&self, key: &str) -> ApiResult<Vec<(MemoryId, String)>> {
        let scope = self.scope(None);
        let mut r = self.store_view();
        let Some(doc) = facts::document(&mut r, &scope, key)? else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        for m in facts::facts_about(&mut r, doc.id)? {
            if let Some(s) = facts::statement(&m) {
                out.push((m.id, s.to_string()));
            }
        }
        Ok(out)
    }

    /// The normalized facts of the proposals waiting about subject `key`.
    fn pending_facts(&self, key: &str) -> ApiResult<HashSet<String>> {
        let user = self.options().user_id.clone();
        let pending = self.store_view().decisions(&user, Some(DecisionStatus::Proposed), usize::MAX)?;
        Ok(pending.into_iter().filter(|d| d.subject == key).map(|d| facts::normalized(&d.detail.fact)).collect())
    }

    /// The episodes a fact's current value rests on.
    fn sources_of(&self, fact: MemoryId) -> ApiResult<Vec<MemoryId>> {
        let m = self.store_view().get(fact)?;
        Ok(m.links.iter().filter(|l| l.relation == strata_core::extraction::FACT_SOURCE).map(|l| l.target).collect())
    }
}

/// An API error carried through a core transaction.
fn to_core(e: ApiError) -> strata_core::Error {
    strata_core::Error::invalid(e.message)
}

/// The verdicts needing no model: a fact said twice (in this chunk, or already proposed:
/// `seen`) is dropped, one known in these words changes nothing, and anything about a subject
/// with nothing known is added. Returns a slot per fact of `pool` and the facts still to decide.
fn settled_without_model(
    pool: &Pool,
    known: &[(MemoryId, String)],
    mut seen: HashSet<String>,
) -> (Vec<Option<Verdict>>, Vec<usize>) {
    let mut verdicts: Vec<Option<Verdict>> = Vec::new();
    let mut fresh = Vec::new(); // (index in pool) still to decide by the model
    for (i, f) in pool.facts.iter().enumerate() {
        let norm = facts::normalized(&f.fact);
        if !seen.insert(norm.clone()) {
            verdicts.push(None);
            continue;
        }
        match known.iter().position(|(_, k)| facts::normalized(k) == norm) {
            Some(k) => verdicts.push(Some(Verdict {
                new: i,
                action: DecisionAction::Noop,
                known: Some(k),
                reason: "already known in these words".into(),
            })),
            None if known.is_empty() => verdicts.push(Some(Verdict {
                new: i,
                action: DecisionAction::Add,
                known: None,
                reason: "nothing was known about this subject".into(),
            })),
            None => {
                verdicts.push(None);
                fresh.push(i);
            }
        }
    }
    (verdicts, fresh)
}
