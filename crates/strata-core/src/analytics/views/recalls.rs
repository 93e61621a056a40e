//! What recall did (`RecallMetrics`) and how prompts used their budgets (`UtilizationMetrics`),
//! from the usage records.

use std::collections::{BTreeMap, HashMap};

use crate::error::{Error, Result};
use crate::sql::SqlValue;
use crate::store::Store;

use super::super::recalls::TOP_RECALLS;
use super::super::{
    ModelUse, NEVER_RECALLED, PromptRecord, Quartiles, Range, RecallMetrics, RecallPoint, UtilizationMetrics,
    UtilizationPoint,
};
use super::{memory_scope, recall_scope};

impl Store {
    /// What `user`'s recalls did over `range`.
    pub fn recall_metrics(&self, user: &str, range: &Range) -> Result<RecallMetrics> {
        let count = |more: &str| -> Result<u64> {
            let mut q = self.statement("SELECT count(*) FROM recalls r WHERE ");
            recall_scope(&mut q, user, range);
            q.push(more);
            self.count_of(&q)
        };
        let mut m = RecallMetrics {
            recalls: count("")?,
            searches: count(" AND purpose = 'search'")?,
            prompts: count(" AND purpose = 'prompt'")?,
            found: count(" AND found > 0")?,
            answered: count(
                " AND EXISTS (SELECT 1 FROM recall_hits h WHERE h.recall_id = r.id AND h.used IS NOT NULL)",
            )?,
            ..RecallMetrics::default()
        };
        self.recalled(user, range, &mut m)?;
        let mut q = self.statement("SELECT count(*) FROM memories m WHERE ");
        memory_scope(&mut q, user, range);
        q.push(&format!(" AND {NEVER_RECALLED}"));
        m.never_recalled = self.count_of(&q)?;
        if m.recalls > 0 {
            (m.latency_p50_ms, m.latency_p95_ms) =
                (self.latency(user, range, m.recalls, 0.5)?, self.latency(user, range, m.recalls, 0.95)?);
        }
        self.feedback(user, range, &mut m)?;
        m.series = self.recall_series(user, range)?;
        let mut q = self.statement("SELECT r.query, count(*) AS n FROM recalls r WHERE ");
        recall_scope(&mut q, user, range);
        q.bind(" AND found = 0 GROUP BY r.query ORDER BY n DESC, r.query LIMIT ?", SqlValue::Int(TOP_RECALLS));
        m.no_result = self.read(&q, "recalls")?.iter().map(|r| Ok((r.text(0)?, r.count(1)?))).collect::<Result<_>>()?;
        Ok(m)
    }

