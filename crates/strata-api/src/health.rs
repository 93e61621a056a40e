//! Health and optimization (issue 22): what in the caller's person's store does it no good —
//! near-duplicates, contradictions, stale memories, memories without a vector, space deleted
//! rows left — and the actions that mend it, each previewed before it is applied and each
//! change an ordinary event with its reason:
//!
//! - **merge near-duplicates**: in each group of memories whose words overlap almost entirely
//!   (word-set similarity at least [`HealthParams::similarity`]), one is kept — pinned first,
//!   then the most retrieved, the most important, the earliest — and the others are linked to
//!   it (`duplicate_of`) and expired. [`Engine::revive`] undoes it for any of them.
//! - **expire stale memories**: never retrieved, in no recall, not pinned, not marked
//!   important and older than [`HealthParams::stale_days`]: expired (hidden, kept, restorable).
//! - **embed missing**, **group related memories** (compaction) and **vacuum** run what the
//!   engine already has.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use strata_context::{Signature, near_duplicate_groups};
use strata_core::concepts::is_concept;
use strata_core::event::{Change, Expected};
use strata_core::interchange::Tick;
use strata_core::vectors::embedding_text;
use strata_core::{Content, Filter, Memory, MemoryId, MemoryKind};

use crate::dto::MemoryView;
use crate::{ApiError, ApiResult, CompactParams, Engine, ErrorCode, Target};

/// The relation a merged duplicate has to the memory kept in its place.
pub const DUPLICATE_OF: &str = "duplicate_of";
/// The reason a restored memory's event records.
const RESTORED: &str = "restored by a person";

/// What counts as unhealthy.
#[derive(Debug, Clone, Copy)]
pub struct HealthParams {
    /// Word-set similarity (0–1) from which two memories are near-duplicates.
    pub similarity: f64,
    /// Memories never used for this many days are stale.
    pub stale_days: u32,
    /// How many groups, contradictions and stale memories are listed (all are counted).
    pub listed: usize,
}

impl Default for HealthParams {
    fn default() -> Self {
        HealthParams { similarity: 0.9, stale_days: 90, listed: 20 }
    }
}

/// Memories of this few distinct words are never near-duplicates ("ok, thanks!").
const MIN_WORDS: usize = 4;

/// The store's health, counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HealthCounts {
    /// Live memories.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub memories: u64,
    /// Groups of near-duplicates.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub duplicate_groups: u64,
    /// Memories a merge would expire (each group's others).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub duplicates: u64,
    /// Facts that disagree.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub contradictions: u64,
    /// Stale memories.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub stale: u64,
    /// Live memories without a vector from the loaded model (none: no model loaded).
    #[cfg_attr(feature = "specta", specta(type = Option<u32>))]
    pub unembedded: Option<u64>,
    /// The database file's size.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub file_bytes: u64,
    /// Of which free pages a vacuum would give back.
    #[cfg_attr(feature = "specta", specta(type = f64))]
    pub free_bytes: u64,
}

/// Near-duplicates: the memory a merge keeps and the ones it would expire.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DuplicateGroupView {
    /// Kept.
    pub keep: MemoryView,
    /// Expired by a merge (pinned ones are never).
    pub others: Vec<MemoryView>,
}

/// One value a contradicted fact has.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ClaimView {
    /// The value, as text.
    pub value: String,
    /// The memory that holds it.
    pub memory: MemoryView,
}

/// A fact two memories about one key disagree on (the same key in different scopes, or keys
/// that differ only in case and separators).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ContradictionView {
    /// The key (as the first memory spells it).
    pub key: String,
    /// The fact's name.
    pub fact: String,
    /// Each value and where it is held.
    pub claims: Vec<ClaimView>,
}

/// The store's health, with the first of each kind listed.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct HealthView {
    /// Counted.
    pub counts: HealthCounts,
    /// The near-duplicate groups, the largest first.
    pub duplicates: Vec<DuplicateGroupView>,
    /// Facts that disagree.
    pub contradictions: Vec<ContradictionView>,
    /// Stale memories, the oldest first.
    pub stale: Vec<MemoryView>,
    /// Days of disuse that make a memory stale.
    pub stale_days: u32,
    /// Memories without a vector, the oldest first.
    pub unembedded: Vec<MemoryView>,
    /// The space each table takes, the largest first: table and bytes.
    #[cfg_attr(feature = "specta", specta(type = Vec<(String, f64)>))]
    pub tables: Vec<(String, u64)>,
}

/// An action that mends what health found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Optimization {
    /// Keep one of each near-duplicate group and expire the others.
    MergeDuplicates,
    /// Expire stale memories.
    ExpireStale,
    /// Embed memories without a vector.
    EmbedMissing,
    /// Group related memories into concepts (a full compaction pass).
    Compact,
    /// Give back the space deleted rows left.
    Vacuum,
}

