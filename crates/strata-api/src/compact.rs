//! Compaction (issue 21): the caller's embedded memories grouped into concepts
//! (`strata-compact`), each a semantic memory keyed `concept/<slug>` with a name, salient
//! terms, its time span and an extractive summary ([`strata_core::concepts`]), linked to its
//! members. A full pass re-clusters everything and keeps a concept's id where a group continues
//! it (most of its members stay); an incremental pass only lets new memories join the concept
//! whose centre they are as close to as its members are. Every change is an ordinary event:
//! a concept formed (created), updated (content, links), merged into another or dissolved
//! (expired, with the reason); members are never changed.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;
use strata_compact::{centroid, cluster, cosine, features, matching, summary, terms};
use strata_core::analytics::CompactionPass;
use strata_core::concepts::{ConceptBody, GROUPS, KEY_PREFIX, MAX_TERMS, Sentence, is_concept, members, name_of};
use strata_core::event::{Actor, Change, EventMeta, Expected};
use strata_core::extraction::FACT_SOURCE;
use strata_core::interchange::Tick;
use strata_core::store::{NewMemory, StoreTx};
use strata_core::{Filter, Memory, MemoryId, MemoryKind, Source, Tier};
use strata_tokens::{Encoding, OpenAiTokens, TokenManager};

use crate::extract::slug;
use crate::{ApiError, ApiResult, Engine, ErrorCode};

/// The most tokens (cl100k_base) of a concept's summary.
pub const SUMMARY_TOKENS: usize = 120;
/// The most tokens of the sentences a concept keeps for prompts to pick from for a question.
pub const SAID_TOKENS: usize = 2000;
/// How much a shared session, subject and closeness in time count beside meaning (chosen by
/// measurement: docs/benchmarks.md, "Compaction").
pub const SHARED: features::Weights = features::Weights { session: 1.0, subject: 1.0, time: 0.2 };
/// The app a concept's source and every event of a pass name.
pub(crate) const COMPACTION: &str = "compaction";
/// How many concepts, nearest by their centres, a new memory is compared with member by member
/// in an incremental pass.
const CLOSEST: usize = 3;

/// What a compaction pass does.
#[derive(Debug, Clone)]
pub struct CompactParams {
    /// Re-cluster everything (true) or only let new memories join known concepts.
    pub full: bool,
    /// Work out what would change and write nothing.
    pub dry_run: bool,
    /// The most tokens of a summary.
    pub summary_tokens: usize,
    /// How groups are found.
    pub clustering: cluster::Params,
    /// How much a shared session, subject and closeness in time count beside meaning.
    pub shared: features::Weights,
}

impl Default for CompactParams {
    fn default() -> Self {
        CompactParams {
            full: true,
            dry_run: false,
            summary_tokens: SUMMARY_TOKENS,
            clustering: cluster::Params::default(),
            shared: SHARED,
        }
    }
}

/// What a compaction pass did (or, dry, would do).
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CompactReport {
    /// Embedded memories considered.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub memories: usize,
    /// Live concepts afterwards.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub concepts: usize,
    /// Memories in a concept afterwards.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub grouped: usize,
    /// Concepts formed (of which split from a known one: `split`).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub formed: usize,
    /// Formed from part of a concept that continues elsewhere.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub split: usize,
    /// Concepts whose members, name or summary changed.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub updated: usize,
    /// Concepts that stayed as they were.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub unchanged: usize,
    /// Concepts whose members mostly went to another concept (expired, "merged into …").
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub merged: usize,
    /// Concepts whose members no longer form a group (expired).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub dissolved: usize,
    /// Memories that joined a known concept (incremental pass).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub joined: usize,
    /// Tokens of the grouped memories' text as a summary quotes it ("Ana: …"; cl100k_base).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub member_tokens: usize,
    /// Tokens of their concepts' summaries.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub summary_tokens: usize,
    /// member_tokens ÷ summary_tokens.
    pub ratio: f64,
    /// Nothing was written.
    pub dry_run: bool,
}

