//! The full backup: a header line, then every event of the log as one JSON object per line.
//! Importing it into an empty database and replaying gives an identical state.

use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};

use super::parse_json;
use crate::clock::to_ms;
use crate::error::{Error, Result};
use crate::event::{Actor, Change, EventMeta, REDACTED_PAYLOAD};
use crate::store::{Store, rebuild};
use crate::time::{format_time, parse_time};

/// The value of the header's `format` field.
pub const FORMAT: &str = "strata-backup";

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    format: String,
    version: u32,
    events: u64,
    exported_at: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    seq: i64,
    event_id: String,
    stream_id: String,
    stream_version: u64,
    #[serde(rename = "type")]
    event_type: String,
    schema_version: i64,
    payload: serde_json::Value,
    meta: EventMeta,
    recorded_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    redacted_at: Option<String>,
}

impl Store {
    /// Writes every event as JSON Lines. Returns the number of events written.
    pub fn export_backup(&self, out: &mut dyn Write) -> Result<u64> {
        self.export_backup_with(out, &mut super::no_tick)
    }

    /// [`Store::export_backup`], reporting to `tick` as it goes (and stopped by it).
    pub fn export_backup_with(&self, out: &mut dyn Write, tick: super::Tick) -> Result<u64> {
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
                if written.is_multiple_of(super::TICK_EVERY) {
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
        self.import_backup_with(file, input, &mut super::no_tick)
    }

    /// [`Store::import_backup`], reporting to `tick` as it goes; an error from `tick` rolls
    /// the whole import back.
    pub fn import_backup_with(&mut self, file: &str, input: &mut dyn BufRead, tick: super::Tick) -> Result<(u64, u64)> {
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let existing: i64 = tx.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
        if existing > 0 {
            return Err(Error::invalid(format!(
                "a backup can only be restored into an empty database; this one has {existing} events"
            )));
        }
        let bad = |line: usize, message: String| Error::BadImport { file: file.into(), line, message };
        let mut lines = input.lines().enumerate();
        let header: Header = match lines.next() {
            Some((_, Ok(text))) => parse_json(file, 0, &text)?,
            Some((_, Err(e))) => return Err(Error::io(format!("cannot read {file}"), e)),
            None => {
                return Err(bad(1, "the file is empty (expected a Strata backup header)".into()));
            }
        };
        if header.format != FORMAT || header.version != 1 {
            return Err(bad(
                1,
                format!("not a Strata backup (format '{}', version {})", header.format, header.version),
            ));
        }
        let mut versions: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
        let mut event_ids = std::collections::HashSet::new();
        let mut last_seq = 0;
        let mut count = 0u64;
        {
            let mut insert = tx.prepare(
                "INSERT INTO events (seq, event_id, stream_id, stream_version, event_type, schema_version, payload, actor, \
                 client, session_id, correlation_id, causation_id, recorded_at, redacted_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?;
            for (i, text) in lines {
                let n = i + 1;
                let text = text.map_err(|e| Error::io(format!("cannot read {file}"), e))?;
                if text.trim().is_empty() {
                    continue;
                }
                let l: Line = parse_json(file, i, &text)?;
                if l.seq != last_seq + 1 {
                    return Err(bad(
                        n,
                        format!("field `seq`: expected {} after {last_seq}, found {}", last_seq + 1, l.seq),
                    ));
                }
                if !event_ids.insert(l.event_id.clone()) {
                    return Err(bad(n, format!("field `event_id`: '{}' appears twice", l.event_id)));
                }
                l.stream_id.parse::<crate::model::MemoryId>().map_err(|e| bad(n, format!("field `stream_id`: {e}")))?;
                let v = versions.entry(l.stream_id.clone()).or_insert(0);
                if l.stream_version != *v + 1 {
                    return Err(bad(
                        n,
                        format!(
                            "field `stream_version`: expected {} for this stream, found {}",
                            *v + 1,
                            l.stream_version
                        ),
                    ));
                }
                *v = l.stream_version;
                let redacted_at = l
                    .redacted_at
                    .as_deref()
                    .map(parse_time)
                    .transpose()
                    .map_err(|e| bad(n, format!("field `redacted_at`: {e}")))?;
                let payload = if redacted_at.is_some() { REDACTED_PAYLOAD.to_string() } else { l.payload.to_string() };
                Change::decode(&l.event_type, l.schema_version, &payload, redacted_at.is_some())
                    .map_err(|m| bad(n, format!("field `payload`: {m}")))?;
                let recorded_at =
                    parse_time(&l.recorded_at).map_err(|e| bad(n, format!("field `recorded_at`: {e}")))?;
                let actor: Actor = l.meta.actor;
                insert
                    .execute(rusqlite::params![
                        l.seq,
                        l.event_id,
                        l.stream_id,
                        l.stream_version as i64,
                        l.event_type,
                        l.schema_version,
                        payload,
                        actor.as_str(),
                        l.meta.client,
                        l.meta.session_id,
                        l.meta.correlation_id,
                        l.meta.causation_id,
                        to_ms(recorded_at),
                        redacted_at.map(to_ms),
                    ])
                    .map_err(|e| bad(n, e.to_string()))?;
                last_seq = l.seq;
                count += 1;
                if count.is_multiple_of(super::TICK_EVERY) {
                    tick(count, header.events)?;
                }
            }
        }
        if count != header.events {
            return Err(bad(
                1,
                format!("the header promises {} events but the file has {count} (truncated?)", header.events),
            ));
        }
        let (_, memories) = rebuild(&tx).map_err(|e| match e {
            Error::BadEvent { seq, message } => {
                Error::BadImport { file: file.into(), line: 0, message: format!("event {seq}: {message}") }
            }
            other => other,
        })?;
        tick(count, header.events)?;
        tx.commit()?;
        Ok((count, memories))
    }
}
