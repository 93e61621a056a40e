//! [`MemoryReads`] on PostgreSQL.

use super::Pg;
use super::rows::{self, MEMORY_COLUMNS, memories};
use crate::clock::from_ms;
use crate::error::{Error, Result};
use crate::event::RecordedEvent;
use crate::model::{Memory, MemoryId, MemoryKind};
use crate::query::{Snapshot, Stats};
use crate::storage::{EVENT_COLUMNS, MemoryReads};

impl MemoryReads for Pg {
    fn load(&self, id: MemoryId) -> Result<Option<Memory>> {
        rows::load(self, id)
    }

    fn gone(&self, id: MemoryId) -> Result<Error> {
        rows::forgotten_error(self, id)
    }

    fn find_by_key(&self, user: &str, agent: Option<&str>, kind: Option<MemoryKind>, key: &str) -> Result<Vec<Memory>> {
        rows::find_by_key(self, user, agent, kind, key)
    }

    fn linking_to(&self, id: MemoryId) -> Result<Vec<(MemoryId, String)>> {
        rows::linking_to(self, id)
    }

    fn stream_events(&self, id: MemoryId, max_seq: i64) -> Result<Vec<RecordedEvent>> {
        let sql =
            format!("SELECT {EVENT_COLUMNS} FROM events WHERE stream_id = $1 AND seq <= $2 ORDER BY stream_version");
        rows::events(self, &sql, &[&id.to_string(), &max_seq])
    }

    fn events_after(&self, after: i64, limit: usize) -> Result<Vec<RecordedEvent>> {
        let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE seq > $1 ORDER BY seq LIMIT $2");
        rows::events(self, &sql, &[&after, &(limit as i64)])
    }

    fn event_count(&self) -> Result<u64> {
        let row = self.client().query_one("SELECT count(*) FROM events", &[])?;
        Ok(row.try_get::<_, i64>(0)? as u64)
    }

    /// The searchable text stands in the full-text column as PostgreSQL keeps it (the
    /// `tsvector`'s words, weights and positions), with no separate body or context.
    fn snapshot(&self) -> Result<Snapshot> {
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories AS m ORDER BY m.id");
        let memories = memories(self, &sql, &[])?;
        let fts = self
            .client()
            .query("SELECT id, search::text FROM memories ORDER BY id", &[])?
            .iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, String::new(), String::new())))
            .collect::<Result<_>>()?;
        Ok(Snapshot { memories, fts })
    }

    fn stats(&self) -> Result<Stats> {
        let mut c = self.client();
        let mut count = |sql: &str| -> Result<u64> { Ok(c.query_one(sql, &[])?.try_get::<_, i64>(0)? as u64) };
        let memories = count("SELECT count(*) FROM memories")?;
        let tags = count("SELECT count(DISTINCT tag) FROM memory_tags")?;
        let events = count("SELECT count(*) FROM events")?;
        let forgotten = count("SELECT count(*) FROM events WHERE event_type = 'forgotten'")?;
        let db_bytes = count("SELECT pg_database_size(current_database())")?;
        let mut grouped = |sql: &str| -> Result<Vec<(String, u64)>> {
            c.query(sql, &[])?.iter().map(|r| Ok((r.try_get(0)?, r.try_get::<_, i64>(1)? as u64))).collect()
        };
        let by_kind = grouped("SELECT kind, count(*) FROM memories GROUP BY kind ORDER BY kind")?;
        let by_tier = grouped("SELECT tier, count(*) FROM memories GROUP BY tier ORDER BY tier")?;
        let span = c.query_one("SELECT min(recorded_at), max(recorded_at) FROM events", &[])?;
        let (first, last): (Option<i64>, Option<i64>) = (span.try_get(0)?, span.try_get(1)?);
        Ok(Stats {
            memories,
            by_kind,
            by_tier,
            tags,
            events,
            forgotten,
            first_event_at: first.map(from_ms),
            last_event_at: last.map(from_ms),
            db_bytes,
        })
    }
}