/// One change an optimization makes.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PlannedChange {
    /// The memory it changes, where it is one.
    pub memory: Option<MemoryView>,
    /// What happens to it, in words.
    pub what: String,
}

/// An optimization, previewed or applied.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OptimizeView {
    /// Which.
    pub action: Optimization,
    /// Done (true) or only previewed.
    pub applied: bool,
    /// What it does (previewed) or did (applied), in one sentence.
    pub summary: String,
    /// The first changes, listed.
    pub changes: Vec<PlannedChange>,
    /// How many changes in all.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub total: u64,
    /// Health before.
    pub before: HealthCounts,
    /// Health after (applied only).
    pub after: Option<HealthCounts>,
}

/// A fact that disagrees: its key, its name, and each value with the index of the memory in
/// `live` that holds it.
pub(crate) type Disagreement = (String, String, Vec<(String, usize)>);

/// What health found, before it is listed.
struct Findings {
    live: Vec<Memory>,
    groups: Vec<(usize, Vec<usize>)>,
    contradictions: Vec<Disagreement>,
    stale: (u64, Vec<MemoryId>),
    unembedded: Option<(u64, Vec<MemoryId>)>,
}

impl Engine {
    /// The caller's person's store health (see the module's text).
    pub fn health(&self, params: &HealthParams) -> ApiResult<HealthView> {
        let f = self.findings(params, params.listed)?;
        let counts = self.counts(&f)?;
        let view = |m: &Memory| MemoryView::from(m.clone());
        let listed = |ids: &[MemoryId]| -> ApiResult<Vec<MemoryView>> {
            ids.iter().map(|id| Ok(MemoryView::from(self.store_view().get(*id)?))).collect()
        };
        Ok(HealthView {
            duplicates: f
                .groups
                .iter()
                .take(params.listed)
                .map(|(keep, others)| DuplicateGroupView {
                    keep: view(&f.live[*keep]),
                    others: others.iter().map(|&o| view(&f.live[o])).collect(),
                })
                .collect(),
            contradictions: f
                .contradictions
                .iter()
                .take(params.listed)
                .map(|(key, fact, claims)| ContradictionView {
                    key: key.clone(),
                    fact: fact.clone(),
                    claims: claims
                        .iter()
                        .map(|(value, m)| ClaimView { value: value.clone(), memory: view(&f.live[*m]) })
                        .collect(),
                })
                .collect(),
            stale: listed(&f.stale.1)?,
            stale_days: params.stale_days,
            unembedded: listed(f.unembedded.as_ref().map_or(&[][..], |u| &u.1))?,
            tables: self.store_view().table_sizes()?.into_iter().map(|t| (t.table, t.bytes)).collect(),
            counts,
        })
    }

    /// Previews (`apply` false) or applies an optimization; long ones (embedding, compaction)
    /// report progress through `tick` and stop at `cancel`.
    pub fn optimize(
        &mut self,
        action: Optimization,
        params: &HealthParams,
        apply: bool,
        tick: Tick<'_>,
        cancel: &AtomicBool,
    ) -> ApiResult<OptimizeView> {
        let all = usize::MAX;
        let f = self.findings(params, all)?;
        let before = self.counts(&f)?;
        let mut changes: Vec<(Option<MemoryId>, String)> = Vec::new();
        let summary = match action {
            Optimization::MergeDuplicates => {
                for (keep, others) in &f.groups {
                    let kept = crate::dto::content_title(&f.live[*keep].content);
                    for &o in others {
                        changes.push((Some(f.live[o].id), format!("expired as a near-duplicate of “{kept}”")));
                    }
                }
                if apply {
                    self.merge(&f)?;
                }
                format!(
                    "{} of near-duplicates: one memory of each is kept; {} {} expired and linked to it (restorable)",
                    words(f.groups.len() as u64, "group", "groups"),
                    words(changes.len() as u64, "memory", "memories"),
                    were(changes.len() as u64, apply),
                )
            }
            Optimization::ExpireStale => {
                let reason = stale_reason(params.stale_days);
                for id in &f.stale.1 {
                    changes.push((Some(*id), reason.clone()));
                }
                if apply {
                    self.expire_all(&f.stale.1, &reason)?;
                }
                format!(
                    "{} never used in {} days {} expired: hidden from recall and prompts, kept, restorable",
                    words(f.stale.0, "memory", "memories"),
                    params.stale_days,
                    were(f.stale.0, apply),
                )
            }
            Optimization::EmbedMissing => {
                let (n, ids) = f.unembedded.clone().ok_or_else(|| {
                    ApiError::new(ErrorCode::Model, "no embedding model is loaded: nothing can be embedded")
                })?;
                changes.extend(ids.iter().map(|id| (Some(*id), "gets a vector, so recall finds it by meaning".into())));
                if apply {
                    self.embed_all(cancel, &mut |p| {
                        let _ = tick(p.done, p.total);
                    })?;
                }
                format!("{} {} made searchable by meaning", words(n, "memory", "memories"), were(n, apply))
            }
            Optimization::Compact => {
                let report =
                    self.compact(&CompactParams { dry_run: !apply, ..CompactParams::default() }, tick, cancel)?;
                changes.push((
                    None,
                    format!(
                        "{} concepts formed, {} updated, {} merged, {} dissolved",
                        report.formed, report.updated, report.merged, report.dissolved
                    ),
                ));
                format!(
                    "{} {} grouped into {}",
                    words(report.grouped as u64, "memory", "memories"),
                    were(report.grouped as u64, apply),
                    words(report.concepts as u64, "concept", "concepts")
                )
            }
            Optimization::Vacuum => {
                changes.push((None, format!("{} of free space given back", bytes(before.free_bytes))));
                if apply {
                    self.store().vacuum()?;
                }
                format!(
                    "The file {} {} smaller ({} now)",
                    if apply { "was made" } else { "would be" },
                    bytes(before.free_bytes),
                    bytes(before.file_bytes)
                )
            }
        };
        let total = changes.len() as u64;
        let listed = self.planned(changes, params.listed)?;
        let after = if apply { Some(self.counts(&self.findings(params, 0)?)?) } else { None };
        Ok(OptimizeView { action, applied: apply, summary, changes: listed, total, before, after })
    }

