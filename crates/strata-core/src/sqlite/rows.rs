//! Reading rows, the one home of the read helpers every other module uses: a memory row and
//! an event row decoded, lookups on a connection (the store's or a write transaction's), and
//! the searchable text of a memory. It depends on the model and nothing that writes, so
//! reads go one way: store, projection, index and query modules use it, never the reverse.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension, Row};

use crate::clock::from_ms;
use crate::error::{Error, Result};
use crate::event::{Change, EventMeta, RecordedEvent};
use crate::model::{Link, Memory, MemoryId, MemoryKind};

/// The columns [`memory_from_row`] expects, in order, from `memories AS m`. Tags and links
/// need no ORDER BY (which would materialize a temporary table per row): they decode into
/// sorted sets.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.user_id, m.agent_id, m.session_id, m.tier, m.importance, \
     m.source, m.content, m.created_at, m.updated_at, m.version, m.access_count, m.last_accessed_at, \
     m.pinned, m.expired_at, \
     (SELECT json_group_array(tag) FROM memory_tags WHERE memory_id = m.id), \
     (SELECT json_group_array(json_array(target_id, relation)) FROM memory_links WHERE source_id = m.id)";

fn json_col<T: serde::de::DeserializeOwned>(row: &Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let s: String = row.get(idx)?;
    serde_json::from_str(&s)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e)))
}

fn parse_col<T: std::str::FromStr>(row: &Row<'_>, idx: usize) -> rusqlite::Result<T>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    let s: String = row.get(idx)?;
    s.parse().map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(e)))
}

/// Builds a [`Memory`] from a row selected with [`MEMORY_COLUMNS`].
pub(crate) fn memory_from_row(row: &Row<'_>) -> rusqlite::Result<Memory> {
    let links: Vec<(String, String)> = json_col(row, 16)?;
    let links = links
        .into_iter()
        .map(|(t, relation)| {
            t.parse::<MemoryId>()
                .map(|target| Link { target, relation })
                .map_err(|e| rusqlite::Error::FromSqlConversionFailure(16, rusqlite::types::Type::Text, Box::new(e)))
        })
        .collect::<rusqlite::Result<BTreeSet<_>>>()?;
    let importance: f64 = row.get(5)?;
    Ok(Memory {
        id: parse_col(row, 0)?,
        scope: crate::model::Scope { user_id: row.get(1)?, agent_id: row.get(2)?, session_id: row.get(3)? },
        tier: parse_col(row, 4)?,
        importance: crate::model::Importance::new(importance)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(5, rusqlite::types::Type::Real, Box::new(e)))?,
        source: json_col(row, 6)?,
        content: json_col(row, 7)?,
        created_at: from_ms(row.get(8)?),
        updated_at: from_ms(row.get(9)?),
        version: row.get::<_, i64>(10)? as u64,
        access_count: row.get::<_, i64>(11)? as u64,
        last_accessed_at: row.get::<_, Option<i64>>(12)?.map(from_ms),
        pinned: row.get(13)?,
        expired_at: row.get::<_, Option<i64>>(14)?.map(from_ms),
        tags: json_col(row, 15)?,
        links,
    })
}

/// The memory with this id, as projected.
pub(crate) fn load(conn: &Connection, id: MemoryId) -> Result<Option<Memory>> {
    let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE m.id = ?1");
    Ok(conn.prepare_cached(&sql)?.query_row([id.to_string()], memory_from_row).optional()?)
}

/// The columns [`event_from_row`] expects, in order.
pub(crate) const EVENT_COLUMNS: &str = "seq, event_id, stream_id, stream_version, event_type, schema_version, payload, \
     actor, client, session_id, correlation_id, causation_id, recorded_at, redacted_at";

/// Reads an event row selected with [`EVENT_COLUMNS`], decoding its payload.
pub(crate) fn event_from_row(row: &rusqlite::Row<'_>) -> Result<RecordedEvent> {
    let seq: i64 = row.get(0)?;
    let bad = |message: String| Error::BadEvent { seq, message };
    let stream: String = row.get(2)?;
    let event_type: String = row.get(4)?;
    let payload: String = row.get(6)?;
    let actor: String = row.get(7)?;
    let redacted_at: Option<i64> = row.get(13)?;
    let change = Change::decode(&event_type, row.get(5)?, &payload, redacted_at.is_some())
        .map_err(|m| bad(format!("{event_type}: {m}")))?;
    Ok(RecordedEvent {
        seq,
        event_id: row.get(1)?,
        stream_id: stream.parse().map_err(|_| bad(format!("bad stream id '{stream}'")))?,
        stream_version: row.get::<_, i64>(3)? as u64,
        change,
        meta: EventMeta {
            actor: actor.parse().map_err(|_| bad(format!("bad actor '{actor}'")))?,
            client: row.get(8)?,
            session_id: row.get(9)?,
            correlation_id: row.get(10)?,
            causation_id: row.get(11)?,
        },
        recorded_at: from_ms(row.get(12)?),
        redacted_at: redacted_at.map(crate::clock::from_ms),
    })
}

/// [`Store::find_by_key`] on a connection (the store's, or a write transaction's).
pub(crate) fn find_by_key(
    conn: &Connection,
    user_id: &str,
    agent_id: Option<&str>,
    kind: Option<MemoryKind>,
    key: &str,
) -> Result<Vec<Memory>> {
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE m.key = ?1 AND m.user_id = ?2 \
         AND coalesce(m.agent_id, '') = ?3 AND (?4 IS NULL OR m.kind = ?4) ORDER BY m.kind"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(
        rusqlite::params![key, user_id, agent_id.unwrap_or(""), kind.map(|k| k.as_str())],
        memory_from_row,
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// [`Store::linking_to`] on a connection.
pub(crate) fn linking_to(conn: &Connection, id: MemoryId) -> Result<Vec<(MemoryId, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT source_id, relation FROM memory_links WHERE target_id = ?1 ORDER BY source_id, relation",
    )?;
    let rows = stmt.query_map([id.to_string()], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    let mut out = Vec::new();
    for row in rows {
        let (source, relation) = row?;
        let source = source.parse().map_err(|_| Error::invalid(format!("a stored link has a bad id '{source}'")))?;
        out.push((source, relation));
    }
    Ok(out)
}

/// The error for a stream with no projected memory: forgotten, or never existed.
pub(crate) fn forgotten_error(conn: &Connection, id: MemoryId) -> Result<Error> {
    let at: Option<i64> = conn
        .prepare_cached("SELECT recorded_at FROM events WHERE stream_id = ?1 AND event_type = 'forgotten'")?
        .query_row([id.to_string()], |r| r.get(0))
        .optional()?;
    Ok(match at {
        Some(ms) => Error::Forgotten { id: id.to_string(), at: crate::time::format_time(from_ms(ms)) },
        None => Error::NotFound(id.to_string()),
    })
}
