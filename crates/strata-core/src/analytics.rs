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

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use rusqlite::params;
use serde::Serialize;

use crate::clock::to_ms;
use crate::concepts::{GROUPS, KEY_PREFIX};
use crate::error::{Error, Result};
use crate::model::{MemoryId, Tier};
use crate::store::Store;

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
    /// The SQL expression for the bucket (its first day, `YYYY-MM-DD`) of a millisecond column.
    fn of(self, column: &str) -> String {
        match self {
            Bucket::Day => format!("date({column} / 1000, 'unixepoch')"),
            Bucket::Week => format!("date({column} / 1000, 'unixepoch', 'weekday 0', '-6 days')"),
        }
    }
}

/// A date range and its buckets.
#[derive(Debug, Clone, Copy, Default)]
pub struct Range {
    /// From (inclusive); none: the beginning.
    pub since: Option<DateTime<Utc>>,
    /// To (exclusive); none: now and after.
    pub until: Option<DateTime<Utc>>,
    /// Day or week.
    pub bucket: Bucket,
}

impl Range {
    fn bounds(&self) -> (i64, i64) {
        (self.since.map_or(i64::MIN, to_ms), self.until.map_or(i64::MAX, to_ms))
    }
}

/// Memories created in one bucket, by type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Created {
    /// The bucket's first day (`YYYY-MM-DD`).
    pub start: String,
    /// Count by type (`semantic`, `episodic`, `procedural`).
    pub by_type: BTreeMap<String, u64>,
    /// All of them.
    pub total: u64,
}

/// Tier moves in one bucket.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Moves {
    /// The bucket's first day.
    pub start: String,
    /// To a higher tier (short → medium → long).
    pub promoted: u64,
    /// To a lower tier.
    pub demoted: u64,
    /// Expired (hidden from recall; nothing deleted).
    pub expired: u64,
}

