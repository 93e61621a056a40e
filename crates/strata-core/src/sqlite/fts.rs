//! The full-text index rows: a memory's title and body, and for an episode in a session its
//! `context` — the body of the episode just before it in that session (same user and agent).
//! The context is derived from other memories, so it is rewritten whenever that neighbour
//! appears, changes or is forgotten: forgetting an episode removes its words from its
//! successor's row too.

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;
use crate::model::Memory;
use crate::model::search_text;
use crate::sqlite::rows::{MEMORY_COLUMNS, memory_from_row};
pub(crate) use crate::storage::{Place, body_of};

/// The episode just before (`after == false`) or after `place` in its session: (rid, content).
fn neighbour(conn: &Connection, place: &Place, after: bool) -> Result<Option<(i64, String)>> {
    // The conditions repeat the partial index's (kind, session_id) so that it is used.
    const BASE: &str = "SELECT rid, content FROM memories WHERE kind = 'episodic' AND session_id IS NOT NULL \
         AND user_id = ?1 AND session_id = ?2 AND coalesce(agent_id, '') = ?3";
    let sql = if after {
        format!("{BASE} AND (occurred_at, id) > (?4, ?5) ORDER BY occurred_at, id LIMIT 1")
    } else {
        format!("{BASE} AND (occurred_at, id) < (?4, ?5) ORDER BY occurred_at DESC, id DESC LIMIT 1")
    };
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![place.user_id, place.session_id, place.agent_id, place.occurred_ms, place.id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?)
}

/// Writes the index row of memory `m` (stored at `rid`), replacing any row it had.
pub(crate) fn write_row(conn: &Connection, rid: i64, m: &Memory) -> Result<()> {
    let context = match Place::of(m) {
        Some(place) => match neighbour(conn, &place, false)? {
            Some((_, content)) => body_of(&content)?,
            None => String::new(),
        },
        None => String::new(),
    };
    let (title, body) = search_text(&m.content);
    delete_row(conn, rid)?;
    conn.prepare_cached("INSERT INTO memory_fts (rowid, title, body, context) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![rid, title, body, context])?;
    Ok(())
}

/// Removes a memory's index row.
pub(crate) fn delete_row(conn: &Connection, rid: i64) -> Result<()> {
    conn.prepare_cached("DELETE FROM memory_fts WHERE rowid = ?1")?.execute([rid])?;
    Ok(())
}

/// Rewrites the row of the episode that follows `place` in its session (its context is the
/// episode that now precedes it). Call after the change at `place` is in `memories`.
pub(crate) fn refresh_successor(conn: &Connection, place: &Place) -> Result<()> {
    let Some((rid, _)) = neighbour(conn, place, true)? else { return Ok(()) };
    let sql = format!("SELECT {} FROM memories AS m WHERE m.rid = ?1", MEMORY_COLUMNS);
    let m = conn.prepare_cached(&sql)?.query_row([rid], memory_from_row)?;
    write_row(conn, rid, &m)
}

/// Rewrites every row (after the migration that added the context column).
pub(crate) fn refill(conn: &Connection) -> Result<u64> {
    let sql = format!("SELECT {}, m.rid FROM memories AS m ORDER BY m.rid", MEMORY_COLUMNS);
    let mut stmt = conn.prepare(&sql)?;
    let rows: Vec<(i64, Memory)> =
        stmt.query_map([], |r| Ok((r.get(17)?, memory_from_row(r)?)))?.collect::<rusqlite::Result<_>>()?;
    for (rid, m) in &rows {
        write_row(conn, *rid, m)?;
    }
    Ok(rows.len() as u64)
}