mod views;
pub use views::{ConceptView, ExpandedConcept, SentenceView};

/// An embedded memory as compaction reads it.
struct Item {
    memory: Memory,
    vector: Vec<f32>,
    /// Who said it, for a summary sentence ("Ana: …"), when it is an utterance.
    speaker: Option<String>,
    /// What it says.
    text: String,
    /// The subject it is about: a fact's, or for a turn the subject of a fact drawn from it.
    subject: Option<String>,
}

impl Item {
    /// What it shares with other memories besides its meaning.
    fn shared(&self) -> features::Shared<'_> {
        features::Shared {
            session: self.memory.scope.session_id.as_deref(),
            subject: self.subject.as_deref(),
            days: self.memory.occurred_at().timestamp() as f64 / 86_400.0,
        }
    }

    /// Its text as a summary quotes it: with who said it ("Ana: …").
    fn quoted(&self) -> String {
        match &self.speaker {
            Some(s) => format!("{s}: {}", self.text),
            None => self.text.clone(),
        }
    }
}

/// A concept a pass writes: its body and members.
struct Planned {
    body: ConceptBody,
    members: Vec<MemoryId>,
}

/// What a pass does to each concept.
enum Step {
    Form(Planned),
    Update(MemoryId, Planned),
    Expire(MemoryId, String),
}

impl Engine {
    /// Groups the caller's embedded memories into concepts (see the module's text). Reports
    /// progress per group through `tick`; `cancel` stops it before anything is written.
    pub fn compact(&mut self, params: &CompactParams, tick: Tick<'_>, cancel: &AtomicBool) -> ApiResult<CompactReport> {
        self.compact_seeing(params, &mut |_| {}, tick, cancel)
    }

    /// [`Engine::compact`], telling `stage` what it does in words as each step begins (reading
    /// the memories, finding groups among how many, and what it leaves for later), for a window
    /// to show beside its progress.
    pub fn compact_seeing(
        &mut self,
        params: &CompactParams,
        stage: &mut dyn FnMut(&str),
        tick: Tick<'_>,
        cancel: &AtomicBool,
    ) -> ApiResult<CompactReport> {
        let embedder = self.embedder().cloned().ok_or_else(|| {
            ApiError::new(ErrorCode::Model, "compaction groups memories by meaning and needs the embedding model")
        })?;
        // Read before anything else: the pass writes only if no other pass wrote meanwhile.
        let passes = self.store_view().concept_passes()?;
        stage("Reading what the memories mean");
        let items = self.items(embedder.model_id())?;
        let waiting = self.store_view().unembedded(&self.options().user_id, embedder.model_id(), 0)?.0;
        let later = if waiting > 0 {
            format!(
                "; {} not searchable by meaning yet {} grouped once {}",
                crate::health::words(waiting, "memory", "memories"),
                if waiting == 1 { "is" } else { "are" },
                if waiting == 1 { "it is" } else { "they are" }
            )
        } else {
            String::new()
        };
        stage(&format!(
            "Finding groups among {}{later}",
            crate::health::words(items.len() as u64, "memory", "memories")
        ));
        let known = self.live_concepts()?;
        let tokens = OpenAiTokens::new(Encoding::Cl100kBase);
        let count = |s: &str| tokens.count(s).unwrap_or(s.len() / 4);
        // Meaning and what else memories share, in one space for every step below.
        let space: Vec<Vec<f32>> =
            items.iter().map(|i| features::joined(&i.vector, &i.shared(), &params.shared)).collect();
        let vectors: Vec<&[f32]> = space.iter().map(Vec::as_slice).collect();
        // A full pass plans every group; an incremental one only the known concepts that grew.
        let (groups, joined, grown) = if params.full {
            (cluster::groups(&vectors, &params.clustering), 0, None)
        } else {
            let (groups, grown, joined) = join_known(&items, &vectors, &known);
            (groups, joined, Some(grown))
        };
        check(cancel)?;
        let texts: Vec<&str> = items.iter().map(|i| i.text.as_str()).collect();
        let salient = terms::salient(&texts, &groups, MAX_TERMS);
        let todo: Vec<usize> = grown.clone().unwrap_or_else(|| (0..groups.len()).collect());
        let total = todo.len() as u64;
        stage("Naming and summarizing the groups");
        let mut planned = Vec::with_capacity(todo.len());
        for (n, &g) in todo.iter().enumerate() {
            tick(n as u64, total)?;
            check(cancel)?;
            planned.push(plan_concept(&items, &vectors, &groups[g], &salient[g], params.summary_tokens, &count));
        }
        tick(total, total)?;
        let mut report = CompactReport { memories: items.len(), joined, dry_run: params.dry_run, ..Default::default() };
        let steps = match grown {
            None => steps(&known, planned, &mut report),
            Some(grown) => {
                report.updated = grown.len();
                report.unchanged = known.len() - grown.len();
                grown.iter().zip(planned).map(|(&k, p)| Step::Update(known[k].id, p)).collect()
            }
        };
        let by_id: HashMap<MemoryId, &Item> = items.iter().map(|i| (i.memory.id, i)).collect();
        for p in steps.iter().filter_map(|s| match s {
            Step::Form(p) | Step::Update(_, p) => Some(p),
            Step::Expire(..) => None,
        }) {
            report.grouped += p.members.len();
            report.summary_tokens += p.body.summary.iter().map(|s| count(&s.text)).sum::<usize>();
            report.member_tokens +=
                p.members.iter().filter_map(|m| by_id.get(m)).map(|i| count(&i.quoted())).sum::<usize>();
        }
        report.grouped += report.unchanged_members(&known, &steps);
        report.concepts = known.len() + report.formed - report.merged - report.dissolved;
        report.ratio = report.member_tokens as f64 / report.summary_tokens.max(1) as f64;
        if !params.dry_run {
            check(cancel)?;
            self.write_steps(steps, passes)?;
            self.record_pass(&report, params.full);
        }
        Ok(report)
    }

