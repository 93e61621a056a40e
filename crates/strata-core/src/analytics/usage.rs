//! Analytics' usage records on either engine (SQLite's 0005–0007, PostgreSQL's 0006): each
//! recall with what it found, what an answer drew on, what people said of answers and
//! memories, and what each compaction pass changed; pruned after the retention setting and
//! cleared on request. Written once over [`crate::storage::PlainSql`]; the metrics read from
//! them are each engine's.

use chrono::{DateTime, Utc};

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::model::MemoryId;
use crate::sql::{Row, Sql, SqlValue};
use crate::store::{Store, StoreTx};

use super::{About, AnswerPrompt, CompactionPass, PromptRecord, Range, RecallRecord};

/// The columns of a recorded result's score in parts (see `ScoreParts`).
pub(crate) const PART_COLUMNS: &str = "matched, similarity, time_boost, recency, frequency, importance, tier_boost";

fn json(v: &impl serde::Serialize) -> Result<SqlValue> {
    Ok(SqlValue::Text(serde_json::to_string(v).map_err(|e| Error::invalid(e.to_string()))?))
}

fn real(x: Option<f64>) -> SqlValue {
    x.map_or(SqlValue::Null, SqlValue::Real)
}

/// Appends `(?, ?, …)` holding `values`.
fn values(q: &mut Sql, values: Vec<SqlValue>) {
    q.push("(").bind_list(values).push(")");
}

impl StoreTx<'_> {
    /// Runs a statement of this transaction's engine that returns no rows.
    fn run(&self, q: &Sql) -> Result<u64> {
        self.tx.plain().execute(q)
    }

    fn statement(&self, text: &str) -> Sql {
        Sql::new(self.tx.dialect(), text)
    }

    /// Whether every one of `ids` has a memory (one statement; [`StoreTx::still_live`] says
    /// which does not).
    fn all_live(&self, ids: &[MemoryId]) -> Result<bool> {
        let mut wanted: Vec<String> = ids.iter().map(MemoryId::to_string).collect();
        wanted.sort_unstable();
        wanted.dedup();
        if wanted.is_empty() {
            return Ok(true);
        }
        let mut q = self.statement("SELECT count(*) FROM memories WHERE id IN (");
        q.bind_list(wanted.iter().cloned().map(SqlValue::Text)).push(")");
        let rows = self.tx.plain().rows(&q)?;
        let found = rows.into_iter().next().map(|r| Row::new(r, "memories").int(0)).transpose()?.unwrap_or(0);
        Ok(found == wanted.len() as i64)
    }

    /// Deletes the usage records from before `before` (none: every one of `user`'s, when
    /// `user` is given); returns how many recalls went.
    fn delete_usage(&self, user: Option<&str>, before: Option<DateTime<Utc>>) -> Result<u64> {
        let mut recalls = 0;
        for table in ["feedback", "compaction_passes", "recalls"] {
            let mut q = self.statement(&format!("DELETE FROM {table} WHERE 1 = 1"));
            if let Some(u) = user {
                q.bind(" AND user_id = ?", SqlValue::Text(u.into()));
            }
            if let Some(b) = before {
                q.bind(" AND at < ?", SqlValue::Int(to_ms(b)));
            }
            let n = self.run(&q)?;
            if table == "recalls" {
                recalls = n;
            }
        }
        Ok(recalls)
    }
}

impl Store {
    /// Keeps one recall's usage record (see the module documentation) and, in the same
    /// transaction, lets the records from before `keep_since` go ([`Store::prune_recalls`]);
    /// returns its id.
    pub fn record_recall(&mut self, r: &RecallRecord<'_>, keep_since: Option<DateTime<Utc>>) -> Result<i64> {
        let at = self.clock().now();
        self.record_at(r, at, keep_since)
    }

    /// [`Store::record_recall`] as if it ran at `at`, nothing pruned (benchmarks, imports of
    /// usage history).
    pub fn record_recall_at(&mut self, r: &RecallRecord<'_>, at: DateTime<Utc>) -> Result<i64> {
        self.record_at(r, at, None)
    }

