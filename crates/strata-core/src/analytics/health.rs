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
