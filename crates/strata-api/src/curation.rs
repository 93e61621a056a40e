//! Curation: which memories are worth training into an adapter (the criteria), flagging them
//! into a queue, and a person's approvals and rejections — what `strata train candidates …` and
//! the app's Training screen do. The queue's records live in `strata_core::curation`.
//!
//! A memory qualifies when it is a fact or a procedure (what a training set can be made of),
//! is not a concept's summary, and meets every criterion of [`CandidateCriteria`]: long-term,
//! important enough, recalled often enough, unchanged for long enough, accepted by a person if
//! extraction wrote it, contradicted by no other fact, and not already in the active adapter.
//! Its score ranks the queue: `0.35 × importance + 0.35 × use + 0.2 × stability + 0.1 ×
//! concept`, where use is `ln(1 + recalls) / ln(21)` and stability `days unchanged / 90`, each
//! capped at 1, and concept is 1 when the memory belongs to a concept (related memories say the
//! same thing, which is what an adapter should learn).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use strata_core::interchange::Tick;
use strata_core::{Candidate, CandidateStatus, Content, Filter, Memory, MemoryId, MemoryKind, Qualifying, Tier};

use strata_core::time::format_time;

use crate::Engine;
use crate::compact::ConceptView;
use crate::dto::MemoryView;
use crate::error::{ApiError, ApiResult, ErrorCode};

/// What makes a memory worth training (kept in the settings file, `training.criteria`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct CandidateCriteria {
    /// Only long-term memories.
    pub long_term_only: bool,
    /// The least importance (0 to 1).
    pub min_importance: f64,
    /// The fewest times recalled.
    pub min_recalls: u32,
    /// The fewest days since it last changed.
    pub stable_days: u32,
    /// A fact that extraction wrote must have been accepted by a person.
    pub extracted_need_acceptance: bool,
}

impl Default for CandidateCriteria {
    fn default() -> Self {
        CandidateCriteria {
            long_term_only: true,
            min_importance: 0.6,
            min_recalls: 3,
            stable_days: 14,
            extracted_need_acceptance: true,
        }
    }
}

impl CandidateCriteria {
    /// Whether these criteria make sense, or an error that says what does not.
    pub fn check(&self) -> ApiResult<()> {
        if !(0.0..=1.0).contains(&self.min_importance) {
            return Err(ApiError::invalid("the least importance must be between 0 and 1"));
        }
        if self.stable_days > 3650 {
            return Err(ApiError::invalid("the days unchanged must be at most 3650"));
        }
        Ok(())
    }
}

/// What one flagging pass did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FlagReport {
    /// Facts and procedures looked at.
    pub considered: u32,
    /// How many meet the criteria.
    pub qualifying: u32,
    /// New in the queue.
    pub flagged: u32,
    /// Already there, still qualifying.
    pub kept: u32,
    /// Decided on, changed since, and back in the queue.
    pub reopened: u32,
    /// No longer qualifying, out of the queue.
    pub withdrawn: u32,
    /// Of the facts and procedures that do not qualify, how many fall short of each criterion,
    /// in words with the numbers ("20 were recalled fewer than 3 times"): why the list is
    /// short, and what would change it.
    pub short_of: Vec<String>,
}

/// The reason a memory a person chose on its page is a candidate: a flagging pass keeps it.
pub const CHOSEN_BY_HAND: &str = "Chosen by you on its page";

/// Which candidates to list.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default)]
pub struct CandidateQuery {
    /// `flagged`, `approved` or `rejected`; all when absent.
    pub status: Option<String>,
    /// `semantic` or `procedural`.
    pub kind: Option<String>,
    /// Only memories with this tag.
    pub tag: Option<String>,
    /// Only members of this concept (its key or id).
    pub concept: Option<String>,
    /// `score` (highest first, the default), `lowest` (lowest score first: the doubtful ones)
    /// or `recent` (flagged most recently first).
    pub sort: Option<String>,
}

/// One memory in the queue.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CandidateView {
    /// The memory.
    pub memory: MemoryView,
    /// `flagged`, `approved` or `rejected`.
    pub status: String,
    /// How worth training, 0 to 1.
    pub score: f64,
    /// Why it qualifies, in words.
    pub reasons: Vec<String>,
    /// The concepts it belongs to, by name.
    pub concepts: Vec<String>,
    /// When it was flagged (RFC 3339).
    pub flagged_at: String,
    /// When a person decided.
    pub decided_at: Option<String>,
    /// Who decided.
    pub decided_by: Option<String>,
    /// What they said.
    pub note: Option<String>,
}

