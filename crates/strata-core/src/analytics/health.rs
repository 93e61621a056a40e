//! Health: what a store holds that does it no good — stale memories, memories without a vector —
//! and the space its tables take; and giving back the space deleted rows left (vacuum).

use serde::Serialize;

/// The space one table takes, its indexes included.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableSize {
    /// The table (`memories`, `events`, `memory_fts`…).
    pub table: String,
    /// Bytes on disk.
    pub bytes: u64,
}

/// What a vacuum gave back.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Vacuumed {
    /// The file's size before.
    pub before: u64,
    /// After.
    pub after: u64,
}

impl crate::store::Store {
    /// The space each table takes on disk (its indexes, and on SQLite an FTS or vector index's
    /// shadow tables, counted with it), the largest first. Every person's rows are counted: the
    /// file, or the database, is shared.
    pub fn table_sizes(&self) -> crate::Result<Vec<TableSize>> {
        let mut out = match &self.engine {
            crate::storage::Engine::Sqlite(db) => crate::sqlite::health::table_sizes(db)?,
            #[cfg(feature = "postgres")]
            crate::storage::Engine::Postgres(pg) => pg.table_sizes()?,
        };
        out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.table.cmp(&b.table)));
        Ok(out)
    }

    /// The store's size in bytes: the database file's pages, or the PostgreSQL database's size.
    pub fn file_bytes(&self) -> crate::Result<u64> {
        match &self.engine {
            crate::storage::Engine::Sqlite(db) => crate::sqlite::health::file_bytes(db),
            #[cfg(feature = "postgres")]
            crate::storage::Engine::Postgres(pg) => pg.database_bytes(),
        }
    }

    /// Bytes a vacuum would give back: the file's free pages on SQLite; none on PostgreSQL,
    /// whose plain vacuum keeps the space for reuse (the PostgreSQL engine's `health.rs`).
    pub fn free_bytes(&self) -> crate::Result<u64> {
        match &self.engine {
            crate::storage::Engine::Sqlite(db) => crate::sqlite::health::free_bytes(db),
            #[cfg(feature = "postgres")]
            crate::storage::Engine::Postgres(_) => Ok(0),
        }
    }

    /// Gives back the space deleted rows left: SQLite's `VACUUM` rewrites the file; on
    /// PostgreSQL, a `VACUUM` of Strata's tables marks it for reuse.
    pub fn vacuum(&mut self) -> crate::Result<Vacuumed> {
        let before = self.file_bytes()?;
        match &self.engine {
            crate::storage::Engine::Sqlite(db) => crate::sqlite::health::vacuum(db)?,
            #[cfg(feature = "postgres")]
            crate::storage::Engine::Postgres(pg) => pg.vacuum_all()?,
        }
        Ok(Vacuumed { before, after: self.file_bytes()? })
    }
}

/// The table a shadow table belongs to: an FTS5 table's `_data`, `_idx`, `_content`,
/// `_docsize`, `_config` and sqlite-vec's `_chunks`, `_rowids`, `_vector_chunksNN`, `_info`,
/// `_auxiliary` go with their virtual table; `sqlite_schema` and the like stay as they are.
pub(crate) fn owner_table(name: &str) -> String {
    const SHADOWS: [&str; 10] = [
        "_vector_chunks",
        "_data",
        "_idx",
        "_content",
        "_docsize",
        "_config",
        "_chunks",
        "_rowids",
        "_info",
        "_auxiliary",
    ];
    for s in SHADOWS {
        if let Some(at) = name.find(s).filter(|&at| at > 0) {
            return name[..at].to_string();
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn shadow_tables_go_with_their_table() {
        assert_eq!(super::owner_table("memory_fts_data"), "memory_fts");
        assert_eq!(super::owner_table("memory_vec_vector_chunks00"), "memory_vec");
        assert_eq!(super::owner_table("memories"), "memories");
        assert_eq!(super::owner_table("sqlite_schema"), "sqlite_schema");
    }
}
