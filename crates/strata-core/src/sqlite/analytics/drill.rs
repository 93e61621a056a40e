//! SQLite's side of `crate::analytics`: its statements and row decoding.

use crate::clock::from_ms;
use crate::error::Result;
use crate::model::MemoryId;
use crate::store::Store;
use rusqlite::params;

use super::recalls::RECALL_SCOPE;
use super::*;
use crate::analytics::NEVER_RECALLED;
use crate::analytics::PART_COLUMNS;

impl Store {
    /// `user`'s memories created in `range` (of its type and client), newest first.
    pub fn created_in(&self, user: &str, range: &Range, limit: usize) -> Result<Vec<MemoryId>> {
        let (since, until) = range.bounds();
        let sql = format!(
            "SELECT m.id FROM memories m WHERE {MEMORY_SCOPE} {} AND m.created_at >= ?4 AND m.created_at < ?5 \
             ORDER BY m.created_at DESC, m.id DESC LIMIT ?6",
            tagged(range, 7)
        );
        let kind = range.kind.map(|k| k.as_str());
        self.ids(&sql, params![user, kind, range.client, since, until, limit as i64, range.tag])
    }

    /// `user`'s memories that moved tier in `range` (all ways, or one), latest first.
    pub fn moved_in(
        &self,
        user: &str,
        range: &Range,
        direction: Option<Direction>,
        limit: usize,
    ) -> Result<Vec<Moved>> {
        let (since, until) = range.bounds();
        let sql = format!(
            "SELECT m.id, e.event_type, json_extract(e.payload, '$.from'), json_extract(e.payload, '$.to'), \
             coalesce(json_extract(e.payload, '$.reason'), ''), e.recorded_at \
             FROM events e JOIN memories m ON m.id = e.stream_id \
             WHERE {MEMORY_SCOPE} {} AND e.event_type IN ('tier_changed', 'expired') \
             AND e.recorded_at >= ?4 AND e.recorded_at < ?5 ORDER BY e.seq DESC",
            tagged(range, 6)
        );
        let mut stmt = self.sqlite()?.prepare(&sql)?;
        let kind = range.kind.map(|k| k.as_str());
        let mut rows = stmt.query(params![user, kind, range.client, since, until, range.tag])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let (event, from, to) =
                (r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?, r.get::<_, Option<String>>(3)?);
            let Some(d) = Direction::of(&event, from.as_deref(), to.as_deref()) else { continue };
            if direction.is_some_and(|want| want != d) {
                continue;
            }
            out.push(Moved {
                memory: r.get::<_, String>(0)?.parse()?,
                direction: d,
                reason: r.get(4)?,
                at: from_ms(r.get(5)?),
            });
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// `user`'s recalls in `range` (run by its client) that `which` picks, latest first.
    pub fn recalls_in(
        &self,
        user: &str,
        range: &Range,
        which: &RecallQuery<'_>,
        limit: usize,
    ) -> Result<Vec<RecallRow>> {
        let (since, until) = range.bounds();
        let sql = format!(
            "SELECT r.id, r.at, r.purpose, r.client, r.query, r.found, r.latency_ms FROM recalls r \
             WHERE {RECALL_SCOPE} AND (?5 = 0 OR r.found = 0) AND (?6 IS NULL OR r.query = ?6) \
             ORDER BY r.at DESC, r.id DESC LIMIT ?7"
        );
        let mut stmt = self.sqlite()?.prepare(&sql)?;
        let mut hits = self.sqlite()?.prepare_cached(&format!(
            "SELECT memory_id, score, in_prompt, used, {PART_COLUMNS} FROM recall_hits WHERE recall_id = ?1 ORDER BY rank"
        ))?;
        let p = params![user, since, until, range.client, which.empty, which.text, limit as i64];
        let mut rows = stmt.query(p)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let found = hits
                .query_map([r.get::<_, i64>(0)?], |h| {
                    Ok((h.get::<_, String>(0)?, h.get(1)?, h.get(2)?, h.get(3)?, parts_at(h, 4)?))
                })?
                .map(|h| {
                    let (id, score, in_prompt, used, parts) = h?;
                    Ok(RecallHit { memory: id.parse()?, score, parts, in_prompt, used })
                })
                .collect::<Result<Vec<_>>>()?;
            out.push(RecallRow {
                at: from_ms(r.get(1)?),
                purpose: r.get(2)?,
                client: r.get(3)?,
                query: r.get(4)?,
                found: r.get::<_, i64>(5)? as u64,
                latency_ms: r.get(6)?,
                hits: found,
            });
        }
        Ok(out)
    }

    /// `user`'s live memories (of the range's type and client) that no record shows recalled,
    /// the oldest first.
    pub fn never_recalled(&self, user: &str, range: &Range, limit: usize) -> Result<Vec<MemoryId>> {
        let sql = format!(
            "SELECT m.id FROM memories m WHERE {MEMORY_SCOPE} {} AND {NEVER_RECALLED} \
             ORDER BY m.created_at, m.id LIMIT ?4",
            tagged(range, 5)
        );
        self.ids(&sql, params![user, range.kind.map(|k| k.as_str()), range.client, limit as i64, range.tag])
    }

    /// The memory ids `sql` selects (its first column).
    pub(crate) fn ids(&self, sql: &str, p: impl rusqlite::Params) -> Result<Vec<MemoryId>> {
        let mut stmt = self.sqlite()?.prepare(sql)?;
        let rows = stmt.query_map(p, |r| r.get::<_, String>(0))?;
        rows.map(|id| id.map_err(crate::error::Error::from).and_then(|id| id.parse())).collect()
    }
}

/// The [`ScoreParts`] in a row's [`PART_COLUMNS`] from column `at` (none where not recorded).
pub(crate) fn parts_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Option<ScoreParts>> {
    let Some(matched) = r.get::<_, Option<f64>>(at)? else { return Ok(None) };
    let part = |i: usize| r.get::<_, Option<f64>>(at + i).map(Option::unwrap_or_default);
    Ok(Some(ScoreParts {
        matched,
        similarity: r.get(at + 1)?,
        time: part(2)?,
        recency: part(3)?,
        frequency: part(4)?,
        importance: part(5)?,
        tier: part(6)?,
    }))
}