    /// The caller's live concepts, the largest first.
    pub fn concepts(&self) -> ApiResult<Vec<ConceptView>> {
        let mut out: Vec<ConceptView> = self.live_concepts()?.iter().filter_map(ConceptView::of).collect();
        out.sort_by(|a, b| b.members.len().cmp(&a.members.len()).then_with(|| a.key.cmp(&b.key)));
        Ok(out)
    }

    /// One concept, by id or key (`concept/…`).
    pub fn concept(&self, target: &crate::Target) -> ApiResult<ConceptView> {
        let m = self.memory(target)?;
        ConceptView::of(&m).ok_or_else(|| ApiError::invalid(format!("{} is not a concept", target.id_or_key)))
    }

    /// A concept by its key (`concept/…`), its key's slug alone, or its id.
    pub fn find_concept(&self, name: &str) -> ApiResult<ConceptView> {
        let unknown = |e: ApiError| match e.code {
            ErrorCode::NotFound => {
                ApiError::new(ErrorCode::NotFound, format!("no concept '{name}': `strata concepts` lists them"))
            }
            _ => e,
        };
        let direct = self.concept(&crate::Target::new(name));
        if direct.is_ok() || name.starts_with(KEY_PREFIX) {
            return direct.map_err(unknown);
        }
        match self.concept(&crate::Target::new(format!("{KEY_PREFIX}{name}"))) {
            Err(e) if e.code == ErrorCode::NotFound => direct.map_err(unknown),
            other => other,
        }
    }

