//! Forget on PostgreSQL: one call erases a memory's records from every side table of this
//! engine's schema ([`erase_records`]); the domain's cascade is `crate::forget`'s. Which
//! columns name a memory, and what forget does to each, is [`FORGET_COVERS`]: a test reads the
//! server's catalogue and fails on a column named as a memory's that the list lacks.

use postgres::Transaction;

use crate::error::Result;
use crate::model::MemoryId;

/// Every column of the PostgreSQL schema outside `memories` that names a memory, and what
/// forget does to its rows (table, column, what happens).
pub const FORGET_COVERS: &[(&str, &str, &str)] = &[
    ("events", "stream_id", "payloads erased, a `forgotten` event appended"),
    ("memory_tags", "memory_id", "deleted with the projection"),
    ("memory_links", "source_id", "deleted with the projection"),
    ("memory_links", "target_id", "the linking memories re-projected or forgotten by the cascade"),
    ("memory_vectors", "memory_id", "deleted with the projection, and again here"),
    ("extraction_reads", "episode_id", "deleted"),
    ("extraction_decisions", "target_id", "deleted"),
    ("extraction_decisions", "sources", "deleted"),
    ("recalls", "answer_id", "deleted"),
    ("recall_hits", "memory_id", "deleted with their recall"),
    ("feedback", "memory_id", "deleted"),
];

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
