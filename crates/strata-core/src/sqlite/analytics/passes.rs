//! SQLite's side of `crate::analytics`: its statements and row decoding.

use crate::clock::{from_ms, to_ms};
use crate::error::{Error, Result};
use crate::store::Store;
use chrono::{DateTime, Utc};
use rusqlite::params;

use super::*;

impl Store {
    /// Records what a compaction pass of `user`'s memories changed.
    pub fn record_compaction(&mut self, user: &str, pass: &CompactionPass) -> Result<()> {
        let at = to_ms(self.clock().now());
        let json = serde_json::to_string(pass).map_err(|e| Error::invalid(e.to_string()))?;
        self.transact(|tx| {
            tx.conn()?.execute(
                "INSERT INTO compaction_passes (at, user_id, pass) VALUES (?1, ?2, ?3)",
                params![at, user, json],
            )?;
            Ok(())
        })
    }

    /// `user`'s compaction passes in `range`, latest first (at most `limit`).
    pub fn compaction_passes(&self, user: &str, range: &Range, limit: usize) -> Result<Vec<CompactionPass>> {
        let (since, until) = range.bounds();
        let mut stmt = self.sqlite()?.prepare_cached(
            "SELECT at, pass FROM compaction_passes WHERE user_id = ?1 AND at >= ?2 AND at < ?3 \
             ORDER BY at DESC, id DESC LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![user, since, until, limit as i64], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })?;
        rows.map(|row| {
            let (at, json) = row?;
            let mut pass: CompactionPass =
                serde_json::from_str(&json).map_err(|e| Error::Corrupt(format!("a compaction record: {e}")))?;
            pass.at = from_ms(at).to_rfc3339();
            Ok(pass)
        })
        .collect()
    }
}

/// Deletes the compaction records before `before` (none: all of `user`'s), inside a pruning
/// or clearing transaction.
pub(crate) fn delete_passes(c: &rusqlite::Connection, user: Option<&str>, before: Option<DateTime<Utc>>) -> Result<()> {
    c.prepare_cached("DELETE FROM compaction_passes WHERE (?1 IS NULL OR user_id = ?1) AND (?2 IS NULL OR at < ?2)")?
        .execute(params![user, before.map(to_ms)])?;
    Ok(())
}