    fn record_at(&mut self, r: &RecallRecord<'_>, at: DateTime<Utc>, keep_since: Option<DateTime<Utc>>) -> Result<i64> {
        let prompt = r.prompt.as_ref().map(json).transpose()?.unwrap_or(SqlValue::Null);
        self.transact(|tx| {
            // A memory found was forgotten since the recall ran: its record would outlive the
            // forget that deletes the records of recalls that found it. Forgetting wins.
            let found: Vec<MemoryId> = r.hits.iter().map(|h| h.memory).collect();
            if !tx.all_live(&found)? {
                tx.still_live(&found)?;
            }
            if let Some(before) = keep_since {
                tx.delete_usage(None, Some(before))?;
            }
            let mut q = tx.statement(
                "INSERT INTO recalls (at, user_id, agent_id, client, purpose, query, found, latency_ms, prompt) VALUES ",
            );
            values(
                &mut q,
                vec![
                    SqlValue::Int(to_ms(at)),
                    SqlValue::Text(r.user_id.into()),
                    SqlValue::opt_text(r.agent_id),
                    SqlValue::opt_text(r.client),
                    SqlValue::Text(r.purpose.as_str().into()),
                    SqlValue::Text(r.query.into()),
                    SqlValue::Int(r.hits.len() as i64),
                    SqlValue::Real(r.latency_ms),
                    prompt,
                ],
            );
            q.push(" RETURNING id");
            let rows = tx.tx.plain().rows(&q)?;
            let id = Row::new(rows.into_iter().next().unwrap_or_default(), "recalls").int(0)?;
            // Every result in one statement: the record is written under the writers' lock,
            // and a round trip per row held it as long again on a server (docs/benchmarks.md).
            if !r.hits.is_empty() {
                let mut q = tx.statement(&format!(
                    "INSERT INTO recall_hits (recall_id, rank, memory_id, score, in_prompt, {PART_COLUMNS}) VALUES "
                ));
                for (rank, h) in r.hits.iter().enumerate() {
                    let p = h.parts.as_ref();
                    q.push(if rank == 0 { "" } else { ", " });
                    values(
                        &mut q,
                        vec![
                            SqlValue::Int(id),
                            SqlValue::Int(rank as i64 + 1),
                            SqlValue::Text(h.memory.to_string()),
                            SqlValue::Real(h.score),
                            SqlValue::Int(h.in_prompt.into()),
                            real(p.map(|p| p.matched)),
                            real(p.and_then(|p| p.similarity)),
                            real(p.map(|p| p.time)),
                            real(p.map(|p| p.recency)),
                            real(p.map(|p| p.frequency)),
                            real(p.map(|p| p.importance)),
                            real(p.map(|p| p.tier)),
                        ],
                    );
                }
                tx.run(&q)?;
            }
            Ok(id)
        })
    }

    /// Records what the answer to the prompt recall `recall` was for drew on: of the memories
    /// the prompt included, `used` ones and no others; and `answer`, the exchange it was
    /// recorded as, if it was.
    pub fn record_answer(&mut self, recall: i64, used: &[MemoryId], answer: Option<MemoryId>) -> Result<()> {
        self.transact(|tx| {
            let mut q = tx.statement("UPDATE recall_hits SET used = 0 WHERE in_prompt = 1 AND ");
            q.bind("recall_id = ?", SqlValue::Int(recall));
            tx.run(&q)?;
            if !used.is_empty() {
                let mut q = tx.statement("UPDATE recall_hits SET used = 1 WHERE in_prompt = 1 AND ");
                q.bind("recall_id = ? AND memory_id IN (", SqlValue::Int(recall))
                    .bind_list(used.iter().map(|id| SqlValue::Text(id.to_string())))
                    .push(")");
                tx.run(&q)?;
            }
            let mut q = tx.statement("UPDATE recalls SET ");
            q.bind("answer_id = ?", SqlValue::opt_text(answer.map(|a| a.to_string())))
                .bind(" WHERE id = ?", SqlValue::Int(recall));
            tx.run(&q)?;
            Ok(())
        })
    }

