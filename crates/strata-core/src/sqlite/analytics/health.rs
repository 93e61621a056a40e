//! SQLite's side of `crate::analytics`: its statements and row decoding.

use crate::error::Result;
use crate::store::Store;

use super::*;
use crate::analytics::health::*;

impl Store {
    /// The space each table takes on disk (its indexes, and an FTS or vector index's shadow
    /// tables, counted with it), the largest first. Every person's rows are counted: the file
    /// is shared.
    pub fn table_sizes(&self) -> Result<Vec<TableSize>> {
        let mut stmt = self.sqlite()?.prepare(
            "SELECT coalesce(t.tbl_name, d.name), sum(d.pgsize) FROM dbstat d \
             LEFT JOIN sqlite_schema t ON t.name = d.name GROUP BY 1",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64)))?;
        let mut by_table: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
        for row in rows {
            let (name, bytes) = row?;
            *by_table.entry(owner_table(&name)).or_default() += bytes;
        }
        let mut out: Vec<TableSize> = by_table.into_iter().map(|(table, bytes)| TableSize { table, bytes }).collect();
        out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.table.cmp(&b.table)));
        Ok(out)
    }

    /// The database file's size in bytes (its pages).
    pub fn file_bytes(&self) -> Result<u64> {
        Ok(self.sqlite()?.query_row(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            [],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    /// Bytes of free pages in the file: what a vacuum would give back.
    pub fn free_bytes(&self) -> Result<u64> {
        Ok(self.sqlite()?.query_row(
            "SELECT freelist_count * page_size FROM pragma_freelist_count(), pragma_page_size()",
            [],
            |r| r.get::<_, i64>(0),
        )? as u64)
    }

    /// Rewrites the file without the space deleted rows left (SQLite's `VACUUM`).
    pub fn vacuum(&mut self) -> Result<Vacuumed> {
        let before = self.file_bytes()?;
        self.sqlite()?.execute_batch("VACUUM")?;
        Ok(Vacuumed { before, after: self.file_bytes()? })
    }
}
