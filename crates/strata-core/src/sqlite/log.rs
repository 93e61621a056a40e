//! The [`Log`] primitives on SQLite: events in `events`, projections in `memories` and its
//! side tables (see `projection`), inside the write transaction [`Tx`].

use chrono::{DateTime, Utc};
use rusqlite::params;

use super::{Tx, projection, rows};
use crate::clock::to_ms;
use crate::error::{Error, Result};
use crate::event::{REDACTED_PAYLOAD, RecordedEvent, SCHEMA_VERSION};
use crate::model::{Memory, MemoryId, MemoryKind};
use crate::storage::Log;

impl Log for Tx<'_> {
    fn stream_version(&self, stream: MemoryId) -> Result<u64> {
        let v: Option<i64> = self
            .prepare_cached("SELECT max(stream_version) FROM events WHERE stream_id = ?1")?
            .query_row([stream.to_string()], |r| r.get(0))?;
        Ok(v.unwrap_or(0) as u64)
    }

    fn changed_since(&self, stream: MemoryId, version: u64) -> Result<bool> {
        let n: i64 = self
            .prepare_cached(
                "SELECT count(*) FROM events WHERE stream_id = ?1 AND stream_version > ?2 AND event_type != 'accessed'",
            )?
            .query_row(params![stream.to_string(), version as i64], |r| r.get(0))?;
        Ok(n > 0)
    }

    fn append_event(&self, event: &RecordedEvent) -> Result<i64> {
        let meta = &event.meta;
        self.prepare_cached(
            "INSERT INTO events (event_id, stream_id, stream_version, event_type, schema_version, payload, actor, \
             client, session_id, correlation_id, causation_id, recorded_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?
        .execute(params![
            event.event_id,
            event.stream_id.to_string(),
            event.stream_version as i64,
            event.change.event_type(),
            SCHEMA_VERSION,
            event.change.encode(),
            meta.actor.as_str(),
            meta.client,
            meta.session_id,
            meta.correlation_id,
            meta.causation_id,
            to_ms(event.recorded_at),
        ])
        .map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::ConstraintViolation) if event.stream_version == 1 => Error::Conflict {
                stream: event.stream_id.to_string(),
                expected: "no stream".to_string(),
                actual: self.stream_version(event.stream_id).unwrap_or(0),
            },
            _ => e.into(),
        })?;
        Ok(self.last_insert_rowid())
    }

    fn unappend(&self, seq: i64) -> Result<()> {
        self.prepare_cached("DELETE FROM events WHERE seq = ?1")?.execute([seq])?;
        Ok(())
    }

    fn project(&self, old: Option<&Memory>, new: Option<&Memory>) -> Result<()> {
        projection::write_diff(self, old, new)
    }

    fn load(&self, id: MemoryId) -> Result<Option<Memory>> {
        rows::load(self, id)
    }

    fn exists(&self, id: MemoryId) -> Result<bool> {
        Ok(self.prepare_cached("SELECT 1 FROM memories WHERE id = ?1")?.exists([id.to_string()])?)
    }

    fn live_memories(&self) -> Result<Vec<Memory>> {
        let sql = format!("SELECT {} FROM memories AS m WHERE m.expired_at IS NULL", rows::MEMORY_COLUMNS);
        let mut stmt = self.prepare(&sql)?;
        let rows = stmt.query_map([], rows::memory_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn gone(&self, id: MemoryId) -> Result<Error> {
        rows::forgotten_error(self, id)
    }

    fn redact_stream(&self, stream: MemoryId, at: DateTime<Utc>) -> Result<u64> {
        Ok(self
            .prepare_cached(
                "UPDATE events SET payload = ?2, redacted_at = ?3 WHERE stream_id = ?1 AND redacted_at IS NULL",
            )?
            .execute(params![stream.to_string(), REDACTED_PAYLOAD, to_ms(at)])? as u64)
    }

    fn find_by_key(&self, user: &str, agent: Option<&str>, kind: Option<MemoryKind>, key: &str) -> Result<Vec<Memory>> {
        rows::find_by_key(self, user, agent, kind, key)
    }

    fn linking_to(&self, id: MemoryId) -> Result<Vec<(MemoryId, String)>> {
        rows::linking_to(self, id)
    }

    fn episodes_at(
        &self,
        user: &str,
        agent: Option<&str>,
        session: Option<&str>,
        occurred_ms: i64,
    ) -> Result<Vec<Memory>> {
        let sql = format!(
            "SELECT {} FROM memories AS m WHERE m.kind = 'episodic' AND m.user_id = ?1 \
             AND coalesce(m.agent_id, '') = ?2 AND m.session_id IS ?3 AND m.occurred_at = ?4 ORDER BY m.rid",
            rows::MEMORY_COLUMNS
        );
        let mut stmt = self.prepare_cached(&sql)?;
        let found =
            stmt.query_map(rusqlite::params![user, agent.unwrap_or(""), session, occurred_ms], rows::memory_from_row)?;
        Ok(found.collect::<rusqlite::Result<_>>()?)
    }

    fn clear_projections(&self) -> Result<()> {
        projection::clear_all(self)
    }

    fn events_held(&self) -> Result<i64> {
        Ok(self.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?)
    }

    fn restore_event(&self, ev: &RecordedEvent, payload: &str, schema_version: i64) -> Result<()> {
        self.prepare_cached(
            "INSERT INTO events (seq, event_id, stream_id, stream_version, event_type, schema_version, payload, actor, \
             client, session_id, correlation_id, causation_id, recorded_at, redacted_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?
        .execute(params![
            ev.seq,
            ev.event_id,
            ev.stream_id.to_string(),
            ev.stream_version as i64,
            ev.change.event_type(),
            schema_version,
            payload,
            ev.meta.actor.as_str(),
            ev.meta.client,
            ev.meta.session_id,
            ev.meta.correlation_id,
            ev.meta.causation_id,
            to_ms(ev.recorded_at),
            ev.redacted_at.map(to_ms),
        ])?;
        Ok(())
    }

    fn each_event(&self, f: &mut dyn FnMut(RecordedEvent) -> Result<()>) -> Result<u64> {
        let mut stmt = self.prepare(&format!("SELECT {} FROM events ORDER BY seq", rows::EVENT_COLUMNS))?;
        let mut rows = stmt.query([])?;
        let mut n = 0;
        while let Some(row) = rows.next()? {
            f(rows::event_from_row(row)?)?;
            n += 1;
        }
        Ok(n)
    }

    fn reindex(&self) -> Result<()> {
        // Vectors are keyed by memory id and survive; the index is keyed by the renumbered rows.
        self.execute_batch(
            "DELETE FROM memory_vectors WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = memory_vectors.memory_id)",
        )?;
        super::vector_index::reindex(self)?;
        Ok(())
    }

    fn erase_records(&self, id: MemoryId, at: DateTime<Utc>) -> Result<Vec<String>> {
        super::forget::erase_records(self, id, at)
    }
}