/// The queue, filtered, with how many of each status there are in all.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CandidatesView {
    /// The candidates asked for.
    pub candidates: Vec<CandidateView>,
    /// Waiting for a person.
    pub flagged: u32,
    /// Approved.
    pub approved: u32,
    /// Rejected.
    pub rejected: u32,
    /// Candidates whose memory changed, expired or went since flagging: left out until
    /// flagging runs again.
    pub changed: u32,
    /// The tags of the candidates, for a filter.
    pub tags: Vec<String>,
    /// The concepts of the candidates, for a filter.
    pub concept_names: Vec<String>,
}

/// One event in a candidate's history.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CandidateEventView {
    /// When (RFC 3339).
    pub at: String,
    /// flagged, approved, rejected, reopened, withdrawn.
    pub kind: String,
    /// Who: an app's name, or `flagging`.
    pub by: String,
    /// In words: the reason, the note or the score.
    pub detail: String,
}

/// A person's decision on candidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Train it.
    Approve,
    /// Do not.
    Reject,
    /// Take the decision back: waiting again.
    Reopen,
}

/// What flagging knows about the store beyond one memory.
struct Surroundings {
    accepted: HashMap<MemoryId, (String, DateTime<Utc>)>,
    contradicted: HashSet<MemoryId>,
    /// The memories in an adapter in use, with its id.
    in_active: HashMap<String, String>,
    concepts: HashMap<MemoryId, Vec<String>>,
}

fn plural(n: u64, one: &str, many: &str) -> String {
    crate::health::words(n, one, many)
}

/// Of `misses` (facts and procedures that did not qualify), how many fall short of each
/// criterion, in words (see [`FlagReport::short_of`]).
fn short_of(misses: &[&Memory], around: &Surroundings, c: &CandidateCriteria, now: DateTime<Utc>) -> Vec<String> {
    let count = |f: &dyn Fn(&Memory) -> bool| misses.iter().filter(|m| f(m)).count() as u64;
    let were = |n: u64| if n == 1 { "was" } else { "were" };
    let mut out = Vec::new();
    let n = count(&|m| c.long_term_only && m.tier != Tier::Long);
    if n > 0 {
        out.push(format!("{} not long-term", plural(n, "memory is", "memories are")));
    }
    let n = count(&|m| m.importance.get() < c.min_importance);
    if n > 0 {
        out.push(format!("{} less important than {:.2}", plural(n, "memory is", "memories are"), c.min_importance));
    }
    let n = count(&|m| m.access_count < u64::from(c.min_recalls));
    if n > 0 {
        let times = plural(c.min_recalls.into(), "time", "times");
        out.push(format!("{} {} recalled fewer than {times}", plural(n, "memory", "memories"), were(n)));
    }
    let days = |m: &Memory| (now - m.updated_at).num_days().max(0) as u64;
    let recent: Vec<u64> = misses.iter().map(|m| days(m)).filter(|d| *d < u64::from(c.stable_days)).collect();
    if let Some(most) = recent.iter().max() {
        let wait = u64::from(c.stable_days) - most;
        out.push(format!(
            "{} changed in the last {} (the first qualifies in {})",
            plural(recent.len() as u64, "memory", "memories"),
            plural(c.stable_days.into(), "day", "days"),
            plural(wait, "day", "days")
        ));
    }
    let extracted = |m: &Memory| m.links.iter().any(|l| l.relation == strata_core::extraction::FACT_SOURCE);
    let n = count(&|m| c.extracted_need_acceptance && extracted(m) && !around.accepted.contains_key(&m.id));
    if n > 0 {
        out.push(format!("{} found in conversations and not accepted by you yet", plural(n, "fact was", "facts were")));
    }
    out
}