    /// A concept ([`Engine::find_concept`]'s key, slug or id) with its members in full, in the
    /// order they happened (at most `limit`; members the caller may not see are left out).
    pub fn expand_concept(&self, name: &str, limit: usize) -> ApiResult<ExpandedConcept> {
        let concept = self.find_concept(name)?;
        let mut found: Vec<Memory> = Vec::with_capacity(concept.members.len());
        for id in &concept.members {
            match self.memory(&crate::Target::new(id.clone())) {
                Ok(m) => found.push(m),
                Err(e) if matches!(e.code, ErrorCode::NotFound | ErrorCode::Forgotten) => {}
                Err(e) => return Err(e),
            }
        }
        found.sort_by_key(|m| (m.occurred_at(), m.id));
        let total = found.len();
        let members = found.into_iter().take(limit).map(crate::dto::MemoryView::from).collect();
        Ok(ExpandedConcept { concept, members, total })
    }

    /// The caller's embedded memories that can be members (not concepts), oldest first.
    fn items(&self, model: &str) -> ApiResult<Vec<Item>> {
        let filter = self.scoped(Filter::default());
        let mut items: Vec<Item> = self
            .store_view()
            .embedded(model, &filter)?
            .into_iter()
            .filter(|(m, _)| !is_concept(m))
            .map(|(memory, vector)| {
                let (speaker, text) = match &memory.content {
                    strata_core::Content::Episodic(e) => match &e.body {
                        strata_core::EpisodeBody::Utterance { speaker, text } => (Some(speaker.clone()), text.clone()),
                        // What the person said: a model's answer never groups memories, names a
                        // concept or stands in its summary.
                        strata_core::EpisodeBody::Exchange { query, .. } => (Some("user".into()), query.clone()),
                    },
                    other => (
                        None,
                        strata_core::vectors::embedding_text(&Memory { content: other.clone(), ..memory.clone() }),
                    ),
                };
                let subject = memory.content.key().map(|k| k.split('/').next().unwrap_or(k).to_string());
                Item { memory, vector, speaker, text, subject }
            })
            .collect();
        let about: HashMap<MemoryId, String> = items
            .iter()
            .filter_map(|i| i.subject.as_ref().map(|s| (i, s)))
            .flat_map(|(i, s)| {
                i.memory.links.iter().filter(|l| l.relation == FACT_SOURCE).map(move |l| (l.target, s.clone()))
            })
            .collect();
        for i in &mut items {
            if i.subject.is_none() {
                i.subject = about.get(&i.memory.id).cloned();
            }
        }
        items.sort_by_key(|i| (i.memory.occurred_at(), i.memory.id));
        Ok(items)
    }

    /// The caller's live concepts.
    pub(crate) fn live_concepts(&self) -> ApiResult<Vec<Memory>> {
        let filter = Filter { kinds: vec![MemoryKind::Semantic], ..Filter::default() };
        Ok(self.all_memories(filter)?.into_iter().filter(is_concept).collect())
    }

    /// Keeps analytics' record of a pass written; one that cannot be written is logged, never
    /// an error (the pass itself is written).
    fn record_pass(&mut self, r: &CompactReport, full: bool) {
        let n = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        let pass = CompactionPass {
            at: String::new(),
            full,
            formed: n(r.formed),
            updated: n(r.updated),
            merged: n(r.merged),
            dissolved: n(r.dissolved),
            joined: n(r.joined),
            concepts: n(r.concepts),
            grouped: n(r.grouped),
            member_tokens: n(r.member_tokens),
            summary_tokens: n(r.summary_tokens),
        };
        let user = self.options().user_id.clone();
        if let Err(e) = self.store().record_compaction(&user, &pass) {
            tracing::warn!("a compaction pass could not be recorded for analytics: {e}");
        }
    }

