//! The [`Log`] primitives on PostgreSQL: events in `events`, projections in `memories` and its
//! side tables (see `projection`), inside the write transaction [`PgTx`] (which holds the
//! writers' lock, so the checks below stay true until commit).

use chrono::{DateTime, Utc};

use super::prepared::Runs;
use super::{PgTx, projection, rows};
use crate::clock::to_ms;
use crate::error::{Error, Result};
use crate::event::{REDACTED_PAYLOAD, RecordedEvent, SCHEMA_VERSION};
use crate::model::{Memory, MemoryId, MemoryKind};
use crate::storage::{EVENT_COLUMNS, Log};

/// Events read per round trip by [`Log::each_event`] (a replay streams the log in pages).
const EVENT_PAGE: i64 = 5_000;

impl Log for PgTx<'_> {
    fn stream_version(&self, stream: MemoryId) -> Result<u64> {
        let row = self.query_one(
            "SELECT coalesce(max(stream_version), 0) FROM events WHERE stream_id = $1",
            &[&stream.to_string()],
        )?;
        Ok(row.try_get::<_, i64>(0)? as u64)
    }

    fn changed_since(&self, stream: MemoryId, version: u64) -> Result<bool> {
        let row = self.query_one(
            "SELECT EXISTS (SELECT 1 FROM events WHERE stream_id = $1 AND stream_version > $2 AND event_type <> 'accessed')",
            &[&stream.to_string(), &(version as i64)],
        )?;
        Ok(row.try_get(0)?)
    }

    fn append_event(&self, event: &RecordedEvent) -> Result<i64> {
        let meta = &event.meta;
        // A version already taken is refused without failing a statement (a failed statement
        // aborts the whole transaction on PostgreSQL): no row comes back.
        let row = self.query_opt(
            "INSERT INTO events (event_id, stream_id, stream_version, event_type, schema_version, payload, actor, \
             client, session_id, correlation_id, causation_id, recorded_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
             ON CONFLICT (stream_id, stream_version) DO NOTHING RETURNING seq",
            &[
                &event.event_id,
                &event.stream_id.to_string(),
                &(event.stream_version as i64),
                &event.change.event_type(),
                &(SCHEMA_VERSION as i32),
                &event.change.encode(),
                &meta.actor.as_str(),
                &meta.client,
                &meta.session_id,
                &meta.correlation_id,
                &meta.causation_id,
                &to_ms(event.recorded_at),
            ],
        )?;
        match row {
            Some(row) => Ok(row.try_get(0)?),
            None => Err(Error::Conflict {
                stream: event.stream_id.to_string(),
                expected: if event.stream_version == 1 {
                    "no stream".to_string()
                } else {
                    (event.stream_version - 1).to_string()
                },
                actual: self.stream_version(event.stream_id)?,
            }),
        }
    }

    fn unappend(&self, seq: i64) -> Result<()> {
        self.execute("DELETE FROM events WHERE seq = $1", &[&seq])?;
        Ok(())
    }

    fn project(&self, old: Option<&Memory>, new: Option<&Memory>) -> Result<()> {
        projection::write_diff(self, old, new)
    }

    fn load(&self, id: MemoryId) -> Result<Option<Memory>> {
        rows::load(self, id)
    }

    fn exists(&self, id: MemoryId) -> Result<bool> {
        let row = self.query_one("SELECT EXISTS (SELECT 1 FROM memories WHERE id = $1)", &[&id.to_string()])?;
        Ok(row.try_get(0)?)
    }

    fn live_memories(&self) -> Result<Vec<Memory>> {
        let sql = format!("SELECT {} FROM memories AS m WHERE m.expired_at IS NULL", rows::MEMORY_COLUMNS);
        rows::memories(self, &sql, &[])
    }

    fn gone(&self, id: MemoryId) -> Result<Error> {
        rows::forgotten_error(self, id)
    }

    fn redact_stream(&self, stream: MemoryId, at: DateTime<Utc>) -> Result<u64> {
        self.execute(
            "UPDATE events SET payload = $2, redacted_at = $3 WHERE stream_id = $1 AND redacted_at IS NULL",
            &[&stream.to_string(), &REDACTED_PAYLOAD, &to_ms(at)],
        )
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
            "SELECT {} FROM memories AS m WHERE m.kind = 'episodic' AND m.user_id = $1 \
             AND coalesce(m.agent_id, '') = $2 AND m.session_id IS NOT DISTINCT FROM $3 AND m.occurred_at = $4 \
             ORDER BY m.created_at, m.id",
            rows::MEMORY_COLUMNS
        );
        rows::memories(self, &sql, &[&user, &agent.unwrap_or(""), &session, &occurred_ms])
    }

    fn clear_projections(&self) -> Result<()> {
        projection::clear_all(self)
    }

    fn events_held(&self) -> Result<i64> {
        Ok(self.query_one("SELECT count(*) FROM events", &[])?.try_get(0)?)
    }

    fn restore_event(&self, ev: &RecordedEvent, payload: &str, schema_version: i64) -> Result<()> {
        self.execute(
            "INSERT INTO events (seq, event_id, stream_id, stream_version, event_type, schema_version, payload, actor, \
             client, session_id, correlation_id, causation_id, recorded_at, redacted_at) OVERRIDING SYSTEM VALUE \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            &[
                &ev.seq,
                &ev.event_id,
                &ev.stream_id.to_string(),
                &(ev.stream_version as i64),
                &ev.change.event_type(),
                &(schema_version as i32),
                &payload,
                &ev.meta.actor.as_str(),
                &ev.meta.client,
                &ev.meta.session_id,
                &ev.meta.correlation_id,
                &ev.meta.causation_id,
                &to_ms(ev.recorded_at),
                &ev.redacted_at.map(to_ms),
            ],
        )?;
        Ok(())
    }

    fn each_event(&self, f: &mut dyn FnMut(RecordedEvent) -> Result<()>) -> Result<u64> {
        let sql = format!("SELECT {EVENT_COLUMNS} FROM events WHERE seq > $1 ORDER BY seq LIMIT $2");
        let (mut after, mut n) = (0i64, 0u64);
        loop {
            let page = rows::events(self, &sql, &[&after, &EVENT_PAGE])?;
            let Some(last) = page.last() else { return Ok(n) };
            after = last.seq;
            let full = page.len() as i64 == EVENT_PAGE;
            for event in page {
                f(event)?;
                n += 1;
            }
            if !full {
                return Ok(n);
            }
        }
    }

    fn reindex(&self) -> Result<()> {
        let mut tx = self.tx();
        tx.execute(
            "DELETE FROM memory_vectors v WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = v.memory_id)",
            &[],
        )?;
        // After a restore wrote sequence numbers of its own: the next append follows the last.
        tx.execute(
            "SELECT setval(pg_get_serial_sequence('events', 'seq'), coalesce((SELECT max(seq) FROM events), 0) + 1, false)",
            &[],
        )?;
        Ok(())
    }

    fn erase_records(&self, id: MemoryId, _at: DateTime<Utc>) -> Result<Vec<String>> {
        super::forget::erase_records(&mut self.tx(), id)
    }
}