/// Whether `m` qualifies: its score and reasons, or why not.
fn assess(
    m: &Memory,
    around: &Surroundings,
    c: &CandidateCriteria,
    now: DateTime<Utc>,
) -> Result<(f64, Vec<String>), String> {
    if !matches!(m.kind(), MemoryKind::Semantic | MemoryKind::Procedural) || strata_core::concepts::is_concept(m) {
        return Err("only facts and procedures are trained".into());
    }
    if m.expired_at.is_some() {
        return Err("it expired".into());
    }
    let mut reasons = Vec::new();
    if m.tier == Tier::Long {
        reasons.push("Long-term memory".to_string());
    } else if c.long_term_only {
        return Err(format!("it is {}-term, not long-term", m.tier.as_str()));
    }
    let importance = m.importance.get();
    if importance < c.min_importance {
        return Err(format!("its importance is {importance:.2}, below {:.2}", c.min_importance));
    }
    reasons.push(format!("Importance {importance:.2} (at least {:.2})", c.min_importance));
    if m.access_count < u64::from(c.min_recalls) {
        return Err(format!("recalled {}, fewer than {}", plural(m.access_count, "time", "times"), c.min_recalls));
    }
    reasons.push(format!("Recalled {} (at least {})", plural(m.access_count, "time", "times"), c.min_recalls));
    let days = (now - m.updated_at).num_days().max(0) as u64;
    if days < u64::from(c.stable_days) {
        let when = if days == 0 { "today".to_string() } else { format!("{} ago", plural(days, "day", "days")) };
        return Err(format!("it changed {when} (needs {} unchanged)", plural(c.stable_days.into(), "day", "days")));
    }
    reasons.push(format!("Unchanged for {} (at least {})", plural(days, "day", "days"), c.stable_days));
    let extracted = m.links.iter().any(|l| l.relation == strata_core::extraction::FACT_SOURCE);
    match around.accepted.get(&m.id) {
        Some((by, at)) => reasons.push(format!("Accepted by a person ({by}) on {}", at.format("%-d %b %Y"))),
        None if extracted && c.extracted_need_acceptance => {
            return Err("extraction wrote it and no person has accepted it".into());
        }
        None if extracted => reasons.push("Extracted from a conversation".into()),
        None => reasons.push("Written by a person or an app, not extracted".into()),
    }
    if around.contradicted.contains(&m.id) {
        return Err("another memory says something different about the same fact".into());
    }
    reasons.push("No other memory contradicts it".into());
    if let Some(id) = around.in_active.get(&m.id.to_string()) {
        return Err(format!("it is already in the active adapter {id}"));
    }
    reasons.push("Not in the active adapter".into());
    let concepts = around.concepts.get(&m.id).map(Vec::as_slice).unwrap_or_default();
    if let Some(name) = concepts.first() {
        reasons.push(format!("Part of the concept “{name}”"));
    }
    let usage = ((1.0 + m.access_count as f64).ln() / 21f64.ln()).min(1.0);
    let stability = (days as f64 / 90.0).min(1.0);
    let grouped = if concepts.is_empty() { 0.0 } else { 1.0 };
    let score = 0.35 * importance + 0.35 * usage + 0.2 * stability + 0.1 * grouped;
    Ok(((score * 1000.0).round() / 1000.0, reasons))
}

/// A fact or procedure in use (not a concept): what can be trained.
fn trainable(m: &Memory) -> bool {
    matches!(m.kind(), MemoryKind::Semantic | MemoryKind::Procedural)
        && !strata_core::concepts::is_concept(m)
        && m.expired_at.is_none()
}

fn status_of(text: &str) -> ApiResult<CandidateStatus> {
    text.parse().map_err(|e: strata_core::Error| ApiError::invalid(e.to_string()))
}

impl Engine {
    /// What flagging needs to know besides each memory.
    fn surroundings(&self, live: &[Memory]) -> ApiResult<Surroundings> {
        let user = self.options().user_id.clone();
        let accepted = self.store_view().accepted_facts(&user)?;
        let disagreeing: HashSet<(String, String)> = crate::health::contradictions(live)
            .into_iter()
            .map(|(key, fact, _)| (crate::extract::slug(&key), crate::extract::slug(&fact)))
            .collect();
        let contradicted = live
            .iter()
            .filter(|m| match &m.content {
                Content::Semantic(c) => {
                    let key = crate::extract::slug(&c.key);
                    c.facts.keys().any(|f| disagreeing.contains(&(key.clone(), crate::extract::slug(f))))
                }
                _ => false,
            })
            .map(|m| m.id)
            .collect();
        let in_use = self.store_view().adapters_in_use()?;
        let concepts = concepts_of_members(&self.concepts()?);
        Ok(Surroundings {
            accepted,
            contradicted,
            in_active: in_use.iter().flat_map(|a| a.sources.iter().map(|s| (s.clone(), a.id.clone()))).collect(),
            concepts,
        })
    }