    /// Writes a pass's steps in one transaction, if no other pass wrote since this one read
    /// `passes`, and every member it read is still there (forgetting wins over a pass in
    /// flight); otherwise writes nothing and says so.
    fn write_steps(&mut self, steps: Vec<Step>, passes: i64) -> ApiResult<()> {
        let meta = EventMeta { actor: Actor::App, client: Some(COMPACTION.into()), ..self.meta() };
        let scope = self.scope(None);
        let mut keys: HashSet<String> = self
            .all_memories(Filter { kinds: vec![MemoryKind::Semantic], include_expired: true, ..Filter::default() })?
            .iter()
            .filter_map(|m| m.content.key().map(str::to_string))
            .collect();
        let read: Vec<MemoryId> = steps
            .iter()
            .flat_map(|s| match s {
                Step::Form(p) | Step::Update(_, p) => p.members.clone(),
                Step::Expire(..) => Vec::new(),
            })
            .collect();
        let written = self.store().transact(|tx| {
            match tx.still_live(&read) {
                Err(strata_core::Error::Forgotten { id, .. }) => {
                    return Ok(Err(ApiError::new(
                        ErrorCode::Forgotten,
                        format!("memory {id} was forgotten while this pass grouped it; nothing was written (group again)"),
                    )));
                }
                other => other?,
            }
            if !tx.bump_concept_passes(passes)? {
                return Ok(Err(ApiError::new(
                    ErrorCode::Conflict,
                    "another grouping pass wrote concepts while this one ran; nothing was written (the concepts are that pass's)",
                )));
            }
            for step in steps {
                match step {
                    Step::Form(p) => {
                        let key = free_key(&mut keys, &p.body.name);
                        let new = NewMemory {
                            scope: scope.clone(),
                            tags: vec![],
                            importance: None,
                            tier: Some(Tier::Long),
                            source: Source::app(COMPACTION),
                        };
                        let c = tx.create(p.body.content(&key), new, &meta)?;
                        relink(tx, c.id, &[], &p.members, &meta)?;
                    }
                    Step::Update(id, p) => {
                        let c = tx.current(id)?;
                        let key = c.content.key().unwrap_or_default().to_string();
                        tx.update_content(id, p.body.content(&key), Expected::Any, &meta)?;
                        relink(tx, id, &members(&c), &p.members, &meta)?;
                    }
                    Step::Expire(id, reason) => {
                        tx.append(id, Expected::Any, Change::Expired { reason }, &meta)?;
                    }
                }
            }
            Ok(Ok(()))
        });
        // A refusal has written nothing when it returns (its transaction is empty); it keeps its
        // own code, which an error through the transaction would not.
        let written = written?;
        if written.is_ok() {
            self.wrote();
        }
        written
    }
}

impl CompactReport {
    /// Members of the known concepts a pass leaves as they are.
    fn unchanged_members(&self, known: &[Memory], steps: &[Step]) -> usize {
        let touched: HashSet<MemoryId> = steps
            .iter()
            .filter_map(|s| match s {
                Step::Update(id, _) | Step::Expire(id, _) => Some(*id),
                Step::Form(_) => None,
            })
            .collect();
        known.iter().filter(|c| !touched.contains(&c.id)).map(|c| members(c).len()).sum()
    }
}

fn check(cancel: &AtomicBool) -> ApiResult<()> {
    if cancel.load(Ordering::Relaxed) {
        return Err(ApiError::new(ErrorCode::Cancelled, "compaction was cancelled; nothing was written"));
    }
    Ok(())
}

