//! SQLite's side of `crate::curation`: its statements and row decoding.

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::model::MemoryId;
use crate::store::Store;
use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, params};

use crate::curation::*;

const COLUMNS: &str = "memory_id, status, score, reasons, changed_at, flagged_at, decided_at, decided_by, note";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Candidate> {
    let bad = |i: usize, e: String| rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into());
    let id: String = r.get(0)?;
    let status: String = r.get(1)?;
    let reasons: String = r.get(3)?;
    Ok(Candidate {
        memory_id: id.parse().map_err(|e: Error| bad(0, e.to_string()))?,
        status: status.parse().map_err(|e: Error| bad(1, e.to_string()))?,
        score: r.get(2)?,
        reasons: serde_json::from_str(&reasons).map_err(|e| bad(3, e.to_string()))?,
        changed_at: from_ms(r.get(4)?),
        flagged_at: from_ms(r.get(5)?),
        decided_at: r.get::<_, Option<i64>>(6)?.map(from_ms),
        decided_by: r.get(7)?,
        note: r.get(8)?,
    })
}

fn event(
    c: &rusqlite::Connection,
    user: &str,
    id: &str,
    at: DateTime<Utc>,
    kind: &str,
    by: &str,
    detail: serde_json::Value,
) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO training_candidate_events (memory_id, user_id, at, kind, by, detail) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![id, user, to_ms(at), kind, by, detail.to_string()])?;
    Ok(())
}

