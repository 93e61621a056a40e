//! The space a SQLite store takes (`dbstat`, the file's pages) and giving back what deleted
//! rows left (`VACUUM`): health's side that is the engine's own.

use rusqlite::Connection;

use crate::analytics::health::{TableSize, owner_table};
use crate::error::Result;

/// The space each table takes on disk (its indexes, and an FTS or vector index's shadow
/// tables, counted with it).
pub(crate) fn table_sizes(c: &Connection) -> Result<Vec<TableSize>> {
    let mut stmt = c.prepare(
        "SELECT coalesce(t.tbl_name, d.name), sum(d.pgsize) FROM dbstat d \
         LEFT JOIN sqlite_schema t ON t.name = d.name GROUP BY 1",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))?;
    let mut by_table: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    for row in rows {
        let (name, bytes) = row?;
        *by_table.entry(owner_table(&name)).or_default() += bytes;
    }
    Ok(by_table.into_iter().map(|(table, bytes)| TableSize { table, bytes }).collect())
}

/// The database file's size in bytes (its pages).
pub(crate) fn file_bytes(c: &Connection) -> Result<u64> {
    Ok(c.query_row("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()", [], |r| {
        r.get::<_, i64>(0)
    })? as u64)
}

/// Bytes of free pages in the file: what a vacuum would give back.
pub(crate) fn free_bytes(c: &Connection) -> Result<u64> {
    Ok(c.query_row("SELECT freelist_count * page_size FROM pragma_freelist_count(), pragma_page_size()", [], |r| {
        r.get::<_, i64>(0)
    })? as u64)
}

/// Rewrites the file without the space deleted rows left.
pub(crate) fn vacuum(c: &Connection) -> Result<()> {
    Ok(c.execute_batch("VACUUM")?)
}
