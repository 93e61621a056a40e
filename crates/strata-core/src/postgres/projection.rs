//! The projections on PostgreSQL (memories, tags, links, the searchable text), written as the
//! difference between a memory's state before and after an event, as on SQLite. The text
//! searched is a `tsvector` column of `memories`: the title weighted A, the body B, and for an
//! episode in a session the body of the episode before it C (rewritten when that neighbour
//! changes, so forgetting an episode removes its words from its successor's row too).

use super::PgTx;
use super::prepared::Params;
use super::prepared::Runs;
use super::rows::{MEMORY_COLUMNS, memories, memory_from_row};
use crate::clock::to_ms;
use crate::error::{Error, Result};
use crate::model::{Link, Memory, MemoryId, search_text};
use crate::storage::Place;

/// The text-search configuration of the searchable text and of queries (English stemming, as
/// SQLite's porter tokenizer stems).
pub(crate) const TEXT_CONFIG: &str = "english";

/// Writes what changed between `old` and `new` (both states of the same memory).
pub(crate) fn write_diff(tx: &PgTx<'_>, old: Option<&Memory>, new: Option<&Memory>) -> Result<()> {
    match (old, new) {
        (None, None) => Ok(()),
        (Some(o), None) => delete(tx, o),
        (None, Some(n)) => insert(tx, n),
        (Some(o), Some(n)) => update(tx, o, n),
    }
}

fn json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::invalid(e.to_string()))
}

fn insert(tx: &PgTx<'_>, m: &Memory) -> Result<()> {
    check_key(tx, m)?;
    let id = m.id.to_string();
    // The episodes before and after it in one statement; its searchable text goes in with the
    // row (round trips are what a write on PostgreSQL costs: docs/benchmarks.md).
    let (before, after) = match Place::of(m) {
        Some(place) => neighbours(tx, &place)?,
        None => (None, None),
    };
    let context = before.map(|b| search_text(&b.content).1).unwrap_or_default();
    let (title, body) = search_text(&m.content);
    let sql = format!(
        "INSERT INTO memories (id, kind, key, user_id, agent_id, session_id, tier, importance, source, content, \
         created_at, updated_at, occurred_at, version, access_count, last_accessed_at, pinned, expired_at, \
         search, search_length) \
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, s.v, {SEARCH_LENGTH} \
         FROM (SELECT {SEARCH_VECTOR} AS v) AS s",
        SEARCH_VECTOR = search_vector(19)
    );
    tx.execute(
        &sql,
        &[
            &id,
            &m.kind().as_str(),
            &m.content.key(),
            &m.scope.user_id,
            &m.scope.agent_id,
            &m.scope.session_id,
            &m.tier.as_str(),
            &m.importance.get(),
            &json(&m.source)?,
            &json(&m.content)?,
            &to_ms(m.created_at),
            &to_ms(m.updated_at),
            &to_ms(m.occurred_at()),
            &(m.version as i64),
            &(m.access_count as i64),
            &m.last_accessed_at.map(to_ms),
            &m.pinned,
            &m.expired_at.map(to_ms),
            &title,
            &body,
            &context,
        ],
    )?;
    for t in &m.tags {
        tx.execute("INSERT INTO memory_tags (memory_id, tag) VALUES ($1, $2)", &[&id, t])?;
    }
    for l in &m.links {
        insert_link(tx, m.id, l)?;
    }
    match after {
        Some(next) => write_search_with(tx, &next, &body),
        None => Ok(()),
    }
}

/// Another memory of the same type and scope with `m`'s key: [`Error::DuplicateKey`]. Checked
/// before writing (the writers' lock keeps it true until commit): a failed statement would
/// abort the whole transaction on PostgreSQL, where SQLite lets the caller go on.
fn check_key(tx: &PgTx<'_>, m: &Memory) -> Result<()> {
    let Some(key) = m.content.key() else { return Ok(()) };
    let other = tx.query_opt(
        "SELECT id FROM memories WHERE kind = $1 AND user_id = $2 AND coalesce(agent_id, '') = $3 AND key = $4 \
         AND id <> $5",
        &[&m.kind().as_str(), &m.scope.user_id, &m.scope.agent_id.as_deref().unwrap_or(""), &key, &m.id.to_string()],
    )?;
    match other {
        Some(row) => {
            Err(Error::DuplicateKey { kind: m.kind().to_string(), key: key.to_string(), existing: row.try_get(0)? })
        }
        None => Ok(()),
    }
}

