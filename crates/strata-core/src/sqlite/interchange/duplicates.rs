//! SQLite's side of `crate::interchange`: its statements and row decoding.

use crate::error::Result;
use crate::model::{Content, Memory, Scope};
use crate::sqlite::rows::{MEMORY_COLUMNS, memory_from_row};
use crate::store::StoreTx;

/// The stored memory in `scope` that `content` duplicates: the same key and type, or for an
/// episode the same time, body and session.
pub(crate) fn stored(tx: &StoreTx<'_>, scope: &Scope, content: &Content) -> Result<Option<Memory>> {
    if let Some(key) = content.key() {
        let found = tx.find_by_key(&scope.user_id, scope.agent_id.as_deref(), Some(content.kind()), key)?;
        return Ok(found.into_iter().next());
    }
    let Content::Episodic(e) = content else { return Ok(None) };
    let sql = format!(
        "SELECT {MEMORY_COLUMNS} FROM memories AS m WHERE m.kind = 'episodic' AND m.user_id = ?1 \
         AND coalesce(m.agent_id, '') = ?2 AND m.session_id IS ?3 AND m.occurred_at = ?4 ORDER BY m.rid"
    );
    let mut stmt = tx.conn()?.prepare_cached(&sql)?;
    let rows = stmt.query_map(
        rusqlite::params![
            scope.user_id,
            scope.agent_id.as_deref().unwrap_or(""),
            scope.session_id,
            crate::clock::to_ms(e.occurred_at)
        ],
        memory_from_row,
    )?;
    for m in rows {
        let m = m?;
        if let Content::Episodic(s) = &m.content
            && s.occurred_at == e.occurred_at
            && s.body == e.body
        {
            return Ok(Some(m));
        }
    }
    Ok(None)
}
