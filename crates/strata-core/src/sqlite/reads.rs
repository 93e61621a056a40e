//! [`MemoryReads`] on SQLite.

use super::Db;
use super::rows::{EVENT_COLUMNS, MEMORY_COLUMNS, event_from_row, forgotten_error, memory_from_row};
use crate::clock::from_ms;
use crate::error::{Error, Result};
use crate::event::RecordedEvent;
use crate::model::{Memory, MemoryId, MemoryKind};
use crate::query::{Snapshot, Stats};
use crate::storage::MemoryReads;

impl MemoryReads for Db {
    fn load(&self, id: MemoryId) -> Result<Option<Memory>> {
        super::rows::load(self, id)
    }

    fn gone(&self, id: MemoryId) -> Result<Error> {
        forgotten_error(self, id)
    }

    fn find_by_key(&self, user: &str, agent: Option<&str>, kind: Option<MemoryKind>, key: &str) -> Result<Vec<Memory>> {
        super::rows::find_by_key(self, user, agent, kind, key)
    }

    fn linking_to(&self, id: MemoryId) -> Result<Vec<(MemoryId, String)>> {
        super::rows::linking_to(self, id)
    }

    fn stream_events(&self, id: MemoryId, max_seq: i64) -> Result<Vec<RecordedEvent>> {
        let sql =
            format!("SELECT {EVENT_COLUMNS} FROM events WHERE stream_id = ?1 AND seq <= ?2 ORDER BY stream_version");
        let mut stmt = self.prepare_cached(&sql)?;
        let mut rows = stmt.query(rusqlite::params![id.to_string(), max_seq])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(event_from_row(row)?);
        }
        Ok(out)
    }

    fn events_after(&self, after: i64, limit: usize) -> Result<Vec<RecordedEvent>> {
        let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2");
        let mut stmt = self.prepare_cached(&sql)?;
        let mut rows = stmt.query(rusqlite::params![after, limit as i64])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(event_from_row(row)?);
        }
        Ok(out)
    }

    fn event_count(&self) -> Result<u64> {
        Ok(self.query_row("SELECT count(*) FROM events", [], |r| r.get::<_, i64>(0))? as u64)
    }

    fn snapshot(&self) -> Result<Snapshot> {
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories AS m ORDER BY m.id");
        let mut stmt = self.prepare(&sql)?;
        let memories = stmt.query_map([], memory_from_row)?.collect::<rusqlite::Result<_>>()?;
        let mut stmt = self.prepare(
            "SELECT m.id, f.title, f.body, f.context FROM memory_fts f JOIN memories m ON m.rid = f.rowid ORDER BY m.id",
        )?;
        let fts = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let orphans: i64 =
            self.query_row("SELECT count(*) FROM memory_fts WHERE rowid NOT IN (SELECT rid FROM memories)", [], |r| {
                r.get(0)
            })?;
        if orphans > 0 {
            return Err(Error::Corrupt(format!("{orphans} full-text rows belong to no memory")));
        }
        Ok(Snapshot { memories, fts })
    }

    /// Summary counts.
    fn stats(&self) -> Result<Stats> {
        let c = self;
        let count = |sql: &str| -> Result<u64> { Ok(c.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64) };
        let grouped = |sql: &str| -> Result<Vec<(String, u64)>> {
            let mut stmt = c.prepare(sql)?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        let (first, last): (Option<i64>, Option<i64>) =
            c.query_row("SELECT min(recorded_at), max(recorded_at) FROM events", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(Stats {
            memories: count("SELECT count(*) FROM memories")?,
            by_kind: grouped("SELECT kind, count(*) FROM memories GROUP BY kind ORDER BY kind")?,
            by_tier: grouped("SELECT tier, count(*) FROM memories GROUP BY tier ORDER BY tier")?,
            tags: count("SELECT count(DISTINCT tag) FROM memory_tags")?,
            events: count("SELECT count(*) FROM events")?,
            forgotten: count("SELECT count(*) FROM events WHERE event_type = 'forgotten'")?,
            first_event_at: first.map(from_ms),
            last_event_at: last.map(from_ms),
            db_bytes: count(
                "SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count())",
            )? * count("SELECT page_size FROM pragma_page_size()")?,
        })
    }
}
