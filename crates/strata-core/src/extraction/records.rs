//! Extraction's records on either engine (SQLite's 0004/0009, PostgreSQL's 0005): which
//! episodes it has read, and each decision it made. Written once over
//! [`crate::storage::PlainSql`]; the write path's reads and writes run inside its transaction.

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::model::{Memory, MemoryId, Scope};
use crate::sql::{Dialect, Row, Sql, SqlValue};
use crate::storage::PlainSql;
use crate::store::{Store, StoreTx};

use super::{ABOUT, Decision, DecisionDetail, DecisionStatus};

const COLUMNS: &str = "id, run_id, user_id, agent_id, session_id, made_at, model, action, subject, target_id, \
                       detail, sources, status, decided_at, decided_by";

fn decision_of(values: Vec<Option<SqlValue>>) -> Result<Decision> {
    let row = Row::new(values, "extraction_decisions");
    Ok(Decision {
        id: row.text(0)?,
        run_id: row.text(1)?,
        scope: Scope { user_id: row.text(2)?, agent_id: row.opt_text(3)?, session_id: row.opt_text(4)? },
        made_at: from_ms(row.int(5)?),
        model: row.text(6)?,
        action: row.parsed(7)?,
        subject: row.text(8)?,
        target: row.opt_text(9)?.map(|t| t.parse()).transpose()?,
        detail: row.json(10)?,
        sources: row.json(11)?,
        status: row.parsed(12)?,
        decided_at: row.opt_int(13)?.map(from_ms),
        decided_by: row.opt_text(14)?,
    })
}

/// The decisions matching `q` (a statement that starts with [`select`]).
fn decisions(sql: &dyn PlainSql, q: &Sql) -> Result<Vec<Decision>> {
    sql.rows(q)?.into_iter().map(decision_of).collect()
}

fn select(dialect: Dialect) -> Sql {
    Sql::new(dialect, format!("SELECT {COLUMNS} FROM extraction_decisions WHERE "))
}

fn one(sql: &dyn PlainSql, dialect: Dialect, id: &str) -> Result<Decision> {
    let mut q = select(dialect);
    q.bind("id = ?", SqlValue::Text(id.into()));
    decisions(sql, &q)?.pop().ok_or_else(|| Error::NotFound(format!("decision {id}")))
}

fn unread(sql: &dyn PlainSql, dialect: Dialect, episodes: &[MemoryId]) -> Result<Vec<MemoryId>> {
    let mut out = Vec::new();
    for id in episodes {
        let mut q = Sql::new(dialect, "SELECT 1 FROM extraction_reads WHERE ");
        q.bind("episode_id = ?", SqlValue::Text(id.to_string()));
        if sql.rows(&q)?.is_empty() {
            out.push(*id);
        }
    }
    Ok(out)
}

fn json(v: &impl serde::Serialize) -> Result<SqlValue> {
    Ok(SqlValue::Text(serde_json::to_string(v).map_err(|e| Error::invalid(e.to_string()))?))
}

impl Store {
    /// The decisions about `user_id`'s memories with `status` (all when `None`), oldest first,
    /// at most `limit`.
    pub fn decisions(&self, user_id: &str, status: Option<DecisionStatus>, limit: usize) -> Result<Vec<Decision>> {
        let mut q = select(self.engine.dialect());
        q.bind("user_id = ?", SqlValue::Text(user_id.into()));
        if let Some(s) = status {
            q.bind(" AND status = ?", SqlValue::Text(s.as_str().into()));
        }
        q.bind(" ORDER BY made_at, id LIMIT ?", SqlValue::Int(limit.min(i64::MAX as usize) as i64));
        decisions(self.engine.plain(), &q)
    }

    /// One decision; an unknown id is an error that says so.
    pub fn decision(&self, id: &str) -> Result<Decision> {
        one(self.engine.plain(), self.engine.dialect(), id)
    }

    /// The live subject documents of `user_id` (memories some fact links [`ABOUT`]), found
    /// through the link index rather than by reading every concept.
    pub fn subject_documents(&self, user_id: &str) -> Result<Vec<Memory>> {
        let mut q = Sql::new(
            self.engine.dialect(),
            "SELECT DISTINCT l.target_id FROM memory_links l JOIN memories m ON m.id = l.target_id WHERE ",
        );
        q.bind("l.relation = ?", SqlValue::Text(ABOUT.into()))
            .bind(" AND m.user_id = ? AND m.expired_at IS NULL ORDER BY l.target_id", SqlValue::Text(user_id.into()));
        let rows = self.engine.plain().rows(&q)?;
        rows.into_iter().map(|r| self.get(Row::new(r, "memory_links").parsed(0)?)).collect()
    }

