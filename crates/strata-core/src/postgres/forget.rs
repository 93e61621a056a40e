//! Forget on PostgreSQL: one call erases a memory's records from every side table of this
//! engine's schema ([`erase_records`]); the domain's cascade is `crate::forget`'s. Which
//! columns name a memory, and what forget does to each, is `crate::forget::FORGET_COVERS` (this
//! engine holds no others): a test reads the server's catalogue and fails on a column named as
//! a memory's that the list lacks.

use postgres::Transaction;

use crate::error::Result;
use crate::model::MemoryId;

/// Inside a forgetting transaction: erases `id`'s records outside the log and its projections.
/// PostgreSQL holds no training records (they stay with the desktop's SQLite), so no adapter
/// is retired here.
pub(crate) fn erase_records(tx: &mut Transaction<'_>, id: MemoryId) -> Result<Vec<String>> {
    let id = id.to_string();
    for sql in [
        "DELETE FROM memory_vectors WHERE memory_id = $1",
        "DELETE FROM extraction_reads WHERE episode_id = $1",
        "DELETE FROM extraction_decisions WHERE target_id = $1 OR sources::jsonb @> jsonb_build_array($1::text)",
        "DELETE FROM recalls WHERE id IN (SELECT recall_id FROM recall_hits WHERE memory_id = $1) OR answer_id = $1",
        "DELETE FROM feedback WHERE memory_id = $1",
    ] {
        tx.execute(sql, &[&id])?;
    }
    Ok(Vec::new())
}