    /// Flags the caller's facts and procedures that meet `criteria` into the curation queue,
    /// and takes out those that no longer do (see the module's text). `tick(done, total)`
    /// reports progress; `cancel` stops it before anything is written.
    pub fn flag_candidates(
        &mut self,
        criteria: &CandidateCriteria,
        tick: Tick<'_>,
        cancel: &AtomicBool,
    ) -> ApiResult<FlagReport> {
        criteria.check()?;
        let user = self.options().user_id.clone();
        self.store().flush_accesses()?;
        let filter = Filter { kinds: vec![MemoryKind::Semantic, MemoryKind::Procedural], ..Filter::default() };
        let live = self.all_memories(filter)?;
        let around = self.surroundings(&live)?;
        let now = self.now();
        let total = live.len() as u64;
        let (mut qualifying, mut why_not) = (Vec::new(), HashMap::new());
        for (i, m) in live.iter().enumerate() {
            if cancel.load(Ordering::Relaxed) {
                return Err(ApiError::new(ErrorCode::Cancelled, "flagging was cancelled; nothing changed"));
            }
            match assess(m, &around, criteria, now) {
                Ok((score, reasons)) => {
                    qualifying.push(Qualifying { memory_id: m.id, changed_at: m.updated_at, score, reasons })
                }
                Err(why) => {
                    why_not.insert(m.id, why);
                }
            }
            if i % 256 == 0 {
                tick(i as u64, total)?;
            }
        }
        let misses: Vec<&Memory> = live.iter().filter(|m| why_not.contains_key(&m.id) && trainable(m)).collect();
        let short_of = short_of(&misses, &around, criteria, now);
        let mut leaving: Vec<(MemoryId, String)> = Vec::new();
        let qualified: HashSet<MemoryId> = qualifying.iter().map(|q| q.memory_id).collect();
        for c in self.store_view().candidates(&user, None)? {
            let by_hand = c.reasons.first().is_some_and(|r| r == CHOSEN_BY_HAND);
            if c.status == CandidateStatus::Rejected || qualified.contains(&c.memory_id) || by_hand {
                continue;
            }
            let why = match why_not.remove(&c.memory_id) {
                Some(why) => why,
                // Another agent's own memory, flagged by its engine: not this pass's to judge.
                None if self.store_view().get(c.memory_id).is_ok_and(|m| !self.can_see(&m.scope)) => continue,
                None => "it expired or is no longer stored".into(),
            };
            leaving.push((c.memory_id, why));
        }
        if cancel.load(Ordering::Relaxed) {
            return Err(ApiError::new(ErrorCode::Cancelled, "flagging was cancelled; nothing changed"));
        }
        let counts = self.store().record_flagging(&user, &qualifying, &leaving)?;
        tick(total, total)?;
        Ok(FlagReport {
            considered: total as u32,
            qualifying: qualifying.len() as u32,
            flagged: counts.flagged as u32,
            kept: counts.kept as u32,
            reopened: counts.reopened as u32,
            withdrawn: counts.withdrawn as u32,
            short_of,
        })
    }

    /// A fact or procedure a person chose on its page to be taught, whatever the criteria say:
    /// listed and approved at once (a flagging pass keeps it, [`CHOSEN_BY_HAND`]).
    pub fn approve_by_hand(&mut self, id: &str) -> ApiResult<CandidateView> {
        let m = self.memory(&crate::Target::new(id))?;
        if !trainable(&m) {
            return Err(ApiError::invalid("only a fact or a procedure in use can be taught to the model"));
        }
        let user = self.options().user_id.clone();
        let chosen =
            Qualifying { memory_id: m.id, changed_at: m.updated_at, score: 1.0, reasons: vec![CHOSEN_BY_HAND.into()] };
        self.store().record_flagging(&user, &[chosen], &[])?;
        let mut done = self.decide_candidates(&[m.id.to_string()], Verdict::Approve, None)?;
        done.pop().ok_or_else(|| ApiError::invalid("the memory could not be approved"))
    }

