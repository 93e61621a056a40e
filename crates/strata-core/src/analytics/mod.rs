//! Metrics for analysts (issue 22).
//!
//! **Memory**: what one person's store holds now — by type, tier, the app that wrote it, agent
//! and tag; embedding coverage; concepts — and how it changed in a date range, by day or by
//! week: memories created, and tier moves with the rules behind them, read from the event log.
//!
//! **Recalls**: every recall the engine runs for a search or a prompt is recorded
//! ([`Store::record_recall`]: when, who, the query, how many results and how long it took, and
//! each result's rank, score and whether the prompt included it), so analysts see hit rates,
//! searches that found nothing, the most and never recalled memories and the recalled → in the
//! prompt funnel. The records are local, pruned after a retention period and cleared on
//! request.
//!
//! A forgotten memory counts nowhere: its projection and its events' payloads are gone, and
//! every record of a recall that found it is deleted (its query may quote it).

pub(crate) mod drill;

pub(crate) mod health;

pub(crate) mod passes;

pub(crate) mod recalls;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use serde::Serialize;

use crate::clock::to_ms;

use crate::concepts::KEY_PREFIX;

use crate::error::{Error, Result};

use crate::model::{MemoryKind, Tier};

pub use drill::*;

pub use health::*;

pub use passes::*;

pub use recalls::*;

pub use views::{AgentMetrics, AgentUse, RunsPoint};

mod found;
mod usage;
mod views;
pub(crate) use found::NEVER_RECALLED;
pub(crate) use usage::PART_COLUMNS;

/// How a series is bucketed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bucket {
    /// Calendar days (UTC).
    #[default]
    Day,
    /// Weeks from Monday (UTC).
    Week,
}

impl std::str::FromStr for Bucket {
    type Err = Error;
    fn from_str(s: &str) -> Result<Bucket> {
        match s.trim() {
            "day" => Ok(Bucket::Day),
            "week" => Ok(Bucket::Week),
            other => Err(Error::invalid(format!("'{other}' is not a bucket: day or week"))),
        }
    }
}

impl Bucket {
    /// The SQL expression for the bucket (its first day) of a `YYYY-MM-DD` column.
    pub(crate) fn of_day(self, column: &str, dialect: crate::sql::Dialect) -> String {
        match self {
            Bucket::Day => column.to_string(),
            Bucket::Week => dialect.monday_of(column),
        }
    }

    /// The SQL expression for the bucket (its first day, `YYYY-MM-DD`) of a millisecond column.
    pub(crate) fn of(self, column: &str, dialect: crate::sql::Dialect) -> String {
        self.of_day(&dialect.day_of_ms(column), dialect)
    }
}

/// A date range, its buckets and what is counted.
#[derive(Debug, Clone, Default)]
pub struct Range {
    /// From (inclusive); none: the beginning.
    pub since: Option<DateTime<Utc>>,
    /// To (exclusive); none: now and after.
    pub until: Option<DateTime<Utc>>,
    /// Day or week.
    pub bucket: Bucket,
    /// Only memories of this type (recalls are not filtered by it).
    pub kind: Option<MemoryKind>,
    /// Only memories this app or client wrote, and recalls it ran (`desktop`, `cli`, `mcp:cursor`…).
    pub client: Option<String>,
    /// Only memories with this tag (recalls are not filtered by it).
    pub tag: Option<String>,
}

impl Range {
    pub(crate) fn bounds(&self) -> (i64, i64) {
        (self.since.map_or(i64::MIN, to_ms), self.until.map_or(i64::MAX, to_ms))
    }
}

/// Memories created in one bucket, by type.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Created {
    /// The bucket's first day (`YYYY-MM-DD`).
    pub start: String,
    /// Count by type (`semantic`, `episodic`, `procedural`).
    #[cfg_attr(feature = "specta", specta(type = std::collections::BTreeMap<String, u32>))]
    pub by_type: BTreeMap<String, u64>,
    /// All of them.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub total: u64,
}

/// Tier moves in one bucket.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Moves {
    /// The bucket's first day.
    pub start: String,
    /// To a higher tier (short → medium → long).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub promoted: u64,
    /// To a lower tier.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub demoted: u64,
    /// Expired (hidden from recall; nothing deleted).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub expired: u64,
}

