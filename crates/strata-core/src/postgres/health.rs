//! The space a PostgreSQL store takes (each of Strata's tables with its indexes and TOAST, the
//! database's size) and a `VACUUM` of its tables: health's side that is the engine's own. What
//! PostgreSQL reuses after a plain vacuum stays in the table files (only `VACUUM FULL`, which
//! locks each table while it rewrites it, gives it back): that is the operator's to run, so
//! the free space reported here is none.

use super::Pg;
use crate::analytics::health::TableSize;
use crate::error::Result;

/// Strata's tables: those its migrations make (and the migrations' own).
const TABLES: &str = "SELECT c.relname::text, pg_total_relation_size(c.oid) FROM pg_class c \
                      JOIN pg_namespace n ON n.oid = c.relnamespace \
                      WHERE n.nspname = current_schema() AND c.relkind = 'r'";

impl Pg {
    /// The space each table takes on disk, its indexes and TOAST counted with it.
    pub(crate) fn table_sizes(&self) -> Result<Vec<TableSize>> {
        let rows = self.client().query(TABLES, &[])?;
        rows.iter()
            .map(|r| Ok(TableSize { table: r.try_get(0)?, bytes: r.try_get::<_, i64>(1)?.max(0) as u64 }))
            .collect()
    }

    /// The database's size on disk.
    pub(crate) fn database_bytes(&self) -> Result<u64> {
        let row = self.client().query_one("SELECT pg_database_size(current_database())", &[])?;
        Ok(row.try_get::<_, i64>(0)?.max(0) as u64)
    }

    /// Vacuums Strata's tables (their dead row versions' space reused from then on).
    pub(crate) fn vacuum_all(&self) -> Result<()> {
        let names: Vec<String> = self.client().query(TABLES, &[])?.iter().map(|r| r.get(0)).collect();
        let quoted: Vec<String> = names.iter().map(|n| format!("\"{}\"", n.replace('"', "\"\""))).collect();
        if !quoted.is_empty() {
            self.client().batch_execute(&format!("VACUUM (ANALYZE) {}", quoted.join(", ")))?;
        }
        Ok(())
    }
}