    /// The first `n` changes as listed: each with its memory as it is now.
    fn planned(&self, changes: Vec<(Option<MemoryId>, String)>, n: usize) -> ApiResult<Vec<PlannedChange>> {
        changes
            .into_iter()
            .take(n)
            .map(|(id, what)| {
                Ok(PlannedChange {
                    memory: id.map(|id| self.store_view().get(id)).transpose()?.map(MemoryView::from),
                    what,
                })
            })
            .collect()
    }

    /// Brings back a memory an optimization (or maintenance) expired: visible to recall again,
    /// no longer linked as a duplicate.
    pub fn revive(&mut self, target: &Target) -> ApiResult<MemoryView> {
        let m = self.memory(target)?;
        if m.expired_at.is_some() {
            let meta = self.meta();
            let links: Vec<MemoryId> =
                m.links.iter().filter(|l| l.relation == DUPLICATE_OF).map(|l| l.target).collect();
            self.store().transact(|tx| {
                for target in links {
                    tx.append(m.id, Expected::Any, Change::Unlinked { target, relation: DUPLICATE_OF.into() }, &meta)?;
                }
                let change = Change::TierChanged { from: m.tier, to: m.tier, reason: RESTORED.into() };
                tx.append(m.id, Expected::Any, change, &meta).map(drop)
            })?;
            self.wrote();
        }
        Ok(self.memory(target)?.into())
    }

    fn findings(&self, params: &HealthParams, listed: usize) -> ApiResult<Findings> {
        let user = self.options().user_id.clone();
        let live: Vec<Memory> = self.all_memories(Filter::default())?.into_iter().filter(|m| !is_concept(m)).collect();
        let groups = duplicate_groups(&live, params.similarity);
        let contradictions = contradictions(&live);
        let stale_before = self.now() - chrono::Duration::days(i64::from(params.stale_days));
        let stale = self.store_view().stale(&user, stale_before, listed)?;
        let unembedded = match self.embedder() {
            Some(e) => Some(self.store_view().unembedded(&user, e.model_id(), listed)?),
            None => None,
        };
        Ok(Findings { live, groups, contradictions, stale, unembedded })
    }

    fn counts(&self, f: &Findings) -> ApiResult<HealthCounts> {
        let store = self.store_view();
        Ok(HealthCounts {
            memories: f.live.len() as u64,
            duplicate_groups: f.groups.len() as u64,
            duplicates: f.groups.iter().map(|(_, o)| o.len() as u64).sum(),
            contradictions: f.contradictions.len() as u64,
            stale: f.stale.0,
            unembedded: f.unembedded.as_ref().map(|u| u.0),
            file_bytes: store.file_bytes()?,
            free_bytes: store.free_bytes()?,
        })
    }