/// One person's memory metrics.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MemoryMetrics {
    /// Live memories (expired ones included).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub memories: u64,
    /// Of those, expired.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub expired: u64,
    /// By type.
    #[cfg_attr(feature = "specta", specta(type = std::collections::BTreeMap<String, u32>))]
    pub by_type: BTreeMap<String, u64>,
    /// By tier (expired ones left out).
    #[cfg_attr(feature = "specta", specta(type = std::collections::BTreeMap<String, u32>))]
    pub by_tier: BTreeMap<String, u64>,
    /// By the app or client that wrote them (`desktop`, `cli`, `mcp:cursor`…).
    #[cfg_attr(feature = "specta", specta(type = std::collections::BTreeMap<String, u32>))]
    pub by_app: BTreeMap<String, u64>,
    /// By the agent whose private memories they are (`shared`: everyone's).
    #[cfg_attr(feature = "specta", specta(type = std::collections::BTreeMap<String, u32>))]
    pub by_agent: BTreeMap<String, u64>,
    /// The most used tags, most first (at most 20).
    #[cfg_attr(feature = "specta", specta(type = Vec<(String, u32)>))]
    pub tags: Vec<(String, u64)>,
    /// The model whose vectors `embedded` counts.
    pub embedding_model: Option<String>,
    /// Memories with a vector from that model.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub embedded: u64,
    /// Live concepts (compaction's groups).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub concepts: u64,
    /// Memories in one.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub grouped: u64,
    /// Memories created in the range, per bucket (buckets with none left out).
    pub created: Vec<Created>,
    /// Tier moves in the range, per bucket (buckets with none left out).
    pub moves: Vec<Moves>,
    /// The rules behind those moves, most frequent first (numbers as N).
    #[cfg_attr(feature = "specta", specta(type = Vec<(String, u32)>))]
    pub reasons: Vec<(String, u64)>,
}

/// Names with how often each came up, most first.
pub(crate) type Counted = Vec<(String, u64)>;

/// The most tags [`MemoryMetrics::tags`] lists.
pub(crate) const TOP_TAGS: usize = 20;

/// Which way a tier move went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// To a higher tier.
    Promoted,
    /// To a lower tier.
    Demoted,
    /// Expired.
    Expired,
}

impl Direction {
    /// The direction of an event of `event_type` whose payload moved `from` → `to` (none: not a
    /// move, or a move within one tier).
    pub(crate) fn of(event_type: &str, from: Option<&str>, to: Option<&str>) -> Option<Direction> {
        let rank = |t: Option<&str>| t.and_then(|t| t.parse::<Tier>().ok()).map(tier_rank);
        match (event_type, rank(from), rank(to)) {
            ("expired", ..) => Some(Direction::Expired),
            (_, Some(a), Some(b)) if b > a => Some(Direction::Promoted),
            (_, Some(a), Some(b)) if b < a => Some(Direction::Demoted),
            _ => None,
        }
    }
}

pub(crate) fn tier_rank(t: Tier) -> u8 {
    match t {
        Tier::Short => 0,
        Tier::Medium => 1,
        Tier::Long => 2,
    }
}

/// The rule a move's reason names: its first clause, numbers as N, a concept's key left out
/// ("retrieved 5 times; value 0.80 = …" → "retrieved N times").
pub(crate) fn rule_of(reason: &str) -> String {
    let head = reason.split([';', '(']).next().unwrap_or_default();
    let head = head.split(KEY_PREFIX).next().unwrap_or_default().trim();
    let mut out = String::with_capacity(head.len());
    let mut in_number = false;
    for ch in head.chars() {
        if ch.is_ascii_digit() || (in_number && ch == '.') {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(ch);
        }
    }
    match out.as_str() {
        "" => "no reason given".to_string(),
        "merged into" => "merged into another concept".to_string(),
        _ => out,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_reason_reads_as_its_rule() {
        assert_eq!(super::rule_of("retrieved 5 times; value 0.80 = importance 0.20"), "retrieved N times");
        assert_eq!(super::rule_of("left working memory (beyond the 20 newest of its session)"), "left working memory");
        assert_eq!(super::rule_of("untouched for 92 days; value 0.04 < 0.2"), "untouched for N days");
        assert_eq!(super::rule_of("merged into concept/kitten_pixel"), "merged into another concept");
        assert_eq!(super::rule_of(""), "no reason given");
    }
}