fn insert_link(tx: &PgTx<'_>, source: MemoryId, l: &Link) -> Result<()> {
    tx.execute(
        "INSERT INTO memory_links (source_id, target_id, relation) VALUES ($1, $2, $3)",
        &[&source.to_string(), &l.target.to_string(), &l.relation],
    )?;
    Ok(())
}

fn delete(tx: &PgTx<'_>, m: &Memory) -> Result<()> {
    let id = m.id.to_string();
    tx.execute("DELETE FROM memory_vectors WHERE memory_id = $1", &[&id])?;
    tx.execute("DELETE FROM memory_tags WHERE memory_id = $1", &[&id])?;
    tx.execute("DELETE FROM memory_links WHERE source_id = $1", &[&id])?;
    tx.execute("DELETE FROM memories WHERE id = $1", &[&id])?;
    match Place::of(m) {
        Some(place) => refresh_successor(tx, &place),
        None => Ok(()),
    }
}

fn update(tx: &PgTx<'_>, o: &Memory, n: &Memory) -> Result<()> {
    let id = n.id.to_string();
    let content_changed = o.content != n.content;
    let content = if content_changed { Some(json(&n.content)?) } else { None };
    if o.content.key() != n.content.key() {
        check_key(tx, n)?;
    }
    tx.execute(
        "UPDATE memories SET key = $2, tier = $3, importance = $4, content = coalesce($5, content), \
         updated_at = $6, occurred_at = $7, version = $8, access_count = $9, last_accessed_at = $10, \
         pinned = $11, expired_at = $12 WHERE id = $1",
        &[
            &id,
            &n.content.key(),
            &n.tier.as_str(),
            &n.importance.get(),
            &content,
            &to_ms(n.updated_at),
            &to_ms(n.occurred_at()),
            &(n.version as i64),
            &(n.access_count as i64),
            &n.last_accessed_at.map(to_ms),
            &n.pinned,
            &n.expired_at.map(to_ms),
        ],
    )?;
    for t in o.tags.difference(&n.tags) {
        tx.execute("DELETE FROM memory_tags WHERE memory_id = $1 AND tag = $2", &[&id, t])?;
    }
    for t in n.tags.difference(&o.tags) {
        tx.execute("INSERT INTO memory_tags (memory_id, tag) VALUES ($1, $2)", &[&id, t])?;
    }
    for l in o.links.difference(&n.links) {
        tx.execute(
            "DELETE FROM memory_links WHERE source_id = $1 AND target_id = $2 AND relation = $3",
            &[&id, &l.target.to_string(), &l.relation],
        )?;
    }
    for l in n.links.difference(&o.links) {
        insert_link(tx, n.id, l)?;
    }
    if content_changed {
        // Its vectors describe the old content: dropped, re-embedded by the next embedding pass.
        tx.execute("DELETE FROM memory_vectors WHERE memory_id = $1", &[&id])?;
        write_search(tx, n)?;
        let (old_place, new_place) = (Place::of(o), Place::of(n));
        if let Some(p) = &old_place {
            refresh_successor(tx, p)?;
        }
        if let Some(p) = new_place.filter(|p| old_place.as_ref() != Some(p)) {
            refresh_successor(tx, &p)?;
        }
    }
    Ok(())
}

