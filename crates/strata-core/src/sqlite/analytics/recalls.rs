//! SQLite's side of `crate::analytics`: its statements and row decoding.

use crate::error::{Error, Result};
use crate::store::Store;
use rusqlite::params;
use std::collections::BTreeMap;

use super::*;
use crate::analytics::NEVER_RECALLED;
use crate::analytics::recalls::*;

/// Which recalls a metric counts: `user`'s (`?1`) from `?2` to `?3` (ms) run by one app or
/// client (`?4`, none: any), as a condition on `recalls r`.
pub(crate) const RECALL_SCOPE: &str = "r.user_id = ?1 AND r.at >= ?2 AND r.at < ?3 AND (?4 IS NULL OR r.client = ?4)";

impl Store {
    /// What `user`'s recalls did over `range`.
    pub fn recall_metrics(&self, user: &str, range: &Range) -> Result<RecallMetrics> {
        let c = &self.sqlite()?;
        let (since, until) = range.bounds();
        let scope = RECALL_SCOPE;
        let client = range.client.as_deref();
        let count = |sql: String| -> Result<u64> {
            Ok(c.query_row(&sql, params![user, since, until, client], |r| r.get::<_, i64>(0))? as u64)
        };
        let mut m = RecallMetrics {
            recalls: count(format!("SELECT count(*) FROM recalls r WHERE {scope}"))?,
            searches: count(format!("SELECT count(*) FROM recalls r WHERE {scope} AND purpose = 'search'"))?,
            prompts: count(format!("SELECT count(*) FROM recalls r WHERE {scope} AND purpose = 'prompt'"))?,
            found: count(format!("SELECT count(*) FROM recalls r WHERE {scope} AND found > 0"))?,
            answered: count(format!(
                "SELECT count(*) FROM recalls r WHERE {scope} AND EXISTS \
                 (SELECT 1 FROM recall_hits h WHERE h.recall_id = r.id AND h.used IS NOT NULL)"
            ))?,
            ..RecallMetrics::default()
        };
        // Each memory recalled in the range once: how often, whether a prompt included it and
        // an answer drew on it (one pass over the hits, grouped here: SQLite's grouping by a
        // text id sorts them all).
        let mut stmt = c.prepare(&format!(
            "SELECT h.memory_id, h.in_prompt, coalesce(h.used, 0) FROM recall_hits h \
             JOIN recalls r ON r.id = h.recall_id WHERE {scope}"
        ))?;
        let mut seen: std::collections::HashMap<String, (u64, bool, bool)> = std::collections::HashMap::new();
        let mut rows = stmt.query(params![user, since, until, client])?;
        while let Some(r) = rows.next()? {
            let id = r.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?;
            let (in_prompt, used) = (r.get::<_, bool>(1)?, r.get::<_, bool>(2)?);
            let entry = match seen.get_mut(id) {
                Some(e) => e,
                None => seen.entry(id.to_string()).or_default(),
            };
            *entry = (entry.0 + 1, entry.1 || in_prompt, entry.2 || used);
        }
        m.recalled = seen.len() as u64;
        m.in_prompt = seen.values().filter(|e| e.1).count() as u64;
        m.used = seen.values().filter(|e| e.2).count() as u64;
        let mut top: Vec<(String, u64)> = seen.into_iter().map(|(id, e)| (id, e.0)).collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        // What people said, not a model's answers: an exchange the model answered is never a
        // "most recalled" memory on its own.
        let answered = |id: &str| {
            let m = id.parse().ok().and_then(|id| self.get(id).ok());
            m.is_some_and(|m| crate::said_by_assistant(&m))
        };
        m.top = top.into_iter().filter(|(id, _)| !answered(id)).take(TOP_RECALLS as usize).collect();
        m.never_recalled = c.query_row(
            &format!(
                "SELECT count(*) FROM memories m WHERE {MEMORY_SCOPE} {} AND {NEVER_RECALLED}",
                super::tagged(range, 4)
            ),
            params![user, range.kind.map(|k| k.as_str()), client, range.tag],
            |r| r.get::<_, i64>(0),
        )? as u64;
        let percentile = |p: f64| -> Result<f64> {
            let offset = ((m.recalls as f64 - 1.0) * p).round().max(0.0) as i64;
            let sql = format!("SELECT latency_ms FROM recalls r WHERE {scope} ORDER BY latency_ms LIMIT 1 OFFSET ?5");
            Ok(c.query_row(&sql, params![user, since, until, client, offset], |r| r.get(0)).unwrap_or(0.0))
        };
        let mut stmt = c.prepare(
            "SELECT about, helpful, count(*) FROM feedback WHERE user_id = ?1 AND at >= ?2 AND at < ?3 GROUP BY 1, 2",
        )?;
        let mut rows = stmt.query(params![user, since, until])?;
        while let Some(r) = rows.next()? {
            let n = r.get::<_, i64>(2)? as u64;
            let f = &mut m.feedback;
            *match (r.get::<_, String>(0)?.as_str(), r.get::<_, bool>(1)?) {
                ("answer", true) => &mut f.answers_helpful,
                ("answer", false) => &mut f.answers_unhelpful,
                (_, true) => &mut f.memories_helpful,
                (_, false) => &mut f.memories_unhelpful,
            } += n;
        }
        if m.recalls > 0 {
            (m.latency_p50_ms, m.latency_p95_ms) = (percentile(0.5)?, percentile(0.95)?);
        }
        m.series = self.recall_series(user, range)?;
        let listed = |sql: String| -> Result<Vec<(String, u64)>> {
            let mut stmt = c.prepare(&sql)?;
            let rows = stmt.query_map(params![user, since, until, client, TOP_RECALLS], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        m.no_result = listed(format!(
            "SELECT r.query, count(*) AS n FROM recalls r WHERE {scope} AND found = 0 \
             GROUP BY r.query ORDER BY n DESC, r.query LIMIT ?5"
        ))?;
        Ok(m)
    }
}

impl Store {
    /// `user`'s recalls over `range` per bucket: how many, how many found something, and the
    /// best result's similarity in quartiles with its mean score and boost.
    fn recall_series(&self, user: &str, range: &Range) -> Result<Vec<RecallPoint>> {
        let (since, until) = range.bounds();
        let sql = format!(
            "SELECT {} AS b, count(*), sum(found > 0) FROM recalls r WHERE {RECALL_SCOPE} GROUP BY b ORDER BY b",
            range.bucket.of("r.at")
        );
        let p = params![user, since, until, range.client.as_deref()];
        let mut stmt = self.sqlite()?.prepare(&sql)?;
        let mut series: Vec<RecallPoint> = stmt
            .query_map(p, |r| {
                Ok(RecallPoint {
                    start: r.get(0)?,
                    recalls: r.get::<_, i64>(1)? as u64,
                    found: r.get::<_, i64>(2)? as u64,
                    ..RecallPoint::default()
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        // The best results whose parts were recorded, bucket by bucket (in the series' order).
        let sql = format!(
            "SELECT {} AS b, h.score, h.similarity, h.matched FROM recall_hits h JOIN recalls r ON r.id = h.recall_id \
             WHERE {RECALL_SCOPE} AND h.rank = 1 AND h.matched IS NOT NULL ORDER BY b",
            range.bucket.of("r.at")
        );
        let mut stmt = self.sqlite()?.prepare(&sql)?;
        let mut rows = stmt.query(p)?;
        let mut best: BTreeMap<String, (Vec<f64>, Vec<f64>, f64)> = BTreeMap::new();
        while let Some(r) = rows.next()? {
            let (score, similarity, matched) = (r.get::<_, f64>(1)?, r.get::<_, Option<f64>>(2)?, r.get::<_, f64>(3)?);
            let (scores, similarities, boost) = best.entry(r.get(0)?).or_default();
            scores.push(score);
            similarities.extend(similarity);
            *boost += score - matched;
        }
        for point in &mut series {
            let Some((scores, mut similarities, boost)) = best.remove(&point.start) else { continue };
            let mean = |sum: f64, n: usize| (n > 0).then(|| sum / n as f64);
            point.score = mean(scores.iter().sum(), scores.len());
            point.boost = mean(boost, scores.len());
            point.similarity = Quartiles::of(&mut similarities);
        }
        Ok(series)
    }

    /// How `user`'s prompts used their budgets over `range`.
    pub fn utilization_metrics(&self, user: &str, range: &Range) -> Result<UtilizationMetrics> {
        let (since, until) = range.bounds();
        let sql = format!(
            "SELECT {}, prompt FROM recalls r WHERE {RECALL_SCOPE} AND prompt IS NOT NULL ORDER BY r.at",
            range.bucket.of("r.at")
        );
        let mut stmt = self.sqlite()?.prepare(&sql)?;
        let rows = stmt.query_map(params![user, since, until, range.client.as_deref()], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut m = UtilizationMetrics::default();
        let mut sections: BTreeMap<String, u64> = BTreeMap::new();
        let mut points: BTreeMap<String, (u64, f64)> = BTreeMap::new();
        let mut models: BTreeMap<String, (u64, u64, u64, f64)> = BTreeMap::new();
        let mut total = 0.0;
        for row in rows {
            let (start, json) = row?;
            let p: PromptRecord =
                serde_json::from_str(&json).map_err(|e| Error::Corrupt(format!("a prompt record: {e}")))?;
            let share = if p.budget == 0 { 0.0 } else { p.used as f64 / p.budget as f64 };
            m.prompts += 1;
            total += share;
            for (name, tokens) in &p.sections {
                *sections.entry(name.clone()).or_default() += tokens;
            }
            for (why, n) in &p.dropped {
                *m.dropped.entry(why.clone()).or_default() += n;
            }
            let point = points.entry(start).or_default();
            (point.0, point.1) = (point.0 + 1, point.1 + share);
            let model = models.entry(p.model.clone()).or_default();
            *model = (model.0 + 1, model.1 + p.budget, model.2 + p.used, model.3 + share);
        }
        let n = m.prompts.max(1) as f64;
        m.utilization = total / n;
        m.sections = sections.into_iter().map(|(k, v)| (k, v as f64 / n)).collect();
        m.series = points
            .into_iter()
            .map(|(start, (prompts, share))| UtilizationPoint { start, prompts, utilization: share / prompts as f64 })
            .collect();
        m.by_model = models
            .into_iter()
            .map(|(model, (prompts, budget, used, share))| {
                let k = prompts as f64;
                (model, ModelUse { prompts, budget: budget as f64 / k, used: used as f64 / k, utilization: share / k })
            })
            .collect();
        Ok(m)
    }
}