/// One person's memory metrics.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct MemoryMetrics {
    /// Live memories (expired ones included).
    pub memories: u64,
    /// Of those, expired.
    pub expired: u64,
    /// By type.
    pub by_type: BTreeMap<String, u64>,
    /// By tier (expired ones left out).
    pub by_tier: BTreeMap<String, u64>,
    /// By the app or client that wrote them (`desktop`, `cli`, `mcp:cursor`…).
    pub by_app: BTreeMap<String, u64>,
    /// By the agent whose private memories they are (`shared`: everyone's).
    pub by_agent: BTreeMap<String, u64>,
    /// The most used tags, most first (at most 20).
    pub tags: Vec<(String, u64)>,
    /// The model whose vectors `embedded` counts.
    pub embedding_model: Option<String>,
    /// Memories with a vector from that model.
    pub embedded: u64,
    /// Live concepts (compaction's groups).
    pub concepts: u64,
    /// Memories in one.
    pub grouped: u64,
    /// Memories created in the range, per bucket (buckets with none left out).
    pub created: Vec<Created>,
    /// Tier moves in the range, per bucket (buckets with none left out).
    pub moves: Vec<Moves>,
    /// The rules behind those moves, most frequent first (numbers as N).
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
                    "SELECT model FROM memory_vectors GROUP BY model ORDER BY count(*) DESC, model LIMIT 1",
                    [],
                    |r| r.get(0),
                )
                .map(Some)
                .or_else(|e| if e == rusqlite::Error::QueryReturnedNoRows { Ok(None) } else { Err(e) })?,
        };
        let model = model.as_deref();
        let grouped = |sql: &str| -> Result<BTreeMap<String, u64>> {
            let mut stmt = c.prepare(sql)?;
            let rows = stmt.query_map([user], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        let count = |sql: &str, p: &[&dyn rusqlite::ToSql]| -> Result<u64> {
            Ok(c.query_row(sql, p, |r| r.get::<_, i64>(0))? as u64)
        };
        let mut m = MemoryMetrics {
            memories: count("SELECT count(*) FROM memories WHERE user_id = ?1", &[&user])?,
            expired: count("SELECT count(*) FROM memories WHERE user_id = ?1 AND expired_at IS NOT NULL", &[&user])?,
            by_type: grouped("SELECT kind, count(*) FROM memories WHERE user_id = ?1 GROUP BY kind")?,
            by_tier: grouped(
                "SELECT tier, count(*) FROM memories WHERE user_id = ?1 AND expired_at IS NULL GROUP BY tier",
            )?,
            by_app: grouped(
                "SELECT coalesce(json_extract(source, '$.app'), ''), count(*) FROM memories WHERE user_id = ?1 \
                 GROUP BY 1",
            )?,
            by_agent: grouped(
                "SELECT coalesce(agent_id, 'shared'), count(*) FROM memories WHERE user_id = ?1 GROUP BY 1",
            )?,
            embedding_model: model.map(str::to_string),
            ..MemoryMetrics::default()
        };
        let mut stmt = c.prepare(
            "SELECT t.tag, count(*) FROM memory_tags t JOIN memories m ON m.id = t.memory_id WHERE m.user_id = ?1 \
             GROUP BY t.tag ORDER BY count(*) DESC, t.tag LIMIT ?2",
        )?;
        m.tags = stmt
            .query_map(params![user, TOP_TAGS as i64], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64)))?
            .collect::<rusqlite::Result<_>>()?;
        if let Some(model) = model {
            m.embedded = count(
                "SELECT count(*) FROM memories m WHERE m.user_id = ?1 AND EXISTS \
                 (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = ?2)",
                &[&user, &model],
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
        let sql = format!(
            "SELECT {} AS b, kind, count(*) FROM memories WHERE user_id = ?1 AND created_at >= ?2 AND created_at < ?3 \
             GROUP BY b, kind ORDER BY b",
            range.bucket.of("created_at")
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(params![user, since, until], |r| {
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
             WHERE m.user_id = ?1 AND e.event_type IN ('tier_changed', 'expired') \
             AND e.recorded_at >= ?2 AND e.recorded_at < ?3 ORDER BY b",
            range.bucket.of("e.recorded_at")
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(params![user, since, until], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, String>(4)?,
            ))
        })?;
        let rank = |t: Option<String>| t.and_then(|t| t.parse::<Tier>().ok()).map(tier_rank);
        let (mut out, mut reasons): (Vec<Moves>, BTreeMap<String, u64>) = (Vec::new(), BTreeMap::new());
        for row in rows {
            let (start, kind, from, to, reason) = row?;
            if out.last().is_none_or(|m| m.start != start) {
                out.push(Moves { start, ..Moves::default() });
            }
            let last = out.last_mut().expect("pushed above");
            match (kind.as_str(), rank(from), rank(to)) {
                ("expired", ..) => last.expired += 1,
                (_, Some(a), Some(b)) if b > a => last.promoted += 1,
                (_, Some(a), Some(b)) if b < a => last.demoted += 1,
                _ => continue,
            }
            *reasons.entry(rule_of(&reason)).or_default() += 1;
        }
        let mut reasons: Vec<(String, u64)> = reasons.into_iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok((out, reasons))
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

/// Why recall ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// A search someone (or an AI tool) ran.
    Search,
    /// The recall behind a prompt.
    Prompt,
}

impl Purpose {
    fn as_str(self) -> &'static str {
        match self {
            Purpose::Search => "search",
            Purpose::Prompt => "prompt",
        }
    }
}

/// One recall, as [`Store::record_recall`] keeps it.
#[derive(Debug, Clone)]
pub struct RecallRecord<'a> {
    /// Whose memories were searched.
    pub user_id: &'a str,
    /// The agent that asked, if any.
    pub agent_id: Option<&'a str>,
    /// The app or MCP client that asked.
    pub client: Option<&'a str>,
    /// A search or a prompt.
    pub purpose: Purpose,
    /// What was asked.
    pub query: &'a str,
    /// How long recall took.
    pub latency_ms: f64,
    /// The results in rank order: the memory, its score, and whether the prompt included it.
    pub hits: Vec<(MemoryId, f64, bool)>,
    /// For a prompt: how its budget was used.
    pub prompt: Option<PromptRecord>,
}

/// How a prompt used its budget.
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct PromptRecord {
    /// The model it was built for.
    pub model: String,
    /// Its budget in tokens.
    pub budget: u64,
    /// Tokens used.
    pub used: u64,
    /// Tokens per section (`system`, `facts`, `episodes`, `history`, `message`, `framing`…).
    pub sections: BTreeMap<String, u64>,
    /// Candidates left out, by why (`over_budget`, `duplicate`, `covered`).
    pub dropped: BTreeMap<String, u64>,
}