    /// Flags with the criteria the settings file holds (the defaults, with a warning, when it
    /// cannot be read): what an applied maintenance runs after moving memories, since a move
    /// to or from long-term changes who qualifies.
    pub fn flag_after_maintenance(&mut self) -> ApiResult<FlagReport> {
        let criteria = match crate::Settings::load() {
            Ok(s) => s.training.criteria,
            Err(e) => {
                tracing::warn!("{e}; training candidates are flagged by the default criteria");
                CandidateCriteria::default()
            }
        };
        self.flag_candidates(&criteria, &mut |_, _| Ok(()), &AtomicBool::new(false))
    }

    /// The curation queue as `query` asks.
    pub fn training_candidates(&self, query: &CandidateQuery) -> ApiResult<CandidatesView> {
        let user = self.options().user_id.clone();
        let status = query.status.as_deref().filter(|s| !s.is_empty()).map(status_of).transpose()?;
        let kind: Option<MemoryKind> = match query.kind.as_deref().filter(|s| !s.is_empty()) {
            Some(k) => Some(k.parse().map_err(|e: strata_core::Error| ApiError::invalid(e.to_string()))?),
            None => None,
        };
        let all = self.concepts()?;
        let concepts = concepts_of_members(&all);
        let wanted = query.concept.as_deref().filter(|s| !s.is_empty());
        let wanted_members: Option<HashSet<&String>> = wanted
            .map(|w| all.iter().filter(|c| w == c.key || w == c.id || w == c.name).flat_map(|c| &c.members).collect());
        let (mut view, mut tags, mut names) = (Vec::new(), BTreeSet::new(), BTreeSet::new());
        let (mut counts, mut changed) = ([0u32; 3], 0u32);
        for c in self.store_view().candidates(&user, None)? {
            let m = match self.store_view().get(c.memory_id) {
                Ok(m) if !self.can_see(&m.scope) => continue,
                Ok(m) if m.updated_at == c.changed_at && m.expired_at.is_none() => m,
                _ => {
                    changed += 1;
                    continue;
                }
            };
            counts[status_index(c.status)] += 1;
            let of = concepts.get(&m.id).cloned().unwrap_or_default();
            tags.extend(m.tags.iter().cloned());
            names.extend(of.iter().cloned());
            let keep = status.is_none_or(|s| s == c.status)
                && kind.is_none_or(|k| k == m.kind())
                && query.tag.as_deref().filter(|t| !t.is_empty()).is_none_or(|t| m.tags.contains(t))
                && wanted_members.as_ref().is_none_or(|w| w.contains(&m.id.to_string()));
            if keep {
                view.push(candidate_view(c, m, of));
            }
        }
        match query.sort.as_deref().unwrap_or("score") {
            "score" | "" => {}
            "lowest" => view.reverse(),
            "recent" => view.sort_by(|a, b| b.flagged_at.cmp(&a.flagged_at)),
            other => return Err(ApiError::invalid(format!("no sort '{other}': score, lowest or recent"))),
        }
        Ok(CandidatesView {
            candidates: view,
            flagged: counts[status_index(CandidateStatus::Flagged)],
            approved: counts[status_index(CandidateStatus::Approved)],
            rejected: counts[status_index(CandidateStatus::Rejected)],
            changed,
            tags: tags.into_iter().collect(),
            concept_names: names.into_iter().collect(),
        })
    }

