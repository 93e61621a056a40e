//! The drill-downs behind analytics' figures: the memories created or moved in a range, the
//! recalls it ran with what each found, and the memories never recalled.

use crate::clock::from_ms;
use crate::error::Result;
use crate::model::MemoryId;
use crate::sql::{Row, SqlValue};
use crate::store::Store;

use super::super::{
    Direction, Moved, NEVER_RECALLED, PART_COLUMNS, Range, RecallHit, RecallQuery, RecallRow, ScoreParts,
};
use super::{memory_scope, recall_scope};

impl Store {
    /// `user`'s memories created in `range` (of its type and client), newest first.
    pub fn created_in(&self, user: &str, range: &Range, limit: usize) -> Result<Vec<MemoryId>> {
        let (since, until) = range.bounds();
        let mut q = self.statement("SELECT m.id FROM memories m WHERE ");
        memory_scope(&mut q, user, range);
        q.bind(" AND m.created_at >= ?", SqlValue::Int(since))
            .bind(" AND m.created_at < ?", SqlValue::Int(until))
            .bind(" ORDER BY m.created_at DESC, m.id DESC LIMIT ?", SqlValue::Int(limit as i64));
        self.ids(&q)
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
        let mut q = self.statement(format!("SELECT m.id, e.event_type, {}, e.recorded_at ", move_fields(self)));
        q.push("FROM events e JOIN memories m ON m.id = e.stream_id WHERE ");
        memory_scope(&mut q, user, range);
        q.bind(" AND e.event_type IN ('tier_changed', 'expired') AND e.recorded_at >= ?", SqlValue::Int(since))
            .bind(" AND e.recorded_at < ? ORDER BY e.seq DESC", SqlValue::Int(until));
        let mut out = Vec::new();
        for r in self.read(&q, "events")? {
            let (from, to) = (r.opt_text(2)?, r.opt_text(3)?);
            let Some(d) = Direction::of(&r.text(1)?, from.as_deref(), to.as_deref()) else { continue };
            if direction.is_some_and(|want| want != d) {
                continue;
            }
            out.push(Moved { memory: r.parsed(0)?, direction: d, reason: r.text(4)?, at: from_ms(r.int(5)?) });
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
        let mut q = self
            .statement("SELECT r.id, r.at, r.purpose, r.client, r.query, r.found, r.latency_ms FROM recalls r WHERE ");
        recall_scope(&mut q, user, range);
        if which.empty {
            q.push(" AND r.found = 0");
        }
        if let Some(text) = which.text {
            q.bind(" AND r.query = ?", SqlValue::Text(text.into()));
        }
        q.bind(" ORDER BY r.at DESC, r.id DESC LIMIT ?", SqlValue::Int(limit as i64));
        let mut out = Vec::new();
        for r in self.read(&q, "recalls")? {
            let mut hits = self
                .statement(format!("SELECT memory_id, score, in_prompt, used, {PART_COLUMNS} FROM recall_hits WHERE "));
            hits.bind("recall_id = ? ORDER BY rank", SqlValue::Int(r.int(0)?));
            let hits = self
                .read(&hits, "recall_hits")?
                .iter()
                .map(|h| {
                    let used = h.opt_int(3)?.map(|u| u != 0);
                    Ok(RecallHit {
                        memory: h.parsed(0)?,
                        score: h.real(1)?,
                        parts: parts_at(h, 4)?,
                        in_prompt: h.flag(2)?,
                        used,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            out.push(RecallRow {
                at: from_ms(r.int(1)?),
                purpose: r.text(2)?,
                client: r.opt_text(3)?,
                query: r.text(4)?,
                found: r.count(5)?,
                latency_ms: r.real(6)?,
                hits,
            });
        }
        Ok(out)
    }

    /// `user`'s live memories (of the range's type and client) that no record shows recalled,
    /// the oldest first.
    pub fn never_recalled(&self, user: &str, range: &Range, limit: usize) -> Result<Vec<MemoryId>> {
        let mut q = self.statement("SELECT m.id FROM memories m WHERE ");
        memory_scope(&mut q, user, range);
        q.bind(&format!(" AND {NEVER_RECALLED} ORDER BY m.created_at, m.id LIMIT ?"), SqlValue::Int(limit as i64));
        self.ids(&q)
    }
}

/// A tier move's fields from its event's payload (`e`): from, to, and the reason (`''`: none).
pub(super) fn move_fields(store: &Store) -> String {
    let d = store.engine.dialect();
    let field = |f: &str| d.json_text("e.payload", f);
    format!("{}, {}, coalesce({}, '')", field("from"), field("to"), field("reason"))
}

/// The [`ScoreParts`] in a row's [`PART_COLUMNS`] from column `at` (none where not recorded).
fn parts_at(r: &Row<'_>, at: usize) -> Result<Option<ScoreParts>> {
    let Some(matched) = r.opt_real(at)? else { return Ok(None) };
    let part = |i: usize| r.opt_real(at + i).map(Option::unwrap_or_default);
    Ok(Some(ScoreParts {
        matched,
        similarity: r.opt_real(at + 1)?,
        time: part(2)?,
        recency: part(3)?,
        frequency: part(4)?,
        importance: part(5)?,
        tier: part(6)?,
    }))
}
