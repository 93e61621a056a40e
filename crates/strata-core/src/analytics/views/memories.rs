//! What a store holds and how it changed (`MemoryMetrics`): counts by type, tier, app and agent,
//! tags, embedding coverage, concepts, memories created and tier moves by bucket.

use std::collections::BTreeMap;

use crate::clock::from_ms;
use crate::concepts::{GROUPS, KEY_PREFIX};
use crate::error::Result;
use crate::sql::{Dialect, Sql, SqlValue};
use crate::store::Store;

use super::super::{Counted, Created, Direction, MemoryMetrics, Moves, Range, TOP_TAGS, rule_of};
use super::drill::move_fields;
use super::{app, memory_scope, tagged};

/// Where counts are read from, as `c`: on SQLite the rollups its triggers keep as the
/// projection changes (migrations 0006 and 0007) unless a tag is asked (they keep no tags); on
/// PostgreSQL, and for a tag, the same columns made from the memories themselves.
#[derive(Clone, Copy)]
enum Counts {
    /// `memory_counts`: by person, type, tier, app, agent, expired.
    Memories,
    /// `memory_days`: created by day, type and app.
    Days,
    /// `vector_counts`: vectors by type, app and model.
    Vectors,
}

impl Counts {
    /// Appends `… AS c`, with the memories' tag when `range` names one.
    fn push_from(self, q: &mut Sql, user: &str, range: Option<&Range>) {
        let dialect = q.dialect;
        let tagged_range = range.filter(|r| r.tag.is_some());
        if dialect == Dialect::Sqlite && tagged_range.is_none() {
            q.push(match self {
                Counts::Memories => "memory_counts c",
                Counts::Days => "memory_days c",
                Counts::Vectors => "vector_counts c",
            });
            return;
        }
        let app = app(dialect, "m.source");
        let (columns, from) = match self {
            Counts::Memories => (
                format!(
                    "m.user_id, m.kind, m.tier, {app} AS app, coalesce(m.agent_id, 'shared') AS agent, \
                     m.expired_at IS NOT NULL AS expired"
                ),
                "memories m",
            ),
            Counts::Days => {
                (format!("m.user_id, {} AS day, m.kind, {app} AS app", dialect.day_of_ms("m.created_at")), "memories m")
            }
            Counts::Vectors => (
                format!("m.user_id, m.kind, {app} AS app, v.model"),
                "memory_vectors v JOIN memories m ON m.id = v.memory_id",
            ),
        };
        q.bind(&format!("(SELECT {columns}, 1 AS n FROM {from} WHERE m.user_id = ?"), SqlValue::Text(user.into()));
        if let Some(range) = tagged_range {
            tagged(q, range);
        }
        q.push(") c");
    }
}

/// Which counts (`c`) a metric reads: `user`'s, of the range's type and app.
fn counts_scope(q: &mut Sql, user: &str, range: &Range) {
    q.bind(" WHERE c.user_id = ?", SqlValue::Text(user.into()));
    if let Some(kind) = range.kind {
        q.bind(" AND c.kind = ?", SqlValue::Text(kind.as_str().into()));
    }
    if let Some(client) = &range.client {
        q.bind(" AND c.app = ?", SqlValue::Text(client.clone()));
    }
}

impl Store {
    /// `user`'s memory metrics over `range` (see the module documentation); `model`, the
    /// embedding model whose coverage is counted (none: the one with the most vectors).
    pub fn memory_metrics(&self, user: &str, range: &Range, model: Option<&str>) -> Result<MemoryMetrics> {
        let mut m = MemoryMetrics::default();
        // One pass over the counts by type, tier, app, agent and whether expired.
        let mut q = self.statement(
            "SELECT c.kind, c.tier, c.app, c.agent, CASE WHEN c.expired THEN 1 ELSE 0 END AS gone, \
             CAST(sum(n) AS BIGINT) FROM ",
        );
        Counts::Memories.push_from(&mut q, user, Some(range));
        counts_scope(&mut q, user, range);
        q.push(" GROUP BY c.kind, c.tier, c.app, c.agent, gone HAVING sum(n) > 0");
        for r in self.read(&q, "memory_counts")? {
            let n = r.count(5)?;
            m.memories += n;
            if r.flag(4)? {
                m.expired += n;
            } else {
                *m.by_tier.entry(r.text(1)?).or_default() += n;
            }
            *m.by_type.entry(r.text(0)?).or_default() += n;
            *m.by_app.entry(r.text(2)?).or_default() += n;
            *m.by_agent.entry(r.text(3)?).or_default() += n;
        }
        let mut q =
            self.statement("SELECT t.tag, count(*) FROM memory_tags t JOIN memories m ON m.id = t.memory_id WHERE ");
        memory_scope(&mut q, user, range);
        q.bind(" GROUP BY t.tag ORDER BY count(*) DESC, t.tag LIMIT ?", SqlValue::Int(TOP_TAGS as i64));
        m.tags = self.read(&q, "memory_tags")?.iter().map(|r| Ok((r.text(0)?, r.count(1)?))).collect::<Result<_>>()?;
        (m.embedding_model, m.embedded) = self.embedded_by(user, range, model)?;
        let concepts = |q: &mut Sql| {
            q.bind("SELECT id FROM memories WHERE user_id = ?", SqlValue::Text(user.into()))
                .push(&format!(" AND kind = 'semantic' AND expired_at IS NULL AND key LIKE '{KEY_PREFIX}%'"));
        };
        let mut q = self.statement("SELECT count(*) FROM (");
        concepts(&mut q);
        q.push(") AS concepts");
        m.concepts = self.count_of(&q)?;
        let mut q = self.statement("SELECT count(DISTINCT target_id) FROM memory_links WHERE ");
        q.bind("relation = ? AND source_id IN (", SqlValue::Text(GROUPS.into()));
        concepts(&mut q);
        q.push(")");
        m.grouped = self.count_of(&q)?;
        m.created = self.created(user, range)?;
        (m.moves, m.reasons) = self.moves(user, range)?;
        Ok(m)
    }