    /// Of `episodes`, those extraction has not read yet, in the order given.
    pub fn unread_episodes(&self, episodes: &[MemoryId]) -> Result<Vec<MemoryId>> {
        unread(self.engine.plain(), self.engine.dialect(), episodes)
    }

    /// Why extraction read `episode` only in part or not at all (none: read whole, or unread).
    pub fn skipped_reason(&self, episode: MemoryId) -> Result<Option<String>> {
        let mut q = Sql::new(self.engine.dialect(), "SELECT skipped FROM extraction_reads WHERE ");
        q.bind("episode_id = ?", SqlValue::Text(episode.to_string()));
        match self.engine.plain().rows(&q)?.pop() {
            Some(r) => Row::new(r, "extraction_reads").opt_text(0),
            None => Ok(None),
        }
    }
}

impl StoreTx<'_> {
    /// Records a decision (proposed or applied).
    pub fn record_decision(&mut self, d: &Decision) -> Result<()> {
        let mut q = Sql::new(self.tx.dialect(), format!("INSERT INTO extraction_decisions ({COLUMNS}) VALUES ("));
        let values = [
            SqlValue::Text(d.id.clone()),
            SqlValue::Text(d.run_id.clone()),
            SqlValue::Text(d.scope.user_id.clone()),
            SqlValue::opt_text(d.scope.agent_id.clone()),
            SqlValue::opt_text(d.scope.session_id.clone()),
            SqlValue::Int(to_ms(d.made_at)),
            SqlValue::Text(d.model.clone()),
            SqlValue::Text(d.action.as_str().into()),
            SqlValue::Text(d.subject.clone()),
            SqlValue::opt_text(d.target.map(|t| t.to_string())),
            json(&d.detail)?,
            json(&d.sources)?,
            SqlValue::Text(d.status.as_str().into()),
            SqlValue::opt_int(d.decided_at.map(to_ms)),
            SqlValue::opt_text(d.decided_by.clone()),
        ];
        q.bind_list(values).push(")");
        self.tx.plain().execute(&q)?;
        Ok(())
    }

    /// [`Store::unread_episodes`] inside this transaction.
    pub fn unread_episodes(&self, episodes: &[MemoryId]) -> Result<Vec<MemoryId>> {
        unread(self.tx.plain(), self.tx.dialect(), episodes)
    }

    /// [`Store::decision`] inside this transaction.
    pub fn decision(&self, id: &str) -> Result<Decision> {
        one(self.tx.plain(), self.tx.dialect(), id)
    }

    /// Settles a proposed decision: applied (with the fact it changed, and the detail as a
    /// person edited it) or rejected. A decision that is no longer proposed is refused.
    pub fn settle_decision(
        &mut self,
        id: &str,
        status: DecisionStatus,
        target: Option<MemoryId>,
        detail: &DecisionDetail,
        by: &str,
    ) -> Result<()> {
        let mut q = Sql::new(self.tx.dialect(), "UPDATE extraction_decisions SET ");
        q.bind("status = ?", SqlValue::Text(status.as_str().into()))
            .bind(", target_id = coalesce(?, target_id)", SqlValue::opt_text(target.map(|t| t.to_string())))
            .bind(", detail = ?", json(detail)?)
            .bind(", decided_at = ?", SqlValue::Int(to_ms(self.now())))
            .bind(", decided_by = ?", SqlValue::Text(by.into()))
            .bind(" WHERE id = ? AND status = 'proposed'", SqlValue::Text(id.into()));
        if self.tx.plain().execute(&q)? == 0 {
            let d = self.decision(id)?;
            return Err(Error::invalid(format!("decision {id} was already {}", d.status)));
        }
        Ok(())
    }

    /// Records that extraction has read `episodes` in run `run_id`.
    pub fn mark_read(&mut self, episodes: &[MemoryId], run_id: &str) -> Result<()> {
        self.mark_read_with(episodes, run_id, &[])
    }

    /// [`StoreTx::mark_read`], with the reason an episode was read only in part or skipped
    /// (`skipped`: episode and reason, in words).
    pub fn mark_read_with(
        &mut self,
        episodes: &[MemoryId],
        run_id: &str,
        skipped: &[(MemoryId, String)],
    ) -> Result<()> {
        let now = to_ms(self.now());
        for id in episodes {
            let reason = skipped.iter().find(|(e, _)| e == id).map(|(_, r)| r.clone());
            let mut q = Sql::new(
                self.tx.dialect(),
                "INSERT INTO extraction_reads (episode_id, run_id, read_at, skipped) VALUES (",
            );
            q.bind("?", SqlValue::Text(id.to_string()))
                .bind(", ?", SqlValue::Text(run_id.into()))
                .bind(", ?", SqlValue::Int(now))
                .bind(", ?) ON CONFLICT (episode_id) DO NOTHING", SqlValue::opt_text(reason));
            self.tx.plain().execute(&q)?;
        }
        Ok(())
    }
}