    /// The prompt the recorded answer `answer` was given, as its usage record kept it: its
    /// figures and the memories it included with their scores, in rank order. `None` where no
    /// record was kept (usage records off, or pruned).
    pub fn prompt_of_answer(&self, answer: MemoryId) -> Result<Option<AnswerPrompt>> {
        let dialect = self.engine.dialect();
        let mut q = Sql::new(dialect, "SELECT id, prompt FROM recalls WHERE ");
        q.bind("answer_id = ? ORDER BY id DESC LIMIT 1", SqlValue::Text(answer.to_string()));
        let Some(row) = self.engine.plain().rows(&q)?.pop() else { return Ok(None) };
        let row = Row::new(row, "recalls");
        let (recall, Some(_)) = (row.int(0)?, row.opt_text(1)?) else { return Ok(None) };
        let prompt: PromptRecord = row.json(1)?;
        let mut q = Sql::new(dialect, "SELECT memory_id, score FROM recall_hits WHERE in_prompt = 1 AND ");
        q.bind("recall_id = ? ORDER BY rank", SqlValue::Int(recall));
        let hits = self
            .engine
            .plain()
            .rows(&q)?
            .into_iter()
            .filter_map(|r| match (r.first(), r.get(1)) {
                (Some(Some(SqlValue::Text(id))), Some(Some(SqlValue::Real(score)))) => {
                    id.parse().ok().map(|id| (id, *score))
                }
                _ => None,
            })
            .collect();
        Ok(Some((prompt, hits)))
    }

    /// Records what `user` said of a memory or a recorded answer (`about`): helpful or not.
    pub fn record_feedback(&mut self, user: &str, memory: MemoryId, about: About, helpful: bool) -> Result<()> {
        let at = to_ms(self.clock().now());
        self.transact(|tx| {
            let mut q = tx.statement("INSERT INTO feedback (at, user_id, memory_id, about, helpful) VALUES ");
            values(
                &mut q,
                vec![
                    SqlValue::Int(at),
                    SqlValue::Text(user.into()),
                    SqlValue::Text(memory.to_string()),
                    SqlValue::Text(about.as_str().into()),
                    SqlValue::Int(helpful.into()),
                ],
            );
            tx.run(&q).map(drop)
        })
    }

    /// Deletes the usage records of recalls before `before`; returns how many.
    /// (And what people said, and the records of compaction passes, before then.)
    pub fn prune_recalls(&mut self, before: DateTime<Utc>) -> Result<u64> {
        self.transact(|tx| tx.delete_usage(None, Some(before)))
    }

    /// Deletes every usage record of `user`'s recalls, what they said of answers and memories,
    /// and the records of compaction passes; returns how many recalls.
    pub fn clear_recalls(&mut self, user: &str) -> Result<u64> {
        self.transact(|tx| tx.delete_usage(Some(user), None))
    }

    /// Records what a compaction pass of `user`'s memories changed.
    pub fn record_compaction(&mut self, user: &str, pass: &CompactionPass) -> Result<()> {
        let at = to_ms(self.clock().now());
        let pass = json(pass)?;
        self.transact(|tx| {
            let mut q = tx.statement("INSERT INTO compaction_passes (at, user_id, pass) VALUES ");
            values(&mut q, vec![SqlValue::Int(at), SqlValue::Text(user.into()), pass]);
            tx.run(&q).map(drop)
        })
    }

    /// `user`'s compaction passes in `range`, latest first (at most `limit`).
    pub fn compaction_passes(&self, user: &str, range: &Range, limit: usize) -> Result<Vec<CompactionPass>> {
        let (since, until) = range.bounds();
        let mut q = Sql::new(self.engine.dialect(), "SELECT at, pass FROM compaction_passes WHERE ");
        q.bind("user_id = ?", SqlValue::Text(user.into()))
            .bind(" AND at >= ?", SqlValue::Int(since))
            .bind(" AND at < ?", SqlValue::Int(until))
            .bind(" ORDER BY at DESC, id DESC LIMIT ?", SqlValue::Int(limit.min(i64::MAX as usize) as i64));
        self.engine
            .plain()
            .rows(&q)?
            .into_iter()
            .map(|r| {
                let row = Row::new(r, "compaction_passes");
                let mut pass: CompactionPass = row.json(1)?;
                pass.at = from_ms(row.int(0)?).to_rfc3339();
                Ok(pass)
            })
            .collect()
    }
}