    fn merge(&mut self, f: &Findings) -> ApiResult<()> {
        let meta = self.meta();
        self.store().transact(|tx| {
            for (keep, others) in &f.groups {
                let k = f.live[*keep].id;
                // A memory of the group forgotten since it was found: forgetting wins, the group
                // is left as it is.
                let group: Vec<MemoryId> = std::iter::once(k).chain(others.iter().map(|&o| f.live[o].id)).collect();
                match tx.still_live(&group) {
                    Err(strata_core::Error::Forgotten { .. } | strata_core::Error::NotFound(_)) => continue,
                    other => other?,
                }
                for &o in others {
                    let id = f.live[o].id;
                    tx.append(id, Expected::Any, Change::Linked { target: k, relation: DUPLICATE_OF.into() }, &meta)?;
                    let reason = format!("near-duplicate of {k}");
                    tx.append(id, Expected::Any, Change::Expired { reason }, &meta)?;
                }
            }
            Ok(())
        })?;
        self.wrote();
        Ok(())
    }

    fn expire_all(&mut self, ids: &[MemoryId], reason: &str) -> ApiResult<()> {
        let meta = self.meta();
        self.store().transact(|tx| {
            for id in ids {
                tx.append(*id, Expected::Any, Change::Expired { reason: reason.to_string() }, &meta)?;
            }
            Ok(())
        })?;
        self.wrote();
        Ok(())
    }
}

/// The reason a stale memory's expiry records.
fn stale_reason(days: u32) -> String {
    format!("stale: never used in {days} days")
}

/// Near-duplicate groups of `live` (per type): the index kept, and the others (pinned ones
/// never among them), the largest groups first.
fn duplicate_groups(live: &[Memory], similarity: f64) -> Vec<(usize, Vec<usize>)> {
    let signatures: Vec<Signature> = live
        .iter()
        .map(|m| Signature::of(&embedding_text(m)))
        .map(|s| if s.words() < MIN_WORDS { Signature::of("") } else { s })
        .collect();
    let mut out = Vec::new();
    for group in near_duplicate_groups(&signatures, similarity) {
        let mut by_kind: BTreeMap<MemoryKind, Vec<usize>> = BTreeMap::new();
        for i in group {
            by_kind.entry(live[i].content.kind()).or_default().push(i);
        }
        for (_, members) in by_kind.into_iter().filter(|(_, g)| g.len() > 1) {
            let keep = *members
                .iter()
                .max_by(|&&a, &&b| {
                    let (a, b) = (&live[a], &live[b]);
                    (a.pinned, a.access_count, a.importance.get())
                        .partial_cmp(&(b.pinned, b.access_count, b.importance.get()))
                        .unwrap_or(std::cmp::Ordering::Equal)
                        .then_with(|| b.created_at.cmp(&a.created_at).then_with(|| b.id.cmp(&a.id)))
                })
                .expect("a group has members");
            let others: Vec<usize> = members.into_iter().filter(|&i| i != keep && !live[i].pinned).collect();
            if !others.is_empty() {
                out.push((keep, others));
            }
        }
    }
    out.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    out
}

/// Facts that disagree: the key, the fact and each distinct value with the earliest memory that
/// holds it, for facts of semantic memories whose keys match once case and separators are set
/// aside.
pub(crate) fn contradictions(live: &[Memory]) -> Vec<Disagreement> {
    let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, m) in live.iter().enumerate() {
        if let Content::Semantic(c) = &m.content {
            by_key.entry(crate::extract::slug(&c.key)).or_default().push(i);
        }
    }
    let mut out = Vec::new();
    for members in by_key.values_mut().filter(|g| g.len() > 1) {
        members.sort_by_key(|&i| (live[i].created_at, live[i].id));
        let mut facts: BTreeMap<String, Vec<(String, usize)>> = BTreeMap::new();
        for &i in members.iter() {
            let Content::Semantic(c) = &live[i].content else { continue };
            for (name, value) in &c.facts {
                let value = match serde_json::to_value(value) {
                    Ok(serde_json::Value::String(s)) => s,
                    Ok(v) => v.to_string(),
                    Err(_) => continue,
                };
                let claims = facts.entry(crate::extract::slug(name)).or_default();
                let same = |v: &str| v.trim().to_lowercase() == value.trim().to_lowercase();
                if !claims.iter().any(|(v, _)| same(v)) {
                    claims.push((value, i));
                }
            }
        }
        let key = live[members[0]].content.key().unwrap_or_default().to_string();
        out.extend(facts.into_iter().filter(|(_, c)| c.len() > 1).map(|(fact, c)| (key.clone(), fact, c)));
    }
    out
}

/// What was done to `n` things ("was", "were"), or would be in a preview.
fn were(n: u64, apply: bool) -> &'static str {
    match (apply, n) {
        (false, _) => "would be",
        (true, 1) => "was",
        (true, _) => "were",
    }
}

/// "1 memory", "3 memories".
pub fn words(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Bytes as a person reads them.
pub fn bytes(n: u64) -> String {
    strata_core::files::amount(n)
}