/// The groups of an incremental pass, one per known concept: its members (those still
/// embedded), plus each memory written since the concept last changed (the last pass) that is
/// in no concept and as close to one of its members as the members are to each other (its
/// cosine to its nearest member at least the concept's weakest nearest-member cosine); of the
/// [`CLOSEST`] concepts whose centres are nearest, the one with the closest member takes it.
/// Returns the groups, the concepts that grew and how many memories joined. Older memories in
/// no concept wait for a full pass.
fn join_known(items: &[Item], vectors: &[&[f32]], known: &[Memory]) -> (Vec<Vec<usize>>, Vec<usize>, usize) {
    let index: HashMap<MemoryId, usize> = items.iter().enumerate().map(|(i, it)| (it.memory.id, i)).collect();
    let mut groups: Vec<Vec<usize>> =
        known.iter().map(|c| members(c).iter().filter_map(|m| index.get(m).copied()).collect()).collect();
    let grouped: HashSet<usize> = groups.iter().flatten().copied().collect();
    let since = known.iter().map(|c| c.updated_at).max();
    let nearest = |i: usize, g: &[usize]| {
        g.iter().filter(|&&j| j != i).map(|&j| cosine(vectors[i], vectors[j])).fold(f32::MIN, f32::max)
    };
    let centres: Vec<Option<Vec<f32>>> = groups.iter().map(|g| (g.len() >= 2).then(|| centroid(vectors, g))).collect();
    let mut weakest: Vec<Option<f32>> = vec![None; groups.len()];
    let mut joins = Vec::new();
    let new = |i: &usize| !grouped.contains(i) && since.is_none_or(|t| items[*i].memory.created_at >= t);
    for i in (0..items.len()).filter(new) {
        let mut near: Vec<(usize, f32)> =
            centres.iter().enumerate().filter_map(|(k, c)| c.as_ref().map(|c| (k, cosine(vectors[i], c)))).collect();
        near.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut best: Option<(usize, f32)> = None;
        for (k, _) in near.into_iter().take(CLOSEST) {
            let cos = nearest(i, &groups[k]);
            let floor = *weakest[k]
                .get_or_insert_with(|| groups[k].iter().map(|&m| nearest(m, &groups[k])).fold(f32::INFINITY, f32::min));
            if cos >= floor && best.is_none_or(|(_, b)| cos > b) {
                best = Some((k, cos));
            }
        }
        if let Some((k, _)) = best {
            joins.push((k, i));
        }
    }
    let mut grown: Vec<usize> = joins.iter().map(|&(k, _)| k).collect();
    grown.sort_unstable();
    grown.dedup();
    let joined = joins.len();
    for (k, i) in joins {
        groups[k].push(i);
    }
    (groups, grown, joined)
}

/// A group's concept: name and terms, summary within `limit` tokens, time span, members.
fn plan_concept(
    items: &[Item],
    vectors: &[&[f32]],
    group: &[usize],
    salient: &[(String, f64)],
    limit: usize,
    count: &dyn Fn(&str) -> usize,
) -> Planned {
    let centre = centroid(vectors, group);
    let texts: Vec<String> = group.iter().map(|&i| items[i].quoted()).collect();
    let readers: Vec<summary::Member<'_>> = group
        .iter()
        .zip(&texts)
        .map(|(&i, text)| summary::Member { text: text.as_str(), closeness: cosine(vectors[i], &centre) })
        .collect();
    // A summary is at most half what its members say, so it always saves tokens.
    let said: usize = texts.iter().map(|t| count(t)).sum();
    let summary = summary::summarize(&readers, salient, limit.min(said / 2), count)
        .into_iter()
        .map(|(m, text)| Sentence::quoted(items[group[m]].memory.id, text))
        .collect();
    let said = summary::sentences(&readers, SAID_TOKENS, count)
        .into_iter()
        .map(|(m, text)| Sentence::quoted(items[group[m]].memory.id, text))
        .collect();
    let terms: Vec<String> = salient.iter().map(|(w, _)| w.clone()).collect();
    let times = group.iter().map(|&i| items[i].memory.occurred_at());
    let first = times.clone().min().unwrap_or_else(|| items[group[0]].memory.occurred_at());
    let last = times.max().unwrap_or(first);
    Planned {
        body: ConceptBody { name: name_of(&terms), terms, summary, said, first, last, written_by: None },
        members: group.iter().map(|&i| items[i].memory.id).collect(),
    }
}