    /// A person's decision on candidates (memory ids), all or none, recorded with the front
    /// end's name as who and `note` as what they said. A memory changed since it was flagged
    /// is refused.
    pub fn decide_candidates(
        &mut self,
        ids: &[String],
        verdict: Verdict,
        note: Option<&str>,
    ) -> ApiResult<Vec<CandidateView>> {
        if ids.is_empty() {
            return Err(ApiError::invalid("name at least one candidate"));
        }
        let note = note.map(str::trim).filter(|n| !n.is_empty());
        if note.is_some_and(|n| n.len() > strata_core::model::MAX_REASON_BYTES) {
            return Err(ApiError::invalid("a note must be at most 512 bytes"));
        }
        let user = self.options().user_id.clone();
        let mut decisions = Vec::new();
        let mut memories = Vec::new();
        for id in ids {
            let m = self.memory(&crate::Target::new(id.as_str()))?;
            decisions.push((m.id, m.updated_at));
            memories.push(m);
        }
        let status = match verdict {
            Verdict::Approve => CandidateStatus::Approved,
            Verdict::Reject => CandidateStatus::Rejected,
            Verdict::Reopen => CandidateStatus::Flagged,
        };
        let by = self.options().client.clone();
        let done = self.store().decide_candidates(&user, &decisions, status, &by, note)?;
        let concepts = concepts_of_members(&self.concepts()?);
        Ok(done
            .into_iter()
            .zip(memories)
            .map(|(c, m)| {
                let of = concepts.get(&m.id).cloned().unwrap_or_default();
                candidate_view(c, m, of)
            })
            .collect())
    }

    /// The caller's edits of candidates' training examples that are for their memory as it is
    /// now (an edit of a memory changed since is left out), by memory id.
    pub fn example_edits(&self) -> ApiResult<HashMap<String, serde_json::Value>> {
        let user = self.options().user_id.clone();
        let mut out = HashMap::new();
        for (id, edit) in self.store_view().example_edits(&user)? {
            if self.store_view().get(id).is_ok_and(|m| m.updated_at == edit.changed_at && self.can_see(&m.scope)) {
                out.insert(id.to_string(), edit.examples);
            }
        }
        Ok(out)
    }

    /// Keeps a person's edit of a candidate's training examples (a JSON array, as the trainer
    /// writes them), or with `None` goes back to the generated ones.
    pub fn save_example_edit(&mut self, id: &str, examples: Option<&serde_json::Value>) -> ApiResult<()> {
        let m = self.memory(&crate::Target::new(id))?;
        let user = self.options().user_id.clone();
        if self.store_view().candidate(&user, m.id)?.is_none() {
            return Err(ApiError::invalid(format!(
                "memory {id} is not a training candidate; only candidates are trained"
            )));
        }
        if examples.is_some_and(|e| !e.is_array()) {
            return Err(ApiError::invalid("the examples must be a list"));
        }
        let by = self.options().client.clone();
        Ok(self.store().set_example_edit(&user, m.id, examples.map(|e| (m.updated_at, e)), &by)?)
    }

    /// What happened to a memory in curation, oldest first.
    pub fn candidate_history(&self, id: &str) -> ApiResult<Vec<CandidateEventView>> {
        let m = self.memory(&crate::Target::new(id))?;
        let user = self.options().user_id.clone();
        Ok(self
            .store_view()
            .candidate_history(&user, m.id)?
            .into_iter()
            .map(|e| CandidateEventView {
                at: format_time(e.at),
                detail: event_words(&e.detail),
                kind: e.kind,
                by: e.by,
            })
            .collect())
    }
}

/// Each concept member's concepts, by name.
fn concepts_of_members(concepts: &[ConceptView]) -> HashMap<MemoryId, Vec<String>> {
    let mut out: HashMap<MemoryId, Vec<String>> = HashMap::new();
    for c in concepts {
        for member in &c.members {
            if let Ok(id) = member.parse() {
                out.entry(id).or_default().push(c.name.clone());
            }
        }
    }
    out
}

fn status_index(s: CandidateStatus) -> usize {
    match s {
        CandidateStatus::Flagged => 0,
        CandidateStatus::Approved => 1,
        CandidateStatus::Rejected => 2,
    }
}

fn candidate_view(c: Candidate, m: Memory, concepts: Vec<String>) -> CandidateView {
    CandidateView {
        memory: MemoryView::from(m),
        status: c.status.as_str().to_string(),
        score: c.score,
        reasons: c.reasons,
        concepts,
        flagged_at: format_time(c.flagged_at),
        decided_at: c.decided_at.map(format_time),
        decided_by: c.decided_by,
        note: c.note,
    }
}

