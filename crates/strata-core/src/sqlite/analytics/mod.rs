//! SQLite's side of `crate::analytics`: its statements and row decoding.

mod drill;
mod health;
mod recalls;

use crate::concepts::{GROUPS, KEY_PREFIX};
use crate::error::Result;
use crate::store::Store;
use rusqlite::params;
use std::collections::BTreeMap;

use crate::analytics::*;

impl Store {
    /// `user`'s memory metrics over `range` (see the module documentation); `model`, the
    /// embedding model whose coverage is counted (none: the one with the most vectors).
    pub fn memory_metrics(&self, user: &str, range: &Range, model: Option<&str>) -> Result<MemoryMetrics> {
        let c = &self.sqlite()?;
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
        let mut stmt = self.sqlite()?.prepare(&sql)?;
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
        let mut stmt = self.sqlite()?.prepare(&sql)?;
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