/// How one model's prompts used their budgets.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ModelUse {
    /// Prompts built.
    pub prompts: u64,
    /// Their mean budget.
    pub budget: f64,
    /// Their mean tokens used.
    pub used: f64,
    /// Mean of used ÷ budget.
    pub utilization: f64,
}

/// Prompts in one bucket.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct UtilizationPoint {
    /// The bucket's first day.
    pub start: String,
    /// Prompts built.
    pub prompts: u64,
    /// Mean of used ÷ budget.
    pub utilization: f64,
}

/// How prompts used their budgets over a range.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct UtilizationMetrics {
    /// Prompts built.
    pub prompts: u64,
    /// Mean of used ÷ budget.
    pub utilization: f64,
    /// Mean tokens per section.
    pub sections: BTreeMap<String, f64>,
    /// Candidates left out, by why, in all.
    pub dropped: BTreeMap<String, u64>,
    /// By model.
    pub by_model: BTreeMap<String, ModelUse>,
    /// Per bucket (buckets with none left out).
    pub series: Vec<UtilizationPoint>,
}

/// Recalls in one bucket.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RecallPoint {
    /// The bucket's first day.
    pub start: String,
    /// Recalls run.
    pub recalls: u64,
    /// Of those, the ones that found something.
    pub found: u64,
}

/// What recall did over a range.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RecallMetrics {
    /// Recalls run.
    pub recalls: u64,
    /// Of those, searches.
    pub searches: u64,
    /// Of those, for prompts.
    pub prompts: u64,
    /// Recalls that found something.
    pub found: u64,
    /// Median time a recall took.
    pub latency_p50_ms: f64,
    /// 95th percentile.
    pub latency_p95_ms: f64,
    /// Per bucket (buckets with none left out).
    pub series: Vec<RecallPoint>,
    /// Distinct memories recalled.
    pub recalled: u64,
    /// Of those, distinct memories a prompt included.
    pub in_prompt: u64,
    /// Live memories no record shows recalled.
    pub never_recalled: u64,
    /// The most recalled memories: id and how often, most first (at most 20).
    pub top: Vec<(String, u64)>,
    /// Queries that found nothing, most asked first (at most 20).
    pub no_result: Vec<(String, u64)>,
}

/// The most entries [`RecallMetrics::top`] and [`RecallMetrics::no_result`] list.
const TOP_RECALLS: i64 = 20;