/// An event's detail in words: its reason, the note, or the score.
fn event_words(detail: &serde_json::Value) -> String {
    if let Some(r) = detail.get("reason").and_then(|r| r.as_str()) {
        return r.to_string();
    }
    if let Some(n) = detail.get("note").and_then(|n| n.as_str()) {
        return format!("“{n}”");
    }
    match detail.get("score").and_then(|s| s.as_f64()) {
        Some(s) => format!("score {s:.2}"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_core::{Concept, FactValue, Importance, Link, Scope, Source};

    fn fact(importance: f64, recalls: u64, days: i64) -> (Memory, DateTime<Utc>) {
        let at = strata_core::time::parse_time("2026-01-01T00:00Z").unwrap();
        let content = Content::Semantic(Concept {
            key: "tea".into(),
            facts: [("kind".to_string(), FactValue::Text("jasmine".into()))].into_iter().collect(),
        });
        let mut m = Memory::new(MemoryId::from_parts(1, 1), Scope::user("ana"), content, Source::app("test"), at);
        m.tier = Tier::Long;
        m.importance = Importance::new(importance).unwrap();
        m.access_count = recalls;
        (m, at + chrono::Duration::days(days))
    }

    fn quiet() -> Surroundings {
        Surroundings {
            accepted: HashMap::new(),
            contradicted: HashSet::new(),
            in_active: HashMap::new(),
            concepts: HashMap::new(),
        }
    }

    #[test]
    fn each_criterion_says_why_a_memory_does_not_qualify() {
        let c = CandidateCriteria::default();
        let (m, now) = fact(0.8, 5, 20);
        let (score, reasons) = assess(&m, &quiet(), &c, now).unwrap();
        assert!(reasons.contains(&"Importance 0.80 (at least 0.60)".to_string()), "{reasons:?}");
        assert!(reasons.contains(&"Recalled 5 times (at least 3)".to_string()), "{reasons:?}");
        assert!(reasons.contains(&"Unchanged for 20 days (at least 14)".to_string()), "{reasons:?}");
        // 0.35 × 0.8 + 0.35 × ln 6 / ln 21 + 0.2 × 20 / 90
        let expected = 0.35 * 0.8 + 0.35 * 6f64.ln() / 21f64.ln() + 0.2 * 20.0 / 90.0;
        assert!((score - expected).abs() < 1e-3, "{score} vs {expected}");

        let why = |m: &Memory, around: &Surroundings, now| assess(m, around, &c, now).unwrap_err();
        assert_eq!(why(&fact(0.4, 5, 20).0, &quiet(), now), "its importance is 0.40, below 0.60");
        assert_eq!(why(&fact(0.8, 2, 20).0, &quiet(), now), "recalled 2 times, fewer than 3");
        let (fresh, today) = fact(0.8, 5, 0);
        assert_eq!(why(&fresh, &quiet(), today), "it changed today (needs 14 days unchanged)");
        let mut medium = m.clone();
        medium.tier = Tier::Medium;
        assert_eq!(why(&medium, &quiet(), now), "it is medium-term, not long-term");

        let mut extracted = m.clone();
        extracted
            .links
            .insert(Link { target: MemoryId::from_parts(2, 2), relation: strata_core::extraction::FACT_SOURCE.into() });
        assert_eq!(why(&extracted, &quiet(), now), "extraction wrote it and no person has accepted it");
        let mut around = quiet();
        around.accepted.insert(m.id, ("desktop".into(), now));
        let (_, reasons) = assess(&extracted, &around, &c, now).unwrap();
        assert!(reasons.contains(&"Accepted by a person (desktop) on 21 Jan 2026".to_string()), "{reasons:?}");
        let lenient = CandidateCriteria { extracted_need_acceptance: false, ..c.clone() };
        assert!(assess(&extracted, &quiet(), &lenient, now).is_ok());

        let mut around = quiet();
        around.contradicted.insert(m.id);
        assert_eq!(why(&m, &around, now), "another memory says something different about the same fact");
        let mut around = quiet();
        around.in_active.insert(m.id.to_string(), "ad_1".into());
        assert_eq!(why(&m, &around, now), "it is already in the active adapter ad_1");
        let mut around = quiet();
        around.concepts.insert(m.id, vec!["Tea at home".into()]);
        let (grouped, reasons) = assess(&m, &around, &c, now).unwrap();
        assert!(reasons.contains(&"Part of the concept “Tea at home”".to_string()), "{reasons:?}");
        assert!((grouped - score - 0.1).abs() < 1e-3, "a concept adds 0.1");
    }
}