/// What a pass does to each known concept and new group, counted into `report`.
fn steps(known: &[Memory], planned: Vec<Planned>, report: &mut CompactReport) -> Vec<Step> {
    let known_members: Vec<Vec<MemoryId>> = known.iter().map(members).collect();
    let new_members: Vec<Vec<MemoryId>> = planned.iter().map(|p| p.members.clone()).collect();
    let continues = matching::match_groups(&known_members, &new_members);
    let continued: HashMap<usize, usize> =
        continues.iter().enumerate().filter_map(|(g, k)| k.map(|k| (k, g))).collect();
    // member → the known concept it was in
    let was_in: HashMap<MemoryId, usize> =
        known_members.iter().enumerate().flat_map(|(k, ms)| ms.iter().map(move |m| (*m, k))).collect();
    let mut out = Vec::new();
    for (g, p) in planned.into_iter().enumerate() {
        match continues[g] {
            Some(k) => {
                let same_members =
                    p.members.iter().collect::<BTreeSet<_>>() == known_members[k].iter().collect::<BTreeSet<_>>();
                if same_members && ConceptBody::read(&known[k]).as_ref() == Some(&p.body) {
                    report.unchanged += 1;
                } else {
                    report.updated += 1;
                    out.push(Step::Update(known[k].id, p));
                }
            }
            None => {
                report.formed += 1;
                let from = mostly_from(&p.members, &was_in);
                if from.is_some_and(|k| continued.contains_key(&k)) {
                    report.split += 1;
                }
                out.push(Step::Form(p));
            }
        }
    }
    for (k, c) in known.iter().enumerate().filter(|(k, _)| !continued.contains_key(k)) {
        // Where did most of its members go?
        let went: Vec<MemoryId> = known_members[k].clone();
        let into = went
            .iter()
            .filter_map(|m| new_members.iter().position(|g| g.contains(m)))
            .fold(HashMap::<usize, usize>::new(), |mut n, g| {
                *n.entry(g).or_default() += 1;
                n
            })
            .into_iter()
            .filter(|(_, n)| *n * 2 >= went.len())
            .map(|(g, _)| g)
            .next();
        let reason = match into.and_then(|g| continues[g]) {
            Some(other) => {
                report.merged += 1;
                format!("merged into {}", known[other].content.key().unwrap_or_default())
            }
            None => {
                report.dissolved += 1;
                "dissolved: its members no longer form a group".to_string()
            }
        };
        out.push(Step::Expire(c.id, reason));
    }
    out
}

/// The known concept most of `members` were in, when one held at least half of them.
fn mostly_from(members: &[MemoryId], was_in: &HashMap<MemoryId, usize>) -> Option<usize> {
    let mut n: HashMap<usize, usize> = HashMap::new();
    for m in members {
        if let Some(&k) = was_in.get(m) {
            *n.entry(k).or_default() += 1;
        }
    }
    n.into_iter().filter(|(_, c)| *c * 2 >= members.len()).map(|(k, _)| k).next()
}

/// A key for a new concept named `name`, unused so far.
fn free_key(keys: &mut HashSet<String>, name: &str) -> String {
    let base = format!("{KEY_PREFIX}{}", slug(name));
    let key = (1..)
        .map(|n| if n == 1 { base.clone() } else { format!("{base}_{n}") })
        .find(|k| !keys.contains(k))
        .unwrap_or(base);
    keys.insert(key.clone());
    key
}

