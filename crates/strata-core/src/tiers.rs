//! Tiers move by themselves. This file is the whole rule: how much a memory is worth now, and
//! when that moves it between short-, medium- and long-term memory or expires it. `plan` is a
//! pure function of the memories, the time and the policy, so a maintenance run at a given
//! time is reproducible; `Store::maintain` records each move as an event with its reason.
//!
//! **Value** (0–1) is the sum of three weighted parts, where the last touch is the latest of
//! creation, change and retrieval:
//! `importance_weight × importance`,
//! `frequency_weight × min(1, ln(1 + accesses) / ln(1 + frequent_accesses))` and
//! `recency_weight × 0.5^(days since last touch / half_life_days)`.
//!
//! **Moves**, checked in this order (expired memories are left alone):
//! 1. A pinned memory goes to long-term, and never moves down.
//! 2. Short-term is working memory: per session, the newest `working_memory_items` memories
//!    within `working_memory_tokens` (≈ 4 characters a token) that were touched within
//!    `short_ttl_hours`. A memory outside that leaves it: to medium-term when its value is at
//!    least `expire_below`, otherwise it expires (hidden from recall, kept in the store).
//! 3. Medium-term goes to long-term when its value is at least `promote_to_long` and it was
//!    retrieved at least `promote_min_accesses` times.
//! 4. Long-term goes back to medium-term when its value is below `demote_below` and it has not
//!    been touched for `long_idle_days`.
//!
//! **Concepts** (compaction's groups, [`crate::concepts`]) are where medium-term episodes
//! consolidate into long-term memory. A concept is formed long-term; it is worth what its
//! members are used for: its accesses are its own plus its live members', and its last touch is
//! the latest of theirs (so a concept whose members are recalled stays, and one whose members
//! all went quiet decays under rule 4 like any other memory). A medium-term member of a
//! long-term concept is consolidated: rule 3 does not promote it on its own, since the concept
//! already carries it into long-term memory; a member leaving working memory goes to
//! medium-term whatever its value (rule 2), since its concept quotes it.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::model::{Memory, MemoryId, Tier};

/// The thresholds and weights of the tier rule (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TierPolicy {
    /// Weight of importance in the value.
    pub importance_weight: f64,
    /// Weight of access frequency in the value.
    pub frequency_weight: f64,
    /// Weight of recency in the value.
    pub recency_weight: f64,
    /// Retrievals at which the frequency part is full.
    pub frequent_accesses: u32,
    /// Days for the recency part to halve.
    pub half_life_days: f64,
    /// Working memory holds at most this many memories per session.
    pub working_memory_items: usize,
    /// … and at most this many tokens per session (estimated).
    pub working_memory_tokens: usize,
    /// … touched at most this many hours ago.
    pub short_ttl_hours: f64,
    /// Leaving working memory below this value expires a memory.
    pub expire_below: f64,
    /// Medium-term at or above this value (and retrieved often enough) becomes long-term.
    pub promote_to_long: f64,
    /// Retrievals needed for that promotion.
    pub promote_min_accesses: u64,
    /// Long-term below this value (and idle long enough) goes back to medium-term.
    pub demote_below: f64,
    /// Days without a touch before long-term can be demoted.
    pub long_idle_days: f64,
}

impl Default for TierPolicy {
    fn default() -> Self {
        TierPolicy {
            importance_weight: 0.4,
            frequency_weight: 0.35,
            recency_weight: 0.25,
            frequent_accesses: 5,
            half_life_days: 14.0,
            working_memory_items: 20,
            working_memory_tokens: 2000,
            short_ttl_hours: 24.0,
            expire_below: 0.3,
            promote_to_long: 0.6,
            promote_min_accesses: 3,
            demote_below: 0.2,
            long_idle_days: 90.0,
        }
    }
}

/// A memory's value and its parts (already weighted), for reasons and explanations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Valuation {
    /// The sum, 0–1.
    pub value: f64,
    /// Weighted importance.
    pub importance: f64,
    /// Weighted access frequency.
    pub frequency: f64,
    /// Weighted recency.
    pub recency: f64,
}

impl std::fmt::Display for Valuation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "value {:.2} = importance {:.2} + frequency {:.2} + recency {:.2}",
            self.value, self.importance, self.frequency, self.recency
        )
    }
}

/// When a memory was last created, changed or retrieved.
pub fn last_touch(m: &Memory) -> DateTime<Utc> {
    [Some(m.created_at), Some(m.updated_at), m.last_accessed_at].into_iter().flatten().max().unwrap_or(m.created_at)
}

fn days_between(earlier: DateTime<Utc>, later: DateTime<Utc>) -> f64 {
    ((later - earlier).num_milliseconds().max(0)) as f64 / 86_400_000.0
}

/// A memory's value at `now` under `policy`.
pub fn value(m: &Memory, now: DateTime<Utc>, policy: &TierPolicy) -> Valuation {
    let frequency = if policy.frequent_accesses == 0 {
        1.0
    } else {
        ((1.0 + m.access_count as f64).ln() / (1.0 + f64::from(policy.frequent_accesses)).ln()).min(1.0)
    };
    let age = days_between(last_touch(m), now);
    let recency = if policy.half_life_days > 0.0 { 0.5f64.powf(age / policy.half_life_days) } else { 0.0 };
    let (i, f, r) = (
        policy.importance_weight * m.importance.get(),
        policy.frequency_weight * frequency,
        policy.recency_weight * recency,
    );
    Valuation { value: i + f + r, importance: i, frequency: f, recency: r }
}

