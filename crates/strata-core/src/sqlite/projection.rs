//! The projections (memories, tags, links, full-text index): reading a memory back, and
//! writing the difference between a memory's state before and after an event.

use rusqlite::{Connection, params};

use crate::clock::to_ms;
use crate::error::{Error, Result};
use crate::model::{Link, Memory, MemoryId};
use crate::sqlite::fts;

/// Writes what changed between `old` and `new` (both states of the same memory).
pub(crate) fn write_diff(conn: &Connection, old: Option<&Memory>, new: Option<&Memory>) -> Result<()> {
    match (old, new) {
        (None, None) => Ok(()),
        (Some(o), None) => delete(conn, o),
        (None, Some(n)) => insert(conn, n),
        (Some(o), Some(n)) => update(conn, o, n),
    }
}

fn insert(conn: &Connection, m: &Memory) -> Result<()> {
    let id = m.id.to_string();
    let content = serde_json::to_string(&m.content).map_err(|e| Error::invalid(e.to_string()))?;
    let source = serde_json::to_string(&m.source).map_err(|e| Error::invalid(e.to_string()))?;
    let res = conn
        .prepare_cached(
            "INSERT INTO memories (id, kind, key, user_id, agent_id, session_id, tier, importance, source, content, \
             created_at, updated_at, occurred_at, version, access_count, last_accessed_at, pinned, expired_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        )?
        .execute(params![
            id,
            m.kind().as_str(),
            m.content.key(),
            m.scope.user_id,
            m.scope.agent_id,
            m.scope.session_id,
            m.tier.as_str(),
            m.importance.get(),
            source,
            content,
            to_ms(m.created_at),
            to_ms(m.updated_at),
            to_ms(m.occurred_at()),
            m.version as i64,
            m.access_count as i64,
            m.last_accessed_at.map(to_ms),
            m.pinned,
            m.expired_at.map(to_ms),
        ]);
    if let Err(e) = res {
        return Err(duplicate_key(conn, m).unwrap_or_else(|| e.into()));
    }
    let rid = conn.last_insert_rowid();
    {
        let mut tag_stmt = conn.prepare_cached("INSERT INTO memory_tags (memory_id, tag) VALUES (?1, ?2)")?;
        for t in &m.tags {
            tag_stmt.execute(params![id, t])?;
        }
    }
    for l in &m.links {
        insert_link(conn, m.id, l)?;
    }
    fts::write_row(conn, rid, m)?;
    match fts::Place::of(m) {
        Some(place) => fts::refresh_successor(conn, &place),
        None => Ok(()),
    }
}

/// Turns a unique-index violation into a [`Error::DuplicateKey`] naming the other memory.
fn duplicate_key(conn: &Connection, m: &Memory) -> Option<Error> {
    let key = m.content.key()?;
    let existing: String = conn
        .query_row(
            "SELECT id FROM memories WHERE kind = ?1 AND user_id = ?2 AND coalesce(agent_id, '') = ?3 AND key = ?4",
            params![m.kind().as_str(), m.scope.user_id, m.scope.agent_id.as_deref().unwrap_or(""), key],
            |r| r.get(0),
        )
        .ok()?;
    Some(Error::DuplicateKey { kind: m.kind().to_string(), key: key.to_string(), existing })
}

fn insert_link(conn: &Connection, source: MemoryId, l: &Link) -> Result<()> {
    conn.prepare_cached("INSERT INTO memory_links (source_id, target_id, relation) VALUES (?1, ?2, ?3)")?
        .execute(params![source.to_string(), l.target.to_string(), l.relation])?;
    Ok(())
}

fn rid_of(conn: &Connection, id: MemoryId) -> Result<i64> {
    Ok(conn.prepare_cached("SELECT rid FROM memories WHERE id = ?1")?.query_row([id.to_string()], |r| r.get(0))?)
}

fn delete(conn: &Connection, m: &Memory) -> Result<()> {
    let id = m.id.to_string();
    let rid = rid_of(conn, m.id)?;
    fts::delete_row(conn, rid)?;
    crate::sqlite::vector_index::delete_for(conn, m.id, rid)?;
    conn.prepare_cached("DELETE FROM memory_tags WHERE memory_id = ?1")?.execute([&id])?;
    conn.prepare_cached("DELETE FROM memory_links WHERE source_id = ?1")?.execute([&id])?;
    conn.prepare_cached("DELETE FROM memories WHERE rid = ?1")?.execute([rid])?;
    // Its successor in the session held its words as context.
    match fts::Place::of(m) {
        Some(place) => fts::refresh_successor(conn, &place),
        None => Ok(()),
    }
}

fn update(conn: &Connection, o: &Memory, n: &Memory) -> Result<()> {
    let id = n.id.to_string();
    let content_changed = o.content != n.content;
    let content = if content_changed {
        Some(serde_json::to_string(&n.content).map_err(|e| Error::invalid(e.to_string()))?)
    } else {
        None
    };
    conn.prepare_cached(
        "UPDATE memories SET key = ?2, tier = ?3, importance = ?4, content = coalesce(?5, content), \
         updated_at = ?6, occurred_at = ?7, version = ?8, access_count = ?9, last_accessed_at = ?10, \
         pinned = ?11, expired_at = ?12 WHERE id = ?1",
    )?
    .execute(params![
        id,
        n.content.key(),
        n.tier.as_str(),
        n.importance.get(),
        content,
        to_ms(n.updated_at),
        to_ms(n.occurred_at()),
        n.version as i64,
        n.access_count as i64,
        n.last_accessed_at.map(to_ms),
        n.pinned,
        n.expired_at.map(to_ms),
    ])
    .map_err(|e| duplicate_key(conn, n).unwrap_or_else(|| e.into()))?;
    for t in o.tags.difference(&n.tags) {
        conn.prepare_cached("DELETE FROM memory_tags WHERE memory_id = ?1 AND tag = ?2")?.execute(params![id, t])?;
    }
    for t in n.tags.difference(&o.tags) {
        conn.prepare_cached("INSERT INTO memory_tags (memory_id, tag) VALUES (?1, ?2)")?.execute(params![id, t])?;
    }
    for l in o.links.difference(&n.links) {
        conn.prepare_cached("DELETE FROM memory_links WHERE source_id = ?1 AND target_id = ?2 AND relation = ?3")?
            .execute(params![id, l.target.to_string(), l.relation])?;
    }
    for l in n.links.difference(&o.links) {
        insert_link(conn, n.id, l)?;
    }
    if content_changed {
        let rid = rid_of(conn, n.id)?;
        // Its vectors describe the old content: dropped, re-embedded by the next embedding pass.
        crate::sqlite::vector_index::delete_for(conn, n.id, rid)?;
        fts::write_row(conn, rid, n)?;
        // The episodes after its old and its new place in the session take it (or what now
        // precedes them) as context.
        let (old_place, new_place) = (fts::Place::of(o), fts::Place::of(n));
        if let Some(p) = &old_place {
            fts::refresh_successor(conn, p)?;
        }
        if let Some(p) = new_place.filter(|p| old_place.as_ref() != Some(p)) {
            fts::refresh_successor(conn, &p)?;
        }
    }
    Ok(())
}

/// Empties every projection (for a rebuild by replay). The full-text index is dropped and
/// created again from its own stored definition and settings rather than emptied row by row:
/// a non-secure delete would leave old index segments whose terms a later `forget` could not
/// reach, and a secure one costs ~5× as much. Dropped pages are zeroed (`secure_delete`).
pub(crate) fn clear_all(conn: &Connection) -> Result<()> {
    let ddl: String =
        conn.query_row("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'memory_fts'", [], |r| r.get(0))?;
    let settings: Vec<(String, rusqlite::types::Value)> = {
        let mut stmt = conn.prepare("SELECT k, v FROM memory_fts_config WHERE k <> 'version'")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?
    };
    conn.execute_batch("DROP TABLE memory_fts")?;
    conn.execute_batch(&ddl)?;
    for (k, v) in settings {
        conn.execute("INSERT INTO memory_fts (memory_fts, rank) VALUES (?1, ?2)", params![k, v])?;
    }
    conn.execute_batch("DELETE FROM memory_tags; DELETE FROM memory_links; DELETE FROM memories;")?;
    Ok(())
}
