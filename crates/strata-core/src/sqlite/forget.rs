//! Forget on SQLite: one call erases a memory's records from every side table
//! ([`erase_records`]), and the erased bytes are checkpointed out of the files
//! ([`finish_scrub`]). The domain's cascade (derived facts, concepts re-formed) is
//! `crate::forget`'s.

use std::path::Path;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};

use crate::clock::to_ms;
use crate::error::{Error, Result};
use crate::model::MemoryId;

/// Inside a forgetting transaction: erases `id`'s records from every side table and retires
/// the adapters trained from it (their files go once the transaction commits); returns them.
pub(crate) fn erase_records(c: &Connection, id: MemoryId, at: DateTime<Utc>) -> Result<Vec<String>> {
    let id = id.to_string();
    let retired = retire_adapters_of(c, &id, at)?;
    for sql in [
        "DELETE FROM extraction_reads WHERE episode_id = ?1",
        "DELETE FROM extraction_decisions WHERE target_id = ?1 \
         OR EXISTS (SELECT 1 FROM json_each(extraction_decisions.sources) s WHERE s.value = ?1)",
        "DELETE FROM recalls WHERE id IN (SELECT recall_id FROM recall_hits WHERE memory_id = ?1) OR answer_id = ?1",
        "DELETE FROM feedback WHERE memory_id = ?1",
        "DELETE FROM adapter_answers WHERE answer_id = ?1",
        "DELETE FROM training_edits WHERE memory_id = ?1",
        "DELETE FROM training_candidates WHERE memory_id = ?1",
        "DELETE FROM training_candidate_events WHERE memory_id = ?1",
        "DELETE FROM training_runs WHERE EXISTS (SELECT 1 FROM json_each(training_runs.sources) s WHERE s.value = ?1)",
    ] {
        c.prepare_cached(sql)?.execute([&id])?;
    }
    Ok(retired)
}

/// Retires every adapter trained from `memory_id`, and drops the question-by-question rows of
/// every report of an adapter trained on it (they quote its facts; the numbers stay).
fn retire_adapters_of(c: &Connection, memory_id: &str, now: DateTime<Utc>) -> Result<Vec<String>> {
    let ids: Vec<String> = c
        .prepare_cached(
            "SELECT a.id FROM adapters a, json_each(a.sources) s WHERE s.value = ?1 AND a.status != 'retired'",
        )?
        .query_map([memory_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    c.prepare_cached(
        "UPDATE adapters SET metrics = json_remove(metrics, '$.rows') WHERE metrics IS NOT NULL \
         AND json_valid(metrics) AND EXISTS (SELECT 1 FROM json_each(adapters.sources) s WHERE s.value = ?1)",
    )?
    .execute([memory_id])?;
    for id in &ids {
        c.execute("UPDATE adapters SET status = 'retired' WHERE id = ?1", [id])?;
        c.execute(
            "INSERT INTO adapter_events (adapter_id, at, kind, detail) VALUES (?1, ?2, 'retired', ?3)",
            params![
                id,
                to_ms(now),
                serde_json::json!({ "reason": "a source memory was forgotten", "memory": memory_id }).to_string()
            ],
        )?;
    }
    Ok(ids)
}

/// Copies the WAL into the main file and truncates it, waiting at most ~100 ms for readers.
/// Returns false when another process's open read kept it from completing.
pub(crate) fn checkpoint(c: &Connection) -> Result<bool> {
    c.busy_timeout(std::time::Duration::from_millis(100))?;
    let result: rusqlite::Result<i64> = c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0));
    c.busy_timeout(super::schema::BUSY_TIMEOUT)?;
    Ok(result? == 0)
}

/// Completes a scrub that a reader in another process delayed: checkpoints the database at
/// `path` from a connection of its own — every 200 ms for a minute, then every 5 s — until
/// the WAL could be copied into the file and truncated (the erased bytes are then gone from
/// both), or `patience` runs out. Returns whether it completed. Opens nothing but the file's
/// existing WAL: no migration, no write.
pub fn finish_scrub(path: &Path, patience: std::time::Duration) -> Result<bool> {
    let conn = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_millis(100))?;
    let started = std::time::Instant::now();
    loop {
        match conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0)).map_err(Error::from) {
            Ok(0) => return Ok(true),
            Ok(_) | Err(Error::Busy) => {}
            Err(e) => return Err(e),
        }
        let waited = started.elapsed();
        if waited >= patience {
            return Ok(false);
        }
        let pause = if waited < std::time::Duration::from_secs(60) { 200 } else { 5_000 };
        std::thread::sleep(std::time::Duration::from_millis(pause));
    }
}

#[cfg(test)]
mod tests {
    /// The columns naming a memory that only SQLite's schema has (training's), beside
    /// `crate::forget::FORGET_COVERS`, and what forget does to their rows. A test reads the
    /// schema and fails on a column named as a memory's (see `names_a_memory`) that neither
    /// list covers, so a new table that quotes memories cannot be left out of forget.
    const COVERED: &[(&str, &str, &str)] = &[
        ("adapters", "sources", "the adapter retired, its report's rows removed"),
        ("training_candidates", "memory_id", "deleted"),
        ("training_candidate_events", "memory_id", "deleted"),
        ("training_edits", "memory_id", "deleted"),
        ("training_runs", "sources", "deleted"),
        ("adapter_answers", "answer_id", "deleted"),
    ];

    /// Whether a column's name says it holds a memory's id (or a list of them).
    fn names_a_memory(column: &str) -> bool {
        ["memory_id", "stream_id", "source_id", "target_id", "episode_id", "answer_id", "sources"].contains(&column)
    }

    /// The full-text and vector indexes' own tables hold row numbers, deleted with the
    /// projection (`memories` itself is the projection).
    fn projection_owned(table: &str) -> bool {
        table == "memories" || table.starts_with("memory_fts") || table.starts_with("memory_vec_")
    }

    #[test]
    fn forget_covers_every_column_that_names_a_memory() {
        let db = super::super::Db::in_memory().unwrap();
        let tables: Vec<String> = db
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(tables.len() > 20, "the schema was read: {tables:?}");
        let mut named = Vec::new();
        for table in tables.iter().filter(|t| !projection_owned(t)) {
            let columns: Vec<String> = db
                .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            named.extend(columns.into_iter().filter(|c| names_a_memory(c)).map(|c| (table.clone(), c)));
        }
        let covered: Vec<(String, String)> = crate::forget::FORGET_COVERS
            .iter()
            .chain(COVERED)
            .map(|(t, c, _)| (t.to_string(), c.to_string()))
            .collect();
        let missing: Vec<_> = named.iter().filter(|n| !covered.contains(n)).collect();
        assert!(missing.is_empty(), "columns that name a memory and that forget does not cover: {missing:?}");
        let stale: Vec<_> = covered.iter().filter(|c| !named.contains(c)).collect();
        assert!(stale.is_empty(), "COVERED lists columns the schema no longer has: {stale:?}");
    }
}