/// Links concept `id` to `now` and unlinks the members of `before` that left.
fn relink(
    tx: &mut StoreTx<'_>,
    id: MemoryId,
    before: &[MemoryId],
    now: &[MemoryId],
    meta: &EventMeta,
) -> strata_core::Result<()> {
    for m in before.iter().filter(|m| !now.contains(m)) {
        tx.unlink(id, *m, GROUPS, meta)?;
    }
    for m in now.iter().filter(|m| !before.contains(m)) {
        tx.link(id, *m, GROUPS, meta)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use strata_core::model::Link;
    use strata_core::{Scope, Source};

    use super::*;

    fn id(n: u64) -> MemoryId {
        MemoryId::from_parts(1_700_000_000_000 + n, u128::from(n))
    }

    fn body(name: &str, members: &[u64]) -> ConceptBody {
        let at = strata_core::time::parse_time("2026-01-01T00:00Z").unwrap();
        let said: Vec<Sentence> = members.iter().map(|m| Sentence::quoted(id(*m), format!("{name} {m}"))).collect();
        ConceptBody {
            name: name.into(),
            terms: vec![name.into()],
            summary: said.clone(),
            said,
            first: at,
            last: at,
            written_by: None,
        }
    }

    /// A live concept `name` (id 1000 + `n`) grouping `members`.
    fn known(n: u64, name: &str, members: &[u64]) -> Memory {
        let at = strata_core::time::parse_time("2026-01-01T00:00Z").unwrap();
        let content = body(name, members).content(&format!("{KEY_PREFIX}{name}"));
        let mut m = Memory::new(id(1000 + n), Scope::default(), content, Source::default(), at);
        m.links = members.iter().map(|t| Link { target: id(*t), relation: GROUPS.into() }).collect();
        m
    }

    fn planned(name: &str, members: &[u64]) -> Planned {
        Planned { body: body(name, members), members: members.iter().map(|m| id(*m)).collect() }
    }

    fn kinds(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Form(p) => format!("form {}", p.body.name),
                Step::Update(k, p) => format!("update {k} as {}", p.body.name),
                Step::Expire(k, why) => format!("expire {k}: {why}"),
            })
            .collect()
    }

    #[test]
    fn a_group_that_continues_a_concept_keeps_its_id_and_an_identical_one_is_left_alone() {
        let known = [known(1, "kitten", &[1, 2, 3]), known(2, "marathon", &[4, 5, 6])];
        let mut r = CompactReport::default();
        let done =
            super::steps(&known, vec![planned("kitten", &[1, 2, 3]), planned("marathon", &[4, 5, 6, 7])], &mut r);
        assert_eq!(kinds(&done), vec![format!("update {} as marathon", id(1002))]);
        assert_eq!((r.unchanged, r.updated, r.formed), (1, 1, 0));
    }

    #[test]
    fn a_concept_split_in_two_continues_in_one_and_forms_the_other() {
        let known = [known(1, "pets", &[1, 2, 3, 4, 5, 6])];
        let mut r = CompactReport::default();
        let done =
            super::steps(&known, vec![planned("kitten", &[1, 2, 3, 4]), planned("puppy", &[5, 6, 7, 8, 9])], &mut r);
        assert_eq!(kinds(&done), vec![format!("update {} as kitten", id(1001)), "form puppy".to_string()]);
        assert_eq!((r.updated, r.formed, r.split), (1, 1, 0), "the puppy group was not mostly the old concept's");
        let mut r = CompactReport::default();
        let done = super::steps(&known, vec![planned("kitten", &[1, 2, 3, 4]), planned("cat", &[5, 6])], &mut r);
        assert_eq!(kinds(&done)[1], "form cat");
        assert_eq!((r.formed, r.split), (1, 1), "its members all came from the concept that continues: a split");
    }

    #[test]
    fn concepts_whose_members_joined_one_group_merge_into_the_one_that_continues() {
        let known = [known(1, "kitten", &[1, 2, 3, 4]), known(2, "cat", &[5, 6])];
        let mut r = CompactReport::default();
        let done = super::steps(&known, vec![planned("pets", &[1, 2, 3, 4, 5, 6])], &mut r);
        assert_eq!(
            kinds(&done),
            vec![format!("update {} as pets", id(1001)), format!("expire {}: merged into concept/kitten", id(1002))]
        );
        assert_eq!((r.updated, r.merged, r.dissolved), (1, 1, 0));
    }

    #[test]
    fn a_concept_whose_members_went_nowhere_is_dissolved() {
        let known = [known(1, "kitten", &[1, 2, 3])];
        let mut r = CompactReport::default();
        let done = super::steps(&known, vec![planned("marathon", &[4, 5, 6])], &mut r);
        assert_eq!(
            kinds(&done),
            vec![
                "form marathon".to_string(),
                format!("expire {}: dissolved: its members no longer form a group", id(1001))
            ]
        );
        assert_eq!((r.formed, r.dissolved), (1, 1));
    }
}
