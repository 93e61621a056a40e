//! SQLite's side of `crate::extraction`: its statements and row decoding.

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::model::{MemoryId, Scope};
use crate::store::{Store, StoreTx};
use rusqlite::{OptionalExtension, params};

use crate::extraction::*;

const COLUMNS: &str = "id, run_id, user_id, agent_id, session_id, made_at, model, action, subject, target_id, \
                       detail, sources, status, decided_at, decided_by";

fn bad(col: usize, e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(col, rusqlite::types::Type::Text, e.to_string().into())
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Decision> {
    let target: Option<String> = r.get(9)?;
    let sources: Vec<MemoryId> = serde_json::from_str(&r.get::<_, String>(11)?).map_err(|e| bad(11, e))?;
    Ok(Decision {
        id: r.get(0)?,
        run_id: r.get(1)?,
        scope: Scope { user_id: r.get(2)?, agent_id: r.get(3)?, session_id: r.get(4)? },
        made_at: from_ms(r.get(5)?),
        model: r.get(6)?,
        action: r.get::<_, String>(7)?.parse().map_err(|e| bad(7, e))?,
        subject: r.get(8)?,
        target: target.map(|t| t.parse().map_err(|e| bad(9, e))).transpose()?,
        detail: serde_json::from_str(&r.get::<_, String>(10)?).map_err(|e| bad(10, e))?,
        sources,
        status: r.get::<_, String>(12)?.parse().map_err(|e| bad(12, e))?,
        decided_at: r.get::<_, Option<i64>>(13)?.map(from_ms),
        decided_by: r.get(14)?,
    })
}

fn decisions_where(conn: &rusqlite::Connection, clause: &str, args: &[&dyn rusqlite::ToSql]) -> Result<Vec<Decision>> {
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM extraction_decisions WHERE {clause}"))?;
    Ok(stmt.query_map(args, row)?.collect::<rusqlite::Result<_>>()?)
}

fn unread(conn: &rusqlite::Connection, episodes: &[MemoryId]) -> Result<Vec<MemoryId>> {
    let mut stmt = conn.prepare_cached("SELECT 1 FROM extraction_reads WHERE episode_id = ?1")?;
    let mut out = Vec::new();
    for id in episodes {
        if stmt.query_row([id.to_string()], |_| Ok(())).optional()?.is_none() {
            out.push(*id);
        }
    }
    Ok(out)
}

impl Store {
    /// The decisions about `user_id`'s memories with `status` (all when `None`), oldest first,
    /// at most `limit`.
    pub fn decisions(&self, user_id: &str, status: Option<DecisionStatus>, limit: usize) -> Result<Vec<Decision>> {
        let status = status.map(|s| s.as_str().to_string());
        decisions_where(
            self.sqlite()?,
            "user_id = ?1 AND (?2 IS NULL OR status = ?2) ORDER BY made_at, rowid LIMIT ?3",
            &[&user_id, &status, &(limit.min(i64::MAX as usize) as i64)],
        )
    }

    /// One decision; an unknown id is an error that says so.
    pub fn decision(&self, id: &str) -> Result<Decision> {
        decisions_where(self.sqlite()?, "id = ?1", &[&id])?
            .pop()
            .ok_or_else(|| Error::NotFound(format!("decision {id}")))
    }

    /// The live subject documents of `user_id` (memories some fact links [`ABOUT`]), found
    /// through the link index rather than by reading every concept.
    pub fn subject_documents(&self, user_id: &str) -> Result<Vec<crate::model::Memory>> {
        let ids: Vec<String> = self
            .sqlite()?
            .prepare_cached(
                "SELECT DISTINCT l.target_id FROM memory_links l JOIN memories m ON m.id = l.target_id \
                 WHERE l.relation = ?1 AND m.user_id = ?2 AND m.expired_at IS NULL",
            )?
            .query_map(params![ABOUT, user_id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        ids.iter().map(|id| self.get(id.parse()?)).collect()
    }

    /// Of `episodes`, those extraction has not read yet, in the order given.
    pub fn unread_episodes(&self, episodes: &[MemoryId]) -> Result<Vec<MemoryId>> {
        unread(self.sqlite()?, episodes)
    }

    /// Why extraction read `episode` only in part or not at all (none: read whole, or unread).
    pub fn skipped_reason(&self, episode: MemoryId) -> Result<Option<String>> {
        let reason: Option<Option<String>> = self
            .sqlite()?
            .prepare_cached("SELECT skipped FROM extraction_reads WHERE episode_id = ?1")?
            .query_row([episode.to_string()], |r| r.get(0))
            .optional()?;
        Ok(reason.flatten())
    }
}

impl StoreTx<'_> {
    /// Records a decision (proposed or applied).
    pub fn record_decision(&mut self, d: &Decision) -> Result<()> {
        let detail = serde_json::to_string(&d.detail).map_err(|e| Error::invalid(e.to_string()))?;
        let sources = serde_json::to_string(&d.sources).map_err(|e| Error::invalid(e.to_string()))?;
        self.conn()?.execute(
            &format!("INSERT INTO extraction_decisions ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"),
            params![
                d.id,
                d.run_id,
                d.scope.user_id,
                d.scope.agent_id,
                d.scope.session_id,
                to_ms(d.made_at),
                d.model,
                d.action.as_str(),
                d.subject,
                d.target.map(|t| t.to_string()),
                detail,
                sources,
                d.status.as_str(),
                d.decided_at.map(to_ms),
                d.decided_by,
            ],
        )?;
        Ok(())
    }

    /// [`Store::unread_episodes`] inside this transaction.
    pub fn unread_episodes(&self, episodes: &[MemoryId]) -> Result<Vec<MemoryId>> {
        unread(self.conn()?, episodes)
    }

    /// [`Store::decision`] inside this transaction.
    pub fn decision(&self, id: &str) -> Result<Decision> {
        decisions_where(self.conn()?, "id = ?1", &[&id])?.pop().ok_or_else(|| Error::NotFound(format!("decision {id}")))
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
        let detail = serde_json::to_string(detail).map_err(|e| Error::invalid(e.to_string()))?;
        let n = self.conn()?.execute(
            "UPDATE extraction_decisions SET status = ?2, target_id = coalesce(?3, target_id), detail = ?4, \
             decided_at = ?5, decided_by = ?6 WHERE id = ?1 AND status = 'proposed'",
            params![id, status.as_str(), target.map(|t| t.to_string()), detail, to_ms(self.now()), by],
        )?;
        if n == 0 {
            let d = self.decision(id)?;
            return Err(Error::invalid(format!("decision {id} was already {}", d.status)));
        }
        Ok(())
    }

    /// Records that extraction has read `episodes` in run `run_id`.
    pub fn mark_read(&mut self, episodes: &[MemoryId], run_id: &str) -> Result<()> {
        let none: &[(MemoryId, String)] = &[];
        self.mark_read_with(episodes, run_id, none)
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
        let mut stmt = self.conn()?.prepare_cached(
            "INSERT OR IGNORE INTO extraction_reads (episode_id, run_id, read_at, skipped) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for id in episodes {
            let reason = skipped.iter().find(|(e, _)| e == id).map(|(_, r)| r.as_str());
            stmt.execute(params![id.to_string(), run_id, now, reason])?;
        }
        Ok(())
    }
}
