//! SQLite's side of `crate::analytics`: its statements and row decoding.

use crate::clock::to_ms;
use crate::concepts::KEY_PREFIX;
use crate::error::Result;
use crate::model::{Importance, MemoryId};
use crate::store::Store;
use chrono::{DateTime, Utc};
use rusqlite::params;

use super::recalls::NEVER_RECALLED;
use super::*;
use crate::analytics::health::*;

impl Store {
    /// `user`'s stale memories: live, not pinned, not a concept, not marked important
    /// (importance at most the default), created before `before`, never retrieved and in no
    /// usage record of a recall — the oldest first. Returns how many there are and the first
    /// `limit`.
    pub fn stale(&self, user: &str, before: DateTime<Utc>, limit: usize) -> Result<(u64, Vec<MemoryId>)> {
        let cond = format!(
            "m.user_id = ?1 AND m.created_at < ?2 AND m.pinned = 0 AND m.access_count = 0 AND m.importance <= ?3 \
             AND NOT (m.kind = 'semantic' AND m.key LIKE '{KEY_PREFIX}%') AND {NEVER_RECALLED}"
        );
        let (before, important) = (to_ms(before), Importance::DEFAULT.get());
        let n = self.sqlite()?.query_row(
            &format!("SELECT count(*) FROM memories m WHERE {cond}"),
            params![user, before, important],
            |r| r.get::<_, i64>(0),
        )?;
        let sql = format!("SELECT m.id FROM memories m WHERE {cond} ORDER BY m.created_at, m.id LIMIT ?4");
        Ok((n as u64, self.ids(&sql, params![user, before, important, limit as i64])?))
    }

    /// `user`'s live memories without a vector from `model`.
    pub fn unembedded(&self, user: &str, model: &str, limit: usize) -> Result<(u64, Vec<MemoryId>)> {
        let cond = "m.user_id = ?1 AND m.expired_at IS NULL AND NOT EXISTS \
                    (SELECT 1 FROM memory_vectors v WHERE v.memory_id = m.id AND v.model = ?2)";
        let n = self.sqlite()?.query_row(
            &format!("SELECT count(*) FROM memories m WHERE {cond}"),
            params![user, model],
            |r| r.get::<_, i64>(0),
        )?;
        let sql = format!("SELECT m.id FROM memories m WHERE {cond} ORDER BY m.created_at, m.id LIMIT ?3");
        Ok((n as u64, self.ids(&sql, params![user, model, limit as i64])?))
    }

    /// The space each table takes on disk (its indexes, and an FTS or vector index's shadow
    /// tables, counted with it), the largest first. Every person's rows are counted: the file
    /// is shared.
    pub fn table_sizes(&self) -> Result<Vec<TableSize>> {
        let mut stmt = self.sqlite()?.prepare(
            "SELECT coalesce(t.tbl_name, d.name), sum(d.pgsize) FROM dbstat d \
             LEFT JOIN sqlite_schema t ON t.name = d.name GROUP BY 1",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))?;
        let mut by_table: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
        for row in rows {
            let (name, bytes) = row?;
            *by_table.entry(owner_table(&name)).or_default() += bytes;
        }
        let mut out: Vec<TableSize> = by_table.into_iter().map(|(table, bytes)| TableSize { table, bytes }).collect();
        out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.table.cmp(&b.table)));
        Ok(out)
    }

    /// The database file's size in bytes (its pages).
    pub fn file_bytes(&self) -> Result<u64> {
        Ok(self.sqlite()?.query_row(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            [],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    /// Bytes of free pages in the file: what a vacuum would give back.
    pub fn free_bytes(&self) -> Result<u64> {
        Ok(self.sqlite()?.query_row(
            "SELECT freelist_count * page_size FROM pragma_freelist_count(), pragma_page_size()",
            [],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    /// Rewrites the file without the space deleted rows left (SQLite's `VACUUM`).
    pub fn vacuum(&mut self) -> Result<Vacuumed> {
        let before = self.file_bytes()?;
        self.sqlite()?.execute_batch("VACUUM")?;
        Ok(Vacuumed { before, after: self.file_bytes()? })
    }
}
