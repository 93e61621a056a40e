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

mod drill;
mod health;
mod passes;
mod recalls;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rusqlite::params;
use serde::Serialize;

use crate::clock::to_ms;
use crate::concepts::{GROUPS, KEY_PREFIX};
use crate::error::{Error, Result};
use crate::model::{MemoryKind, Tier};
use crate::store::Store;

pub use drill::*;
pub use health::*;
pub use passes::*;
pub use recalls::*;

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
    fn of_day(self, column: &str) -> String {
        match self {
            Bucket::Day => column.to_string(),
            Bucket::Week => format!("date({column}, 'weekday 0', '-6 days')"),
        }
    }

    /// The SQL expression for the bucket (its first day, `YYYY-MM-DD`) of a millisecond column.
    pub(crate) fn of(self, column: &str) -> String {
        match self {
            Bucket::Day => format!("date({column} / 1000, 'unixepoch')"),
            Bucket::Week => format!("date({column} / 1000, 'unixepoch', 'weekday 0', '-6 days')"),
        }
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
type Counted = Vec<(String, u64)>;

/// The most tags [`MemoryMetrics::tags`] lists.
const TOP_TAGS: usize = 20;

impl Store {
    /// `user`'s memory metrics over `range` (see the module documentation); `model`, the
    /// embedding model whose coverage is counted (none: the one with the most vectors).
    pub fn memory_metrics(&self, user: &str, range: &Range, model: Option<&str>) -> Result<MemoryMetrics> {
        let c = &self.conn;
        let model: Option<String> = match model {
            Some(m) => Some(m.to_string()),
            None => c
                .query_row(
                    "SELECT model FROM vector_counts WHERE user_id = ?1 GROUP BY model HAVING sum(n) > 0 \
                     ORDER BY sum(n) DESC, model LIMIT 1",
                    [user],
                    |r| r.get(0),
                )
                .map(Some)
                .or_else(|e| if e == rusqlite::Error::QueryReturnedNoRows { Ok(None) } else { Err(e) })?,
        };
        let model = model.as_deref();
        let (scope, kind, app) = (MEMORY_SCOPE, range.kind.map(|k| k.as_str()), range.client.as_deref());
        let count = |sql: &str, p: &[&dyn rusqlite::ToSql]| -> Result<u64> {
            Ok(c.query_row(sql, p, |r| r.get::<_, i64>(0))? as u64)
        };
        let tag = range.tag.as_deref();
        // Counts now come from the rollup the projection's triggers keep (migration 0006).
        let rolled = |select: &str, more: &str| -> Result<BTreeMap<String, u64>> {
            let sql = format!(
                "SELECT {select}, sum(n) FROM {} WHERE {COUNTS_SCOPE} {more} GROUP BY 1 HAVING sum(n) > 0",
                Rollup::Counts.of(range, 4)
            );
            let mut stmt = c.prepare(&sql)?;
            let rows = stmt.query_map(params![user, kind, app, tag], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        let by_expired = rolled("CASE c.expired WHEN 1 THEN 'expired' ELSE 'live' END", "")?;
        let mut m = MemoryMetrics {
            memories: by_expired.values().sum(),
            expired: by_expired.get("expired").copied().unwrap_or(0),
            by_type: rolled("c.kind", "")?,
            by_tier: rolled("c.tier", "AND c.expired = 0")?,
            by_app: rolled("c.app", "")?,
            by_agent: rolled("c.agent", "")?,
            embedding_model: model.map(str::to_string),
            ..MemoryMetrics::default()
        };
        let mut stmt = c.prepare(&format!(
            "SELECT t.tag, count(*) FROM memory_tags t JOIN memories m ON m.id = t.memory_id WHERE {scope} {} \
             GROUP BY t.tag ORDER BY count(*) DESC, t.tag LIMIT ?4",
            tagged(range, 5)
        ))?;
        m.tags = stmt
            .query_map(params![user, kind, app, TOP_TAGS as i64, tag], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
            .collect::<rusqlite::Result<_>>()?;
        if let Some(model) = model {
            // From the rollup of vectors the triggers keep (migration 0007).
            m.embedded = count(
                &format!(
                    "SELECT coalesce(sum(n), 0) FROM {} WHERE {COUNTS_SCOPE} AND c.model = ?4",
                    Rollup::Vectors.of(range, 5)
                ),
                &[&user, &kind, &app, &model, &tag],
            )?;
        }
        let concepts = format!(
            "SELECT id FROM memories WHERE user_id = ?1 AND kind = 'semantic' AND expired_at IS NULL \
             AND key LIKE '{KEY_PREFIX}%'"
        );
        m.concepts = count(&format!("SELECT count(*) FROM ({concepts})"), &[&user])?;
        m.grouped = count(
            &format!(
                "SELECT count(DISTINCT target_id) FROM memory_links WHERE relation = ?2 AND source_id IN ({concepts})"
            ),
            &[&user, &GROUPS],
        )?;
        let (since, until) = range.bounds();
        m.created = self.created(user, range, since, until)?;
        (m.moves, m.reasons) = self.moves(user, range, since, until)?;
        Ok(m)
    }

    fn created(&self, user: &str, range: &Range, since: i64, until: i64) -> Result<Vec<Created>> {
        // Whole days (UTC) from the rollup the projection's triggers keep.
        let sql = format!(
            "SELECT {} AS b, c.kind, sum(c.n) FROM {} WHERE {COUNTS_SCOPE} \
             AND c.day >= date(?4 / 1000, 'unixepoch') AND c.day <= date((?5 - 1) / 1000, 'unixepoch') \
             GROUP BY b, c.kind HAVING sum(c.n) > 0 ORDER BY b",
            range.bucket.of_day("c.day"),
            Rollup::Days.of(range, 6)
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let (kind, app) = (range.kind.map(|k| k.as_str()), range.client.as_deref());
        // Dates SQLite can write: from year 0 to 9999.
        let (since, until) = (since.max(-62_167_219_200_000), until.min(253_402_300_799_999));
        let rows = stmt.query_map(params![user, kind, app, since, until, range.tag], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)? as u64))
        })?;
        let mut out: Vec<Created> = Vec::new();
        for row in rows {
            let (start, kind, n) = row?;
            if out.last().is_none_or(|c| c.start != start) {
                out.push(Created { start, by_type: BTreeMap::new(), total: 0 });
            }
            let last = out.last_mut().expect("pushed above");
            last.by_type.insert(kind, n);
            last.total += n;
        }
        Ok(out)
    }

    fn moves(&self, user: &str, range: &Range, since: i64, until: i64) -> Result<(Vec<Moves>, Counted)> {
        let sql = format!(
            "SELECT {} AS b, e.event_type, json_extract(e.payload, '$.from'), json_extract(e.payload, '$.to'), \
             coalesce(json_extract(e.payload, '$.reason'), '') \
             FROM events e JOIN memories m ON m.id = e.stream_id \
             WHERE {MEMORY_SCOPE} {} AND e.event_type IN ('tier_changed', 'expired') \
             AND e.recorded_at >= ?4 AND e.recorded_at < ?5 ORDER BY b",
            range.bucket.of("e.recorded_at"),
            tagged(range, 6)
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let (kind, app) = (range.kind.map(|k| k.as_str()), range.client.as_deref());
        let rows = stmt.query_map(params![user, kind, app, since, until, range.tag], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?;
        let (mut out, mut reasons): (Vec<Moves>, BTreeMap<String, u64>) = (Vec::new(), BTreeMap::new());
        for row in rows {
            let (start, kind, from, to, reason) = row?;
            let Some(direction) = Direction::of(&kind, from.as_deref(), to.as_deref()) else { continue };
            if out.last().is_none_or(|m| m.start != start) {
                out.push(Moves { start, ..Moves::default() });
            }
            let last = out.last_mut().expect("pushed above");
            *match direction {
                Direction::Promoted => &mut last.promoted,
                Direction::Demoted => &mut last.demoted,
                Direction::Expired => &mut last.expired,
            } += 1;
            *reasons.entry(rule_of(&reason)).or_default() += 1;
        }
        let mut reasons: Vec<(String, u64)> = reasons.into_iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok((out, reasons))
    }
}

/// Which memories a metric counts: `user`'s (`?1`), of one type (`?2`, none: all) written by one
/// app or client (`?3`, none: any), as a condition on `memories m`.
pub(crate) const MEMORY_SCOPE: &str = "m.user_id = ?1 AND (?2 IS NULL OR m.kind = ?2) \
     AND (?3 IS NULL OR coalesce(json_extract(m.source, '$.app'), '') = ?3)";

/// With [`MEMORY_SCOPE`]: only memories with `range`'s tag, bound as parameter `?n` (none: any,
/// and the condition costs nothing per row).
pub(crate) fn tagged(range: &Range, n: usize) -> String {
    match range.tag {
        None => format!("AND ?{n} IS NULL"),
        Some(_) => format!("AND EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id AND t.tag = ?{n})"),
    }
}

/// A rollup the triggers keep.
#[derive(Clone, Copy)]
enum Rollup {
    /// `memory_counts`.
    Counts,
    /// `memory_days`.
    Days,
    /// `vector_counts`.
    Vectors,
}

impl Rollup {
    /// Where a query reads the rollup's rows from, as `c`: the rollup itself when the range
    /// names no tag (the tag in parameter `?n` is then none), else — the rollups keep no tags —
    /// the same columns made from the memories with that tag.
    fn of(self, range: &Range, n: usize) -> String {
        const APP: &str = "coalesce(json_extract(m.source, '$.app'), '')";
        let table = match self {
            Rollup::Counts => "memory_counts",
            Rollup::Days => "memory_days",
            Rollup::Vectors => "vector_counts",
        };
        if range.tag.is_none() {
            return format!("{table} c JOIN (SELECT ?{n} IS NULL) ON true");
        }
        let (columns, from) = match self {
            Rollup::Counts => (
                format!(
                    "m.user_id, m.kind, m.tier, {APP} AS app, coalesce(m.agent_id, 'shared') AS agent, \
                     m.expired_at IS NOT NULL AS expired"
                ),
                "memories m",
            ),
            Rollup::Days => (
                format!("m.user_id, date(m.created_at / 1000, 'unixepoch') AS day, m.kind, {APP} AS app"),
                "memories m",
            ),
            Rollup::Vectors => (
                format!("m.user_id, m.kind, {APP} AS app, v.model"),
                "memory_vectors v JOIN memories m ON m.id = v.memory_id",
            ),
        };
        format!("(SELECT {columns}, 1 AS n FROM {from} WHERE m.user_id = ?1 {}) c", tagged(range, n))
    }
}

/// [`MEMORY_SCOPE`] for the rollups (`memory_counts c`, `memory_days c`, `vector_counts c`).
const COUNTS_SCOPE: &str = "c.user_id = ?1 AND (?2 IS NULL OR c.kind = ?2) AND (?3 IS NULL OR c.app = ?3)";

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

fn tier_rank(t: Tier) -> u8 {
    match t {
        Tier::Short => 0,
        Tier::Medium => 1,
        Tier::Long => 2,
    }
}

/// The rule a move's reason names: its first clause, numbers as N, a concept's key left out
/// ("retrieved 5 times; value 0.80 = …" → "retrieved N times").
fn rule_of(reason: &str) -> String {
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