impl Store {
    /// The facts of `user` that a person accepted from extraction's proposals: each fact's id
    /// with who accepted it and when (the latest acceptance).
    pub fn accepted_facts(&self, user: &str) -> Result<std::collections::HashMap<MemoryId, (String, DateTime<Utc>)>> {
        let mut stmt = self.sqlite()?.prepare_cached(
            "SELECT target_id, decided_by, max(decided_at) FROM extraction_decisions \
             WHERE user_id = ?1 AND status = 'applied' AND target_id IS NOT NULL \
             AND decided_by IS NOT NULL AND decided_by != 'automatic' GROUP BY target_id",
        )?;
        let rows =
            stmt.query_map([user], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?)))?;
        let mut out = std::collections::HashMap::new();
        for r in rows {
            let (id, by, at) = r?;
            if let Ok(id) = id.parse() {
                out.insert(id, (by, from_ms(at)));
            }
        }
        Ok(out)
    }

    /// The example edits of `user`, by memory.
    pub fn example_edits(&self, user: &str) -> Result<std::collections::HashMap<MemoryId, ExampleEdit>> {
        let mut stmt = self.sqlite()?.prepare_cached(
            "SELECT memory_id, changed_at, examples, edited_at, edited_by FROM training_edits WHERE user_id = ?1",
        )?;
        let rows = stmt.query_map([user], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(3)?, r.get(4)?))
        })?;
        let mut out = std::collections::HashMap::new();
        for r in rows {
            let (id, changed, examples, edited, by) = r?;
            let (Ok(id), Ok(examples)) = (id.parse(), serde_json::from_str(&examples)) else { continue };
            out.insert(
                id,
                ExampleEdit { changed_at: from_ms(changed), examples, edited_at: from_ms(edited), edited_by: by },
            );
        }
        Ok(out)
    }

    /// Keeps a person's edit of a memory's examples (replacing any before), or with `None`
    /// drops it (back to the generated examples).
    pub fn set_example_edit(
        &mut self,
        user: &str,
        id: MemoryId,
        edit: Option<(DateTime<Utc>, &serde_json::Value)>,
        by: &str,
    ) -> Result<()> {
        match edit {
            Some((changed_at, examples)) => self.sqlite()?.execute(
                "INSERT INTO training_edits (memory_id, user_id, changed_at, examples, edited_at, edited_by) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (memory_id) DO UPDATE SET changed_at = ?3, \
                 examples = ?4, edited_at = ?5, edited_by = ?6",
                params![id.to_string(), user, to_ms(changed_at), examples.to_string(), to_ms(self.clock().now()), by],
            )?,
            None => self.sqlite()?.execute(
                "DELETE FROM training_edits WHERE user_id = ?1 AND memory_id = ?2",
                params![user, id.to_string()],
            )?,
        };
        Ok(())
    }

    /// The candidates of `user`, those with `status` or all, the highest score first.
    pub fn candidates(&self, user: &str, status: Option<CandidateStatus>) -> Result<Vec<Candidate>> {
        let mut stmt = self.sqlite()?.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM training_candidates WHERE user_id = ?1 AND (?2 IS NULL OR status = ?2) \
             ORDER BY score DESC, memory_id"
        ))?;
        let rows = stmt.query_map(params![user, status.map(|s| s.as_str())], row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// One memory's candidate row, if it has one.
    pub fn candidate(&self, user: &str, id: MemoryId) -> Result<Option<Candidate>> {
        Ok(self
            .sqlite()?
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM training_candidates WHERE user_id = ?1 AND memory_id = ?2"
            ))?
            .query_row(params![user, id.to_string()], row)
            .optional()?)
    }

    /// A memory's curation history, oldest first.
    pub fn candidate_history(&self, user: &str, id: MemoryId) -> Result<Vec<CandidateEvent>> {
        let mut stmt = self.sqlite()?.prepare_cached(
            "SELECT seq, memory_id, at, kind, by, detail FROM training_candidate_events \
             WHERE user_id = ?1 AND memory_id = ?2 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![user, id.to_string()], |r| {
            let detail: String = r.get(5)?;
            Ok(CandidateEvent {
                seq: r.get(0)?,
                memory_id: id,
                at: from_ms(r.get(2)?),
                kind: r.get(3)?,
                by: r.get(4)?,
                detail: serde_json::from_str(&detail).unwrap_or_default(),
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Writes one flagging pass for `user` in one transaction: every memory in `qualifying`
    /// joins the queue or stays in it (a rejected one stays rejected unless its memory changed
    /// since, when it is reopened; an approved one whose memory changed goes back to the
    /// queue), and every flagged or approved candidate named in `leaving` (with why) leaves it.
    pub fn record_flagging(
        &mut self,
        user: &str,
        qualifying: &[Qualifying],
        leaving: &[(MemoryId, String)],
    ) -> Result<FlagCounts> {
        let now = self.clock().now();
        let tx = self.sqlite()?.unchecked_transaction()?;
        let mut counts = FlagCounts::default();
        for q in qualifying {
            // Forgotten since the pass read it: forgetting wins, the memory is not flagged.
            if crate::sqlite::rows::load(&tx, q.memory_id)?.is_none() {
                continue;
            }
            let id = q.memory_id.to_string();
            let before = self.candidate(user, q.memory_id)?;
            let detail = serde_json::json!({ "score": q.score, "reasons": q.reasons });
            let reopen = match &before {
                None => {
                    counts.flagged += 1;
                    event(&tx, user, &id, now, "flagged", FLAGGING, detail)?;
                    true
                }
                Some(c) if c.changed_at == q.changed_at => {
                    counts.kept += 1;
                    false
                }
                Some(c) if c.status == CandidateStatus::Flagged => {
                    counts.kept += 1;
                    event(&tx, user, &id, now, "flagged", FLAGGING, detail)?;
                    false
                }
                Some(c) => {
                    counts.reopened += 1;
                    let why = format!("the memory changed after it was {}", c.status.as_str());
                    event(&tx, user, &id, now, "reopened", FLAGGING, serde_json::json!({ "reason": why }))?;
                    true
                }
            };
            tx.prepare_cached(
                "INSERT INTO training_candidates (memory_id, user_id, status, score, reasons, changed_at, flagged_at) \
                 VALUES (?1, ?2, 'flagged', ?3, ?4, ?5, ?6) \
                 ON CONFLICT (memory_id) DO UPDATE SET score = ?3, reasons = ?4, changed_at = ?5, flagged_at = ?6, \
                 status = CASE WHEN ?7 THEN 'flagged' ELSE status END, \
                 decided_at = CASE WHEN ?7 THEN NULL ELSE decided_at END, \
                 decided_by = CASE WHEN ?7 THEN NULL ELSE decided_by END, \
                 note = CASE WHEN ?7 THEN NULL ELSE note END",
            )?
            .execute(params![
                id,
                user,
                q.score,
                serde_json::to_string(&q.reasons).unwrap_or_default(),
                to_ms(q.changed_at),
                to_ms(now),
                reopen
            ])?;
        }
        for (id, why) in leaving {
            let gone = tx
                .prepare_cached(
                    "DELETE FROM training_candidates WHERE user_id = ?1 AND memory_id = ?2 AND status != 'rejected'",
                )?
                .execute(params![user, id.to_string()])?;
            if gone > 0 {
                counts.withdrawn += 1;
                event(&tx, user, &id.to_string(), now, "withdrawn", FLAGGING, serde_json::json!({ "reason": why }))?;
            }
        }
        tx.commit()?;
        Ok(counts)
    }

    /// A person's decision on candidates of `user`, all or none: each becomes `status`
    /// (approved, rejected, or flagged again to take a decision back) with who, when and their
    /// note. A memory that is not a candidate, or changed since it was flagged (each comes
    /// with when it last changed), is refused: the person decides on what they saw.
    pub fn decide_candidates(
        &mut self,
        user: &str,
        decisions: &[(MemoryId, DateTime<Utc>)],
        status: CandidateStatus,
        by: &str,
        note: Option<&str>,
    ) -> Result<Vec<Candidate>> {
        let now = self.clock().now();
        let tx = self.sqlite()?.unchecked_transaction()?;
        let mut out = Vec::new();
        for &(id, changed_at) in decisions {
            let c = self.candidate(user, id)?.ok_or_else(|| {
                Error::invalid(format!("memory {id} is not a training candidate (flag candidates first)"))
            })?;
            if c.changed_at != changed_at {
                return Err(Error::invalid(format!(
                    "memory {id} changed after it was flagged; flag candidates again before deciding on it"
                )));
            }
            if c.status == status {
                out.push(c);
                continue;
            }
            let kind = match status {
                CandidateStatus::Flagged => "reopened",
                other => other.as_str(),
            };
            let (at, who) = match status {
                CandidateStatus::Flagged => (None, None),
                _ => (Some(to_ms(now)), Some(by)),
            };
            tx.prepare_cached(
                "UPDATE training_candidates SET status = ?3, decided_at = ?4, decided_by = ?5, note = ?6 \
                 WHERE user_id = ?1 AND memory_id = ?2",
            )?
            .execute(params![user, id.to_string(), status.as_str(), at, who, note])?;
            event(&tx, user, &id.to_string(), now, kind, by, serde_json::json!({ "note": note }))?;
            out.push(self.candidate(user, id)?.expect("the row was just updated"));
        }
        tx.commit()?;
        Ok(out)
    }
}
