//! Reading rows on PostgreSQL: a memory and an event decoded (through the engines' shared
//! [`MemoryRow`] and [`EventRow`]), and the look-ups the write path needs, on the store's
//! connection or inside a write transaction.

use super::prepared::Runs;
use postgres::types::ToSql;

use crate::error::{Error, Result};
use crate::event::RecordedEvent;
use crate::model::{Memory, MemoryId, MemoryKind};
use crate::storage::{EventRow, MemoryRow};

/// The columns [`memory_from_row`] expects, in order, from `memories AS m`.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.user_id, m.agent_id, m.session_id, m.tier, m.importance, \
     m.source, m.content, m.created_at, m.updated_at, m.version, m.access_count, m.last_accessed_at, \
     m.pinned, m.expired_at, \
     ARRAY(SELECT tag FROM memory_tags WHERE memory_id = m.id), \
     ARRAY(SELECT target_id FROM memory_links WHERE source_id = m.id ORDER BY target_id, relation), \
     ARRAY(SELECT relation FROM memory_links WHERE source_id = m.id ORDER BY target_id, relation)";

/// Builds a [`Memory`] from a row selected with [`MEMORY_COLUMNS`].
pub(crate) fn memory_from_row(row: &postgres::Row) -> Result<Memory> {
    let targets: Vec<String> = row.try_get(16)?;
    let relations: Vec<String> = row.try_get(17)?;
    MemoryRow {
        id: row.try_get(0)?,
        user_id: row.try_get(1)?,
        agent_id: row.try_get(2)?,
        session_id: row.try_get(3)?,
        tier: row.try_get(4)?,
        importance: row.try_get(5)?,
        source: row.try_get(6)?,
        content: row.try_get(7)?,
        created_at: row.try_get(8)?,
        updated_at: row.try_get(9)?,
        version: row.try_get(10)?,
        access_count: row.try_get(11)?,
        last_accessed_at: row.try_get(12)?,
        pinned: row.try_get(13)?,
        expired_at: row.try_get(14)?,
        tags: row.try_get(15)?,
        links: targets.into_iter().zip(relations).collect(),
    }
    .decode()
    .map_err(|m| Error::Corrupt(format!("a stored memory does not decode: {m}")))
}

/// Reads an event row selected with [`crate::storage::EVENT_COLUMNS`], decoding its payload.
pub(crate) fn event_from_row(row: &postgres::Row) -> Result<RecordedEvent> {
    EventRow {
        seq: row.try_get(0)?,
        event_id: row.try_get(1)?,
        stream_id: row.try_get(2)?,
        stream_version: row.try_get(3)?,
        event_type: row.try_get(4)?,
        schema_version: row.try_get::<_, i32>(5)? as i64,
        payload: row.try_get(6)?,
        actor: row.try_get(7)?,
        client: row.try_get(8)?,
        session_id: row.try_get(9)?,
        correlation_id: row.try_get(10)?,
        causation_id: row.try_get(11)?,
        recorded_at: row.try_get(12)?,
        redacted_at: row.try_get(13)?,
    }
    .decode()
}

/// The memories a statement selects with [`MEMORY_COLUMNS`].
pub(crate) fn memories(c: &impl Runs, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Memory>> {
    c.query(sql, params)?.iter().map(memory_from_row).collect()
}

/// The events a statement selects with [`crate::storage::EVENT_COLUMNS`].
pub(crate) fn events(c: &impl Runs, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<RecordedEvent>> {
    c.query(sql, params)?.iter().map(event_from_row).collect()
}

/// The memory with this id, as projected.
pub(crate) fn load(c: &impl Runs, id: MemoryId) -> Result<Option<Memory>> {
    let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE m.id = $1");
    Ok(memories(c, &sql, &[&id.to_string()])?.pop())
}

/// The live memories of a user (and agent, and type) whose key is `key`.
pub(crate) fn find_by_key(
    c: &impl Runs,
    user_id: &str,
    agent_id: Option<&str>,
    kind: Option<MemoryKind>,
    key: &str,
) -> Result<Vec<Memory>> {
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE m.key = $1 AND m.user_id = $2 \
         AND coalesce(m.agent_id, '') = $3 AND ($4::text IS NULL OR m.kind = $4) ORDER BY m.kind"
    );
    let kind = kind.map(|k| k.as_str());
    memories(c, &sql, &[&key, &user_id, &agent_id.unwrap_or(""), &kind])
}

/// The memories that link to `id`, with each link's relation.
pub(crate) fn linking_to(c: &impl Runs, id: MemoryId) -> Result<Vec<(MemoryId, String)>> {
    let rows = c.query(
        "SELECT source_id, relation FROM memory_links WHERE target_id = $1 ORDER BY source_id, relation",
        &[&id.to_string()],
    )?;
    rows.iter()
        .map(|r| {
            let source: String = r.try_get(0)?;
            let source =
                source.parse().map_err(|_| Error::invalid(format!("a stored link has a bad id '{source}'")))?;
            Ok((source, r.try_get(1)?))
        })
        .collect()
}

/// The error for a stream with no projected memory: forgotten, or never existed.
pub(crate) fn forgotten_error(c: &impl Runs, id: MemoryId) -> Result<Error> {
    let at = c.query_opt(
        "SELECT recorded_at FROM events WHERE stream_id = $1 AND event_type = 'forgotten'",
        &[&id.to_string()],
    )?;
    Ok(match at {
        Some(row) => Error::Forgotten {
            id: id.to_string(),
            at: crate::time::format_time(crate::clock::from_ms(row.try_get(0)?)),
        },
        None => Error::NotFound(id.to_string()),
    })
}
