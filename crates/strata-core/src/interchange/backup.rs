//! The full backup: a header line, then every event of the log as one JSON object per line,
//! then (format version 2) each agent with its versions (`backup_agents`). Importing it into an
//! empty database and replaying gives an identical state.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use std::io::{BufRead, Write};

use crate::error::{Error, Result, excerpt};
use crate::interchange::json::parse_in;
use crate::storage::Log;
use crate::store::{Store, rebuild};
use crate::time::format_time;

use crate::event::{Change, EventMeta, REDACTED_PAYLOAD, RecordedEvent};

use crate::model::MemoryId;

use crate::rules::LogCheck;

use crate::time::parse_time;

/// The value of the header's `format` field.
pub const FORMAT: &str = "strata-backup";

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Header {
    pub(crate) format: String,
    pub(crate) version: u32,
    pub(crate) events: u64,
    /// Agents' lines after the events (version 2; a backup without agents is written as
    /// version 1, which every Strata reads).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) agents: u64,
    pub(crate) exported_at: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Line {
    pub(crate) seq: i64,
    pub(crate) event_id: String,
    pub(crate) stream_id: String,
    pub(crate) stream_version: u64,
    #[serde(rename = "type")]
    pub(crate) event_type: String,
    pub(crate) schema_version: i64,
    pub(crate) payload: serde_json::Value,
    pub(crate) meta: EventMeta,
    pub(crate) recorded_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) redacted_at: Option<String>,
}

/// A refusal of one backup line, before the file's name is known to it.
pub(crate) struct LineError {
    pub(crate) line: usize,
    pub(crate) message: String,
}

impl LineError {
    pub(crate) fn in_file(self, file: &str) -> Error {
        Error::bad_import(file, self.line, self.message)
    }
}

/// One event read from a backup line, and what to store for it.
pub(crate) struct Parsed {
    pub(crate) ev: RecordedEvent,
    pub(crate) payload: String,
    pub(crate) schema_version: i64,
}

/// The events read so far: what the next one must follow.
#[derive(Default)]
pub(crate) struct Restore {
    /// The line of each event, by sequence number (`lines[seq - 1]`).
    pub(crate) lines: Vec<usize>,
    pub(crate) versions: HashMap<MemoryId, u64>,
    pub(crate) event_ids: HashSet<String>,
    pub(crate) check: LogCheck,
}

impl Restore {
    /// Reads and checks the event on line `n`; returns it and the payload to store.
    pub(crate) fn next(&mut self, n: usize, text: &str) -> std::result::Result<Parsed, LineError> {
        let bad = |field: &str, message: String| LineError { line: n, message: format!("field `{field}`: {message}") };
        let l: Line = super::json::parse(text).map_err(|e| LineError { line: n, message: e.message })?;
        let seq = self.lines.len() as i64 + 1;
        if l.seq != seq {
            return Err(bad("seq", format!("expected {seq} after {}, found {}", seq - 1, l.seq)));
        }
        if !self.event_ids.insert(l.event_id.clone()) {
            return Err(bad("event_id", format!("'{}' appears twice", excerpt(&l.event_id))));
        }
        let stream_id: MemoryId = l.stream_id.parse().map_err(|e| bad("stream_id", format!("{e}")))?;
        let version = self.versions.entry(stream_id).or_insert(0);
        if l.stream_version != *version + 1 {
            let want = *version + 1;
            return Err(bad("stream_version", format!("expected {want} for this stream, found {}", l.stream_version)));
        }
        *version = l.stream_version;
        let redacted_at =
            l.redacted_at.as_deref().map(parse_time).transpose().map_err(|e| bad("redacted_at", e.to_string()))?;
        let payload = if redacted_at.is_some() { REDACTED_PAYLOAD.to_string() } else { l.payload.to_string() };
        let change = Change::decode(&l.event_type, l.schema_version, &payload, redacted_at.is_some())
            .map_err(|m| bad("payload", m))?;
        let recorded_at = parse_time(&l.recorded_at).map_err(|e| bad("recorded_at", e.to_string()))?;
        let ev = RecordedEvent {
            seq,
            event_id: l.event_id,
            stream_id,
            stream_version: l.stream_version,
            change,
            meta: l.meta,
            recorded_at,
            redacted_at,
        };
        self.check.next(&ev, n).map_err(|(field, e)| bad(field, e.to_string()))?;
        self.lines.push(n);
        Ok(Parsed { ev, payload, schema_version: l.schema_version })
    }
}

/// Backups written and restored on every engine: the log read in order, and restored through
/// the engine's [`Log`] in one write transaction.
impl Store {
    /// Writes every event as JSON Lines. Returns the number of events written.
    pub fn export_backup(&self, out: &mut dyn Write) -> Result<u64> {
        self.export_backup_with(out, &mut crate::interchange::no_tick)
    }

    /// [`Store::export_backup`], reporting to `tick` as it goes (and stopped by it).
    pub fn export_backup_with(&self, out: &mut dyn Write, tick: crate::interchange::Tick) -> Result<u64> {
        let io = |e: std::io::Error| Error::io("cannot write the backup", e);
        let total = self.event_count()?;
        let agents = self.agent_lines()?;
        let header = Header {
            format: FORMAT.into(),
            version: if agents.is_empty() { 1 } else { 2 },
            events: total,
            agents: agents.len() as u64,
            exported_at: format_time(self.clock.now()),
        };
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
        for a in &agents {
            writeln!(out, "{}", serde_json::to_string(a).map_err(|e| io(e.into()))?).map_err(io)?;
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
        let tx = self.engine.write()?;
        let existing = tx.events_held()?;
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
        if header.format != FORMAT || !(1..=2).contains(&header.version) {
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
        let mut agents = Vec::new();
        for line in lines {
            let (n, text) = line?;
            // After the events, the agents the header promises (a version 1 file has none: a
            // line more is read as an event, and said wrong as one).
            if restore.lines.len() as u64 == header.events && header.agents > 0 {
                if agents.len() as u64 == header.agents {
                    return Err(Error::bad_import(file, n, "more lines than the header promises"));
                }
                super::backup_agents::restore_agent(&tx, n, &text, &mut agents).map_err(|e| e.in_file(file))?;
                continue;
            }
            let Parsed { ev, payload, schema_version } = restore.next(n, &text).map_err(|e| e.in_file(file))?;
            tx.restore_event(&ev, &payload, schema_version).map_err(|e| Error::bad_import(file, n, e.to_string()))?;
            let count = restore.lines.len() as u64;
            if count.is_multiple_of(crate::interchange::TICK_EVERY) {
                tick(count, header.events)?;
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
        if agents.len() as u64 != header.agents {
            return Err(Error::bad_import(
                file,
                header_line,
                format!(
                    "field `agents`: the header promises {} agents but the file has {} (truncated?)",
                    header.agents,
                    agents.len()
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