    /// Each memory recalled in the range once: how often, whether a prompt included it and an
    /// answer drew on it (one pass over the hits, grouped here).
    fn recalled(&self, user: &str, range: &Range, m: &mut RecallMetrics) -> Result<()> {
        let mut q = self.statement(
            "SELECT h.memory_id, h.in_prompt, coalesce(h.used, 0) FROM recall_hits h JOIN recalls r ON r.id = h.recall_id WHERE ",
        );
        recall_scope(&mut q, user, range);
        let mut seen: HashMap<String, (u64, bool, bool)> = HashMap::new();
        for r in self.read(&q, "recall_hits")? {
            let (in_prompt, used) = (r.flag(1)?, r.flag(2)?);
            let entry = seen.entry(r.text(0)?).or_default();
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
        Ok(())
    }

    /// The latency at fraction `p` of `user`'s `recalls` recalls in `range`.
    fn latency(&self, user: &str, range: &Range, recalls: u64, p: f64) -> Result<f64> {
        let offset = ((recalls as f64 - 1.0) * p).round().max(0.0) as i64;
        let mut q = self.statement("SELECT latency_ms FROM recalls r WHERE ");
        recall_scope(&mut q, user, range);
        q.bind(" ORDER BY latency_ms LIMIT 1 OFFSET ?", SqlValue::Int(offset));
        match self.read(&q, "recalls")?.first() {
            Some(r) => r.real(0),
            None => Ok(0.0),
        }
    }

    /// What people said of answers and memories in `range`.
    fn feedback(&self, user: &str, range: &Range, m: &mut RecallMetrics) -> Result<()> {
        let (since, until) = range.bounds();
        let mut q = self.statement("SELECT about, helpful, count(*) FROM feedback WHERE ");
        q.bind("user_id = ?", SqlValue::Text(user.into()))
            .bind(" AND at >= ?", SqlValue::Int(since))
            .bind(" AND at < ? GROUP BY about, helpful", SqlValue::Int(until));
        for r in self.read(&q, "feedback")? {
            let f = &mut m.feedback;
            *match (r.text(0)?.as_str(), r.flag(1)?) {
                ("answer", true) => &mut f.answers_helpful,
                ("answer", false) => &mut f.answers_unhelpful,
                (_, true) => &mut f.memories_helpful,
                (_, false) => &mut f.memories_unhelpful,
            } += r.count(2)?;
        }
        Ok(())
    }

    /// `user`'s recalls over `range` per bucket: how many, how many found something, and the
    /// best result's similarity in quartiles with its mean score and boost.
    fn recall_series(&self, user: &str, range: &Range) -> Result<Vec<RecallPoint>> {
        let bucket = range.bucket.of("r.at", self.engine.dialect());
        let mut q = self.statement(format!(
            "SELECT {bucket} AS b, count(*), CAST(sum(CASE WHEN found > 0 THEN 1 ELSE 0 END) AS BIGINT) FROM recalls r WHERE "
        ));
        recall_scope(&mut q, user, range);
        q.push(" GROUP BY b ORDER BY b");
        let mut series: Vec<RecallPoint> = self
            .read(&q, "recalls")?
            .iter()
            .map(|r| {
                Ok(RecallPoint {
                    start: r.text(0)?,
                    recalls: r.count(1)?,
                    found: r.count(2)?,
                    ..RecallPoint::default()
                })
            })
            .collect::<Result<_>>()?;
        // The best results whose parts were recorded, bucket by bucket (in the series' order).
        let mut q = self.statement(format!(
            "SELECT {bucket} AS b, h.score, h.similarity, h.matched FROM recall_hits h JOIN recalls r ON r.id = h.recall_id WHERE "
        ));
        recall_scope(&mut q, user, range);
        q.push(" AND h.rank = 1 AND h.matched IS NOT NULL ORDER BY b");
        let mut best: BTreeMap<String, (Vec<f64>, Vec<f64>, f64)> = BTreeMap::new();
        for r in self.read(&q, "recall_hits")? {
            let (score, similarity, matched) = (r.real(1)?, r.opt_real(2)?, r.real(3)?);
            let (scores, similarities, boost) = best.entry(r.text(0)?).or_default();
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
        let bucket = range.bucket.of("r.at", self.engine.dialect());
        let mut q = self.statement(format!("SELECT {bucket}, prompt FROM recalls r WHERE "));
        recall_scope(&mut q, user, range);
        q.push(" AND prompt IS NOT NULL ORDER BY r.at");
        let mut m = UtilizationMetrics::default();
        let mut sections: BTreeMap<String, u64> = BTreeMap::new();
        let mut points: BTreeMap<String, (u64, f64)> = BTreeMap::new();
        let mut models: BTreeMap<String, (u64, u64, u64, f64)> = BTreeMap::new();
        let mut total = 0.0;
        for r in self.read(&q, "recalls")? {
            let p: PromptRecord =
                serde_json::from_str(&r.text(1)?).map_err(|e| Error::Corrupt(format!("a prompt record: {e}")))?;
            let share = if p.budget == 0 { 0.0 } else { p.used as f64 / p.budget as f64 };
            m.prompts += 1;
            total += share;
            for (name, tokens) in &p.sections {
                *sections.entry(name.clone()).or_default() += tokens;
            }
            for (why, n) in &p.dropped {
                *m.dropped.entry(why.clone()).or_default() += n;
            }
            let point = points.entry(r.text(0)?).or_default();
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
