//! Reading rows, the one home of the read helpers every other module uses: a memory row and
//! an event row decoded, lookups on a connection (the store's or a write transaction's), and
//! the searchable text of a memory. It depends on the model and nothing that writes, so
//! reads go one way: store, projection, index and query modules use it, never the reverse.

use rusqlite::{Connection, OptionalExtension, Row};

use crate::clock::from_ms;
use crate::error::{Error, Result};
use crate::event::RecordedEvent;
use crate::model::{Memory, MemoryId, MemoryKind};
pub(crate) use crate::storage::EVENT_COLUMNS;
use crate::storage::{EventRow, MemoryRow};

/// The columns [`memory_from_row`] expects, in order, from `memories AS m`. Tags and links
/// need no ORDER BY (which would materialize a temporary table per row): they decode into
/// sorted sets.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.user_id, m.agent_id, m.session_id, m.tier, m.importance, \
     m.source, m.content, m.created_at, m.updated_at, m.version, m.access_count, m.last_accessed_at, \
     m.pinned, m.expired_at, \
     (SELECT json_group_array(tag) FROM memory_tags WHERE memory_id = m.id), \
     (SELECT json_group_array(json_array(target_id, relation)) FROM memory_links WHERE source_id = m.id)";

/// Builds a [`Memory`] from a row selected with [`MEMORY_COLUMNS`].
pub(crate) fn memory_from_row(row: &Row<'_>) -> rusqlite::Result<Memory> {
    let json = |idx: usize| -> rusqlite::Result<String> { row.get(idx) };
    let bad =
        |e: serde_json::Error| rusqlite::Error::FromSqlConversionFailure(15, rusqlite::types::Type::Text, Box::new(e));
    let decoded = MemoryRow {
        id: row.get(0)?,
        user_id: row.get(1)?,
        agent_id: row.get(2)?,
        session_id: row.get(3)?,
        tier: row.get(4)?,
        importance: row.get(5)?,
        source: row.get(6)?,
        content: row.get(7)?,
        created_at: row.get(8)?,
        updated_at: row.get(9)?,
        version: row.get(10)?,
        access_count: row.get(11)?,
        last_accessed_at: row.get(12)?,
        pinned: row.get(13)?,
        expired_at: row.get(14)?,
        tags: serde_json::from_str(&json(15)?).map_err(bad)?,
        links: serde_json::from_str(&json(16)?).map_err(bad)?,
    }
    .decode();
    decoded.map_err(|m| rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, m.into()))
}

/// The memory with this id, as projected.
pub(crate) fn load(conn: &Connection, id: MemoryId) -> Result<Option<Memory>> {
    let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE m.id = ?1");
    Ok(conn.prepare_cached(&sql)?.query_row([id.to_string()], memory_from_row).optional()?)
}

/// Reads an event row selected with [`EVENT_COLUMNS`], decoding its payload.
pub(crate) fn event_from_row(row: &rusqlite::Row<'_>) -> Result<RecordedEvent> {
    EventRow {
        seq: row.get(0)?,
        event_id: row.get(1)?,
        stream_id: row.get(2)?,
        stream_version: row.get(3)?,
        event_type: row.get(4)?,
        schema_version: row.get(5)?,
        payload: row.get(6)?,
        actor: row.get(7)?,
        client: row.get(8)?,
        session_id: row.get(9)?,
        correlation_id: row.get(10)?,
        causation_id: row.get(11)?,
        recorded_at: row.get(12)?,
        redacted_at: row.get(13)?,
    }
    .decode()
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
