//! SQLite's side of `crate::interchange`: its statements and row decoding.

use crate::clock::to_ms;
use crate::error::{Error, Result, excerpt};
use crate::interchange::json::parse_in;
use crate::store::{Store, rebuild};
use crate::time::format_time;
use std::io::{BufRead, Write};

use crate::interchange::backup::*;

impl Store {
    /// Writes every event as JSON Lines. Returns the number of events written.
    pub fn export_backup(&self, out: &mut dyn Write) -> Result<u64> {
        self.export_backup_with(out, &mut crate::interchange::no_tick)
    }

    /// [`Store::export_backup`], reporting to `tick` as it goes (and stopped by it).
    pub fn export_backup_with(&self, out: &mut dyn Write, tick: crate::interchange::Tick) -> Result<u64> {
        let io = |e: std::io::Error| Error::io("cannot write the backup", e);
        let total = self.event_count()?;
        let header =
            Header { format: FORMAT.into(), version: 1, events: total, exported_at: format_time(self.clock.now()) };
        writeln!(out, "{}", serde_json::to_string(&header).map_err(|e| io(e.into()))?).map_err(io)?;
        let mut after = 0;
        let mut written: u64 = 0;
        loop {
            let batch = self.events_after(after, 10_000)?;
            let Some(last) = batch.last() else { break };
            after = last.seq;
            for ev in batch {
                let payload = serde_json::from_str(&ev.change.encode()).map_err(|e| io(e.into()))?;
                let line = Line {
                    seq: ev.seq,
                    event_id: ev.event_id,
                    stream_id: ev.stream_id.to_string(),
                    stream_version: ev.stream_version,
                    event_type: ev.change.event_type().to_string(),
                    schema_version: crate::event::SCHEMA_VERSION,
                    payload,
                    meta: ev.meta,
                    recorded_at: format_time(ev.recorded_at),
                    redacted_at: ev.redacted_at.map(format_time),
                };
                writeln!(out, "{}", serde_json::to_string(&line).map_err(|e| io(e.into()))?).map_err(io)?;
                written += 1;
                if written.is_multiple_of(crate::interchange::TICK_EVERY) {
                    tick(written, total)?;
                }
            }
        }
        out.flush().map_err(io)?;
        tick(written, total)?;
        Ok(written)
    }

    /// Loads a backup into this database, which must have no events yet, and replays it.
    /// One transaction: on any error nothing is imported. Returns (events, memories).
    pub fn import_backup(&mut self, file: &str, input: &mut dyn BufRead) -> Result<(u64, u64)> {
        self.import_backup_with(file, input, &mut crate::interchange::no_tick)
    }

    /// [`Store::import_backup`], reporting to `tick` as it goes; an error from `tick` rolls
    /// the whole import back. Every event is checked as it is read — the file's own shape
    /// (sequence, stream versions, unique ids) and the rules every command keeps
    /// ([`crate::rules`]) — before anything is committed.
    pub fn import_backup_with(
        &mut self,
        file: &str,
        input: &mut dyn BufRead,
        tick: crate::interchange::Tick,
    ) -> Result<(u64, u64)> {
        let tx = self.sqlite_mut()?.write()?;
        let existing: i64 = tx.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
        if existing > 0 {
            return Err(Error::invalid(format!(
                "a backup can only be restored into an empty database; this one has {existing} events"
            )));
        }
        let mut lines = crate::interchange::json::lines(file, input);
        let (header_line, header) = match lines.next().transpose()? {
            Some((n, text)) => (n, parse_in::<Header>(file, n, &text)?),
            None => return Err(Error::bad_import(file, 1, "the file is empty (expected a Strata backup header)")),
        };
        if header.format != FORMAT || header.version != 1 {
            return Err(Error::bad_import(
                file,
                header_line,
                format!(
                    "field `format`: not a Strata backup (format '{}', version {})",
                    excerpt(&header.format),
                    header.version
                ),
            ));
        }
        let mut restore = Restore::default();
        {
            let mut insert = tx.prepare(
                "INSERT INTO events (seq, event_id, stream_id, stream_version, event_type, schema_version, payload, actor, \
                 client, session_id, correlation_id, causation_id, recorded_at, redacted_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?;
            for line in lines {
                let (n, text) = line?;
                let Parsed { ev, payload, schema_version } = restore.next(n, &text).map_err(|e| e.in_file(file))?;
                insert
                    .execute(rusqlite::params![
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
                    ])
                    .map_err(|e| Error::bad_import(file, n, e.to_string()))?;
                let count = restore.lines.len() as u64;
                if count.is_multiple_of(crate::interchange::TICK_EVERY) {
                    tick(count, header.events)?;
                }
            }
        }
        let count = restore.lines.len() as u64;
        if count != header.events {
            return Err(Error::bad_import(
                file,
                header_line,
                format!(
                    "field `events`: the header promises {} events but the file has {count} (truncated?)",
                    header.events
                ),
            ));
        }
        if let Some((id, n)) = restore.check.unfinished() {
            return Err(Error::bad_import(
                file,
                n,
                format!("field `redacted_at`: memory {id}'s events are erased but it was never forgotten"),
            ));
        }
        let (_, memories) = rebuild(&tx).map_err(|e| match e {
            Error::BadEvent { seq, message } => {
                let n = usize::try_from(seq - 1).ok().and_then(|i| restore.lines.get(i)).copied().unwrap_or(1);
                Error::bad_import(file, n, format!("event {seq}: {message}"))
            }
            other => other,
        })?;
        tick(count, header.events)?;
        tx.commit()?;
        Ok((count, memories))
    }
}