    /// The embedding model counted (`model`, or the one with the most of `user`'s vectors) and
    /// how many of the range's memories it embedded: one pass over the vectors' counts by
    /// model, type and app, and a second only when the range names a tag.
    fn embedded_by(&self, user: &str, range: &Range, model: Option<&str>) -> Result<(Option<String>, u64)> {
        let mut q = self.statement("SELECT c.model, c.kind, c.app, CAST(sum(n) AS BIGINT) FROM ");
        Counts::Vectors.push_from(&mut q, user, None);
        q.bind(" WHERE c.user_id = ?", SqlValue::Text(user.into()));
        q.push(" GROUP BY c.model, c.kind, c.app HAVING sum(n) > 0");
        let rows = self.read(&q, "vector_counts")?;
        let mut by_model: BTreeMap<String, u64> = BTreeMap::new();
        for r in &rows {
            *by_model.entry(r.text(0)?).or_default() += r.count(3)?;
        }
        let most = by_model.iter().max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0))).map(|(m, _)| m.clone());
        let Some(model) = model.map(str::to_string).or(most) else { return Ok((None, 0)) };
        if range.tag.is_some() {
            let mut q = self.statement("SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM ");
            Counts::Vectors.push_from(&mut q, user, Some(range));
            counts_scope(&mut q, user, range);
            q.bind(" AND c.model = ?", SqlValue::Text(model.clone()));
            return Ok((Some(model), self.count_of(&q)?));
        }
        let mut embedded = 0;
        for r in &rows {
            let kind_fits = range.kind.is_none_or(|k| r.text(1).is_ok_and(|t| t == k.as_str()));
            let app_fits = range.client.as_ref().is_none_or(|c| r.text(2).is_ok_and(|a| &a == c));
            if r.text(0)? == model && kind_fits && app_fits {
                embedded += r.count(3)?;
            }
        }
        Ok((Some(model), embedded))
    }

    /// Memories created per bucket, by type (whole days, UTC).
    fn created(&self, user: &str, range: &Range) -> Result<Vec<Created>> {
        let (since, until) = range.bounds();
        // Dates both engines can write: from year 0 to 9999.
        let day = |ms: i64| from_ms(ms.clamp(-62_167_219_200_000, 253_402_300_799_999)).format("%Y-%m-%d").to_string();
        let bucket = range.bucket.of_day("c.day", self.engine.dialect());
        let mut q = self.statement(format!("SELECT {bucket} AS b, c.kind, CAST(sum(c.n) AS BIGINT) FROM "));
        Counts::Days.push_from(&mut q, user, Some(range));
        counts_scope(&mut q, user, range);
        q.bind(" AND c.day >= ?", SqlValue::Text(day(since)))
            .bind(" AND c.day <= ?", SqlValue::Text(day(until.saturating_sub(1))))
            .push(" GROUP BY b, c.kind HAVING sum(c.n) > 0 ORDER BY b");
        let mut out: Vec<Created> = Vec::new();
        for r in self.read(&q, "memory_days")? {
            let (start, kind, n) = (r.text(0)?, r.text(1)?, r.count(2)?);
            if out.last().is_none_or(|c| c.start != start) {
                out.push(Created { start, by_type: BTreeMap::new(), total: 0 });
            }
            let last = out.last_mut().expect("pushed above");
            last.by_type.insert(kind, n);
            last.total += n;
        }
        Ok(out)
    }

    /// Tier moves per bucket, and the rules behind them, most used first.
    fn moves(&self, user: &str, range: &Range) -> Result<(Vec<Moves>, Counted)> {
        let (since, until) = range.bounds();
        let bucket = range.bucket.of("e.recorded_at", self.engine.dialect());
        let mut q = self.statement(format!("SELECT {bucket} AS b, e.event_type, {} ", move_fields(self)));
        q.push("FROM events e JOIN memories m ON m.id = e.stream_id WHERE ");
        memory_scope(&mut q, user, range);
        q.bind(" AND e.event_type IN ('tier_changed', 'expired') AND e.recorded_at >= ?", SqlValue::Int(since))
            .bind(" AND e.recorded_at < ? ORDER BY b", SqlValue::Int(until));
        let (mut out, mut reasons): (Vec<Moves>, BTreeMap<String, u64>) = (Vec::new(), BTreeMap::new());
        for r in self.read(&q, "events")? {
            let (start, kind, from, to) = (r.text(0)?, r.text(1)?, r.opt_text(2)?, r.opt_text(3)?);
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
            *reasons.entry(rule_of(&r.text(4)?)).or_default() += 1;
        }
        let mut reasons: Vec<(String, u64)> = reasons.into_iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok((out, reasons))
    }
}