/// The episode just before (`after == false`) or after `place` in its session.
fn neighbour(tx: &PgTx<'_>, place: &Place, after: bool) -> Result<Option<Memory>> {
    let base = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE m.kind = 'episodic' AND m.session_id IS NOT NULL \
         AND m.user_id = $1 AND m.session_id = $2 AND coalesce(m.agent_id, '') = $3"
    );
    let sql = if after {
        format!("{base} AND (m.occurred_at, m.id) > ($4, $5) ORDER BY m.occurred_at, m.id LIMIT 1")
    } else {
        format!("{base} AND (m.occurred_at, m.id) < ($4, $5) ORDER BY m.occurred_at DESC, m.id DESC LIMIT 1")
    };
    let found =
        memories(tx, &sql, &[&place.user_id, &place.session_id, &place.agent_id, &place.occurred_ms, &place.id])?;
    Ok(found.into_iter().next())
}

/// The episodes just before and just after `place` in its session, in one statement.
fn neighbours(tx: &PgTx<'_>, place: &Place) -> Result<(Option<Memory>, Option<Memory>)> {
    let base = format!(
        "SELECT {MEMORY_COLUMNS}, $6::int AS side FROM memories AS m WHERE m.kind = 'episodic' \
         AND m.session_id IS NOT NULL AND m.user_id = $1 AND m.session_id = $2 AND coalesce(m.agent_id, '') = $3"
    );
    let sql = format!(
        "({before} AND (m.occurred_at, m.id) < ($4, $5) ORDER BY m.occurred_at DESC, m.id DESC LIMIT 1) \
         UNION ALL ({after} AND (m.occurred_at, m.id) > ($4, $5) ORDER BY m.occurred_at, m.id LIMIT 1)",
        before = base,
        after = base.replace("$6::int", "$6::int + 1"),
    );
    let params: Params<'_> =
        &[&place.user_id, &place.session_id, &place.agent_id, &place.occurred_ms, &place.id, &0i32];
    let (mut before, mut after) = (None, None);
    for row in tx.query(&sql, params)? {
        let side: i32 = row.try_get(row.len() - 1)?;
        let m = memory_from_row(&row)?;
        if side == 0 { before = Some(m) } else { after = Some(m) }
    }
    Ok((before, after))
}

/// The searchable `tsvector` of the parameters from `$first` on (title, body, context),
/// weighted A, B and C.
fn search_vector(first: usize) -> String {
    let (a, b, c) = (first, first + 1, first + 2);
    format!(
        "setweight(to_tsvector('{TEXT_CONFIG}', ${a}), 'A') || setweight(to_tsvector('{TEXT_CONFIG}', ${b}), 'B') \
         || setweight(to_tsvector('{TEXT_CONFIG}', ${c}), 'C')"
    )
}

/// How many words the `tsvector` `s.v` holds (its positions), bm25's length of a memory.
const SEARCH_LENGTH: &str = "(SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest(s.v) AS u)";

/// Writes the searchable text of `m` (already in `memories`).
fn write_search(tx: &PgTx<'_>, m: &Memory) -> Result<()> {
    let context = match Place::of(m) {
        Some(place) => match neighbour(tx, &place, false)? {
            Some(before) => search_text(&before.content).1,
            None => String::new(),
        },
        None => String::new(),
    };
    write_search_with(tx, m, &context)
}

/// Writes the searchable text of `m` (already in `memories`) with `context`, the body of the
/// episode before it.
fn write_search_with(tx: &PgTx<'_>, m: &Memory, context: &str) -> Result<()> {
    let (title, body) = search_text(&m.content);
    let sql = format!(
        "UPDATE memories SET (search, search_length) = (SELECT s.v, {SEARCH_LENGTH} \
         FROM (SELECT {} AS v) AS s) WHERE id = $1",
        search_vector(2)
    );
    tx.execute(&sql, &[&m.id.to_string(), &title, &body, &context])?;
    Ok(())
}

/// Rewrites the searchable text of the episode that follows `place` in its session.
fn refresh_successor(tx: &PgTx<'_>, place: &Place) -> Result<()> {
    match neighbour(tx, place, true)? {
        Some(next) => write_search(tx, &next),
        None => Ok(()),
    }
}

/// Empties every projection (for a rebuild by replay).
pub(crate) fn clear_all(tx: &PgTx<'_>) -> Result<()> {
    tx.tx().batch_execute("DELETE FROM memory_tags; DELETE FROM memory_links; DELETE FROM memories;")?;
    Ok(())
}