impl Store {
    /// Keeps one recall's usage record (see the module documentation).
    pub fn record_recall(&mut self, r: &RecallRecord<'_>) -> Result<()> {
        let at = to_ms(self.clock().now());
        self.transact(|tx| {
            let c = tx.conn();
            let prompt =
                r.prompt.as_ref().map(serde_json::to_string).transpose().map_err(|e| Error::invalid(e.to_string()))?;
            c.prepare_cached(
                "INSERT INTO recalls (at, user_id, agent_id, client, purpose, query, found, latency_ms, prompt) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                at,
                r.user_id,
                r.agent_id,
                r.client,
                r.purpose.as_str(),
                r.query,
                r.hits.len() as i64,
                r.latency_ms,
                prompt
            ])?;
            let id = c.last_insert_rowid();
            let mut hit = c.prepare_cached(
                "INSERT INTO recall_hits (recall_id, rank, memory_id, score, in_prompt) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (rank, (memory, score, in_prompt)) in r.hits.iter().enumerate() {
                hit.execute(params![id, rank as i64 + 1, memory.to_string(), score, *in_prompt])?;
            }
            Ok(())
        })
    }

    /// Deletes the usage records of recalls before `before`; returns how many.
    pub fn prune_recalls(&mut self, before: DateTime<Utc>) -> Result<u64> {
        self.transact(|tx| Ok(tx.conn().execute("DELETE FROM recalls WHERE at < ?1", [to_ms(before)])? as u64))
    }

    /// Deletes every usage record of `user`'s recalls; returns how many.
    pub fn clear_recalls(&mut self, user: &str) -> Result<u64> {
        self.transact(|tx| Ok(tx.conn().execute("DELETE FROM recalls WHERE user_id = ?1", [user])? as u64))
    }

    /// What `user`'s recalls did over `range`.
    pub fn recall_metrics(&self, user: &str, range: &Range) -> Result<RecallMetrics> {
        let c = &self.conn;
        let (since, until) = range.bounds();
        let scope = "r.user_id = ?1 AND r.at >= ?2 AND r.at < ?3";
        let count = |sql: String| -> Result<u64> {
            Ok(c.query_row(&sql, params![user, since, until], |r| r.get::<_, i64>(0))? as u64)
        };
        let mut m = RecallMetrics {
            recalls: count(format!("SELECT count(*) FROM recalls r WHERE {scope}"))?,
            searches: count(format!("SELECT count(*) FROM recalls r WHERE {scope} AND purpose = 'search'"))?,
            prompts: count(format!("SELECT count(*) FROM recalls r WHERE {scope} AND purpose = 'prompt'"))?,
            found: count(format!("SELECT count(*) FROM recalls r WHERE {scope} AND found > 0"))?,
            recalled: count(format!(
                "SELECT count(DISTINCT h.memory_id) FROM recall_hits h JOIN recalls r ON r.id = h.recall_id WHERE {scope}"
            ))?,
            in_prompt: count(format!(
                "SELECT count(DISTINCT h.memory_id) FROM recall_hits h JOIN recalls r ON r.id = h.recall_id \
                 WHERE {scope} AND h.in_prompt = 1"
            ))?,
            ..RecallMetrics::default()
        };
        m.never_recalled = c.query_row(
            "SELECT count(*) FROM memories m WHERE m.user_id = ?1 AND m.expired_at IS NULL \
             AND NOT EXISTS (SELECT 1 FROM recall_hits h WHERE h.memory_id = m.id)",
            [user],
            |r| r.get::<_, i64>(0),
        )? as u64;
        let percentile = |p: f64| -> Result<f64> {
            let offset = ((m.recalls as f64 - 1.0) * p).round().max(0.0) as i64;
            let sql = format!("SELECT latency_ms FROM recalls r WHERE {scope} ORDER BY latency_ms LIMIT 1 OFFSET ?4");
            Ok(c.query_row(&sql, params![user, since, until, offset], |r| r.get(0)).unwrap_or(0.0))
        };
        if m.recalls > 0 {
            (m.latency_p50_ms, m.latency_p95_ms) = (percentile(0.5)?, percentile(0.95)?);
        }
        let sql = format!(
            "SELECT {} AS b, count(*), sum(found > 0) FROM recalls r WHERE {scope} GROUP BY b ORDER BY b",
            range.bucket.of("r.at")
        );
        let mut stmt = c.prepare(&sql)?;
        m.series = stmt
            .query_map(params![user, since, until], |r| {
                Ok(RecallPoint {
                    start: r.get(0)?,
                    recalls: r.get::<_, i64>(1)? as u64,
                    found: r.get::<_, i64>(2)? as u64,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let listed = |sql: String| -> Result<Vec<(String, u64)>> {
            let mut stmt = c.prepare(&sql)?;
            let rows = stmt.query_map(params![user, since, until, TOP_RECALLS], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        m.top = listed(format!(
            "SELECT h.memory_id, count(*) AS n FROM recall_hits h JOIN recalls r ON r.id = h.recall_id WHERE {scope} \
             GROUP BY h.memory_id ORDER BY n DESC, h.memory_id LIMIT ?4"
        ))?;
        m.no_result = listed(format!(
            "SELECT r.query, count(*) AS n FROM recalls r WHERE {scope} AND found = 0 \
             GROUP BY r.query ORDER BY n DESC, r.query LIMIT ?4"
        ))?;
        Ok(m)
    }
}

impl Store {
    /// How `user`'s prompts used their budgets over `range`.
    pub fn utilization_metrics(&self, user: &str, range: &Range) -> Result<UtilizationMetrics> {
        let (since, until) = range.bounds();
        let sql = format!(
            "SELECT {}, prompt FROM recalls r WHERE r.user_id = ?1 AND r.at >= ?2 AND r.at < ?3 \
             AND prompt IS NOT NULL ORDER BY r.at",
            range.bucket.of("r.at")
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows =
            stmt.query_map(params![user, since, until], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
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

/// Inside a forgetting transaction: deletes every usage record of a recall that found `id`
/// (its hits go with it).
pub(crate) fn forget_recalls_of(tx: &rusqlite::Transaction<'_>, id: MemoryId) -> Result<()> {
    tx.prepare_cached("DELETE FROM recalls WHERE id IN (SELECT recall_id FROM recall_hits WHERE memory_id = ?1)")?
        .execute([id.to_string()])?;
    Ok(())
}
