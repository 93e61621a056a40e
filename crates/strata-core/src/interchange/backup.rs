//! The full backup: a header line, then every event of the log as one JSON object per line.
//! Importing it into an empty database and replaying gives an identical state.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::error::{Error, excerpt};

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
    pub(crate) exported_at: String,
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