/// One change maintenance makes.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Move {
    /// Move to another tier.
    Tier {
        /// The memory.
        id: MemoryId,
        /// Its tier now.
        from: Tier,
        /// Its tier after.
        to: Tier,
        /// The rule and the numbers that decided it.
        reason: String,
    },
    /// Expire (hide from recall; nothing is deleted).
    Expire {
        /// The memory.
        id: MemoryId,
        /// The rule and the numbers that decided it.
        reason: String,
    },
}

/// The ids of short-term memories that are outside working memory, with why.
fn outside_working_memory(memories: &[&Memory], now: DateTime<Utc>, policy: &TierPolicy) -> BTreeMap<MemoryId, String> {
    let mut by_session: BTreeMap<(&str, Option<&str>), Vec<&Memory>> = BTreeMap::new();
    for m in memories.iter().filter(|m| m.tier == Tier::Short) {
        by_session.entry((m.scope.user_id.as_str(), m.scope.session_id.as_deref())).or_default().push(m);
    }
    let mut out = BTreeMap::new();
    for (_, mut ms) in by_session {
        // Newest first: by when it happened, then by id (creation order) for ties.
        ms.sort_by_key(|m| std::cmp::Reverse((m.occurred_at(), m.id)));
        let mut tokens = 0usize;
        for (rank, m) in ms.into_iter().enumerate() {
            let (title, body) = crate::model::search_text(&m.content);
            tokens += (title.chars().count() + body.chars().count()).div_ceil(4);
            let hours = days_between(last_touch(m), now) * 24.0;
            let why = if rank >= policy.working_memory_items {
                Some(format!("beyond the {} newest of its session", policy.working_memory_items))
            } else if tokens > policy.working_memory_tokens {
                Some(format!("beyond {} tokens of working memory", policy.working_memory_tokens))
            } else if hours > policy.short_ttl_hours {
                Some(format!("untouched for {hours:.0} h"))
            } else {
                None
            };
            if let Some(why) = why {
                out.insert(m.id, why);
            }
        }
    }
    out
}

/// The live concepts among `live`, each worth what its members are used for (see the module
/// documentation), and for each member the long-term concept that consolidates it.
fn consolidation(live: &[&Memory]) -> (HashMap<MemoryId, Memory>, HashMap<MemoryId, MemoryId>) {
    let by_id: HashMap<MemoryId, &Memory> = live.iter().map(|m| (m.id, *m)).collect();
    let (mut worth, mut carried) = (HashMap::new(), HashMap::new());
    for c in live.iter().filter(|m| crate::concepts::is_concept(m)) {
        let mut used = (*c).clone();
        for member in crate::concepts::members(c).iter().filter_map(|id| by_id.get(id)) {
            used.access_count += member.access_count;
            used.last_accessed_at = used.last_accessed_at.max(Some(last_touch(member)));
            if c.tier == Tier::Long {
                carried.entry(member.id).or_insert(c.id);
            }
        }
        worth.insert(c.id, used);
    }
    (worth, carried)
}

/// What maintenance at `now` would change, in id order.
pub fn plan(memories: &[Memory], now: DateTime<Utc>, policy: &TierPolicy) -> Vec<Move> {
    let live: Vec<&Memory> = memories.iter().filter(|m| m.expired_at.is_none()).collect();
    let leaving = outside_working_memory(&live, now, policy);
    let (worth, carried) = consolidation(&live);
    let mut moves = Vec::new();
    let mut sorted = live;
    sorted.sort_by_key(|m| m.id);
    for m in sorted {
        let m = worth.get(&m.id).unwrap_or(m);
        let v = value(m, now, policy);
        let tier = |to: Tier, reason: String| Move::Tier { id: m.id, from: m.tier, to, reason };
        if m.pinned {
            if m.tier != Tier::Long {
                moves.push(tier(Tier::Long, "pinned".to_string()));
            }
            continue;
        }
        match m.tier {
            Tier::Short => {
                if let Some(why) = leaving.get(&m.id) {
                    if let Some(c) = carried.get(&m.id) {
                        moves.push(tier(Tier::Medium, format!("left working memory ({why}); quoted by concept {c}")));
                    } else if v.value >= policy.expire_below {
                        moves.push(tier(Tier::Medium, format!("left working memory ({why}); {v}")));
                    } else {
                        moves.push(Move::Expire {
                            id: m.id,
                            reason: format!("left working memory ({why}) with {v} < {}", policy.expire_below),
                        });
                    }
                }
            }
            Tier::Medium => {
                if v.value >= policy.promote_to_long
                    && m.access_count >= policy.promote_min_accesses
                    && !carried.contains_key(&m.id)
                {
                    let with = if worth.contains_key(&m.id) { " with its members" } else { "" };
                    moves.push(tier(Tier::Long, format!("retrieved {} times{with}; {v}", m.access_count)));
                }
            }
            Tier::Long => {
                let idle = days_between(last_touch(m), now);
                if v.value < policy.demote_below && idle >= policy.long_idle_days {
                    moves.push(tier(
                        Tier::Medium,
                        format!("untouched for {idle:.0} days; {v} < {}", policy.demote_below),
                    ));
                }
            }
        }
    }
    moves
}
